"""Which mechanism answers a marginal workload best, and where: the landscape of chapter 06.

The workload is every 2- and 3-way marginal of ``d`` binary attributes (``|X| = 2^d``), the
data ``n`` records of :func:`dpteach.latent_class_data`, and the contenders the package's
mechanisms, each run as it is:

* ``eps``-DP: the noisy histogram and the noisy marginal tables with Laplace noise, Laplace noise
  on every query (:mod:`dpteach.baselines`), MWEM (:func:`dpteach.mw.mwem`) and the lecture's
  private MW (:func:`dpteach.mw.private_mw`, at the ``alpha`` its theorem certifies);
* ``(eps, delta)``-DP: the same three baselines with Gaussian noise, and the projection mechanism
  (:func:`dpteach.projection.projection_mechanism`).

Neighbouring relation: replace-one throughout (the records' number ``n`` is public). Under
add/remove neighbours, with unnormalised counts (private-pgm, smartnoise), a table's L1
sensitivity is half ours and its L2 sensitivity ``1/sqrt(2)`` of ours: their ``eps``-DP Laplace
table release is ``2 eps``-DP here, and their Gaussian one at ``rho``-zCDP is ``2 rho``-zCDP here.
A single counting query has sensitivity ``1/n`` under both relations: per-query releases are
unchanged.

:func:`grid_cell` measures one cell ``(n, d)`` of the map (``benchmarks/landscape.py`` runs the
whole grid and writes ``datasets/landscape.json``, which :func:`load_map` reads); :func:`cost`
estimates each run before it starts, and a run above :data:`RUN_SECONDS` of estimated time is
recorded as not run, with the estimate. :func:`theory_error` gives each mechanism's expected
error (the baselines, exactly or by a normal approximation) or its worst-case bound (MWEM,
private MW, projection), and :func:`recommend` combines the map and the theory into an answer to
"which mechanism for me?".
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

import numpy as np

from . import _validate as check
from . import baselines, mw, projection, theory
from .data import Dataset, latent_class_data
from .domain import Domain
from .mechanisms import gaussian_sigma
from .queries import MarginalWorkload

#: The map's grid: ``n`` from 10^3 to 10^6 in half decades, ``d`` binary attributes.
NS = (1_000, 3_162, 10_000, 31_623, 100_000, 316_228, 1_000_000)
DS = (4, 8, 12, 16, 20, 24)
#: The measured workload: all marginals of these widths.
WIDTHS = (2, 3)
EPSILON, DELTA = 1.0, 1e-6
#: Runs of a mechanism per cell, at most (fewer when a run is expensive, see :func:`repetitions`).
MAX_REPETITIONS = 5
#: A run whose estimated time exceeds this many seconds is not run.
RUN_SECONDS = 60.0
#: Repetitions stop once their estimated time exceeds this many seconds (at least one is run).
CELL_SECONDS = 10.0
#: The cost model's speed: cells visited per second (one "cell visit" is reading or writing one
#: double of a histogram-sized array; measured on this project's 2-core machine).
CELLS_PER_SECOND = 1.0e9
#: The projection's solver: at most this many iterations, to this RMS tolerance.
PROJECTION_MAX_ITER, PROJECTION_TOL = 200, 1e-4
#: Seed of the data and of every run (with the cell, the mechanism and the repetition).
SEED = 29

_CALL = 2**14  # fixed cost of one numpy call, in cell visits (as in dpteach.queries)
_DRAW = 500  # one exact noise draw, in cell visits (about 4 million draws a second)
_MW_ITERATIONS = 20  # mw.mwem's default passes per round


@dataclass(frozen=True)
class Mechanism:
    """A contender: its key, label, privacy notion (``"eps"`` or ``"eps, delta"``) and colour."""

    name: str
    label: str
    privacy: str
    color: str
    #: ``run(data, workload, exact answers, epsilon, delta, rng)`` returns the released answers
    run: Callable = field(repr=False, compare=False, default=None)

    @property
    def pure(self) -> bool:
        return self.privacy == "eps"

    @property
    def dense(self) -> bool:
        """Whether it keeps a histogram over all of X (refused beyond the dense limit)."""
        return not self.name.startswith(("tables", "query"))


def _private_mw_alpha(n: int, workload: MarginalWorkload, epsilon: float) -> float:
    """The ``alpha`` at which the lecture's theorem certifies ``3 alpha`` at this ``n``
    (:func:`dpteach.theory.private_mw_alpha`), or 0.45 when none is (private MW then stays near
    the uniform histogram): public quantities only."""
    alpha = theory.private_mw_alpha(workload.domain_size, workload.k, n, epsilon)
    return alpha if alpha < 1 else 0.45


def _run_private_mw(data, W, exact, epsilon, delta, rng):
    alpha = _private_mw_alpha(data.n, W, epsilon)
    rounds = theory.private_mw_rounds(W.domain_size, alpha)
    return mw.private_mw(
        data,
        W,
        epsilon=epsilon,
        alpha=alpha,
        rng=rng,
        max_rounds=max(rounds, mw.MAX_LEARNER_ROUNDS),
    ).answers


def _run_projection(data, W, exact, epsilon, delta, rng):
    return projection.projection_mechanism(
        data,
        W,
        epsilon=epsilon,
        delta=delta,
        rng=rng,
        tol=PROJECTION_TOL,
        max_iter=PROJECTION_MAX_ITER,
    ).answers


MECHANISMS = {
    m.name: m
    for m in (
        Mechanism(
            "histogram-laplace",
            "noisy histogram (Laplace)",
            "eps",
            "#56B4E9",
            lambda d, W, a, e, dl, g: baselines.laplace_histogram_answers(d, W, epsilon=e, rng=g),
        ),
        Mechanism(
            "tables-laplace",
            "noisy tables (Laplace)",
            "eps",
            "#0072B2",
            lambda d, W, a, e, dl, g: baselines.laplace_marginal_answers(d, W, epsilon=e, rng=g),
        ),
        Mechanism(
            "query-laplace",
            "Laplace per query",
            "eps",
            "#999999",
            lambda d, W, a, e, dl, g: baselines.laplace_answers(a, n=d.n, epsilon=e, rng=g),
        ),
        Mechanism(
            "mwem",
            "MWEM",
            "eps",
            "#D55E00",
            lambda d, W, a, e, dl, g: mw.mwem(d, W, epsilon=e, rng=g).answers,
        ),
        Mechanism("private-mw", "private MW (lecture)", "eps", "#CC79A7", _run_private_mw),
        Mechanism(
            "histogram-gaussian",
            "noisy histogram (Gaussian)",
            "eps, delta",
            "#F0E442",
            lambda d, W, a, e, dl, g: baselines.gaussian_histogram_answers(
                d, W, epsilon=e, delta=dl, rng=g
            ),
        ),
        Mechanism(
            "tables-gaussian",
            "noisy tables (Gaussian)",
            "eps, delta",
            "#009E73",
            lambda d, W, a, e, dl, g: baselines.gaussian_marginal_answers(
                d, W, epsilon=e, delta=dl, rng=g
            ),
        ),
        Mechanism(
            "query-gaussian",
            "Gaussian per query",
            "eps, delta",
            "#000000",
            lambda d, W, a, e, dl, g: baselines.gaussian_answers(
                a, n=d.n, epsilon=e, delta=dl, rng=g
            ),
        ),
        Mechanism("projection", "projection mechanism", "eps, delta", "#E69F00", _run_projection),
    )
}
NAMES = tuple(MECHANISMS)


# --- the setting ---------------------------------------------------------------------------------


def _widths(widths: object, d: int) -> tuple[int, ...]:
    if isinstance(widths, str | bytes) or not isinstance(
        widths, Sequence | set | frozenset | np.ndarray
    ):
        raise TypeError(f"widths must be a sequence of marginal widths, got {widths!r}")
    out = tuple(sorted({check.integer(w, "each width", minimum=1) for w in widths}))
    if not out:
        raise ValueError("widths must name at least one marginal width, e.g. (2, 3)")
    if out[-1] > d:
        raise ValueError(f"widths must be at most d = {d} (the attributes), got {out[-1]}")
    return out


def sizes(d: int, widths: Sequence[int] = WIDTHS) -> tuple[int, int]:
    """``(k, T)``: the queries (cells) and tables of all marginals of ``widths`` over ``d``
    binary attributes, ``k = sum_l 2^l C(d, l)`` and ``T = sum_l C(d, l)``."""
    d = check.integer(d, "d", minimum=1)
    widths = _widths(widths, d)
    return sum(2**w * math.comb(d, w) for w in widths), sum(math.comb(d, w) for w in widths)


def workload(d: int, widths: Sequence[int] = WIDTHS) -> MarginalWorkload:
    """All marginals of ``widths`` over the binary attributes ``x0 .. x{d-1}`` (made once per
    setting: the workload keeps its plans and its Lipschitz estimate for the projection)."""
    d = check.integer(d, "d", minimum=1)
    return _workload(d, _widths(widths, d))


@cache
def _workload(d: int, widths: tuple[int, ...]) -> MarginalWorkload:
    domain = Domain.binary(d)
    return MarginalWorkload(
        domain, [m for w in widths for m in MarginalWorkload.all_kway(domain, w).marginals]
    )


def cell_data(n: int, d: int) -> Dataset:
    """The cell's data: ``n`` records of :func:`dpteach.latent_class_data` over ``d`` binary
    attributes (3 latent classes), seeded by ``(SEED, n, d)``."""
    n = check.integer(n, "n", minimum=1)
    d = check.integer(d, "d", minimum=1)
    check.dense_size(n, "the records (one row of d attributes each)", itemsize=8 * d)
    # the records of the map's largest cells (10^6 x 24 integers, 192 MB) pass the dense limit of
    # 2^24 cells, though not its 1 GiB: raised for this one array, as _validate allows
    limit = check.MAX_DENSE_SIZE
    check.MAX_DENSE_SIZE = max(limit, n * d)
    try:
        return latent_class_data(Domain.binary(d), n, rng=np.random.default_rng([SEED, n, d]))
    finally:
        check.MAX_DENSE_SIZE = limit


# --- cost and measurement ------------------------------------------------------------------------


def cost(
    name: str, n: int, d: int, widths: Sequence[int] = WIDTHS, epsilon: float = EPSILON
) -> float:
    """Estimated cell visits of one run of mechanism ``name`` (an upper estimate for the
    iterative ones: private MW's every possible round, the projection's every iteration)."""
    _mechanism(name)
    n = check.integer(n, "n", minimum=1)
    k, tables = sizes(d, widths)
    size = 2**d
    answer = min(tables, 25) * size + tables * _CALL
    reweight = 6 * size + 3 * _CALL  # an MW step on one query, with the KL diagnostic
    if name.startswith("histogram"):
        return size * _DRAW + answer + n
    if name.startswith("tables"):
        return tables * (20 * n + _CALL) + k * _DRAW
    if name.startswith("query"):
        return k * _DRAW
    if name == "mwem":
        rounds = mw.mwem_rounds(n, epsilon, workload(d, widths))
        updates = sum(min(t, tables) for t in range(1, rounds + 1))
        update = size + _CALL  # one marginal's MW step inside a pass (measured: about one pass)
        return rounds * (answer + k * 50) + _MW_ITERATIONS * updates * update + size + n
    if name == "private-mw":
        alpha = theory.private_mw_alpha(size, k, n, epsilon)
        rounds = theory.private_mw_rounds(size, alpha if alpha < 1 else 0.45)
        return rounds * (answer + reweight + 3 * size + 2 * k * 50) + size + n
    # projection: the power iteration, then every iteration with its duality-gap checks and,
    # every 10 iterations, the exact polishing step (one answer per cell of the support)
    adjoint = 2 * tables * (size + _CALL)
    sort = 2 * size * max(d, 1)
    polish = min(k + 1, projection.MAX_POLISH, size) * tables * _CALL / 10
    step = answer + adjoint + sort + polish
    return 30 * (answer + adjoint) + PROJECTION_MAX_ITER * 1.1 * step


def seconds(
    name: str, n: int, d: int, widths: Sequence[int] = WIDTHS, epsilon: float = EPSILON
) -> float:
    """:func:`cost` in seconds at :data:`CELLS_PER_SECOND`."""
    return cost(name, n, d, widths, epsilon) / CELLS_PER_SECOND


def repetitions(name: str, n: int, d: int) -> int:
    """How many runs the map makes of ``name`` at ``(n, d)``: :data:`MAX_REPETITIONS`, fewer
    when their estimated time passes :data:`CELL_SECONDS` (at least 1), 0 when one run's passes
    :data:`RUN_SECONDS` (not run)."""
    s = seconds(name, n, d)
    if s > RUN_SECONDS:
        return 0
    return int(min(MAX_REPETITIONS, max(1, CELL_SECONDS // max(s, 1e-9))))


def _mechanism(name: object) -> Mechanism:
    if not isinstance(name, str) or name not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {list(NAMES)}, got {name!r}")
    return MECHANISMS[name]


def run_errors(
    name: str,
    data: Dataset,
    W: MarginalWorkload,
    exact: np.ndarray,
    *,
    repetition: int,
    epsilon: float = EPSILON,
    delta: float = DELTA,
) -> dict:
    """One run of mechanism ``name`` on ``data``: its max and mean absolute error over the
    workload's ``k`` queries, and its wall-clock seconds. Seeded by ``(SEED, n, d, the
    mechanism's index, repetition)``: the same call gives the same errors."""
    mechanism = _mechanism(name)
    gen = np.random.default_rng([SEED, data.n, data.domain.d, NAMES.index(name), repetition])
    start = time.perf_counter()
    answers = mechanism.run(data, W, exact, epsilon, delta, gen)
    elapsed = time.perf_counter() - start
    gaps = np.abs(np.asarray(answers) - exact)
    return {"max": float(gaps.max()), "mean": float(gaps.mean()), "seconds": elapsed}


