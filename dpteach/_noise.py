"""Floating-point-safe noise: snap to a power-of-two grid, add exact discrete Laplace or Gaussian
noise; and the exponential mechanism, sampled exactly on snapped scores.

The textbook ``value + rng.laplace(...)`` leaks through floating-point rounding: some outputs are
possible from one input and impossible from its neighbour (Mironov 2012). Here instead

1. the value is snapped to a grid of spacing ``g = 2^e`` (``m = round(v / g)``; exact, since
   dividing by a power of two is exact in floating point);
2. integer noise ``Z`` with ``P[Z = z] ∝ exp(-|z| / T)`` (the discrete Laplace distribution of
   integer scale ``T``) is drawn **exactly**, with integer arithmetic only (Canonne, Kamath and
   Steinke 2020, Algorithms 1 and 2), vectorised over numpy's exact uniform integers;
3. the release is ``(m + Z) g``, a deterministic function of the integer ``m + Z`` (rounding to
   a double, if ``|m + Z| > 2^53``, is post-processing).

Privacy of a vector of ``k`` coordinates with L1 sensitivity ``Delta``: snapping moves each
coordinate by less than half a step, so ``|round(a) - round(b)| <= floor(|a - b|) + 1`` for each
coordinate and the snapped vectors differ by at most ``steps = floor(Delta / g) + k`` grid steps in
L1 (each of the ``k`` coordinates can add its own rounding step). With ``T >= steps / eps`` the
release is exactly ``eps``-DP. ``g`` is the largest power of two with ``k g <= Delta / 2^11`` and
``eps g <= Delta / 2^11``, so the noise scale ``T g`` is at most ``(1 + 2^-10)`` times the
Laplace scale ``Delta / eps`` (0.1 % more noise), and the grid is at least 2,048 times finer than
the noise.

The Gaussian counterpart (:class:`GaussGrid`, :func:`discrete_gaussian`): snap to ``g`` with
``sqrt(k) g <= Delta / 2^11``, or coarser if the variance would exceed ``2^50`` steps (snapped
neighbours differ by at most ``Delta/g + sqrt(k)`` steps in L2), add exact discrete Gaussian noise
``N_Z(0, sigma^2)`` (CKS Algorithm 3: rejection from the discrete Laplace, acceptance
``Bernoulli(exp(-gamma))`` with ``gamma`` a ratio of integers); the release is ``steps^2 / (2
sigma^2)``-zCDP (CKS Theorem 14).

The exponential mechanism (:class:`ExpGrid`, :func:`exponential_choice`): snap the scores to ``g
<= Delta / (2^11 max(1, eps))`` (a snapped score moves by at most ``floor(Delta/g) + 1`` steps),
weight each candidate ``exp(-t gap)`` with ``t <= eps / (2 (floor(Delta/g) + 1))`` a binary
fraction, and draw by rejection with exact ``Bernoulli(exp(-gamma))`` acceptances: exactly the
exponential mechanism on the snapped scores, ``eps``-DP.
"""

from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

#: Snapped values up to ``2^61`` grid steps are int64 (one numpy pass); larger ones are snapped
#: exactly as Python integers (see :func:`snap`).
MAX_STEPS_EXPONENT = 61
#: Largest integer noise scale ``T`` (keeps ``m + Z`` far inside int64).
MAX_SCALE = 2**52
#: The grid is ``2^GRID_BITS`` times finer than both ``Delta / k`` and the noise scale.
GRID_BITS = 11


def snap(v: np.ndarray, exponent: int) -> np.ndarray:
    """``round(v / 2^exponent)`` (half to even), exactly, for any finite doubles: int64 when every
    ``|v| / g`` is at most ``2^61`` (the usual case: one exact numpy pass), else Python integers
    in an object array (exact rational arithmetic; a value millions of grid steps beyond the
    noise is still snapped exactly, never clamped or refused, whatever its magnitude)."""
    if v.size == 0 or np.max(np.abs(v)) <= math.ldexp(
        1.0, min(exponent + MAX_STEPS_EXPONENT, 1023)
    ):
        return np.round(np.ldexp(v, -exponent)).astype(np.int64)
    return np.array([snap_scalar(x, exponent) for x in v.ravel().tolist()], dtype=object).reshape(
        v.shape
    )


