"""The projection mechanism and the Gaussian width of K_Q (the projection notes, Sections 2-2.3;
Nikolov, Talwar and Zhang 2013).

Write ``Q(x)`` for the vector of the ``m`` answers and ``S_Q = {Q(r) : r in X}`` for the answers
on single-record databases. Every database's answers lie in ``K_Q = conv(S_Q)``: with ``A`` the
``m x |X|`` matrix whose column ``r`` is ``Q(r)``, ``K_Q = {A w : w a probability vector}`` and
``Q(x) = A p`` for the histogram ``p`` of ``x``. Algorithm 1 adds Gaussian noise to ``Q(x)`` and
returns the closest point of ``K_Q``:

    y_tilde = Q(x) + W,   W ~ N(0, sigma_{eps,delta}^2 m / n^2 I),
    y_hat   = argmin_{z in K_Q} ||y_tilde - z||_2  =  A w*,
    w*      = argmin_{w in the simplex} ||A w - y_tilde||^2 / 2.

The second line is a least-squares problem over the probability simplex; :func:`project` solves
it by accelerated projected gradient (FISTA with backtracking and adaptive restart, and an exact
projection onto the simplex) and certifies the answer with the Frank-Wolfe duality gap. The
minimising ``w`` is a synthetic database that attains ``y_hat``.

The width of ``K_Q`` governs the error (Theorem 9). :func:`gaussian_width` estimates
``l*(K_Q) = E h_K(g)`` and the mean width ``M*(K_Q) = E h_K(u)`` by Monte Carlo with rigorous
confidence intervals, where ``h_K(y) = max_{r in X} <y, Q(r)>`` is the support function.

Nothing here materialises a marginal workload as a dense matrix: ``A w`` is ``workload.answer``
and ``A^T v`` is :func:`adjoint`, both computed on the histogram tensor.
"""

from __future__ import annotations

import contextlib
import functools
import math
import weakref
from dataclasses import dataclass

import numpy as np
from scipy import special

from . import _validate as check
from .data import Dataset, correlated_data
from .domain import Domain, same_universe
from .mechanisms import _gaussian, _gaussian_sigma
from .privacy import PrivacyBudget
from .queries import (
    MarginalWorkload,
    MatrixWorkload,
    NegatedWorkload,
    SubsetWorkload,
    Workload,
    random_queries,
)
from .results import Result, Round

Seed = np.random.Generator | int

#: Batched computations (Monte Carlo directions x universe) use chunks of at most this many entries.
CHUNK_ENTRIES = 2**22

#: The exact polishing step of :func:`project` is tried on faces of at most this many cells.
MAX_POLISH = 2000


# --- the query matrix A as an operator ------------------------------------------------------------


def adjoint(workload: Workload, v: object) -> np.ndarray:
    """``A^T v``: the vector ``r -> <v, Q(r)>`` over the universe, for ``v`` of length ``m``
    (or a batch: shape ``(N, m)`` gives ``(N, |X|)``).

    Marginal workloads (and negations and subsets of them) are handled on the histogram tensor;
    a dense query matrix is used only for :class:`~dpteach.queries.MatrixWorkload` or, as a last
    resort, another workload small enough for :meth:`~dpteach.queries.Workload.matrix`.
    """
    _check_workload(workload)
    v = check.array(v, "v")
    if v.ndim not in (1, 2) or v.shape[-1] != workload.k:
        raise ValueError(f"v must have shape (m,) or (N, m) with m={workload.k}, got {v.shape}")
    check.dense_size(workload.domain_size)
    batch = np.atleast_2d(v)
    check.dense_size(batch.shape[0] * workload.domain_size, "the batch of adjoint vectors")
    out = _adjoint(workload, batch)
    return out[0] if v.ndim == 1 else out