def grid_cell(n: int, d: int, mechanisms: Sequence[str] = NAMES) -> dict:
    """Measure one cell of the map: for each mechanism, :func:`repetitions` runs (or why none),
    with the max and mean errors of each run; and the errors of the uniform histogram (a
    data-free answer: every ``l``-way cell ``2^-l``), which any useful release must beat."""
    n = check.integer(n, "n", minimum=1)
    d = check.integer(d, "d", minimum=1)
    for name in mechanisms:
        _mechanism(name)
    check.dense_size(2**d)
    data = cell_data(n, d)
    W = workload(d)
    exact = W.answer(data)
    uniform = np.abs(W.answer(np.full(2**d, 2.0**-d)) - exact)
    k, tables = sizes(d)
    cell = {
        "n": n,
        "d": d,
        "k": k,
        "tables": tables,
        "uniform": {"max": float(uniform.max()), "mean": float(uniform.mean())},
        "runs": {},
    }
    for name in mechanisms:
        reps = repetitions(name, n, d)
        if reps == 0:
            cell["runs"][name] = {
                "not_run": f"estimated {seconds(name, n, d):,.0f} s per run, "
                f"over the {RUN_SECONDS:g} s limit"
            }
            continue
        runs = [run_errors(name, data, W, exact, repetition=r) for r in range(reps)]
        cell["runs"][name] = {key: [r[key] for r in runs] for key in ("max", "mean", "seconds")}
    return cell