def snap_scalar(x: float, exponent: int) -> int:
    """:func:`snap` for one float, as a Python integer (``round`` rounds half to even)."""
    try:  # exact: a power-of-two scaling (a result too small for a normal double rounds to 0)
        return round(math.ldexp(x, -exponent))
    except OverflowError:  # beyond the doubles: exact rational arithmetic
        return round(Fraction(x) / Fraction(2) ** exponent)


def release(m: np.ndarray, exponent: int) -> np.ndarray:
    """The doubles nearest to ``m g`` (post-processing of the integers ``m``; ``+-inf`` beyond the
    doubles)."""
    m = np.asarray(m)
    if m.dtype != object:
        return np.ldexp(m.astype(float), exponent)
    return np.array([release_scalar(int(x), exponent) for x in m.ravel().tolist()]).reshape(m.shape)


def release_scalar(m: int, exponent: int) -> float:
    """:func:`release` for one integer (correctly rounded)."""
    try:
        return float(Fraction(m) * Fraction(2) ** exponent)
    except OverflowError:
        return math.inf if m > 0 else -math.inf


@dataclass(frozen=True)
class SafeGrid:
    """The grid and integer noise scale of the safe Laplace mechanism.

    Attributes
    ----------
    exponent
        ``g = 2^exponent``.
    steps
        L1 sensitivity in grid steps after snapping, ``floor(Delta / g) + k``.
    scale
        Integer scale ``T = ceil(steps / eps)`` of the discrete Laplace noise (in grid steps).
    """

    exponent: int
    steps: int
    scale: int

    @property
    def spacing(self) -> float:
        """The grid spacing ``g``."""
        return math.ldexp(1.0, self.exponent)

    def snap(self, v: np.ndarray) -> np.ndarray:
        """``round(v / g)``, exactly (:func:`snap`)."""
        return snap(v, self.exponent)

    def snap_scalar(self, x: float) -> int:
        """:meth:`snap` for one float."""
        return snap_scalar(x, self.exponent)

    def release(self, m: np.ndarray) -> np.ndarray:
        """``m g`` as floats (post-processing of the integer ``m``)."""
        return release(m, self.exponent)


def _grid_exponent(sensitivity: float, divisor: float) -> int:
    """The exponent of the largest power of two ``<= Delta / (2^GRID_BITS divisor)``, from the
    exact binary exponents (no division, so no overflow or underflow), but never below the
    smallest double's (``-1074``)."""
    (f_delta, e_delta), (f_div, e_div) = math.frexp(sensitivity), math.frexp(divisor)
    return max(e_delta - e_div - GRID_BITS - (f_delta < f_div), -1074)


@functools.lru_cache(maxsize=1024)  # exact Fraction arithmetic; sparse vectors rebuild it often
def safe_grid(sensitivity: float, epsilon: float, k: int = 1, *, divisor: int = 1) -> SafeGrid:
    """The :class:`SafeGrid` for ``k`` coordinates of L1 sensitivity ``sensitivity``, private at
    ``epsilon / divisor`` (the division done exactly: ``T = ceil(steps divisor / eps)``).

    Raises ``ValueError`` (depending only on the public parameters) when the noise scale cannot be
    represented: ``Delta / eps`` beyond ``1e300`` or an integer scale ``T`` beyond ``2^52`` (an
    epsilon below about ``2^-41 k``, whose noise would swamp any answer).
    """
    if epsilon == 0 or math.log10(sensitivity) - math.log10(epsilon) > 300:  # 0: underflow
        raise ValueError(
            f"the noise scale sensitivity/epsilon = {sensitivity:.3g}/{epsilon:.3g} is too large "
            "to represent (at most 1e300)"
        )
    exponent = _grid_exponent(sensitivity, max(k, epsilon))
    steps = math.floor(Fraction(sensitivity) / Fraction(2) ** exponent) + k
    scale = math.ceil(Fraction(steps * divisor) / Fraction(epsilon))
    if scale > MAX_SCALE:
        raise ValueError(
            f"epsilon={epsilon:.3g} is too small for the safe Laplace grid with {k} coordinate(s) "
            f"(its integer noise scale {scale:.3g} exceeds 2^52); use a larger epsilon"
        )
    return SafeGrid(exponent, steps, scale)