def _adjoint(workload: Workload, v: np.ndarray) -> np.ndarray:
    """``v @ A`` for a trusted batch ``v`` of shape ``(N, m)``."""
    if isinstance(workload, MatrixWorkload):
        return v @ workload._matrix
    if isinstance(workload, MarginalWorkload):
        dom = workload.domain
        out = np.zeros((v.shape[0], *dom.shape))
        for j, names in enumerate(workload.marginals):
            axes = dom.axes(names)
            table = v[:, workload.marginal_slice(j)].reshape(
                v.shape[0], *workload.marginal_shape(j)
            )
            order = np.argsort(axes)
            shape = [v.shape[0]] + [dom.shape[a] if a in axes else 1 for a in range(dom.d)]
            out += np.transpose(table, [0, *(1 + order)]).reshape(shape)
        return out.reshape(v.shape[0], -1)
    if isinstance(workload, NegatedWorkload):
        k = workload.base.k
        kept, negated = v[:, :k], v[:, k:]
        return _adjoint(workload.base, kept - negated) + negated.sum(axis=1, keepdims=True)
    if isinstance(workload, SubsetWorkload):
        spread = np.zeros((v.shape[0], workload.base.k))
        np.add.at(spread.T, workload.indices, v.T)
        return _adjoint(workload.base, spread)
    return v @ workload.matrix()


def support_function(workload: Workload, y: object) -> np.ndarray | float:
    """``h_{K_Q}(y) = max_{r in X} <y, Q(r)>`` (Definition 6; the max over ``K_Q`` is attained
    at a point of ``S_Q``). ``y`` of shape ``(m,)`` or a batch ``(N, m)``."""
    values = adjoint(workload, y)
    return float(values.max()) if values.ndim == 1 else values.max(axis=1)


def radius(workload: Workload) -> float:
    """``R = max_{r in X} ||Q(r)||_2``, exactly for dense and marginal workloads (a marginal
    workload counts every record once per marginal); otherwise the bound ``sqrt(m)``."""
    _check_workload(workload)
    if isinstance(workload, MatrixWorkload):
        return float(np.sqrt(np.max(np.sum(workload._matrix**2, axis=0))))
    if isinstance(workload, MarginalWorkload):
        return math.sqrt(len(workload.marginals))
    return math.sqrt(workload.k)


# --- projection onto K_Q --------------------------------------------------------------------------


def simplex_projection(v: object) -> np.ndarray:
    """The Euclidean projection of ``v`` onto the probability simplex (exact, by sorting;
    Held, Wolfe and Crowder 1974; Duchi et al. 2008): ``max(v - tau, 0)`` with ``tau`` chosen so
    that the result sums to 1."""
    v = check.array(v, "v", ndim=1)
    if v.size == 0:
        raise ValueError("v must not be empty")
    return _simplex(v)


def _simplex(v: np.ndarray) -> np.ndarray:
    # The simplex's affine hull is orthogonal to (1, ..., 1): shifting v by its max changes
    # nothing but keeps huge entries (1e16, 1e300) from rounding every v_i - tau to 0 or inf.
    # An entry 1 or more below the max projects to 0 (tau >= max - 1) whatever its value: those
    # are held at -2, so that a difference beyond the doubles (1.7e308 - -1.7e308) cannot overflow.
    with np.errstate(over="ignore"):
        v = np.maximum(v - v.max(), -2.0)
    u = np.sort(v)[::-1]
    cumulative = u.cumsum() - 1.0
    rho = (u - cumulative / _counts(v.size) > 0).nonzero()[0][-1]
    tau = cumulative[rho] / (rho + 1)
    return np.maximum(v - tau, 0.0)


@functools.lru_cache(maxsize=64)
def _counts(size: int) -> np.ndarray:
    """``1, 2, ..., size`` (read-only; the simplex projection's divisors, made once per size)."""
    counts = np.arange(1, size + 1)
    counts.flags.writeable = False
    return counts


@dataclass
class Projection:
    """The projection ``y_hat`` of a point onto ``K_Q``, with its certificate.

    Attributes
    ----------
    point
        ``y_hat = A w``, a point of ``K_Q``.
    histogram
        ``w``: a probability vector over X (a synthetic database) with ``A w = y_hat``.
    gap
        The Frank-Wolfe duality gap ``max_{r in X} <y - y_hat, Q(r) - y_hat>`` (clipped at 0):
        it bounds ``f(w) - f*`` for ``f(w) = ||A w - y||^2 / 2``, and
        ``||y_hat - z*|| <= sqrt(2 gap)`` for the exact projection ``z*``. The optimality
        condition of a projection is ``gap = 0``.
    iterations
        Gradient steps taken.
    gaps
        The gap after every ``check_every`` iterations (the solver's trace).
    """

    point: np.ndarray
    histogram: np.ndarray
    gap: float
    iterations: int
    gaps: np.ndarray

    @property
    def distance_bound(self) -> float:
        """``sqrt(2 gap)``: how far ``point`` can be from the exact projection."""
        return math.sqrt(2 * self.gap)