# --- the committed map ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LandscapeMap:
    """The measured map (``datasets/landscape.json``).

    ``errors[metric]`` (``"max"`` or ``"mean"``) has shape ``(mechanisms, len(ns), len(ds))``:
    the mean over the runs of each cell, NaN where the mechanism was not run; ``runs`` the
    number of runs; ``uniform[metric]`` the uniform histogram's error, shape
    ``(len(ns), len(ds))``; ``not_run`` maps ``(name, n, d)`` to the reason; ``filled`` maps
    each ``(name, n, d)`` run once above the time limit (``benchmarks/landscape.py --fill``) to
    that run's seconds;
    ``meta`` holds the settings, the grid's size and the benchmark's run time.
    """

    ns: tuple[int, ...]
    ds: tuple[int, ...]
    names: tuple[str, ...]
    errors: dict
    runs: np.ndarray
    uniform: dict
    not_run: dict
    meta: dict
    filled: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, text: str) -> LandscapeMap:
        raw = json.loads(text)
        meta = raw["meta"]
        ns, ds, names = tuple(meta["ns"]), tuple(meta["ds"]), tuple(meta["mechanisms"])
        errors = {m: np.full((len(names), len(ns), len(ds)), np.nan) for m in ("max", "mean")}
        uniform = {m: np.full((len(ns), len(ds)), np.nan) for m in ("max", "mean")}
        runs = np.zeros((len(names), len(ns), len(ds)), dtype=int)
        not_run, filled = {}, {}
        for cell in raw["cells"]:
            i, j = ns.index(cell["n"]), ds.index(cell["d"])
            for metric in ("max", "mean"):
                uniform[metric][i, j] = cell["uniform"][metric]
            for name, r in cell["runs"].items():
                m = names.index(name)
                if "not_run" in r:
                    not_run[(name, cell["n"], cell["d"])] = r["not_run"]
                    continue
                runs[m, i, j] = len(r["max"])
                if "filled" in r:
                    filled[(name, cell["n"], cell["d"])] = r["seconds"][0]
                for metric in ("max", "mean"):
                    errors[metric][m, i, j] = float(np.mean(r[metric]))
        return cls(ns, ds, names, errors, runs, uniform, not_run, meta, filled)

    def _where(self, cells: list[tuple[int, int]]) -> str:
        """``(d, n)`` cells in words, by ``d``."""
        parts = []
        for d in sorted({d for d, _ in cells}):
            some = sorted(n for dd, n in cells if dd == d)
            if some == [n for n in self.ns if n >= some[0]]:
                every = "every n" if some[0] == self.ns[0] else f"n >= {some[0]:,}"
                parts.append(f"d = {d} at {every}")
            else:
                parts.append(f"d = {d} at n = {', '.join(f'{n:,}' for n in some)}")
        return "; ".join(parts)

    def not_run_summary(self) -> list[str]:
        """One line per mechanism not run somewhere (where, and the estimated time per run), and
        one per mechanism run once above the time limit (``filled``)."""
        lines = []
        for name in self.names:
            cells = [(d, n) for (m, n, d) in self.not_run if m == name]
            if cells:
                estimates = [seconds(name, n, d) for d, n in cells]
                lines.append(
                    f"{MECHANISMS[name].label}: not run at {len(cells)} cells "
                    f"({self._where(cells)}); estimated {min(estimates):,.0f} to "
                    f"{max(estimates):,.0f} s per run"
                )
            cells = [(d, n) for (m, n, d) in self.filled if m == name]
            if cells:
                estimates = [seconds(name, n, d) for d, n in cells]
                took = [self.filled[(name, n, d)] for d, n in cells]
                lines.append(
                    f"{MECHANISMS[name].label}: run once above the limit at {len(cells)} cells "
                    f"({self._where(cells)}); estimated {min(estimates):,.0f} to "
                    f"{max(estimates):,.0f} s, took {min(took):,.1f} to {max(took):,.1f} s"
                )
        return lines

    def unrun(self, pure: bool = False) -> list[list[tuple[str, ...]]]:
        """``unrun[i][j]``: the contenders (``eps``-DP ones only if ``pure``) not run at cell
        ``(ns[i], ds[j])``, by name; the cell's winner is the best of those that ran."""
        return [
            [
                tuple(m for m in self.names
                      if (m, n, d) in self.not_run and (MECHANISMS[m].pure or not pure))
                for d in self.ds
            ]
            for n in self.ns
        ]  # fmt: skip

    def describe_winners(self, metric: str = "max", pure: bool = False) -> list[str]:
        """One line per ``d``: the measured winners along ``n``, as runs of the grid's ``n``,
        with the contenders not run there ("not run: MWEM"; at the end if at no ``n``)."""
        best, unrun = self.winners(metric, pure), self.unrun(pure)
        lines = []
        for j, d in enumerate(self.ds):
            everywhere = set.intersection(*(set(row[j]) for row in unrun))
            spans, start = [], 0
            for i in range(1, len(self.ns) + 1):
                here = (best[start, j], unrun[start][j])
                if i == len(self.ns) or (best[i, j], unrun[i][j]) != here:
                    span = (f"n = {self.ns[start]:,}" if i - 1 == start
                            else f"n = {self.ns[start]:,} to {self.ns[i - 1]:,}")  # fmt: skip
                    span += _not_run(
                        [m for m in unrun[start][j] if m not in everywhere], "; not run: "
                    )
                    spans.append(f"{MECHANISMS[self.names[best[start, j]]].label} ({span})")
                    start = i
            lines.append(
                f"d = {d:2d}: " + ", ".join(spans) + _not_run(everywhere, "; not run at any n: ")
            )
        return lines

    def winners(self, metric: str = "max", pure: bool = False) -> np.ndarray:
        """Index (into ``names``) of the mechanism with the smallest measured error in each cell,
        among the ``eps``-DP ones if ``pure``; -1 where none of them was run."""
        errors = self.errors[_metric(metric)].copy()
        if pure:
            errors[[not MECHANISMS[n].pure for n in self.names]] = np.nan
        best = np.full(errors.shape[1:], -1)
        ran = ~np.all(np.isnan(errors), axis=0)
        best[ran] = np.nanargmin(np.where(np.isnan(errors), np.inf, errors), axis=0)[ran]
        return best


