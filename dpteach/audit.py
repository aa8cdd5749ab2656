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

A pass is evidence only if the audit had power: :func:`smallest_overspend_caught` measures the
smallest overspend of epsilon a given audit setting catches, and :func:`samples_to_flag` the
sample size at which a broken mechanism is flagged reliably.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from . import _validate as check
from .data import Dataset
from .domain import Domain
from .mechanisms import exponential, gaussian, laplace
from .mw import OnlinePMW, mwem, private_mw
from .queries import MarginalWorkload

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
    from scipy import stats  # imported here: scipy.stats takes ~0.4 s to import

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
    """Threshold events ``x > t``, ``x < t`` for ``t`` on a quantile grid of the pooled sample.

    Returns the number of outputs of ``a`` and of ``b`` in each event (events in the order
    ``x > t_1, x < t_1, x > t_2, ...``; counted on the sorted samples, one pass for all events)
    and ``event(i)``, the name and indicator function of event ``i``.
    """
    cuts = np.unique(np.quantile(np.concatenate([a, b]), np.linspace(0, 1, grid + 2)[1:-1]))

    def counts(x: np.ndarray) -> np.ndarray:
        s = np.sort(x)
        above, below = s.size - np.searchsorted(s, cuts, "right"), np.searchsorted(s, cuts)
        return np.column_stack([above, below]).ravel()

    def event(i: int):
        t = cuts[i // 2]
        if i % 2 == 0:
            return f"x > {t:.6g}", (lambda x: x > t)
        return f"x < {t:.6g}", (lambda x: x < t)

    return counts(a), counts(b), event


def _discrete_events(a: np.ndarray, b: np.ndarray, grid: int):
    """The sets of the ``j = 1, 2, ...`` outcomes with the largest ratio ``(count_a + 1) /
    (count_b + 1)``: the counts of ``a`` and ``b`` in each set (cumulative sums over the
    outcomes in that order) and ``event(i)``, the name and indicator function of set ``i``."""
    values, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
    inverse = inverse.ravel()
    count_a = np.bincount(inverse[: a.size], minlength=values.size)
    count_b = np.bincount(inverse[a.size :], minlength=values.size)
    top = np.argsort(-(count_a + 1) / (count_b + 1))[:grid]

    def event(i: int):
        chosen = values[top[: i + 1]]
        name = f"x in {{{', '.join(str(v) for v in chosen.tolist())}}}"
        return name, (lambda x: np.isin(x, chosen))

    return np.cumsum(count_a[top]), np.cumsum(count_b[top]), event


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
    events = _scalar_events if kind == "scalar" else _discrete_events
    count_a, count_b, event = events(a, b, grid)
    # Pick the most violating event: the largest excess p - delta - e^eps q over a rough scale
    # of its sampling noise, sqrt(p + q + 1/samples) (not its exact standard error).
    p, q = count_a / samples, count_b / samples
    penalty = np.zeros(q.shape)
    penalty[q > 0] = _exp(epsilon) * q[q > 0]
    score = (p - delta - penalty) / np.sqrt(p + q + 1 / samples)
    name, indicator = event(int(np.argmax(score)))
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
#: below/above, one-above, ``k`` zeros vs ``k`` ones, and ``m = 16`` queries that are higher on
#: ``D'`` followed by one that is not (exposes released noisy values).
PAIRS = {
    "count": (0.0, 1.0),
    "one vs rest": (np.r_[1.0, np.zeros(49)], np.r_[0.0, np.ones(49)]),
    "x-shape": ([1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]),
    "alternating": ([0, 1] * 3, [1, 0] * 3),
    "one above": ([0, 1], [1, 0]),
    "zeros vs ones": (np.zeros(30), np.ones(30)),
    "m below then one": (np.zeros(17), np.r_[np.ones(16), 0.0]),
}


def laplace_sampler(epsilon: float = 1.0, *, sensitivity: float = 1.0, safe: bool = True):
    """Sampler of :func:`dpteach.laplace` on a scalar input."""
    return lambda x, rng, size: laplace(
        np.full(size, float(x)), sensitivity=sensitivity, epsilon=epsilon, rng=rng, safe=safe
    )


def gaussian_sampler(epsilon: float, delta: float, *, sensitivity: float = 1.0, safe: bool = True):
    """Sampler of :func:`dpteach.gaussian` on a scalar input (``safe=False``: the naive one)."""
    return lambda x, rng, size: gaussian(
        np.full(size, float(x)), sensitivity=sensitivity, epsilon=epsilon, delta=delta, rng=rng,
        safe=safe,
    )  # fmt: skip


def exponential_sampler(epsilon: float = 1.0, *, sensitivity: float = 1.0):
    """Sampler of :func:`dpteach.exponential` on a utility vector (parameters checked here)."""
    epsilon = check.positive(epsilon, "epsilon")
    sensitivity = check.positive(sensitivity, "sensitivity")

    return lambda u, rng, size: exponential(
        u, sensitivity=sensitivity, epsilon=epsilon, rng=rng, size=size
    )


def encode(values, *, clip: bool = False) -> int:
    """A short transcript (integers in -50..49, ``None`` allowed) as one integer code, one-to-one.

    A non-integer (``1.7``) or, unless ``clip``, a value outside -50..49 is refused with a
    ``ValueError``: truncating or clipping it silently would give different transcripts the same
    code. ``clip=True`` clips to -50..49 on purpose (post-processing, so an audit of the clipped
    transcript is still a valid audit of the mechanism, if a weaker one).
    """
    check.boolean(clip, "clip")
    if isinstance(values, str | bytes):
        raise TypeError(f"values must be a sequence of integers or None, got {values!r}")
    code = 0
    for v in values:
        if v is None:
            code = code * 101 + 100
            continue
        integral = isinstance(v, numbers.Integral) or (
            isinstance(v, numbers.Real) and float(v).is_integer()  # 3.0 is 3; 1.7, nan are not
        )
        if not integral:
            raise ValueError(f"values must be integers in -50..49 or None, got {v!r}")
        v = int(v)
        if clip:
            v = min(max(v, -50), 49)
        elif not -50 <= v <= 49:
            raise ValueError(
                f"values must be integers in -50..49 or None, got {v} (pass clip=True to clip)"
            )
        code = code * 101 + v + 50
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
        return encode(out, clip=True)  # a numeric answer far out is clipped (post-processing)

    return repeat(once)


# --- the audit's power: how large a sample, and how large an overspend, does it take? -----------


def samples_to_flag(
    sampler: Sampler,
    d: object,
    d_prime: object,
    *,
    epsilon: float,
    sizes: Sequence[int],
    delta: float = 0.0,
    seeds: int = 20,
    required: int = 19,
    alpha: float = 1e-3,
    kind: str = "scalar",
    grid: int = 50,
) -> int | None:
    """The smallest sample size in ``sizes`` at which the audit flags the claim reliably.

    "Reliably" means in at least ``required`` of ``seeds`` audits (seeds ``0 .. seeds-1``). The
    sizes are tried in increasing order; at each, the audits stop as soon as the outcome is
    decided (``seeds - required + 1`` misses, or ``required`` flags), so a search over a doubling
    grid costs little more than the audits at the answer. Returns ``None`` if no size in
    ``sizes`` suffices (the mechanism may still be broken: a larger sample may catch it).
    """
    seeds = check.integer(seeds, "seeds", minimum=1)
    required = check.integer(required, "required", minimum=1)
    if required > seeds:
        raise ValueError(f"required must be at most seeds={seeds}, got {required}")
    sizes = sorted(check.integer(s, "sizes[i]", minimum=100) for s in sizes)
    if not sizes:
        raise ValueError("sizes must name at least one sample size")
    for size in sizes:
        flags = misses = 0
        for seed in range(seeds):
            result = audit(sampler, d, d_prime, epsilon=epsilon, delta=delta, samples=size,
                           rng=seed, alpha=alpha, kind=kind, grid=grid)  # fmt: skip
            flags += result.flagged
            misses += not result.flagged
            if flags >= required or misses > seeds - required:
                break
        if flags >= required:
            return size
    return None


def smallest_overspend_caught(
    make_sampler: Callable[[float], Sampler],
    d: object,
    d_prime: object,
    *,
    epsilon: float,
    samples: int,
    factors: Sequence[float] = (1.25, 1.5, 2.0, 3.0, 5.0, 10.0),
    delta: float = 0.0,
    rng: int = 0,
    alpha: float = 1e-3,
    kind: str = "scalar",
    grid: int = 50,
) -> float | None:
    """The audit's power: the smallest overspend factor ``f`` that this audit setting catches.

    ``make_sampler(e)`` must return a sampler of the mechanism run at privacy parameter ``e``
    (with ``delta`` unchanged). For a factor ``f`` the mechanism is run at ``f * epsilon`` and
    audited against the claim ``epsilon`` (same pair, sample size, seed and events); the smallest
    ``f`` in ``factors`` that is flagged is returned (found by bisection, assuming a larger
    overspend is never harder to catch), ``None`` if even the largest is not. ``None`` means the
    audit has **no power** here: it would pass a mechanism that spends ``max(factors)`` times
    its claim, so its pass is no evidence about a bug of that size. One seed per factor: the
    answer is the power of this audit as run, not an average over seeds.
    """
    epsilon = check.positive(epsilon, "epsilon")
    factors = sorted(check.positive(f, "factors[i]") for f in factors)
    if not factors or factors[0] < 1:
        raise ValueError(f"factors must be a non-empty list of overspends >= 1, got {factors}")

    def caught(f: float) -> bool:
        sampler = make_sampler(f * epsilon)
        result = audit(sampler, d, d_prime, epsilon=epsilon, delta=delta, samples=samples,
                       rng=rng, alpha=alpha, kind=kind, grid=grid)  # fmt: skip
        return result.flagged

    # Bisection, assuming that a larger overspend is never harder to catch: the largest factor
    # first (not caught: no power), then halve the range of candidates.
    if not caught(factors[-1]):
        return None
    lo, hi = -1, len(factors) - 1  # factors[hi] is caught; factors[lo] (if any) is not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if caught(factors[mid]) else (mid, hi)
    return factors[hi]


# --- samplers of the iterative algorithms, on a one-record database ------------------------------
# The input ``x`` (0 or 1, e.g. ``PAIRS["count"]``) is the value of the only record of a database
# over one binary attribute, so the two inputs are replace-one neighbours with sensitivity 1; the
# workload is the attribute's 1-way marginal, and the output is ``p_hat(0)`` rounded to a code.


def _on_one_record(run: Callable[[object, object, np.random.Generator], object]) -> Sampler:
    """A sampler that calls ``run(data, workload, rng)`` once per sample on the one-record
    database of ``x`` and its workload (built once per call of the sampler, not per sample)."""

    def sampler(x: object, rng: np.random.Generator, size: int) -> np.ndarray:
        domain = Domain.binary(1)
        data, workload = Dataset([[int(x)]], domain), MarginalWorkload.all_kway(domain, 1)
        return repeat(lambda _, gen: run(data, workload, gen))(x, rng, size)

    return sampler


def private_mw_sampler(epsilon: float, *, alpha: float = 0.9) -> Sampler:
    """Sampler of :func:`dpteach.mw.private_mw` on a one-record database (output: ``p_hat(0)``
    in hundredths)."""

    def once(data, workload, rng):
        result = private_mw(data, workload, epsilon=epsilon, alpha=alpha, rng=rng)
        return round(result.synthetic[0] * 100)

    return _on_one_record(once)


def mwem_sampler(epsilon: float, *, rounds: int = 1) -> Sampler:
    """Sampler of :func:`dpteach.mw.mwem` on a one-record database (output: ``p_hat(0)`` in
    twentieths)."""

    def once(data, workload, rng):
        result = mwem(data, workload, epsilon=epsilon, rounds=rounds, iterations=1, rng=rng)
        return round(result.synthetic[0] * 20)

    return _on_one_record(once)


def online_pmw_sampler(epsilon: float, *, alpha: float = 0.9) -> Sampler:
    """Sampler of :class:`dpteach.mw.OnlinePMW` on a one-record database, asked ``1[x = 0]``
    twice (with one hard query allowed); the transcript of answers in quarters is encoded."""

    def once(data, workload, rng):
        pmw = OnlinePMW(data, epsilon=epsilon, alpha=alpha, rng=rng, max_hard=1)
        q = np.array([1.0, 0.0])
        answers = [None if pmw.halted else round(pmw.answer(q) * 4) for _ in range(2)]
        return encode(answers, clip=True)

    return _on_one_record(once)
