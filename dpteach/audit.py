"""Empirical privacy auditing: statistical lower bounds on epsilon from samples.

A mechanism ``M`` is ``(eps, delta)``-DP only if, for neighbouring inputs ``D, D'`` and *every*
event ``S``, ``P[M(D) in S] <= e^eps P[M(D') in S] + delta``. An audit looks for an event that
violates this (Ding et al. 2018; Jagielski, Ullman and Oprea 2020):

1. draw a *selection* sample from ``M(D)`` and ``M(D')`` and pick the event ``S`` that looks most
   violating — threshold events ``{x > t}``, ``{x < t}`` on a quantile grid for scalar outputs;
   for discrete outputs, the sets of the ``j`` outcomes with the largest likelihood ratio;
2. draw a fresh *test* sample and bound ``p = P[M(D) in S]`` from below and
   ``q = P[M(D') in S]`` from above with one-sided Clopper-Pearson intervals;
3. flag a violation when ``p_lo - e^eps q_hi > delta``, and report ``eps_lo = ln((p_lo - delta) /
   q_hi)``, a lower bound on the true epsilon.

Both directions (``D, D'`` and ``D', D``) are tested. The significance level ``alpha`` is split
over the 2 bounds of each of the 2 directions (``alpha/4`` each); because ``S`` is chosen on an
independent sample, a truly ``(eps, delta)``-DP mechanism is flagged with probability at most
``alpha``. An audit can refute a privacy claim but never prove one: a pass only says that *these*
events on *these* inputs showed nothing.

Usage — a sampler draws ``size`` independent outputs on one input::

    def laplace_sampler(x, rng, size):
        return dp.laplace(np.full(size, x), sensitivity=1.0, epsilon=1.0, rng=rng)

    result = audit(laplace_sampler, 0.0, 1.0, epsilon=1.0, samples=100_000, rng=0)
    result.flagged, result.epsilon_lower

Outputs may be floats (``kind="scalar"``) or integer codes (``kind="discrete"``; project a
transcript to a small code first). :func:`repeat` turns a once-per-call mechanism into a sampler.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from . import _validate as check

Sampler = Callable[[object, np.random.Generator, int], np.ndarray]


@dataclass(frozen=True)
class AuditResult:
    """The outcome of :func:`audit` (the more violating of the two directions).

    Attributes
    ----------
    epsilon
        The claimed epsilon.
    delta
        The claimed delta.
    epsilon_lower
        Lower bound on the true epsilon (0 when nothing beyond ``delta`` was seen).
    flagged
        Whether the claim is refuted at level ``alpha``.
    event
        The event that was tested, e.g. ``"x > 0.734"`` or ``"x in {0, 3}"``.
    direction
        ``"D vs D'"`` or ``"D' vs D"``.
    p_lower, q_upper
        The Clopper-Pearson bounds on ``P[M(D) in S]`` and ``P[M(D') in S]``.
    samples
        Test samples per input.
    """

    epsilon: float
    delta: float
    epsilon_lower: float
    flagged: bool
    event: str
    direction: str
    p_lower: float
    q_upper: float
    samples: int


def clopper_pearson(successes: int, trials: int, alpha: float) -> tuple[float, float]:
    """One-sided ``1 - alpha`` Clopper-Pearson bounds ``(lower, upper)`` on a binomial
    probability (each bound holds with probability ``>= 1 - alpha`` on its own)."""
    n = check.integer(trials, "trials", minimum=1)
    k = check.integer(successes, "successes", minimum=0)
    if k > n:
        raise ValueError(f"successes must be at most trials={n}, got {k}")
    alpha = check.probability(alpha, "alpha")
    lower = 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))
    upper = 1.0 if k == n else float(stats.beta.ppf(1 - alpha, k + 1, n - k))
    return lower, upper


def _exp(x: float) -> float:
    """``e^x``, ``inf`` past the doubles (a huge claimed epsilon is simply never refuted)."""
    return math.exp(x) if x < 709 else math.inf


def repeat(mechanism: Callable[[object, np.random.Generator], float]) -> Sampler:
    """A sampler from a mechanism that releases one output per call."""

    def sampler(data: object, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.array([mechanism(data, rng) for _ in range(size)])

    return sampler


def _scalar_events(a: np.ndarray, b: np.ndarray, grid: int):
    cuts = np.unique(np.quantile(np.concatenate([a, b]), np.linspace(0, 1, grid + 2)[1:-1]))
    for t in cuts:
        yield f"x > {t:.6g}", (lambda x, t=t: x > t)
        yield f"x < {t:.6g}", (lambda x, t=t: x < t)


def _discrete_events(a: np.ndarray, b: np.ndarray, grid: int):
    values, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
    count_a = np.bincount(inverse[: a.size], minlength=values.size).astype(float)
    count_b = np.bincount(inverse[a.size :], minlength=values.size).astype(float)
    order = np.argsort(-(count_a + 1) / (count_b + 1))
    for j in range(1, min(len(values), grid) + 1):
        chosen = values[order[:j]]
        yield (
            f"x in {{{', '.join(str(v) for v in chosen.tolist())}}}",
            (lambda x, chosen=chosen: np.isin(x, chosen)),
        )


def _draw(sampler, data, gen, samples: int) -> np.ndarray:
    """``samples`` outputs of the sampler, checked: one output per sample (shape
    ``(samples,)``), numbers (Python integers allowed, as :func:`encode` makes), all finite."""
    out = np.asarray(sampler(data, gen, samples))
    if out.shape != (samples,):
        raise ValueError(
            f"sampler must return {samples} outputs (shape ({samples},)), got shape {out.shape}"
        )
    if out.dtype == object and all(isinstance(v, numbers.Integral) for v in out):
        return out  # large integer codes
    if out.dtype == bool:
        return out.astype(np.int64)
    if not np.issubdtype(out.dtype, np.number):
        raise ValueError(f"sampler must return numbers, got dtype {out.dtype}")
    if not np.all(np.isfinite(out)):
        raise ValueError("sampler returned NaN or infinite outputs")
    return out


def _one_direction(sampler, d, d_prime, epsilon, delta, samples, gen, alpha, kind, grid, label):
    a, b = _draw(sampler, d, gen, samples), _draw(sampler, d_prime, gen, samples)
    events = _scalar_events(a, b, grid) if kind == "scalar" else _discrete_events(a, b, grid)
    best, best_score = None, -math.inf
    for name, indicator in events:
        p, q = np.mean(indicator(a)), np.mean(indicator(b))
        excess = p - delta - (_exp(epsilon) * q if q > 0 else 0.0)
        score = excess / math.sqrt(p + q + 1 / samples)
        if score > best_score:
            best, best_score = (name, indicator), score
    name, indicator = best
    x, y = _draw(sampler, d, gen, samples), _draw(sampler, d_prime, gen, samples)
    p_lo, _ = clopper_pearson(int(np.sum(indicator(x))), samples, alpha / 4)
    _, q_hi = clopper_pearson(int(np.sum(indicator(y))), samples, alpha / 4)
    flagged = p_lo - _exp(epsilon) * q_hi > delta
    if p_lo <= delta:
        eps_lo = 0.0
    elif q_hi == 0:
        eps_lo = math.inf
    else:
        eps_lo = max(math.log((p_lo - delta) / q_hi), 0.0)
    return AuditResult(epsilon, delta, eps_lo, bool(flagged), name, label, p_lo, q_hi, samples)


def audit(
    sampler: Sampler,
    d: object,
    d_prime: object,
    *,
    epsilon: float,
    delta: float = 0.0,
    samples: int = 100_000,
    rng: np.random.Generator | int,
    alpha: float = 1e-3,
    kind: str = "scalar",
    grid: int = 50,
) -> AuditResult:
    """Audit the claim that ``sampler``'s mechanism is ``(epsilon, delta)``-DP on ``d, d_prime``.

    Parameters
    ----------
    sampler
        ``sampler(data, rng, size)`` returns ``size`` independent outputs of the mechanism.
    d, d_prime
        Neighbouring inputs (anything the sampler accepts).
    epsilon, delta
        The claim under test.
    samples
        Size of each selection and test sample (4 samples per direction are drawn).
    alpha
        Significance level: a mechanism that satisfies the claim is flagged with probability at
        most ``alpha``.
    kind
        ``"scalar"`` (threshold events) or ``"discrete"`` (sets of outcomes).
    grid
        Number of candidate events (quantiles, or outcome sets).
    """
    if not callable(sampler):
        raise TypeError(f"sampler must be callable as sampler(data, rng, size), got {sampler!r}")
    epsilon = check.nonnegative(epsilon, "epsilon")
    delta = check.delta(delta)
    samples = check.integer(samples, "samples", minimum=100)
    alpha = check.probability(alpha, "alpha")
    grid = check.integer(grid, "grid", minimum=1)
    if kind not in ("scalar", "discrete"):
        raise ValueError(f"kind must be 'scalar' or 'discrete', got {kind!r}")
    gen = check.rng(rng)
    args = (epsilon, delta, samples, gen, alpha, kind, grid)
    forward = _one_direction(sampler, d, d_prime, *args, "D vs D'")
    backward = _one_direction(sampler, d_prime, d, *args, "D' vs D")
    return max(forward, backward, key=lambda r: (r.flagged, r.epsilon_lower))


# --- samplers for the package's mechanisms, and the catalogue of neighbouring pairs -------------

#: Neighbouring inputs that expose the usual bugs. Scalars: counts differing by the sensitivity.
#: Utility vectors: one outcome good on ``D``, all others good on ``D'`` (50 outcomes). Query
#: streams for sparse vector: the "x-shape" (answers move in opposite directions), alternating
#: below/above, one-above, ``k`` zeros vs ``k`` ones, and ``m`` queries that are higher on ``D'``
#: followed by one that is not (exposes released noisy values).
PAIRS = {
    "count": (0.0, 1.0),
    "one vs rest": (np.r_[1.0, np.zeros(49)], np.r_[0.0, np.ones(49)]),
    "x-shape": ([1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]),
    "alternating": ([0, 1] * 3, [1, 0] * 3),
    "one above": ([0, 1], [1, 0]),
    "zeros vs ones": (np.zeros(30), np.ones(30)),
    "m below then one": (np.zeros(9), np.r_[np.ones(8), 0.0]),
}


def laplace_sampler(epsilon: float = 1.0, *, sensitivity: float = 1.0, safe: bool = True):
    """Sampler of :func:`dpteach.laplace` on a scalar input."""
    from .mechanisms import laplace

    return lambda x, rng, size: laplace(
        np.full(size, float(x)), sensitivity=sensitivity, epsilon=epsilon, rng=rng, safe=safe
    )


def gaussian_sampler(epsilon: float, delta: float, *, sensitivity: float = 1.0):
    """Sampler of :func:`dpteach.gaussian` on a scalar input."""
    from .mechanisms import gaussian

    return lambda x, rng, size: gaussian(
        np.full(size, float(x)), sensitivity=sensitivity, epsilon=epsilon, delta=delta, rng=rng
    )


def exponential_sampler(epsilon: float = 1.0, *, sensitivity: float = 1.0):
    """Sampler of :func:`dpteach.exponential` on a utility vector."""
    from .mechanisms import exponential

    return lambda u, rng, size: exponential(
        u, sensitivity=sensitivity, epsilon=epsilon, rng=rng, size=size
    )


def encode(values) -> int:
    """A short transcript (small integers in -50..49, ``None`` allowed) as one integer code."""
    code = 0
    for v in values:
        code = code * 101 + (100 if v is None else int(np.clip(v, -50, 49)) + 50)
    return code


def sparse_sampler(cls, *, threshold: float = 0.5, epsilon: float = 1.0, **kwargs) -> Sampler:
    """Sampler of one of the package's sparse-vector classes (:class:`~dpteach.AboveThreshold`,
    :class:`~dpteach.Sparse`, :class:`~dpteach.NumericSparse`) on a stream of true answers; the
    transcript (above/below, or ``floor`` of numeric answers) is :func:`encode`-d."""

    def once(stream, rng):
        sv = cls(threshold, sensitivity=1.0, epsilon=epsilon, rng=rng, **kwargs)
        out = []
        for a in stream:
            if sv.halted:
                break
            r = sv.test(a)
            out.append(int(r) if isinstance(r, bool) else None if r is None else math.floor(r))
        return encode(out)

    return repeat(once)