def _not_run(names, prefix: str) -> str:
    labels = [MECHANISMS[m].label for m in NAMES if m in names]
    return f"{prefix}{', '.join(labels)}" if labels else ""


def _metric(metric: object) -> str:
    if metric not in ("max", "mean"):
        raise ValueError(f"metric must be 'max' or 'mean', got {metric!r}")
    return metric


@cache
def load_map() -> LandscapeMap:
    """The committed map, bundled with the package (made by ``benchmarks/landscape.py``)."""
    text = resources.files("dpteach.datasets").joinpath("landscape.json").read_text()
    return LandscapeMap.from_json(text)


# --- theory --------------------------------------------------------------------------------------


def theory_error(
    name: str,
    n: int,
    d: int,
    widths: Sequence[int] = WIDTHS,
    epsilon: float = EPSILON,
    delta: float = DELTA,
    metric: str = "max",
) -> tuple[float, str]:
    """Mechanism ``name``'s error on all marginals of ``widths`` over ``d`` binary attributes,
    ``n`` records, from theory, and what kind of number it is:

    * ``"exact"``: the expected max or mean error of the noisy tables and of per-query noise
      (:func:`dpteach.theory.marginal_laplace_errors` and the like);
    * ``"approx"``: the noisy histogram's, by a normal approximation
      (:func:`dpteach.theory.histogram_errors`);
    * ``"bound"``: a worst-case bound: MWEM (:func:`dpteach.theory.mwem_max_error_bound`),
      private MW (``3 alpha``, its certified accuracy; ``inf``, no guarantee, where no
      ``alpha`` is certified at this ``n``),
      projection (Theorem 9's RMS average error for the mean, and ``sqrt(k)`` times it, the L2
      error, for the max). A bound of 1 or more says nothing (every answer lies in [0, 1]).
    """
    mechanism = _mechanism(name)
    metric = _metric(metric)
    n = check.integer(n, "n", minimum=1)
    d = check.integer(d, "d", minimum=1)
    widths = _widths(widths, d)
    epsilon = check.positive(epsilon, "epsilon")
    delta = check.delta(delta)
    if not mechanism.pure and delta == 0:
        raise ValueError(f"{name} is (eps, delta)-DP: it needs delta > 0")
    mean, top, kind = _theory_errors(name, n, d, widths, epsilon, delta)
    return (mean if metric == "mean" else top), kind


