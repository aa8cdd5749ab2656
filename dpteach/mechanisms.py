"""The basic mechanisms: Laplace, Gaussian, exponential, and the sparse vector family.

Every mechanism takes the true value computed on the private data (data first) and the privacy
parameters keyword-only, an explicit ``rng`` (a ``numpy.random.Generator`` or a seed), and an
optional ``budget`` that is charged *before* any noise is drawn: a refused charge raises
:class:`~dpteach.privacy.BudgetExceededError` and releases nothing.

Sensitivities are with respect to whatever neighbouring relation the caller uses; in this book
it is replace-one neighbours, under which a linear query on a normalised histogram of ``n``
records has sensitivity ``1/n``.

Each public function validates its inputs once. The algorithms built on these mechanisms validate
theirs at their own public boundary and then call the internal paths, which take checked values
and draw exactly what the public functions draw: :func:`_laplace` on a grid from
:func:`_safe_laplace_grid` (computed before the charge, so that nothing refuses after it),
:func:`_exponential`, :func:`_gaussian`, ``Sparse._checked``, and ``privacy._charge``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from . import _noise
from . import _validate as check
from .privacy import (
    PrivacyBudget,
    ZCDPBudget,
    _advanced_composition,
    _charge,
    _zcdp_rho_for,
    check_budget,
    gaussian_zcdp,
)

Seed = np.random.Generator | int


def _as_output(out: np.ndarray) -> float | np.ndarray:
    return float(out) if out.ndim == 0 else out


def laplace(
    value: object,
    *,
    sensitivity: float,
    epsilon: float,
    rng: Seed,
    budget: PrivacyBudget | ZCDPBudget | None = None,
    safe: bool = True,
) -> float | np.ndarray:
    """The Laplace mechanism: ``value + Lap(sensitivity / epsilon)`` in every entry.

    Guarantee: ``epsilon``-DP when ``sensitivity`` bounds the L1 distance of ``value`` between
    neighbouring databases (Dwork-Roth Thm 3.6). For a vector of ``k`` linear queries under
    replace-one neighbours that is ``k/n``.

    By default (``safe=True``) the noise is floating-point safe and the guarantee holds exactly
    for the released doubles: ``value`` is snapped to a power-of-two grid ``g`` and exact discrete
    Laplace noise is added in integer arithmetic (see :func:`safe_laplace_grid`; the noise scale
    is at most ``1 + 2^-10`` times ``sensitivity / epsilon``, and each coordinate's rounding step
    is accounted for). Snapping is exact for every finite double, however large (values beyond
    ``2^61 g`` go through exact Python integers): nothing is clamped or refused because of a
    value's magnitude, so neither the answer nor a refusal depends on it.

    Parameters
    ----------
    value
        The true answer, a scalar or an array (independent noise per entry). Not modified.
    sensitivity
        L1 sensitivity of the whole of ``value``, finite and > 0.
    epsilon
        Privacy parameter, finite and > 0.
    rng
        Generator or seed. A passed Generator is consumed (advanced); the same seed gives the
        same output.
    budget
        Charged ``epsilon`` (a :class:`~dpteach.privacy.ZCDPBudget`: ``epsilon^2/2``) before the
        noise is drawn.
    safe
        ``False`` is a *teaching option only*: the textbook ``value + rng.laplace(...)`` in
        floating point, which is **not** ``epsilon``-DP: its low-order bits reveal the input,
        and some outputs are possible from one input and impossible from its neighbour (Mironov
        2012; see the auditing appendix). Never use it to release data.
    """
    sensitivity = check.positive(sensitivity, "sensitivity")
    epsilon = check.positive(epsilon, "epsilon")
    gen = check.rng(rng)
    v = check.array(value, "value")
    check.boolean(safe, "safe")
    if safe:
        grid = _safe_laplace_grid(sensitivity, epsilon, k=max(v.size, 1))
    else:
        scale = check.finite_ratio(sensitivity, epsilon, "the Laplace scale sensitivity/epsilon")
    _charge(check_budget(budget), epsilon, label="laplace")
    if safe:
        return _as_output(_safe_laplace_noise(v, grid, gen))
    return _as_output(v + gen.laplace(0.0, scale, size=v.shape))


def _laplace(value: float | np.ndarray, grid: _noise.SafeGrid, gen) -> float | np.ndarray:
    """The safe :func:`laplace` (no budget) of a checked finite ``value`` (a float or a float
    array) on the ``grid`` of :func:`_safe_laplace_grid` for its size: what the mechanisms call
    after validating their inputs and computing the grid before their charge."""
    return _as_output(_safe_laplace_noise(np.asarray(value, dtype=float), grid, gen))


def _safe_laplace_noise(v: np.ndarray, grid: _noise.SafeGrid, gen) -> np.ndarray:
    """``v`` snapped to ``grid`` plus exact discrete Laplace noise of integer scale
    ``grid.scale`` in every entry (any shape), released as doubles: the safe path of
    :func:`laplace`, whose ``grid`` fixes the guarantee (batched releases, e.g. one per row, pass
    the grid of one release)."""
    noise = _noise.discrete_laplace(grid.scale, v.size, gen).reshape(v.shape)
    return grid.release(grid.snap(v) + noise)


def safe_laplace_grid(sensitivity: float, epsilon: float, *, k: int = 1) -> _noise.SafeGrid:
    """The grid and integer noise scale of the safe Laplace mechanism on ``k`` coordinates.

    ``g = 2^e`` is the largest power of two with ``k g`` and ``eps g`` at most ``Delta / 2^11``.
    Snapping a coordinate to the grid can move it by one extra step, so the snapped vectors of
    neighbouring inputs differ by at most ``steps = floor(Delta/g) + k`` steps in L1, and the
    exact discrete Laplace noise of integer scale ``T = ceil(steps / eps)`` makes the release
    exactly ``eps``-DP. Its scale ``T g`` is at most ``(1 + k g/Delta + eps g/Delta) Delta/eps``,
    i.e. at most 0.1 % above the Laplace scale. Raises ``ValueError`` (before any charge; the
    check uses only the public parameters) when ``Delta/eps > 1e300`` or ``T > 2^52``.
    """
    sensitivity = check.positive(sensitivity, "sensitivity")
    epsilon = check.positive(epsilon, "epsilon")
    k = check.integer(k, "k", minimum=1)
    return _safe_laplace_grid(sensitivity, epsilon, k=k)


def _safe_laplace_grid(sensitivity: float, epsilon: float, *, k: int = 1) -> _noise.SafeGrid:
    """:func:`safe_laplace_grid` for checked values (floats > 0, an int ``k >= 1``): what the
    mechanisms call after validating their inputs. Still refuses an unrepresentable scale."""
    return _noise.safe_grid(sensitivity, epsilon, k)


def grid_spacing(sensitivity: float, epsilon: float, *, k: int = 1) -> float:
    """The grid spacing ``g`` used by the safe Laplace mechanism on ``k`` coordinates."""
    return safe_laplace_grid(sensitivity, epsilon, k=k).spacing


def _analytic_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """delta(sigma) of the Gaussian mechanism, exactly (Balle and Wang 2018, Thm 8)."""
    a = sensitivity / sigma / 2  # (no overflow of 2 sigma or eps sigma near the largest double)
    b = epsilon * (sigma / sensitivity)
    return float(special.ndtr(a - b) - math.exp(epsilon + special.log_ndtr(-a - b)))


def gaussian_sigma(
    sensitivity: float,
    epsilon: float,
    delta: float,
    *,
    calibration: str = "analytic",
    safe: bool = True,
) -> float:
    """Standard deviation of the Gaussian mechanism for ``(epsilon, delta)``-DP.

    ``calibration="analytic"`` (default) is the smallest sigma that makes *continuous* Gaussian
    noise exactly ``(epsilon, delta)``-DP, for any ``epsilon > 0`` (Balle and Wang 2018, Thm 8).
    ``calibration="classic"`` is ``sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon``, valid only
    for ``epsilon < 1`` (Dwork-Roth Thm A.1); it is never smaller than the analytic sigma.

    ``safe=True`` (default) returns the sigma of the mechanism :func:`gaussian` draws by default,
    the *discrete* Gaussian, for which the analytic calibration (exact for continuous noise only)
    is not proved: its sigma is at least :func:`discrete_gaussian_sigma` (the calibration through
    zCDP and Canonne-Kamath-Steinke's conversion, 4-18 % above the analytic sigma for ``epsilon``
    in [0.1, 10] and ``delta`` in [1e-9, 1e-3], about 7 % at ``epsilon = 1, delta = 1e-6``),
    i.e. ``max(calibration's sigma, discrete_gaussian_sigma)``. (The mechanism's own sigma is a
    little larger still, for the grid's and the integer variance's rounding: at most about
    ``1 + 2^-10`` times when ``sigma >= sensitivity`` and the grid is not coarsened; see
    :func:`gaussian`.) ``safe=False`` returns the continuous calibration alone.
    """
    sensitivity = check.positive(sensitivity, "sensitivity")
    epsilon = check.positive(epsilon, "epsilon")
    delta = check.delta(delta, allow_zero=False)
    check.boolean(safe, "safe")
    return _gaussian_sigma(sensitivity, epsilon, delta, calibration, safe=safe)


def _gaussian_sigma(
    sensitivity: float, epsilon: float, delta: float, calibration: str, *, safe: bool = True
) -> float:
    """:func:`gaussian_sigma` for checked values (``calibration`` is still checked)."""
    sigma = _continuous_sigma(sensitivity, epsilon, delta, calibration)
    if safe:
        return max(sigma, _discrete_gaussian_sigma(sensitivity, epsilon, delta))
    return sigma


def discrete_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """The sigma of the floating-point-safe (discrete) Gaussian mechanism for
    ``(epsilon, delta)``-DP, per unit of L2 sensitivity ``Delta``: ``Delta / sqrt(2 rho)``.

    Canonne, Kamath and Steinke 2020 (arXiv:2004.00010): adding independent discrete Gaussians
    ``N_Z(0, sigma^2)`` to an integer vector of L2 sensitivity ``Delta`` is
    ``rho = Delta^2 / (2 sigma^2)``-zCDP *exactly as for the continuous Gaussian* (Theorem 14;
    Theorem 4 in one dimension), and ``rho``-zCDP implies ``(epsilon, delta)``-DP with their
    conversion (Corollary 13, :func:`~dpteach.privacy.zcdp_delta`). ``rho`` is the largest with
    that ``delta`` at most the given one (:func:`~dpteach.privacy.zcdp_rho_for`). The continuous
    analytic calibration cannot be reused: the discrete Gaussian's ``(epsilon, delta)`` curve is
    close to, but not the same as, the continuous one's.
    """
    sensitivity = check.positive(sensitivity, "sensitivity")
    epsilon = check.positive(epsilon, "epsilon")
    return _discrete_gaussian_sigma(sensitivity, epsilon, check.delta(delta, allow_zero=False))


def _discrete_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """:func:`discrete_gaussian_sigma` for checked values."""
    unit = _discrete_sigma_unit(epsilon, delta)
    return check.finite_ratio(sensitivity * unit, 1.0, "the discrete Gaussian sigma")


@functools.lru_cache(maxsize=256)
def _discrete_sigma_unit(epsilon: float, delta: float) -> float:
    rho = _zcdp_rho_for(epsilon, delta)
    return 1 / math.sqrt(2 * rho)


@functools.lru_cache(maxsize=256)  # a root search; the error sweeps call it with the same values
def _continuous_sigma(sensitivity: float, epsilon: float, delta: float, calibration: str) -> float:
    """:func:`gaussian_sigma` for continuous noise (``safe=False``)."""
    if calibration == "classic":
        if epsilon >= 1:
            raise ValueError(f"epsilon must be < 1 for the classic calibration, got {epsilon}")
        sigma = sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
        if not math.isfinite(sigma):
            raise ValueError(f"sigma overflows for epsilon={epsilon:.3g}; use a larger epsilon")
        return sigma
    if calibration != "analytic":
        raise ValueError(f"calibration must be 'analytic' or 'classic', got {calibration!r}")
    # delta(sigma) decreases in sigma; bracket the root on a log scale and solve. The epsilon = 0
    # calibration (sigma ~ Delta / (delta sqrt(2 pi)) <= Delta / delta) bounds sigma above, so the
    # bracket is finite for any epsilon, however tiny; each search halves or doubles at most
    # 2,200 times (the range of a double), so it cannot hang.
    hi = sensitivity * min(1 / epsilon, 1 / delta)
    hi = _double_until(hi, lambda s: _analytic_delta(s, sensitivity, epsilon) <= delta, 2.0)
    lo = _double_until(hi / 2, lambda s: _analytic_delta(s, sensitivity, epsilon) > delta, 0.5)
    from scipy import optimize  # imported here: scipy.optimize takes ~0.2 s to import

    root = optimize.brentq(
        lambda log_s: _analytic_delta(math.exp(log_s), sensitivity, epsilon) - delta,
        math.log(lo),
        math.log(hi),
        xtol=1e-12,
    )
    sigma = math.exp(root)
    # Round up so that the returned sigma is never (even by round-off) too small.
    while _analytic_delta(sigma, sensitivity, epsilon) > delta:
        sigma = max(sigma * (1 + 1e-9), math.nextafter(sigma, math.inf))
    return sigma


def _double_until(x: float, done, factor: float) -> float:
    """Multiply ``x`` by ``factor`` until ``done(x)``; ``ValueError`` if it leaves the doubles."""
    for _ in range(2200):
        if not (math.isfinite(x) and x > 0):
            break
        if done(x):
            return x
        x *= factor
    raise ValueError(
        "sigma of the Gaussian mechanism is not representable for these parameters "
        "(sensitivity, epsilon, delta); use less extreme values"
    )


def gaussian(
    value: object,
    *,
    sensitivity: float,
    epsilon: float,
    delta: float,
    rng: Seed,
    calibration: str = "analytic",
    budget: PrivacyBudget | ZCDPBudget | None = None,
    safe: bool = True,
) -> float | np.ndarray:
    """The Gaussian mechanism: ``value + N(0, sigma^2)`` in every entry.

    Guarantee: ``(epsilon, delta)``-DP when ``sensitivity`` bounds the L2 distance of ``value``
    between neighbouring databases. For ``k`` linear queries under replace-one neighbours the
    L2 sensitivity is ``sqrt(k)/n``.

    By default (``safe=True``) the noise is floating-point safe and the guarantee holds exactly
    for the released doubles. ``value`` (``k`` entries) is snapped to a power-of-two grid ``g``
    (``sqrt(k) g <= Delta / 2^11``, or coarser when the variance would exceed ``2^50`` steps);
    snapping moves each entry by at most ``g/2``, so snapped neighbours differ by at most
    ``s = Delta/g + sqrt(k)`` steps in L2. Exact discrete Gaussian
    noise ``N_Z(0, sigma_Z^2)`` of variance ``sigma_Z^2 >= (sigma / Delta)^2 s^2`` steps is added
    in integer arithmetic (Canonne-Kamath-Steinke 2020, Algorithm 3; :mod:`dpteach._noise`), and
    the integers are scaled back by ``g``. That release is ``rho = s^2 / (2 sigma_Z^2)``-zCDP
    (CKS Theorem 14), hence ``(epsilon, delta)``-DP by their conversion (Corollary 13); sigma is
    :func:`gaussian_sigma` (``max`` of the chosen calibration and :func:`discrete_gaussian_sigma`),
    times a factor just above 1 for the rounding of ``s`` and of the integer variance (at most
    about ``1 + 2^-10`` when ``sigma >= Delta`` and the grid is not coarsened). Snapping is exact
    for every finite double, however large: nothing is clamped or refused because of a value's
    magnitude.

    ``budget`` is charged ``(epsilon, delta)`` before the noise is drawn; a
    :class:`~dpteach.privacy.ZCDPBudget` is charged the release's own ``rho`` (above, or
    ``Delta^2/(2 sigma^2)`` for continuous noise). A passed Generator is consumed; the same seed
    gives the same output.

    ``safe=False`` is a *teaching option only*: ``value + rng.normal(0, sigma)`` in floating
    point with sigma from the continuous calibration (analytic, Balle and Wang 2018, or classic,
    Dwork-Roth Thm A.1 for ``epsilon < 1``). It is not ``(epsilon, delta)``-DP as released: the
    low-order bits of a floating-point sum reveal the input, and some outputs are impossible from
    a neighbour (Mironov 2012; see the auditing appendix).
    """
    check.boolean(safe, "safe")
    sensitivity = check.positive(sensitivity, "sensitivity")
    epsilon = check.positive(epsilon, "epsilon")
    delta = check.delta(delta, allow_zero=False)
    sigma = _gaussian_sigma(sensitivity, epsilon, delta, calibration, safe=safe)
    gen = check.rng(rng)
    v = check.array(value, "value")
    if safe:
        return _gaussian(v, sensitivity, epsilon, delta, sigma, gen, budget=budget)
    rho = gaussian_zcdp(sensitivity, sigma)
    _charge(check_budget(budget), epsilon, delta, label="gaussian", rho=rho)
    return _as_output(v + gen.normal(0.0, sigma, size=v.shape))


def _gaussian(
    v: np.ndarray,
    sensitivity: float,
    epsilon: float,
    delta: float,
    sigma: float,
    gen: np.random.Generator,
    *,
    budget: PrivacyBudget | ZCDPBudget | None,
) -> float | np.ndarray:
    """The safe :func:`gaussian` on checked values (``sigma`` from :func:`_gaussian_sigma`):
    refuses an unrepresentable grid, charges ``budget`` (``rho`` of the release to a
    :class:`~dpteach.privacy.ZCDPBudget`), then draws. What the mechanisms call after validating
    their inputs."""
    grid = _noise.gauss_grid(float(sensitivity), sigma / sensitivity, max(v.size, 1))
    _charge(check_budget(budget), epsilon, delta, label="gaussian", rho=grid.rho)
    return _as_output(_safe_gaussian_noise(v, grid, gen))


def _safe_gaussian_noise(v: np.ndarray, grid: _noise.GaussGrid, gen) -> np.ndarray:
    """``v`` snapped to ``grid`` plus exact discrete Gaussian noise ``N_Z(0, grid.variance)`` in
    every entry (any shape), released as doubles: the safe path of :func:`gaussian` (batched
    releases pass the grid of one release, :func:`_safe_gauss_grid`)."""
    noise = _noise.discrete_gaussian(grid, v.size, gen).reshape(v.shape)
    return grid.release(grid.snap(v) + noise)


def _safe_gauss_grid(
    sensitivity: float, epsilon: float, delta: float, k: int, *, calibration: str = "analytic"
) -> _noise.GaussGrid:
    """The grid :func:`gaussian` (``safe=True``) uses for ``k`` coordinates."""
    sigma = gaussian_sigma(sensitivity, epsilon, delta, calibration=calibration)
    return _noise.gauss_grid(float(sensitivity), sigma / sensitivity, k)


def exponential(
    scores: object,
    *,
    sensitivity: float,
    epsilon: float,
    rng: Seed,
    budget: PrivacyBudget | None = None,
    size: int | None = None,
    safe: bool = True,
) -> int | np.ndarray:
    """The exponential mechanism: index ``r`` with probability ``∝ exp(eps u(r) / (2 Delta))``.

    Guarantee: ``epsilon``-DP when every score ``u(r)`` changes by at most ``sensitivity``
    between neighbouring databases (McSherry and Talwar 2007; Dwork-Roth Thm 3.10). With
    probability at least ``1 - beta`` the chosen score is within ``2 Delta ln(R / beta) / eps`` of
    the best (Thm 3.11).

    By default (``safe=True``) the choice is floating-point safe and exact: the scores are
    snapped to a power-of-two grid ``g <= Delta / (2^11 max(1, eps))`` (so their sensitivity
    becomes ``Delta + g`` at most), and the index is drawn by rejection sampling with integer
    arithmetic only (uniform proposals, acceptance ``exp(-gap)`` as an exact Bernoulli; Canonne,
    Kamath and Steinke 2020, Algorithm 1). The probabilities are those of the exponential
    mechanism on the snapped scores at a rate within a factor ``(1 + 2^-11)(1 + 2^-19)`` of the
    ideal one and never above it (details in :class:`dpteach._noise.ExpGrid`); Thm 3.11's bound
    holds with ``Delta + g`` for ``Delta``, plus ``g`` for the snapping, for ``beta`` above ``R
    e^-1024``. An ``epsilon`` below about ``2e-6`` is sampled on Python integers (slower, as
    exact). ``safe=False`` is a *teaching option only*: the Gumbel-max trick
    in floating point (``argmax(eps u / (2 Delta) + Gumbel)``), the textbook sampler, whose
    rounding is not accounted for.

    ``size`` draws that many independent selections at once (for simulation and auditing; each
    one is a separate ``epsilon``-DP release, so it cannot be combined with a ``budget``). The
    budget (a :class:`~dpteach.privacy.ZCDPBudget`: ``epsilon^2/2``) is charged before the draw;
    a passed Generator is consumed.

    Returns
    -------
    int or numpy.ndarray
        The index of the chosen outcome (an array of ``size`` indices if ``size`` is given).
    """
    u = check.array(scores, "scores", ndim=1)
    if u.size == 0:
        raise ValueError("scores must not be empty")
    epsilon = check.positive(epsilon, "epsilon")
    sensitivity = check.positive(sensitivity, "sensitivity")
    check.boolean(safe, "safe")
    if not safe:
        scale = check.finite_ratio(epsilon, 2 * sensitivity, "epsilon / (2 sensitivity)")
    gen = check.rng(rng)
    if size is not None:
        size = check.integer(size, "size", minimum=1)
        if budget is not None:
            raise ValueError("size (repeated draws) cannot be combined with a budget")
        check.dense_size(size if safe else size * u.size, "size (the draws)")
    else:
        _charge(check_budget(budget), epsilon, label="exponential")
    if safe:
        return _exponential(u, sensitivity, epsilon, gen, size=size)
    # Shifting by the best score changes no probability and keeps scale * u from overflowing.
    with np.errstate(over="ignore"):  # -inf for scores too far below the best: probability 0
        logits = scale * (u - u.max())
    if size is not None:
        return np.argmax(logits + gen.gumbel(size=(size, u.size)), axis=1)
    return int(np.argmax(logits + gen.gumbel(size=u.size)))


def _exponential(
    u: np.ndarray, sensitivity: float, epsilon: float, gen: np.random.Generator, *, size=None
) -> int | np.ndarray:
    """The safe :func:`exponential` (no budget) on checked values: a 1-D float array ``u`` of
    finite scores, floats ``sensitivity, epsilon > 0`` and a Generator: the chosen index, or
    ``size`` of them. What the mechanisms call after validating their inputs."""
    grid = _noise.exp_grid(sensitivity, epsilon)
    chosen = _noise.exponential_choice(grid.gaps(u), grid.bits, size or 1, gen)
    return int(chosen[0]) if size is None else chosen


class Sparse:
    """The sparse vector technique: report which of a stream of queries are above a threshold.

    Dwork-Roth Algorithm 2 (``Sparse``): with ``sigma = 2 c Delta / eps`` (pure DP) or
    ``sigma = Delta sqrt(32 c ln(1/delta)) / eps`` (approximate DP), the threshold is perturbed
    once, ``T_hat = T + Lap(sigma)``, each query by fresh ``Lap(2 sigma)``, and ``T_hat`` is
    redrawn after every "above" answer. It halts after ``c`` (``cutoff``) aboves.

    Guarantee: ``epsilon``-DP (``delta = 0``) or ``(epsilon, delta)``-DP for any adaptively
    chosen stream of queries of sensitivity ``Delta``, however many are below the threshold
    (Dwork-Roth Thm 3.25). The budget is charged the whole ``(epsilon, delta)`` on construction,
    after every parameter was validated and before anything is drawn or released.

    The noise is floating-point safe: threshold and answers are snapped to the grid of
    :func:`safe_laplace_grid` (one coordinate, so a snapped answer moves by at most
    ``s = floor(Delta/g) + 1`` steps) and compared as integers, with exact discrete Laplace noise
    of integer scales ``T`` and ``2T``, ``T = ceil(2 c s / eps)`` (pure) or ``ceil(2 s / eps')``
    (each of the ``c`` AboveThreshold runs at ``eps'``). Dwork-Roth's proof goes through
    unchanged with integer shifts ``s`` and ``2s``. :attr:`sigma` is the threshold noise scale
    actually used, ``T g`` (at most 0.1 % above Dwork-Roth's ``sigma``).

    Use :meth:`test` with each query's true value; it returns ``True`` for above, ``False`` for
    below. Construction validates and charges but draws nothing; a passed ``rng`` Generator is
    consumed by one draw at the first query, which seeds the exact integer sampler used for all
    of this object's noise (the same seed gives the same answers).
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
        budget: PrivacyBudget | ZCDPBudget | None = None,
    ):
        self._configure(threshold, sensitivity, epsilon, cutoff, delta)
        self._rng = check.rng(rng)
        _charge(check_budget(budget), self.epsilon, self.delta, label=type(self).__name__)
        self._start()

    @classmethod
    def _checked(
        cls,
        threshold: float,
        *,
        sensitivity: float,
        epsilon: float,
        rng: np.random.Generator,
        cutoff: int,
    ) -> Sparse:
        """A pure-DP instance from checked values (finite floats, ``sensitivity, epsilon > 0``, an
        int ``cutoff >= 1``, a Generator), charging nothing: what the mechanisms built on the
        sparse vector (online PMW, private GuessAndCheck) call after validating their inputs and
        before their own charge. Still refuses an unrepresentable noise scale."""
        sparse = cls.__new__(cls)
        sparse.threshold, sparse.sensitivity, sparse.epsilon = threshold, sensitivity, epsilon
        sparse.cutoff, sparse.delta = cutoff, 0.0
        sparse._derive()
        sparse._rng = rng
        sparse._start()
        return sparse

    def _start(self) -> None:
        self._source = None  # seeded from rng at the first draw: construction draws nothing
        self.above_count = 0
        self.answered = 0
        self._noisy_threshold: int | None = None  # drawn with the first query

    def _configure(self, threshold, sensitivity, epsilon, cutoff, delta) -> None:
        """Validate and derive every parameter; draws nothing, charges nothing."""
        self.threshold = check.real(threshold, "threshold")
        self.sensitivity = check.positive(sensitivity, "sensitivity")
        self.epsilon = check.positive(epsilon, "epsilon")
        self.cutoff = check.integer(cutoff, "cutoff", minimum=1)
        self.delta = check.delta(delta)
        self._derive()

    def _derive(self) -> None:
        """The noise grid and the snapped threshold from the checked parameters."""
        c = self.cutoff
        if self.delta == 0:
            # Each of the c AboveThreshold runs is eps/c-DP: threshold noise 2 Delta / (eps/c).
            self._grid = _noise.safe_grid(self.sensitivity, self.epsilon, divisor=2 * c)
        else:
            # c AboveThreshold runs at eps' = eps / sqrt(8 c ln(1/delta)), composed with advanced
            # composition; check that the composition really stays within epsilon.
            eps_each = self.epsilon / math.sqrt(8 * c * math.log(1 / self.delta))
            if _advanced_composition(eps_each, c, self.delta)[0] > self.epsilon:
                raise ValueError(
                    f"epsilon={self.epsilon} is too large for the advanced-composition "
                    f"calibration with cutoff={c} and delta={self.delta}; use delta=0"
                )
            self._grid = _noise.safe_grid(self.sensitivity, eps_each, divisor=2)
        self._threshold_units = self._grid.snap_scalar(self.threshold)
        self.sigma = self._grid.scale * self._grid.spacing

    def _draw_threshold(self) -> int:
        """The noisy threshold, in grid units."""
        return self._threshold_units + self._noise(self._grid.scale)

    def _noise(self, scale: int) -> int:
        """One exact discrete Laplace draw of integer ``scale`` (grid units)."""
        if self._source is None:
            self._source = _noise.scalar_source(self._rng)
        return _noise.discrete_laplace_scalar(scale, self._source)

    @property
    def halted(self) -> bool:
        """True once ``cutoff`` queries were above the threshold."""
        return self.above_count >= self.cutoff

    def _compare(self, value: object) -> bool:
        value = check.real(value, "value")
        if self.halted:
            raise RuntimeError(f"{type(self).__name__} has halted after {self.cutoff} above(s)")
        self.answered += 1
        units = self._grid.snap_scalar(value)
        if self._noisy_threshold is None:
            self._noisy_threshold = self._draw_threshold()
        above = units + self._noise(2 * self._grid.scale) >= self._noisy_threshold
        if above:
            self.above_count += 1
            self._noisy_threshold: int | None = None  # drawn with the first query
        return bool(above)

    def test(self, value: float) -> bool:
        """Is the query with true answer ``value`` (noisily) above the threshold?"""
        return self._compare(value)


class AboveThreshold(Sparse):
    """AboveThreshold (Dwork-Roth Algorithm 1): sparse vector with cutoff 1.

    ``T_hat = T + Lap(2 Delta / eps)``, each query gets ``Lap(4 Delta / eps)`` (floating-point
    safe, as in :class:`Sparse`); it halts at the first above. Guarantee: ``epsilon``-DP for an
    adaptive stream of queries of sensitivity ``Delta`` (Dwork-Roth Thm 3.23). The budget is
    charged ``epsilon`` on construction.
    """

    def __init__(
        self,
        threshold: float,
        *,
        sensitivity: float,
        epsilon: float,
        rng: Seed,
        budget: PrivacyBudget | ZCDPBudget | None = None,
    ):
        super().__init__(
            threshold, sensitivity=sensitivity, epsilon=epsilon, rng=rng, cutoff=1, budget=budget
        )


class NumericSparse(Sparse):
    """NumericSparse (Dwork-Roth Algorithm 3): sparse vector that also answers the above queries.

    The parameters are Dwork-Roth's: ``eps_1 = 8 eps / 9`` for the comparisons (as in
    :class:`Sparse`) and ``eps_2 = 2 eps / 9``, each above query being answered with fresh
    ``Lap(2 c Delta / eps_2)`` noise; the ``c`` answers then cost ``eps_2 / 2 = eps / 9``, so the
    total is ``eps`` (pure DP). For ``delta > 0``: ``eps_1 = sqrt(512)/(sqrt(512)+1) eps``,
    ``eps_2 = 2/(sqrt(512)+1) eps``, comparisons at ``delta/2`` and answer noise
    ``Lap(Delta sqrt(32 c ln(2/delta)) / eps_2)``. Guarantee: ``epsilon``-DP, or
    ``(epsilon, delta)``-DP (Dwork-Roth Thm 3.28). All noise, the answers' included, is the
    floating-point-safe discrete Laplace noise of :func:`laplace`; :attr:`answer_scale` is the
    answer noise scale actually used (at most 0.1 % above Dwork-Roth's). :meth:`test` returns the
    noisy answer for an above query and ``None`` for a below one. Every parameter is validated
    before the budget is charged.
    """

    def _configure(self, threshold, sensitivity, epsilon, cutoff, delta) -> None:
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
            grid = _noise.safe_grid(sensitivity, self.epsilon_answers, divisor=2 * cutoff)
        else:
            noise = math.sqrt(32 * cutoff * math.log(2 / delta)) / self.epsilon_answers
            grid = _noise.safe_grid(sensitivity, 1 / noise)
        super()._configure(threshold, sensitivity, epsilon * share, cutoff, delta / 2)
        self._answer_grid = grid
        self.answer_scale = grid.scale * grid.spacing
        self.epsilon, self.delta = epsilon, delta

    def test(self, value: float) -> float | None:
        """The noisy answer ``value + Lap(answer_scale)`` if above, else ``None``."""
        if not self._compare(value):
            return None
        g = self._answer_grid
        noise = self._noise(g.scale)
        return _noise.release_scalar(g.snap_scalar(value) + noise, g.exponent)