def project(
    y: object,
    workload: Workload,
    *,
    tol: float = 1e-5,
    max_iter: int = 5000,
    check_every: int = 10,
) -> Projection:
    """``argmin_{z in K_Q} ||y - z||_2`` (Algorithm 1, line 2), as ``A w`` for the best
    probability vector ``w``.

    Accelerated projected gradient (FISTA, Beck and Teboulle 2009) on
    ``f(w) = ||A w - y||^2 / 2`` over the simplex, with backtracking on the step size (starting
    from a power-iteration estimate of ``||A||^2``), the gradient-based adaptive restart of
    O'Donoghue and Candes (2015), and :func:`simplex_projection` as the exact projection step.
    Every ``check_every`` iterations the Frank-Wolfe duality gap of the current ``w`` is computed;
    the solver stops when ``sqrt(2 gap / m) <= tol``, i.e. when the returned point is certified
    to be within ``tol`` of the exact projection in root-mean-square per query. If ``max_iter``
    is reached first, the returned :class:`Projection` says how good it is (``gap``).

    This touches no private data: it is post-processing of ``y``.
    """
    _check_workload(workload)
    y = check.array(y, "y", ndim=1)
    if y.shape[0] != workload.k:
        raise ValueError(f"y must have length m={workload.k} (the workload size), got {y.size}")
    tol = check.positive(tol, "tol")
    max_iter = check.integer(max_iter, "max_iter", minimum=1)
    check_every = check.integer(check_every, "check_every", minimum=1)
    size = workload.domain_size
    check.dense_size(size)

    def forward(w):
        return workload._answer(w)

    def backward(r):
        return _adjoint(workload, r[None])[0]

    def gap_of(w, point):
        grad = backward(point - y)
        return max(float(grad @ w - grad.min()), 0.0)

    try:  # a function of the workload alone: estimated once for it
        lipschitz = _LIPSCHITZ[workload]
    except (KeyError, TypeError):  # not seen yet (or a workload that cannot be a weak key)
        lipschitz = _operator_norm_squared(forward, backward, size)
        with contextlib.suppress(TypeError):
            _LIPSCHITZ[workload] = lipschitz
    w = np.full(size, 1.0 / size)
    point = forward(w)
    z, z_point, t_momentum = w, point, 1.0
    gaps = [gap_of(w, point)]
    target = tol**2 * workload.k / 2
    iterations, previous_size = 0, size
    polished: dict[bytes, tuple | None] = {}  # support -> (w, A w, gap) of its polish, or None
    while gaps[-1] > target and iterations < max_iter:
        for _ in range(check_every):
            iterations += 1
            residual = z_point - y
            grad = backward(residual)
            f_z = 0.5 * residual @ residual
            while True:
                w_new = _simplex(z - grad / lipschitz)
                step = w_new - z
                new_point = forward(w_new)
                f_new = 0.5 * np.sum((new_point - y) ** 2)
                if f_new <= f_z + grad @ step + 0.5 * lipschitz * step @ step + 1e-15 * (1 + f_z):
                    break
                lipschitz *= 2
            if grad @ (w_new - w) > 0:  # adaptive restart: the momentum points uphill
                t_momentum = 1.0
            t_next = (1 + math.sqrt(1 + 4 * t_momentum**2)) / 2
            beta = (t_momentum - 1) / t_next
            z, z_point = w_new + beta * (w_new - w), new_point + beta * (new_point - point)
            w, point, t_momentum = w_new, new_point, t_next
        gap = gap_of(w, point)
        support = np.flatnonzero(w > 0)
        settled = support.size >= 0.95 * previous_size
        previous_size = support.size
        if settled and support.size <= workload.k + 1 and support.size <= MAX_POLISH:
            key = support.tobytes()  # the polish depends on the support only: computed once
            if key not in polished:
                candidate = _polish(workload, y, support)
                if candidate is None:
                    polished[key] = None
                else:
                    candidate_point = forward(candidate)
                    polished[key] = (candidate, candidate_point,
                                     gap_of(candidate, candidate_point))  # fmt: skip
            found = polished[key]
            if found is not None and found[2] < gap:
                w, point, gap = found
                z, z_point, t_momentum = w, point, 1.0
        gaps.append(gap)
    return Projection(point, w, gaps[-1], iterations, np.array(gaps))