@cache
def _theory_errors(name, n, d, widths, epsilon, delta) -> tuple[float, float, str]:
    """``(mean, max, kind)`` of :func:`theory_error` on validated arguments (computed once per
    setting: the maps ask for both metrics, often)."""
    mechanism = MECHANISMS[name]
    k, tables = sizes(d, widths)
    size = 2**d
    if name == "query-laplace":
        return k / (n * epsilon), theory.laplace_expected_max_error(k, n, epsilon), "exact"
    if name == "query-gaussian":
        sigma = gaussian_sigma(math.sqrt(k) / n, epsilon, delta)
        top = theory.gaussian_expected_max_error(k, n, epsilon, delta)
        return sigma * math.sqrt(2 / math.pi), top, "exact"
    if name == "tables-laplace":
        return (*theory.marginal_laplace_errors(k, tables, n, epsilon), "exact")
    if name == "tables-gaussian":
        return (*theory.marginal_gaussian_errors(k, tables, n, epsilon, delta), "exact")
    if name.startswith("histogram"):
        cells = [2.0 ** (d - w) for w in widths]
        counts = [2**w * math.comb(d, w) for w in widths]
        noise = 0.0 if mechanism.pure else delta
        return (*theory.histogram_errors(cells, counts, n, epsilon, noise), "approx")
    if name == "mwem":
        bound = theory.mwem_max_error_bound(size, k, n, epsilon)
        return bound, bound, "bound"
    if name == "private-mw":
        alpha = theory.private_mw_alpha(size, k, n, epsilon)
        bound = 3 * alpha if alpha < 1 else math.inf  # inf: no alpha certified at this n
        return bound, bound, "bound"
    width = theory.gaussian_width_bound(k, size, radius=math.sqrt(tables))
    average = theory.projection_average_error(width, k, n, epsilon, delta)
    return average, math.sqrt(k) * average, "bound"