def _bernoulli_exp(numerator: np.ndarray, denominator: int, gen) -> np.ndarray:
    """Exact ``Bernoulli(exp(-numerator / denominator))`` for ``0 <= numerator <= denominator``
    (int64 ``numerator`` array, integer ``denominator``).

    Canonne-Kamath-Steinke 2020, Algorithm 1: ``K = 1``; while ``Bernoulli(gamma / K)``:
    ``K += 1``; return ``K`` odd. Each ``Bernoulli(a / b)`` is ``uniform{0, ..., b-1} < a``.
    """
    k = np.ones(numerator.shape, dtype=np.int64)
    active, step = np.flatnonzero(numerator), 1  # every active value has K = step
    while active.size:
        hit = gen.integers(0, denominator * step, size=active.size) < numerator[active]
        active, step = active[hit], step + 1
        k[active] = step
    return k % 2 == 1


def _bernoulli_exp_minus_one(size: int, gen) -> np.ndarray:
    """``size`` exact ``Bernoulli(e^-1)``: :func:`_bernoulli_exp` with ``gamma = 1``, whose first
    trial, ``Bernoulli(1/1)``, always succeeds (numpy draws nothing for it), so every value
    starts at ``K = 2``; then ``K += 1`` while ``uniform{0..K-1} == 0``. The same draws as
    ``_bernoulli_exp(np.ones(size), 1, gen)``, without its bookkeeping."""
    k = np.full(size, 2, dtype=np.int64)
    active, step = np.arange(size), 2
    while active.size:
        active = active[gen.integers(0, step, size=active.size) == 0]
        step += 1
        k[active] = step
    return k % 2 == 1


def _geometric_exp_minus_one(size: int, gen) -> np.ndarray:
    """Exact ``V`` with ``P[V = v] = (1 - e^-1) e^-v``: the number of ``Bernoulli(e^-1)``
    successes before the first failure, read off blocks of i.i.d. draws (long blocks for a few
    values, to save numpy calls; short ones for many, to save draws)."""
    block = 8 if size < 256 else 2
    v = np.zeros(size, dtype=np.int64)
    active = np.arange(size)
    while active.size:
        success = _bernoulli_exp_minus_one(active.size * block, gen).reshape(active.size, block)
        complete = success.all(axis=1)
        v[active] += np.where(complete, block, np.argmin(success, axis=1))
        active = active[complete]
    return v


def discrete_laplace(scale: int, size: int, gen: np.random.Generator) -> np.ndarray:
    """``size`` exact draws of ``Z`` with ``P[Z = z] ∝ exp(-|z| / scale)`` (integer ``scale``).

    Canonne-Kamath-Steinke 2020, Algorithm 2 with ``s = 1``: ``U`` uniform on ``{0..T-1}``,
    accepted with probability ``exp(-U/T)``; ``V`` geometric as above; ``|Z| = U + T V``; a fair
    sign, rejecting ``-0``. Trials are independent, so rejected ones are redrawn in batches (of
    at least 16, to amortise numpy's per-call cost; the surplus is discarded). A few draws
    (``size <= 8``) use :func:`discrete_laplace_scalar`, which is faster there.
    """
    if size <= 8:
        rand = scalar_source(gen)
        return np.array([discrete_laplace_scalar(scale, rand) for _ in range(size)], np.int64)
    out = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        u = gen.integers(0, scale, size=max(size - filled, 16))
        u = u[_bernoulli_exp(u, scale, gen)]
        magnitude = u + scale * _geometric_exp_minus_one(u.size, gen)
        negative = gen.integers(0, 2, size=u.size).astype(bool)
        z = np.where(negative, -magnitude, magnitude)[~(negative & (magnitude == 0))]
        z = z[: size - filled]
        out[filled : filled + z.size] = z
        filled += z.size
    return out


def _below(n: int, bits) -> int:
    """A uniform integer in ``{0, ..., n-1}`` (``n >= 1``), exactly: ``n.bit_length()`` random
    bits (``bits = rand.getrandbits``) redrawn until below ``n``. The same draws as
    ``rand.randrange(n)`` in CPython, without its argument handling."""
    width = n.bit_length()
    r = bits(width)
    while r >= n:
        r = bits(width)
    return r


def _bernoulli_exp_scalar(numerator: int, denominator: int, rand: random.Random) -> bool:
    """:func:`_bernoulli_exp` for one value, on Python integers."""
    bits, k = rand.getrandbits, 1
    while numerator and _below(denominator * k, bits) < numerator:
        k += 1
    return k % 2 == 1