def _columns(workload: Workload, cells: np.ndarray) -> np.ndarray:
    """The points ``Q(r)`` for the cells ``r`` in ``cells``, as the columns of an array."""
    if isinstance(workload, MatrixWorkload):
        return workload._matrix[:, cells]
    one_hot = np.zeros(workload.domain_size)
    columns = np.empty((workload.k, cells.size))
    for j, r in enumerate(cells):
        one_hot[r] = 1.0
        columns[:, j] = workload._answer(one_hot)
        one_hot[r] = 0.0
    return columns


def _polish(workload: Workload, y: np.ndarray, support: np.ndarray) -> np.ndarray | None:
    """The minimiser of ``||A v - y||`` over the affine hull of a face of the simplex, found by
    a few active-set steps: solve the KKT system on the active cells, drop those with negative
    weight, repeat (at most 20 times). Returns a probability vector, or ``None``.

    Once the gradient iterations have found (a superset of) the optimum's face, this lands on the
    optimum itself; whether it did is judged by the duality gap, never assumed."""
    columns = _columns(workload, support)
    gram, target = columns.T @ columns, columns.T @ y
    active = np.arange(support.size)
    for _ in range(20):
        s = active.size
        kkt = np.ones((s + 1, s + 1))
        kkt[:s, :s] = gram[np.ix_(active, active)]
        kkt[s, s] = 0.0
        rhs = np.r_[target[active], 1.0]
        try:
            affine = np.linalg.solve(kkt, rhs)[:s]
        except np.linalg.LinAlgError:
            affine = np.linalg.lstsq(kkt, rhs, rcond=None)[0][:s]
        if np.all(affine >= 0):
            out = np.zeros(workload.domain_size)
            out[support[active]] = affine
            return out / out.sum()
        active = active[affine > 0]
        if active.size == 0:
            return None
    return None


#: :func:`_operator_norm_squared` of each workload :func:`project` has seen (while it lives).
_LIPSCHITZ: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _operator_norm_squared(forward, backward, size: int, iterations: int = 30) -> float:
    """A power-iteration estimate of ``||A||_2^2`` (the Lipschitz constant of the gradient);
    deterministic start, so :func:`project` is a deterministic function of its input."""
    v = np.linspace(1.0, 2.0, size)
    estimate = 1.0
    for _ in range(iterations):
        u = backward(forward(v))
        estimate = float(np.linalg.norm(u) / np.linalg.norm(v))
        if estimate == 0:
            return 1.0
        v = u / np.linalg.norm(u)
    return estimate


# --- Algorithm 1 ----------------------------------------------------------------------------------