# --- which mechanism for me? ---------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """One mechanism's error for a setting: ``value`` and where it comes from (``"measured"``:
    read off the map at the effective size ``n_eff``; ``"exact"``, ``"approx"`` or ``"bound"``:
    :func:`theory_error`)."""

    value: float
    source: str
    n_eff: float | None = None
    interpolated: bool = False


def effective_n(name: str, n: int, epsilon: float, delta: float) -> float:
    """The ``n`` at which the map's setting (``eps = 1``, ``delta = 1e-6``) gives mechanism
    ``name`` the same noise as ``(n, epsilon, delta)``: ``n eps`` for the Laplace-based ones
    (every scale is ``c / (n eps)``; MWEM's rounds and private MW's ``alpha`` depend on ``n eps``
    only), ``n sigma_1(1, 1e-6) / sigma_1(eps, delta)`` for the Gaussian ones (``sigma_1`` the
    noise of sensitivity 1). Only the data then differ: ``n_eff`` records instead of ``n``."""
    mechanism = _mechanism(name)
    if mechanism.pure:
        return n * epsilon
    return n * gaussian_sigma(1.0, EPSILON, DELTA) / gaussian_sigma(1.0, epsilon, delta)


def _interpolate(table: np.ndarray, ns: Sequence[int], ds: Sequence[int], n: float, d: int):
    """Interpolation of a positive ``table[n, d]``, linear in ``(log n, d)`` on the log of the
    values (``None`` outside the grid or next to a cell not run)."""
    # a grid point up to rounding (n eps, n sigma_1 ratios) is that grid point
    n = next((float(g) for g in ns if math.isclose(n, g, rel_tol=1e-9)), n)
    if not (ns[0] <= n <= ns[-1] and ds[0] <= d <= ds[-1]):
        return None
    logs = np.log(table)
    x, y = np.log(np.asarray(ns, dtype=float)), np.asarray(ds, dtype=float)
    i = min(int(np.searchsorted(x, math.log(n), side="right")) - 1, len(ns) - 2)
    j = min(int(np.searchsorted(y, d, side="right")) - 1, len(ds) - 2)
    t, u = (math.log(n) - x[i]) / (x[i + 1] - x[i]), (d - y[j]) / (y[j + 1] - y[j])
    weights = np.outer([1 - t, t], [1 - u, u])
    used = weights > 0  # a grid point needs only its own cell
    corners = logs[i : i + 2, j : j + 2][used]
    if not np.all(np.isfinite(corners)):
        return None
    return float(math.exp(np.sum(weights[used] * corners)))


def estimates(
    n: int,
    d: int,
    widths: Sequence[int] = WIDTHS,
    epsilon: float = EPSILON,
    delta: float = 0.0,
    metric: str = "max",
) -> dict[str, Estimate]:
    """Every eligible mechanism's error for the setting (the ``eps``-DP ones only when
    ``delta = 0``): measured, from the map at :func:`effective_n`, wherever the map covers the
    setting (its workload, ``d`` and ``n_eff`` within its grid, the mechanism run in the
    surrounding cells), else from :func:`theory_error`; ``inf`` (``"infeasible"``) for a
    mechanism that needs a histogram over more than the dense limit's ``2^24`` cells."""
    n = check.integer(n, "n", minimum=1)
    d = check.integer(d, "d", minimum=1)
    widths = _widths(widths, d)
    epsilon = check.positive(epsilon, "epsilon")
    delta = check.delta(delta)
    metric = _metric(metric)
    measured = load_map() if widths == WIDTHS else None
    out = {}
    for name, mechanism in MECHANISMS.items():
        if delta == 0 and not mechanism.pure:
            continue
        if mechanism.dense and 2**d > check.MAX_DENSE_SIZE:
            out[name] = Estimate(math.inf, "infeasible")
            continue
        if measured is not None:
            n_eff = effective_n(name, n, epsilon, delta)
            table = measured.errors[metric][measured.names.index(name)]
            value = _interpolate(table, measured.ns, measured.ds, n_eff, d)
            if value is not None:
                on_grid = d in measured.ds and any(math.isclose(n_eff, g) for g in measured.ns)
                out[name] = Estimate(value, "measured", n_eff, interpolated=not on_grid)
                continue
        out[name] = Estimate(*theory_error(name, n, d, widths, epsilon, delta, metric))
    return out


