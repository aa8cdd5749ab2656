"""The basic mechanisms: Laplace, Gaussian, exponential, and the sparse vector family.

Every mechanism takes the true value computed on the private data (data first) and the privacy
parameters keyword-only, an explicit ``rng`` (a ``numpy.random.Generator`` or a seed), and an
optional ``budget`` that is charged *before* any noise is drawn: a refused charge raises
:class:`~dpteach.privacy.BudgetExceededError` and releases nothing.

Sensitivities are with respect to whatever neighbouring relation the caller uses; in this book
it is replace-one neighbours, under which a linear query on a normalised histogram of ``n``
records has sensitivity ``1/n``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from . import _validate as check
from .privacy import PrivacyBudget, advanced_composition

Seed = np.random.Generator | int


def _noisy(value: object, noise_draw) -> float | np.ndarray:
    v = check.array(value, "value")
    out = v + noise_draw(v.shape)
    return float(out) if out.ndim == 0 else out


def laplace(
    value: object,
    *,
    sensitivity: float,
    epsilon: float,
    rng: Seed,
    budget: PrivacyBudget | None = None,
    safe: bool = False,
) -> float | np.ndarray:
    """The Laplace mechanism: ``value + Lap(sensitivity / epsilon)`` in every entry.

    Guarantee: ``epsilon``-DP when ``sensitivity`` bounds the L1 distance of ``value`` between
    neighbouring databases (Dwork-Roth Thm 3.6). For a vector of ``k`` linear queries under
    replace-one neighbours that is ``k/n``.

    Parameters
    ----------
    value
        The true answer, a scalar or an array (independent noise per entry).
    sensitivity
        L1 sensitivity, finite and > 0.
    epsilon
        Privacy parameter, finite and > 0.
    rng
        Generator or seed.
    budget
        Charged ``epsilon`` before the noise is drawn.
    safe
        Use :func:`safe_laplace_noise` instead of floating-point ``rng.laplace``. The naive
        ``value + rng.laplace(...)`` leaks through the floating-point rounding of the sum: some
        outputs are possible for one input and impossible for its neighbour (Mironov 2012).
    """
    scale = check.positive(sensitivity, "sensitivity") / check.positive(epsilon, "epsilon")
    gen = check.rng(rng)
    v = check.array(value, "value")
    if budget is not None:
        budget.charge(epsilon, label="laplace")
    if safe:
        out = _discrete_laplace_on_grid(v, sensitivity, epsilon, gen)
        return float(out) if out.ndim == 0 else out
    return _noisy(value, lambda shape: gen.laplace(0.0, scale, size=shape))


def grid_spacing(sensitivity: float, epsilon: float) -> float:
    """The power of two ``g`` used by the safe Laplace mechanism: about ``1/1024`` of the scale."""
    scale = check.positive(sensitivity, "sensitivity") / check.positive(epsilon, "epsilon")
    return 2.0 ** (math.floor(math.log2(scale)) - 10)


def _discrete_laplace_on_grid(
    v: np.ndarray, sensitivity: float, epsilon: float, gen: np.random.Generator
) -> np.ndarray:
    """Safe Laplace: ``(round(v/g) + Z) g`` with ``Z`` two-sided geometric, ``g`` a power of two.

    Rounding to the grid moves a neighbour's value by at most one more step, so the sensitivity in
    grid units is ``s = ceil(Delta/g) + 1``, and ``P[Z = z] ∝ exp(-eps |z| / s)`` makes the
    release exactly ``epsilon``-DP (noise scale ``s g / eps``, i.e. ``(1 + g/Delta)`` times the
    Laplace scale at most). Every output is an exact multiple of ``g`` (integers times a power of
    two are exact in floating point), and every multiple of ``g`` is possible from every input.
    """
    g = grid_spacing(sensitivity, epsilon)
    if np.any(np.abs(v) / g > 2.0**50):
        raise ValueError(
            f"value is too large for the safe Laplace grid (|value| must be < {g * 2.0**50:.3g})"
        )
    steps = math.ceil(sensitivity / g) + 1
    p = -math.expm1(-epsilon / steps)  # success probability of each geometric
    z = gen.geometric(p, size=v.shape) - gen.geometric(p, size=v.shape)
    return (np.round(v / g) + z) * g


def _analytic_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """delta(sigma) of the Gaussian mechanism, exactly (Balle and Wang 2018, Thm 8)."""
    a = sensitivity / (2 * sigma)
    b = epsilon * sigma / sensitivity
    return float(special.ndtr(a - b) - math.exp(epsilon + special.log_ndtr(-a - b)))


def gaussian_sigma(
    sensitivity: float, epsilon: float, delta: float, *, calibration: str = "analytic"
) -> float:
    """Standard deviation of the Gaussian mechanism for ``(epsilon, delta)``-DP.

    ``calibration="analytic"`` (default) is the smallest sigma that is exactly
    ``(epsilon, delta)``-DP, for any ``epsilon > 0`` (Balle and Wang 2018, Thm 8).
    ``calibration="classic"`` is ``sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon``, valid only
    for ``epsilon < 1`` (Dwork-Roth Thm A.1); it is never smaller than the analytic sigma.
    """
    sensitivity = check.positive(sensitivity, "sensitivity")
    epsilon = check.positive(epsilon, "epsilon")
    delta = check.delta(delta, allow_zero=False)
    if calibration == "classic":
        if epsilon >= 1:
            raise ValueError(f"epsilon must be < 1 for the classic calibration, got {epsilon}")
        return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    if calibration != "analytic":
        raise ValueError(f"calibration must be 'analytic' or 'classic', got {calibration!r}")
    # delta(sigma) decreases in sigma; bracket the root on a log scale and solve.
    lo, hi = sensitivity * 1e-3 / epsilon, sensitivity / epsilon
    while _analytic_delta(hi, sensitivity, epsilon) > delta:
        hi *= 2
    while _analytic_delta(lo, sensitivity, epsilon) <= delta:
        lo /= 2
    root = optimize.brentq(
        lambda log_s: _analytic_delta(math.exp(log_s), sensitivity, epsilon) - delta,
        math.log(lo),
        math.log(hi),
        xtol=1e-12,
    )
    sigma = math.exp(root)
    # Round up so that the returned sigma is never (even by round-off) too small.
    while _analytic_delta(sigma, sensitivity, epsilon) > delta:
        sigma *= 1 + 1e-9
    return sigma


def gaussian(
    value: object,
    *,
    sensitivity: float,
    epsilon: float,
    delta: float,
    rng: Seed,
    calibration: str = "analytic",
    budget: PrivacyBudget | None = None,
) -> float | np.ndarray:
    """The Gaussian mechanism: ``value + N(0, sigma^2)`` in every entry.

    Guarantee: ``(epsilon, delta)``-DP when ``sensitivity`` bounds the L2 distance of ``value``
    between neighbouring databases; sigma from :func:`gaussian_sigma` (analytic calibration of
    Balle and Wang 2018 by default, or the classic Dwork-Roth Thm A.1 for ``epsilon < 1``). For
    ``k`` linear queries under replace-one neighbours the L2 sensitivity is ``sqrt(k)/n``.
    ``budget`` is charged ``(epsilon, delta)`` before the noise is drawn.
    """
    sigma = gaussian_sigma(sensitivity, epsilon, delta, calibration=calibration)
    gen = check.rng(rng)
    check.array(value, "value")
    if budget is not None:
        budget.charge(epsilon, delta, label="gaussian")
    return _noisy(value, lambda shape: gen.normal(0.0, sigma, size=shape))


def exponential(
    scores: object,
    *,
    sensitivity: float,
    epsilon: float,
    rng: Seed,
    budget: PrivacyBudget | None = None,
    size: int | None = None,
) -> int | np.ndarray:
    """The exponential mechanism: index ``r`` with probability ``∝ exp(eps u(r) / (2 Delta))``.

    Guarantee: ``epsilon``-DP when every score ``u(r)`` changes by at most ``sensitivity``
    between neighbouring databases (McSherry and Talwar 2007; Dwork-Roth Thm 3.10). Sampled
    exactly with the Gumbel-max trick. With probability at least ``1 - beta`` the chosen score
    is within ``2 Delta ln(R / beta) / eps`` of the best (Thm 3.11).

    ``size`` draws that many independent selections at once (for simulation and auditing; each
    one is a separate ``epsilon``-DP release, so it cannot be combined with a ``budget``).

    Returns
    -------
    int or numpy.ndarray
        The index of the chosen outcome (an array of ``size`` indices if ``size`` is given).
    """
    u = check.array(scores, "scores", ndim=1)
    if u.size == 0:
        raise ValueError("scores must not be empty")
    scale = check.positive(epsilon, "epsilon") / (2 * check.positive(sensitivity, "sensitivity"))
    gen = check.rng(rng)
    if size is not None:
        size = check.integer(size, "size", minimum=1)
        if budget is not None:
            raise ValueError("size (repeated draws) cannot be combined with a budget")
        return np.argmax(scale * u + gen.gumbel(size=(size, u.size)), axis=1)
    if budget is not None:
        budget.charge(epsilon, label="exponential")
    return int(np.argmax(scale * u + gen.gumbel(size=u.size)))


class Sparse:
    """The sparse vector technique: report which of a stream of queries are above a threshold.

    Dwork-Roth Algorithm 2 (``Sparse``): with ``sigma = 2 c Delta / eps`` (pure DP) or
    ``sigma = Delta sqrt(32 c ln(1/delta)) / eps`` (approximate DP), the threshold is perturbed
    once, ``T_hat = T + Lap(sigma)``, each query by fresh ``Lap(2 sigma)``, and ``T_hat`` is
    redrawn after every "above" answer. It halts after ``c`` (``cutoff``) aboves.

    Guarantee: ``epsilon``-DP (``delta = 0``) or ``(epsilon, delta)``-DP for any adaptively
    chosen stream of queries of sensitivity ``Delta``, however many are below the threshold
    (Dwork-Roth Thm 3.25). The budget is charged the whole ``(epsilon, delta)`` on construction,
    before anything is released.

    Use :meth:`test` with each query's true value; it returns ``True`` for above, ``False`` for
    below.
    """

    def __init__(
        self,
        threshold: float,
        *,
        sensitivity: float,
        epsilon: float,
        rng: Seed,
        cutoff: int = 1,
        delta: float = 0.0,
        budget: PrivacyBudget | None = None,
    ):
        self.threshold = check.real(threshold, "threshold")
        self.sensitivity = check.positive(sensitivity, "sensitivity")
        self.epsilon = check.positive(epsilon, "epsilon")
        self.cutoff = check.integer(cutoff, "cutoff", minimum=1)
        self.delta = check.delta(delta)
        self._rng = check.rng(rng)
        self.sigma = self._sigma(self.epsilon)
        if budget is not None:
            budget.charge(self.epsilon, self.delta, label=type(self).__name__)
        self.above_count = 0
        self.answered = 0
        self._noisy_threshold = self._draw_threshold()

    def _sigma(self, epsilon: float) -> float:
        c, delta = self.cutoff, self.delta
        if delta == 0:
            return 2 * c * self.sensitivity / epsilon
        # c AboveThreshold runs at eps' = eps / sqrt(8 c ln(1/delta)), composed with advanced
        # composition; check that the composition really stays within epsilon.
        eps_each = epsilon / math.sqrt(8 * c * math.log(1 / delta))
        if advanced_composition(eps_each, c, delta)[0] > epsilon:
            raise ValueError(
                f"epsilon={epsilon} is too large for the advanced-composition calibration with "
                f"cutoff={c} and delta={delta}; use delta=0"
            )
        return 2 * self.sensitivity / eps_each

    def _draw_threshold(self) -> float:
        return self.threshold + self._rng.laplace(0.0, self.sigma)

    @property
    def halted(self) -> bool:
        """True once ``cutoff`` queries were above the threshold."""
        return self.above_count >= self.cutoff

    def _compare(self, value: object) -> bool:
        if self.halted:
            raise RuntimeError(f"{type(self).__name__} has halted after {self.cutoff} above(s)")
        value = check.real(value, "value")
        self.answered += 1
        above = value + self._rng.laplace(0.0, 2 * self.sigma) >= self._noisy_threshold
        if above:
            self.above_count += 1
            self._noisy_threshold = self._draw_threshold()
        return bool(above)

    def test(self, value: float) -> bool:
        """Is the query with true answer ``value`` (noisily) above the threshold?"""
        return self._compare(value)


class AboveThreshold(Sparse):
    """AboveThreshold (Dwork-Roth Algorithm 1): sparse vector with cutoff 1.

    ``T_hat = T + Lap(2 Delta / eps)``, each query gets ``Lap(4 Delta / eps)``; it halts at the
    first above. Guarantee: ``epsilon``-DP for an adaptive stream of queries of sensitivity
    ``Delta`` (Dwork-Roth Thm 3.23). The budget is charged ``epsilon`` on construction.
    """

    def __init__(
        self,
        threshold: float,
        *,
        sensitivity: float,
        epsilon: float,
        rng: Seed,
        budget: PrivacyBudget | None = None,
    ):
        super().__init__(
            threshold, sensitivity=sensitivity, epsilon=epsilon, rng=rng, cutoff=1, budget=budget
        )


class NumericSparse(Sparse):
    """NumericSparse (Dwork-Roth Algorithm 3): sparse vector that also answers the above queries.

    The parameters are Dwork-Roth's: ``eps_1 = 8 eps / 9`` for the comparisons (a :class:`Sparse`
    instance) and ``eps_2 = 2 eps / 9``, each above query being answered with fresh
    ``Lap(2 c Delta / eps_2)`` noise; the ``c`` answers then cost ``eps_2 / 2 = eps / 9``, so the
    total is ``eps`` (pure DP). For ``delta > 0``: ``eps_1 = sqrt(512)/(sqrt(512)+1) eps``,
    ``eps_2 = 2/(sqrt(512)+1) eps``, comparisons at ``delta/2`` and answer noise
    ``Lap(Delta sqrt(32 c ln(2/delta)) / eps_2)``. Guarantee: ``epsilon``-DP, or
    ``(epsilon, delta)``-DP (Dwork-Roth Thm 3.28). :meth:`test` returns the noisy answer for an
    above query and ``None`` for a below one.
    """

    def __init__(
        self,
        threshold: float,
        *,
        sensitivity: float,
        epsilon: float,
        rng: Seed,
        cutoff: int = 1,
        delta: float = 0.0,
        budget: PrivacyBudget | None = None,
    ):
        threshold = check.real(threshold, "threshold")
        rng = check.rng(rng)
        epsilon = check.positive(epsilon, "epsilon")
        delta = check.delta(delta)
        cutoff = check.integer(cutoff, "cutoff", minimum=1)
        sensitivity = check.positive(sensitivity, "sensitivity")
        root = math.sqrt(512)
        share = 8 / 9 if delta == 0 else root / (root + 1)
        # Dwork-Roth's eps_2 (2 eps/9, or 2 eps/(sqrt(512)+1)): the answers themselves cost only
        # half of it, e.g. c answers with Lap(2 c Delta / eps_2) noise are eps_2/2-DP.
        self.epsilon_answers = epsilon * (2 / 9 if delta == 0 else 2 / (root + 1))
        if delta == 0:
            self.answer_scale = 2 * cutoff * sensitivity / self.epsilon_answers
        else:
            noise = sensitivity * math.sqrt(32 * cutoff * math.log(2 / delta))
            self.answer_scale = noise / self.epsilon_answers
        if budget is not None:
            budget.charge(epsilon, delta, label="NumericSparse")
        super().__init__(
            threshold,
            sensitivity=sensitivity,
            epsilon=epsilon * share,
            rng=rng,
            cutoff=cutoff,
            delta=delta / 2,
        )
        self.epsilon, self.delta = epsilon, delta

    def test(self, value: float) -> float | None:
        """The noisy answer ``value + Lap(answer_scale)`` if above, else ``None``."""
        if not self._compare(value):
            return None
        return float(value + self._rng.laplace(0.0, self.answer_scale))