def projection_mechanism(
    data: Dataset,
    workload: Workload,
    *,
    epsilon: float,
    delta: float,
    rng: Seed,
    calibration: str = "analytic",
    budget: PrivacyBudget | None = None,
    tol: float = 1e-5,
    max_iter: int = 5000,
) -> Result:
    """The projection mechanism (Algorithm 1): Gaussian noise, then projection onto ``K_Q``.

    ``y_tilde = Q(x) + W`` with ``W`` Gaussian noise of scale ``sigma = gaussian_sigma(sqrt(m)/n,
    epsilon, delta)``: the L2 sensitivity of ``Q`` under replace-one neighbours is ``sqrt(m)/n``
    (each of the ``m`` answers moves by at most ``1/n``). ``W`` is the floating-point-safe noise of
    :func:`dpteach.gaussian`: the exact discrete Gaussian on a fine grid, whose sigma is calibrated
    through zCDP (Canonne, Kamath and Steinke 2020) and is never below the continuous analytic
    sigma of Balle and Wang (2018) (``calibration="classic"``: Dwork-Roth Thm A.1, ``epsilon <
    1``, when larger). In the lecture's notation ``sigma = sigma_{eps,delta} sqrt(m)/n`` with
    ``sigma_{eps,delta} = gaussian_sigma(1, eps, delta)``. Then ``y_hat = project(y_tilde)``.

    Guarantee: ``(epsilon, delta)``-DP under replace-one neighbours (Theorem 3: the Gaussian
    mechanism, then post-processing, which uses only ``y_tilde`` and the public ``Q``). The
    budget is charged ``(epsilon, delta)`` after validation and before the noise is drawn.
    Accuracy: average error at most :func:`dpteach.theory.projection_average_error` (Theorem 9;
    its proof takes ``W`` Gaussian, and with the width bound ``sqrt(2 m ln|X|)`` it holds for the
    discrete Gaussian too, which is ``sigma^2``-subgaussian, up to the grid's negligible rounding).

    Returns
    -------
    Result
        ``answers`` is ``y_hat``; ``synthetic`` the histogram ``w`` with ``A w = y_hat``;
        ``info`` holds ``noisy`` (``y_tilde``, itself private), ``sigma``, ``gap`` and
        ``iterations`` of the projection, ``gaps`` (the solver's trace) and ``privacy``. The
        one-round trace records the true max error (a non-private diagnostic).
    """
    _check_data(data, workload)
    n, m = data.n, workload.k
    epsilon = check.positive(epsilon, "epsilon")  # validated once: gaussian's internal path below
    delta = check.delta(delta, allow_zero=False)
    sigma = _gaussian_sigma(math.sqrt(m) / n, epsilon, delta, calibration)
    tol = check.positive(tol, "tol")
    max_iter = check.integer(max_iter, "max_iter", minimum=1)
    gen = check.rng(rng)
    true = workload._answer(data.histogram())
    noisy = np.atleast_1d(
        _gaussian(true, math.sqrt(m) / n, epsilon, delta, sigma, gen, budget=budget)
    )
    proj = project(noisy, workload, tol=tol, max_iter=max_iter)
    info = {
        "noisy": noisy,
        "sigma": sigma,
        "gap": proj.gap,
        "iterations": proj.iterations,
        "gaps": proj.gaps,
        "privacy": f"({epsilon:g}, {delta:g})-DP under replace-one neighbours (Gaussian mechanism, "
        f"L2 sensitivity sqrt(m)/n = sqrt({m})/{n}, {calibration} calibration; projection is "
        "post-processing)",
    }
    trace = [Round(1, max_error=float(np.max(np.abs(proj.point - true))), epsilon_spent=epsilon)]
    return Result(proj.histogram, proj.point, trace, info=info)


# --- Gaussian width and mean width ----------------------------------------------------------------


@dataclass
class WidthEstimate:
    """Monte-Carlo estimates of the Gaussian width and the mean width of ``K_Q``.

    Attributes
    ----------
    gaussian_width, gaussian_interval
        ``l*(K_Q) = E h_K(g)`` (Definition 8) and a rigorous confidence interval.
    mean_width, mean_interval
        ``M*(K_Q) = E h_K(u)``, ``u`` uniform on the unit sphere (Definition 7), and its
        (normal-approximation) confidence interval.
    expected_norm
        ``E ||g||_2 = sqrt(2) Gamma((m+1)/2) / Gamma(m/2)`` (exact), so that ``l* = E||g|| M*``.
    samples, confidence, radius
        The number of directions, the confidence level and ``R = max ||Q(r)||``.
    """

    gaussian_width: float
    gaussian_interval: tuple[float, float]
    mean_width: float
    mean_interval: tuple[float, float]
    expected_norm: float
    samples: int
    confidence: float
    radius: float


def expected_gaussian_norm(m: int) -> float:
    """``E ||g||_2`` for ``g ~ N(0, I_m)``: ``sqrt(2) Gamma((m+1)/2) / Gamma(m/2)``, between
    ``m / sqrt(m+1)`` and ``sqrt(m)`` (so the lecture's ``c`` in ``E||g|| = c sqrt(m)`` lies in
    ``[1/sqrt(2), 1)`` and tends to 1)."""
    m = check.integer(m, "m", minimum=1)
    return math.sqrt(2) * math.exp(special.gammaln((m + 1) / 2) - special.gammaln(m / 2))