def scalar_source(gen: np.random.Generator) -> random.Random:
    """A Python ``random.Random`` seeded from ``gen`` (consuming one draw): its ``getrandbits``
    gives exact uniform integers (:func:`_below`) without numpy's per-call cost, for
    one-at-a-time draws."""
    return random.Random(int(gen.integers(0, 2**63)))


def discrete_laplace_scalar(scale: int, rand: random.Random) -> int:
    """One draw of :func:`discrete_laplace`, the same algorithm on Python integers (for the
    sparse-vector classes, which draw one value at a time). The Bernoulli trials of CKS
    Algorithm 1 are written out here (the hot loop of the sparse-vector audits)."""
    bits = rand.getrandbits
    while True:
        u = _below(scale, bits)
        k = 1  # accept u with probability exp(-u / scale)
        while u and _below(scale * k, bits) < u:
            k += 1
        if k % 2 == 0:
            continue
        v = 0  # V: the number of Bernoulli(exp(-1)) successes before the first failure
        while True:  # one Bernoulli(exp(-1)): K += 1 while Bernoulli(1 / K); success if K odd
            k = 1
            while _below(k, bits) < 1:
                k += 1
            if k % 2 == 0:
                break
            v += 1
        magnitude = u + scale * v
        if not bits(1):
            return magnitude
        if magnitude:
            return -magnitude


# --- The discrete Gaussian (Canonne, Kamath and Steinke 2020, Algorithm 3) ----------------------

#: Largest variance ``sigma^2 = t m`` of the discrete Gaussian, in grid steps squared: keeps the
#: exact integer arithmetic of the rejection step inside int64 (``2 t m K < 2^63``).
MAX_GAUSS_VARIANCE = 2**50


@dataclass(frozen=True)
class GaussGrid:
    """Grid and integer variance of the floating-point-safe Gaussian mechanism.

    Attributes
    ----------
    exponent
        The grid is ``g = 2^exponent``.
    steps
        An upper bound on the L2 distance, in grid steps, between the snapped values of
        neighbouring inputs: ``Delta / g + sqrt(k)`` (rounded up).
    t, m
        The noise is the discrete Gaussian ``N_Z(0, t m)`` (in grid steps); ``t = floor(sqrt(t m))
        + 1`` or near it is the discrete Laplace scale of the rejection sampler.
    """

    exponent: int
    steps: float
    t: int
    m: int

    @property
    def spacing(self) -> float:
        return math.ldexp(1.0, self.exponent)

    @property
    def variance(self) -> int:
        """``sigma^2`` of the discrete Gaussian, in grid steps squared (an integer)."""
        return self.t * self.m

    @property
    def sigma(self) -> float:
        """The noise scale ``sigma g`` in the units of the value."""
        return math.ldexp(math.sqrt(self.variance), self.exponent)

    @property
    def rho(self) -> float:
        """The zCDP of the release, ``steps^2 / (2 sigma^2)`` (CKS Theorem 14; rounded up)."""
        return math.nextafter(self.steps * self.steps / (2 * self.variance), math.inf)

    def snap(self, v: np.ndarray) -> np.ndarray:
        """``round(v / g)``, exactly (:func:`snap`)."""
        return snap(v, self.exponent)

    def release(self, m: np.ndarray) -> np.ndarray:
        """``m g`` as floats (post-processing of the integer ``m``)."""
        return release(m, self.exponent)