@dataclass(frozen=True)
class Recommendation:
    """What :func:`recommend` returns: the ``mechanism`` (a key of :data:`MECHANISMS`, or
    ``None`` when no mechanism's error is below 1), its ``label``, the ``reason`` in words, and
    every eligible mechanism's :class:`Estimate`."""

    mechanism: str | None
    label: str
    reason: str
    estimates: dict

    def __str__(self) -> str:
        return f"{self.label}: {self.reason}"


_SOURCE = {
    "measured": "measured",
    "exact": "expected, exact",
    "approx": "expected, approx.",
    "bound": "worst-case bound",
    "infeasible": "not runnable: a histogram over 2^d cells passes the dense limit",
}


def recommend(
    n: int,
    d: int,
    widths: Sequence[int] = WIDTHS,
    epsilon: float = EPSILON,
    delta: float = 0.0,
    metric: str = "max",
) -> Recommendation:
    """Which mechanism to use for all marginals of ``widths`` over ``d`` binary attributes and
    ``n`` records, at ``epsilon``-DP (``delta = 0``) or ``(epsilon, delta)``-DP, to make the
    ``metric`` (``"max"`` or ``"mean"``) error smallest: the smallest of :func:`estimates`.

    Measured errors come first where the map covers the setting; elsewhere the baselines'
    expected errors are exact (or a normal approximation), while MWEM, private MW and the
    projection mechanism have only worst-case bounds, which their measured errors beat by a
    wide margin: the reason says which numbers were compared. Replace-one neighbours; under
    add/remove (private-pgm, smartnoise) a Laplace table release's ``eps`` is ``2 eps`` here and
    a Gaussian one's ``sigma`` is ours over ``sqrt(2)``; per-query releases are unchanged.
    """
    d = check.integer(d, "d", minimum=1)
    if d > 64:
        raise ValueError(f"d must be at most 64 binary attributes (|X| = 2^d), got {d}")
    all_estimates = estimates(n, d, widths, epsilon, delta, metric)
    ranked = sorted(all_estimates, key=lambda m: all_estimates[m].value)
    best, second = ranked[0], ranked[1]
    e, f = all_estimates[best], all_estimates[second]
    k, tables = sizes(d, widths)

    def said(name: str, x: Estimate) -> str:
        where = ""
        if x.source == "measured":
            how = "interpolated between grid cells, " if x.interpolated else ""
            where = f", {how}at n_eff = {x.n_eff:,.0f}"
        if x.source == "bound" and math.isinf(x.value):
            return f"{MECHANISMS[name].label} (no guarantee at this n)"
        return f"{MECHANISMS[name].label} {x.value:.2g} ({_SOURCE[x.source]}{where})"

    privacy = f"eps = {epsilon:g}" + (f", delta = {delta:g}" if delta > 0 else " (pure DP)")
    reason = (
        f"smallest {metric} error for k = {k:,} queries in T = {tables:,} tables, "
        f"|X| = 2^{d}, n = {n:,}, {privacy}: {said(best, e)}, next {said(second, f)}."
    )
    uniform = None
    if widths == WIDTHS:
        grid = load_map()
        uniform = _interpolate(grid.uniform[metric], grid.ns, grid.ds, n, d)
    if uniform is not None:
        reason += (
            f" For reference, the uniform answer (every l-way cell 2^-l, no data used) has "
            f"{metric} error {uniform:.2g} on the map's data."
        )
    typical = 2.0 ** -max(_widths(widths, d))
    if e.value >= typical:
        reason += (
            f" Even that is no smaller than a typical cell of the widest table "
            f"({typical:g}): more data, a larger epsilon or fewer queries are needed."
        )
    bounded = [
        MECHANISMS[m].label + (" (no guarantee at this n)" if math.isinf(x.value) else "")
        for m, x in all_estimates.items()
        if x.source == "bound"
    ]
    if bounded:
        reason += (
            f" Not measured here: {', '.join(bounded)}, whose worst-case bounds overstate their "
            "error (on the map, MWEM's measured errors are far below its bound)."
        )
    if e.value >= 1:
        reason = "no mechanism is useful here (an error of 1 or more says nothing): " + reason
        return Recommendation(None, "none", reason, all_estimates)
    return Recommendation(best, MECHANISMS[best].label, reason, all_estimates)