def gaussian_width(
    workload: Workload, *, samples: int = 2000, rng: Seed, confidence: float = 0.95
) -> WidthEstimate:
    """Estimate ``l*(K_Q)`` and ``M*(K_Q)`` from ``samples`` Gaussian directions ``g``.

    ``l*`` is the mean of ``h_K(g)``, ``M*`` the mean of ``h_K(g / ||g||)`` (``g / ||g||`` is
    uniform on the sphere). The interval for ``l*`` is rigorous, not asymptotic: ``h_K`` is
    ``R``-Lipschitz (``R = max ||Q(r)||``), so the mean of ``N`` values of ``h_K(g)`` is an
    ``R/sqrt(N)``-Lipschitz function of ``N m`` standard Gaussians and deviates from ``l*`` by more
    than ``t`` with probability at most ``2 exp(-N t^2 / (2 R^2))`` (Gaussian concentration,
    Tsirelson-Ibragimov-Sudakov): ``t = R sqrt(2 ln(2 / (1 - confidence)) / N)``. The interval
    for ``M*`` is the usual normal-approximation one, ``z s / sqrt(N)`` with the sample standard
    deviation ``s`` (``h_K(u)`` concentrates far more than its range ``[-R, R]`` suggests, and a
    range-based interval would be uselessly wide).

    ``rng``: a Generator (consumed) or a seed.
    """
    _check_workload(workload)
    samples = check.integer(samples, "samples", minimum=2)
    confidence = check.probability(confidence, "confidence")
    gen = check.rng(rng)
    check.dense_size(workload.domain_size)
    check.dense_size(samples * workload.k, "the Gaussian directions (samples x k)")
    rows = max(1, CHUNK_ENTRIES // workload.domain_size)
    g = gen.standard_normal((samples, workload.k))
    h = np.concatenate(
        [_adjoint(workload, g[s : s + rows]).max(axis=1) for s in range(0, samples, rows)]
    )
    on_sphere = h / np.linalg.norm(g, axis=1)
    r = radius(workload)
    half = r * math.sqrt(2 * math.log(2 / (1 - confidence)) / samples)
    z = special.ndtri(0.5 + confidence / 2)
    half_sphere = z * on_sphere.std(ddof=1) / math.sqrt(samples)
    ell, mean = float(h.mean()), float(on_sphere.mean())
    return WidthEstimate(ell, (ell - half, ell + half), mean,
                         (mean - half_sphere, mean + half_sphere),
                         expected_gaussian_norm(workload.k), samples, confidence, r)  # fmt: skip


# --- validation -----------------------------------------------------------------------------------


def _check_workload(workload: object) -> None:
    Workload.check(workload)


def _check_data(data: object, workload: object) -> None:
    same_universe(Dataset.check(data), Workload.check(workload))


# --- experiments and pictures (for the notebook and the benchmarks) ------------------------------


def error_comparison(
    data: Dataset, workload: Workload, *, epsilon: float, delta: float, runs: int, rng: Seed
) -> dict[str, np.ndarray]:
    """Per-query errors of ``runs`` runs of the projection mechanism, before and after projection.

    Returns ``{"gaussian": E, "projected": F, "gap": G}``: arrays of shape ``(runs, m)`` of
    ``y_tilde - Q(x)`` (the Gaussian mechanism alone) and ``y_hat - Q(x)`` (Algorithm 1), and the
    certified duality gap of each projection (shape ``(runs,)``). The average error of a run
    (Definition 4) is ``sqrt(mean(E**2, axis=1))``. ``rng``: a Generator (consumed) or a seed.
    """
    runs = check.integer(runs, "runs", minimum=1)
    gen = check.rng(rng)
    true = workload.answer(data.histogram())
    out = {"gaussian": np.empty((runs, workload.k)), "projected": np.empty((runs, workload.k)),
           "gap": np.empty(runs)}  # fmt: skip
    for i in range(runs):
        result = projection_mechanism(data, workload, epsilon=epsilon, delta=delta, rng=gen)
        out["gaussian"][i] = result.info["noisy"] - true
        out["projected"][i] = result.answers - true
        out["gap"][i] = result.info["gap"]
    return out


#: The chapter's explorable: its universe, privacy parameter delta, and the ranges of its n and m
#: sliders (the axes of its figure span them, so they stay fixed as the sliders move).
EXPLORE_DOMAIN, EXPLORE_DELTA = 64, 1e-6
EXPLORE_N, EXPLORE_M, EXPLORE_EPSILON = (10, 10_000), (2, 1000), (0.1, 10.0)


def explore_run(epsilon: float, n: int, m: int) -> dict[str, np.ndarray]:
    """The runs behind the chapter's explorable: :func:`error_comparison` (3 runs, seed 2) for
    ``m`` random counting queries (seed ``m``) on a universe of 64 cells and ``n`` correlated
    records (seed 1), at ``(epsilon, 1e-6)``."""
    workload = random_queries(EXPLORE_DOMAIN, m, rng=m)
    data = correlated_data(Domain({"r": EXPLORE_DOMAIN}), n, rng=1)
    return error_comparison(data, workload, epsilon=epsilon, delta=EXPLORE_DELTA, runs=3, rng=2)