@functools.lru_cache(maxsize=256)
def gauss_grid(sensitivity: float, sigma_unit: float, k: int) -> GaussGrid:
    """The :class:`GaussGrid` for ``k`` coordinates of L2 sensitivity ``sensitivity`` and noise
    at least ``sigma_unit`` per unit of (snapped) sensitivity.

    Snapping each coordinate to the nearest multiple of ``g`` moves it by at most ``g/2``, so the
    snapped vectors of neighbours differ by at most ``Delta/g + sqrt(k)`` steps in L2 (the
    rounding errors form a vector with entries in ``[-1, 1]``). ``g`` is the largest power of two
    with ``sqrt(k) g <= Delta / 2^11`` (so the rounding adds at most 0.05 % to the sensitivity),
    coarsened if needed until ``sigma^2 <= 2^50`` steps; then ``sigma^2 = t m >= (sigma_unit
    steps)^2`` with ``t = floor(sqrt(.)) + 1``. Raises ``ValueError`` (public parameters only)
    when no grid fits.
    """
    root_k = math.nextafter(math.sqrt(k), math.inf)
    f_delta, e_delta = math.frexp(sensitivity)
    f_k, e_k = math.frexp(root_k)
    exponent = max(e_delta - e_k - GRID_BITS - (f_delta < f_k), -1074)
    for _ in range(2200):
        steps = math.nextafter(math.ldexp(sensitivity, -exponent) + root_k, math.inf)
        target = Fraction(sigma_unit) * Fraction(steps)
        variance = math.ceil(target * target)
        if variance <= MAX_GAUSS_VARIANCE or steps <= root_k * (1 + 2**-20):
            break
        exponent += 1
    if variance > MAX_GAUSS_VARIANCE:
        raise ValueError(
            f"the Gaussian noise sigma = {sigma_unit:.3g} x sensitivity over {k} coordinate(s) is "
            "too large for the exact discrete Gaussian sampler; use a larger epsilon or delta"
        )
    t = math.isqrt(variance) + 1
    m = -(-variance // t)
    return GaussGrid(exponent, steps, t, m)


def _bernoulli_exp_ratio(numerator: np.ndarray, denominator: int, gen) -> np.ndarray:
    """Exact ``Bernoulli(exp(-numerator / denominator))`` for int64 ``numerator >= 0`` of any
    size (``denominator < 2^52``): ``exp(-q - r/D) = exp(-1)^q exp(-r/D)`` with ``q, r =
    divmod(numerator, D)``, i.e. at least ``q`` successes of ``Bernoulli(e^-1)`` before the first
    failure (an exact geometric count, :func:`_geometric_exp_minus_one`) and, independently, one
    ``Bernoulli(exp(-r/D))`` (CKS Algorithm 1, as in :func:`_bernoulli_exp`)."""
    whole, rest = np.divmod(numerator, denominator)
    alive = np.ones(numerator.shape, dtype=bool)
    far = np.flatnonzero(whole)
    if far.size:
        alive[far] = _geometric_exp_minus_one(far.size, gen) >= whole[far]
    near = np.flatnonzero(alive & (rest > 0))
    alive[near] = _bernoulli_exp(rest[near], denominator, gen)
    return alive


def _bernoulli_exp_ratio_scalar(numerator: int, denominator: int, rand: random.Random) -> bool:
    """:func:`_bernoulli_exp_ratio` for one value, on Python integers (any size)."""
    whole, rest = divmod(numerator, denominator)
    if not _bernoulli_exp_scalar(rest, denominator, rand):
        return False
    return all(_bernoulli_exp_scalar(1, 1, rand) for _ in range(whole))


def _accept_scalar(b: int, denominator: int, rand: random.Random) -> bool:
    """Exact ``Bernoulli(exp(-b^2 / denominator))`` on Python integers (any size)."""
    return _bernoulli_exp_ratio_scalar(b * b, denominator, rand)


#: Candidates with ``| |Y| - m | >= 2^31`` (probability about ``e^-90``) are accepted or
#: rejected on Python integers, so that ``(|Y| - m)^2`` never overflows int64.
_BIG = 2**31


def discrete_gaussian(grid: GaussGrid, size: int, gen: np.random.Generator) -> np.ndarray:
    """``size`` exact draws of ``N_Z(0, t m)``: ``P[Z = z] ∝ exp(-z^2 / (2 t m))``.

    Canonne-Kamath-Steinke 2020, Algorithm 3: draw ``Y`` from the discrete Laplace of scale ``t``
    (exact, :func:`discrete_laplace`) and accept it with probability ``exp(-(|Y| - sigma^2/t)^2 /
    (2 sigma^2))``; here ``sigma^2 = t m``, so that probability is ``exp(-(|Y| - m)^2 / (2 t m))``,
    a ratio of integers, sampled exactly with CKS Algorithm 1 (integer uniforms only; no floating
    point touches the distribution). Vectorised: candidates are drawn, tested and redrawn in
    batches with numpy's exact uniform integers; the acceptance rate is about 0.6-0.8. A few draws
    (``size <= 8``) use :func:`discrete_gaussian_scalar`, which is faster there.
    """
    t, m = grid.t, grid.m
    denominator = 2 * t * m
    if size <= 8:
        rand = scalar_source(gen)
        return np.array([discrete_gaussian_scalar(grid, rand) for _ in range(size)], np.int64)
    out = np.empty(size, dtype=np.int64)
    filled = 0
    rand = None
    while filled < size:
        y = discrete_laplace(t, max(int(1.5 * (size - filled)), 16), gen)
        b = np.abs(y) - m
        small = np.abs(b) < _BIG
        accept = np.zeros(y.size, dtype=bool)
        accept[small] = _bernoulli_exp_ratio(b[small] * b[small], denominator, gen)
        for i in np.flatnonzero(~small):  # never in practice; exact on Python integers
            rand = rand or scalar_source(gen)
            accept[i] = _accept_scalar(int(b[i]), denominator, rand)
        z = y[accept][: size - filled]
        out[filled : filled + z.size] = z
        filled += z.size
    return out


def discrete_gaussian_scalar(grid: GaussGrid, rand: random.Random) -> int:
    """One draw of :func:`discrete_gaussian`, the same algorithm on Python integers."""
    while True:
        y = discrete_laplace_scalar(grid.t, rand)
        if _accept_scalar(abs(y) - grid.m, 2 * grid.t * grid.m, rand):
            return y


def discrete_gaussian_pmf(support: np.ndarray, variance: float) -> np.ndarray:
    """The exact pmf ``exp(-z^2/(2 sigma^2)) / sum_y exp(-y^2/(2 sigma^2))`` on ``support`` (the
    normaliser summed over ``|y| <= 40 sigma + 40``, beyond which the terms are below 1e-300)."""
    reach = int(40 * math.sqrt(variance)) + 40
    y = np.arange(-reach, reach + 1, dtype=float)
    return (
        np.exp(-(np.asarray(support, float) ** 2) / (2 * variance))
        / np.exp(-(y**2) / (2 * variance)).sum()
    )


# --- the exponential mechanism, sampled exactly -------------------------------------------------

#: The per-step rate keeps at least this many significant bits (a relative rounding below 2^-19).
RATE_DIGITS = 20
#: Rates over ``2^bits`` with ``bits <= FAST_BITS`` are sampled on int64 (numerators below
#: ``2^62``); smaller rates (an epsilon below about ``2e-6``) on exact Python integers.
FAST_BITS = 51
#: A candidate's gap to the best is capped where its weight is ``exp(-2^GAP_BITS)`` (see
#: :class:`ExpGrid`; the cap keeps the sensitivity).
GAP_BITS = 10
#: Proposals examined per batch at most (bounds the memory of a batch).
_BATCH_CELLS = 2**20


@dataclass(frozen=True)
class ExpGrid:
    """The integer form of the exponential mechanism at ``epsilon`` for scores of sensitivity
    ``Delta``: scores snapped to ``g = 2^exponent``, the largest power of two ``<= Delta /
    (2^11 max(1, eps))``; candidate ``r`` weighted ``exp(-rate gap(r) / 2^bits)``, where ``gap(r)
    = min(k* - k_r, cap)`` is its distance in grid steps to the best snapped score ``k*``.

    Privacy: a snapped score ``k_r = round(u_r / g)`` moves by at most ``steps = floor(Delta / g)
    + 1`` between neighbours, and so do ``max_j k_j`` and ``v_r = max(k_r, k* - cap)`` (maxima of
    functions of sensitivity ``steps``). The weights are ``exp(t (v_r - k*))`` with ``t = rate /
    2^bits <= epsilon / (2 steps)``: the exponential mechanism with utility ``v`` (Dwork-Roth Thm
    3.10), so ``epsilon``-DP. ``t`` is ``epsilon / (2 steps)`` rounded down to at least 20
    significant bits, so the rate per unit of score, ``t / g``, is within a factor ``(1 +
    2^-11)(1 + 2^-19)`` of the ideal ``epsilon / (2 Delta)`` and never above it (for ``Delta``
    above about ``2^-1063``, where ``g`` is not held at the smallest double). The cap sits where
    ``t gap >= 2^10``: a capped candidate has weight at most ``e^-1024`` instead of a smaller one,
    which changes the utility by nothing measurable. With ``g <= Delta / (2^11 eps)`` the grid is
    also 2^12 times finer than the mechanism's scale ``2 Delta / eps``, so large ``eps`` still
    separates close scores.
    """

    exponent: int
    steps: int
    rate: int
    bits: int
    cap: int

    def gaps(self, scores: np.ndarray) -> np.ndarray:
        """``rate * gap(r)`` for every candidate: int64 (below ``2^62``) when ``bits <=
        FAST_BITS``, else exact Python integers in an object array."""
        k = snap(scores, self.exponent)
        gap = k.max() - k  # exact, also for Python-integer snaps
        if k.dtype == object or self.cap < 2**62:  # int64 gaps are below 2^62: no cap needed
            gap = np.minimum(gap, self.cap)
        if self.bits <= FAST_BITS:
            return self.rate * gap.astype(np.int64)
        return np.array([self.rate * int(x) for x in gap.ravel().tolist()], dtype=object)

    def log_weights(self, scores: np.ndarray) -> np.ndarray:
        """``-rate gap(r) / 2^bits`` as floats (the log selection probabilities up to the
        normaliser; exact but for the rounding of each to a double)."""
        return -np.ldexp(self.gaps(scores).astype(float), -self.bits)

    def probabilities(self, scores: np.ndarray) -> np.ndarray:
        """The exact selection probabilities (as floats) of :func:`exponential_choice`."""
        w = np.exp(self.log_weights(scores))  # the best candidate's weight is 1
        return w / w.sum()


@functools.lru_cache(maxsize=256)
def exp_grid(sensitivity: float, epsilon: float) -> ExpGrid:
    """The :class:`ExpGrid` for scores of sensitivity ``sensitivity`` at ``epsilon`` (exact
    integer arithmetic; every positive finite pair works, nothing is refused)."""
    exponent = _grid_exponent(sensitivity, max(1.0, epsilon))
    steps = math.floor(Fraction(sensitivity) / Fraction(2) ** exponent) + 1
    t = min(Fraction(epsilon) / (2 * steps), Fraction(2**GAP_BITS))
    magnitude = t.numerator.bit_length() - t.denominator.bit_length()  # floor(log2 t) or +1
    bits = max(FAST_BITS, RATE_DIGITS - magnitude + 1)
    rate = math.floor(t * 2**bits)  # at least 2^RATE_DIGITS
    cap = -(-(2 ** (GAP_BITS + bits)) // rate)
    return ExpGrid(exponent, steps, rate, bits, cap)


def exponential_choice(
    gaps: np.ndarray, bits: int, size: int, gen: np.random.Generator
) -> np.ndarray:
    """``size`` independent indices ``r`` with ``P[r] ∝ exp(-gaps[r] / 2^bits)``, exactly.

    Rejection sampling: a proposal ``r`` uniform on the candidates (numpy's exact uniform
    integers) is accepted with probability ``exp(-gaps[r] / 2^bits)``, an exact Bernoulli (CKS
    Algorithm 1 on integers, :func:`_bernoulli_exp_ratio`); each draw returns its first accepted
    proposal, which has exactly the wanted distribution. The best candidate is always accepted, so
    a draw takes ``R / sum_r exp(-gap_r)`` proposals on average (at most ``R``). Proposals are
    examined in batches of about twice that, at most ``2^20`` (the batch size changes the work,
    never the distribution). The running time depends on the scores (nothing here is
    constant-time). Object-array ``gaps`` (tiny epsilon) are sampled one proposal at a time on
    Python integers.
    """
    n = gaps.size
    if gaps.dtype == object:
        rand, denominator = scalar_source(gen), 1 << bits
        out = np.empty(size, dtype=np.int64)
        for j in range(size):
            r = rand.randrange(n)
            while not _bernoulli_exp_ratio_scalar(gaps[r], denominator, rand):
                r = rand.randrange(n)
            out[j] = r
        return out
    accept_rate = np.exp(-np.ldexp(gaps.astype(float), -bits)).sum() / n
    batch = int(min(n, _BATCH_CELLS, max(1, math.ceil(2 / accept_rate))))
    out = np.empty(size, dtype=np.int64)
    pending = np.arange(size)
    while pending.size:
        rows = pending[: max(1, _BATCH_CELLS // batch)]
        proposal = gen.integers(0, n, size=(rows.size, batch))
        accepted = _bernoulli_exp_ratio(gaps[proposal].ravel(), 2**bits, gen)
        accepted = accepted.reshape(proposal.shape)
        done = accepted.any(axis=1)
        first = accepted.argmax(axis=1)
        out[rows[done]] = proposal[done, first[done]]
        pending = np.concatenate([rows[~done], pending[rows.size :]])
    return out