# --- theory's winners --------------------------------------------------------------------------


def theory_winners(metric: str = "max", pure: bool = False, ns=NS, ds=DS) -> np.ndarray:
    """The index (into :data:`NAMES`) of the mechanism with the smallest :func:`theory_error`
    at each ``(n, d)`` of the map's setting (``eps``-DP ones only if ``pure``), or -1 where
    none is below 1 (no useful guarantee)."""
    return _theory_winners(_metric(metric), bool(pure), tuple(ns), tuple(ds)).copy()


@cache
def _theory_winners(metric: str, pure: bool, ns: tuple, ds: tuple) -> np.ndarray:
    names = [m for m in NAMES if MECHANISMS[m].pure or not pure]
    best = np.zeros((len(ns), len(ds)), dtype=int)
    for i, n in enumerate(ns):
        for j, d in enumerate(ds):
            errors = [theory_error(m, n, d, metric=metric)[0] for m in names]
            smallest = int(np.argmin(errors))
            best[i, j] = NAMES.index(names[smallest]) if errors[smallest] < 1 else -1
    return best


#: The explorable's workloads: a label and its marginal widths.
WORKLOADS = {"1-way": (1,), "2-way": (2,), "2- and 3-way": (2, 3), "3-way": (3,), "4-way": (4,)}
