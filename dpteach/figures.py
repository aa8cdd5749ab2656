"""The chapters' own figures, where the drawing is too long for a notebook cell.

Each is a pure function of its arguments written with :mod:`dpteach.viz` (most are a chapter's
explorable, ``widgets.explorable(figures.median_run_figure, ...)``); the experiments they draw
live with the mathematics (:mod:`dpteach.adaptive`, :mod:`dpteach.projection`,
:mod:`dpteach.reconstruction`, :mod:`dpteach.landscape`), which imports nothing from here or
from the drawing layer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.colors import ListedColormap, to_rgba
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from mpl_toolkits.mplot3d.art3d import Poly3DCollection
from scipy.spatial import ConvexHull

from . import _validate as check
from . import adaptive, landscape, projection, reconstruction, theory, viz
from .adaptive import Transcript
from .median import _sample_counts, best_candidate
from .queries import Workload

# --- Chapter 02: the median mechanism ------------------------------------------------------------


def plot_survivors(
    ax,
    mechanism,
    *,
    wrong: str = "wrong guess",
    floor: str | None = r"$1$ (floor if an $S^*$ exists)",
) -> None:
    """A median mechanism's candidate set ``|S_i|`` over the queries (log scale), its ``wrong``
    guesses (so labelled), the halving bound ``|S_0| 2^{-t}`` (``t`` of them so far) and, unless
    ``floor`` is None, the floor 1 (labelled ``floor``)."""
    s = np.array(mechanism.survivors)
    rounds = np.arange(s.size)
    where = np.flatnonzero(mechanism.wrong) + 1
    ax.step(rounds, s, where="post", label=r"$|\mathbb{S}_i|$ measured")
    viz.bound(ax, rounds, s[0] / 2.0 ** np.cumsum(np.r_[0, mechanism.wrong]),
              rf"$|\mathbb{{S}}_0|\,2^{{-t}}$, $t$ {wrong}es")  # fmt: skip
    if where.size:  # a legend lists only what is drawn
        ax.plot(where, s[where], "o", color=viz.PALETTE["vermillion"], label=wrong)
    kept_all = getattr(mechanism, "kept_all", [])
    if kept_all:  # our change to step (e): no survivor near a_i, all kept
        ax.plot(kept_all, s[kept_all], "x", color=viz.PALETTE["black"],
                label=r"all kept: none within $\eta/2$")  # fmt: skip
    if floor is not None:
        viz.bound(ax, rounds, np.ones(s.size), floor, color=viz.PALETTE["green"])
    ax.set(yscale="log", xlabel="query $i$", ylabel="surviving candidates")
    ax.legend(fontsize=7)


def plot_errors(
    ax, transcript: Transcript, sample: object, population: object, eta: float, *, top=None
):
    """Each answer's error on the sample and on the population, with ``eta`` dashed; with
    ``top``, in units of ``eta`` on a fixed axis up to ``top``, with the private route's
    ``5 eta / 4`` instead (a bound on the sample error only, on the event that the noise stays in
    its margins), and errors beyond the axis drawn as triangles at its top."""
    h = _sample_counts(sample)
    end = [0, len(transcript.answers)]
    errors = [transcript.errors(h / h.sum()), transcript.errors(population)]
    labels, markers = ["sample error", "population error"], ["o", "s"]
    if top is None:
        for e, label, marker in zip(errors, labels, markers):
            ax.plot(e, marker, markersize=3, label=label)
        viz.bound(ax, end, [eta, eta], r"$\eta$")
        ax.set(xlabel="query $i$", ylabel="error")
        ax.legend(fontsize=8)
        return
    for e, label, marker, color in list(zip(errors, labels, markers, ["blue", "orange"]))[::-1]:
        e = e / eta
        i = np.arange(e.size)
        ax.plot(i[e <= top], e[e <= top], marker, markersize=3, color=viz.PALETTE[color],
                label=label)  # fmt: skip
        if np.any(e > top):
            ax.plot(i[e > top], np.full(np.sum(e > top), top), "^", markersize=4,
                    color=viz.PALETTE[color], label=f"{label.split()[0]} > {top:g}η")  # fmt: skip
    viz.bound(ax, end, [1.25, 1.25], "$5\\eta/4$ on the sample, if the\nnoise stays in its margins")
    ax.set(xlabel="query $i$", ylabel=r"error / $\eta$", ylim=(0, top * 1.05))
    ax.legend(fontsize=7)


def _plot_regime(ax, eta: float, n: int, k: int, m: int, outcome: str) -> None:
    """The (n, eta) plane: the region where halving is guaranteed shaded, the run marked."""
    eta_premise, etas, onsets = adaptive.median_regime(k, m)
    n_low, n_high = adaptive.WIDGET_N_RANGE[0] / 2, adaptive.WIDGET_N_RANGE[1] * 2
    good = np.r_[eta_premise, etas[etas > eta_premise]]
    edge = np.interp(np.log(good), np.log(etas), np.log(onsets))  # onsets are smooth in log-log
    ax.fill_betweenx(good, np.exp(edge), n_high,
                     color=viz.PALETTE["green"], alpha=0.2, linewidth=0,
                     label="halving guaranteed")  # fmt: skip
    ax.plot(onsets, etas, "--", color=viz.PALETTE["black"], linewidth=1.4,
            label="noise in margins (w.p. 0.95)")  # fmt: skip
    ax.axhline(eta_premise, color=viz.PALETTE["blue"], linestyle=":", linewidth=1.4,
               label=r"an $S^*$ exists above")  # fmt: skip
    color = "green" if outcome == "halving works" else "vermillion"
    if outcome.startswith(("no flag", "halves")):
        color = "orange"  # nothing broke, but the premise or the data went unused
    ax.plot([n], [eta], "*", markersize=14, color=viz.PALETTE[color],
            markeredgecolor="black", label=f"this run: {outcome}")  # fmt: skip
    ax.set(xscale="log", yscale="log", xlim=(n_low, n_high), ylim=(0.008, 0.4),
           xlabel="sample size $n$", ylabel=r"$\eta$",
           )  # fmt: skip
    ax.set_title(f"k = {k}, ε = {adaptive.WIDGET_EPSILON:g}", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22))


def median_run_figure(eta: float, n: float, k: int) -> None:
    """The chapter's widget: :func:`median_run` drawn, a pure function of its arguments. Left,
    the regime map; middle, the candidate set over the queries; right, each answer's error in
    units of ``eta``. Axes fixed across the sliders' ranges; the legends list only what is drawn."""
    n = round(n)
    mech, t, h, P = adaptive.median_run(eta, n, k)
    asked = len(t.answers)  # at least 1 (k >= 1, and GuessAndCheck answers before it halts)
    # S* in hindsight; the max over the queries is the max over the distinct ones (at most 16)
    best, best_error = best_candidate(mech.candidates, np.unique(t.queries, axis=0), h)
    premise = best_error <= eta / 4
    alive = premise and bool(mech.alive[best])
    if mech.checker.halted:
        outcome = "halted: m flags"
    elif mech.kept_all:
        outcome = "a flag halved nothing"
    elif not any(mech.wrong):
        outcome = "no flag: data unused"
    elif not premise:
        outcome = r"halves, no $S^*$"
    elif not alive:
        outcome = r"$S^*$ removed"
    else:
        outcome = "halving works"
    fig, axes = viz.subplots(ncols=3, figsize=(viz.PAGE_WIDTH_IN, 4.2),
                             gridspec_kw={"width_ratios": [1, 1.1, 1.1]})  # fmt: skip
    _plot_regime(axes[0], eta, n, k, mech.m, outcome)
    middle, right = axes[1], axes[2]
    floor = r"$1$: floor, $S^*$ survives" if alive else None
    plot_survivors(middle, mech, wrong="flagged guess", floor=floor)
    middle.set(xlim=(-3, adaptive.WIDGET_K_MAX + 3), ylim=(0.5, 3 * mech.survivors[0]))
    if not premise:
        status = r"no candidate within $\eta/4$ of $S$"
    else:
        status = r"$S^*$ " + ("survives" if alive else "removed by noise")
    halted = f"halted after query {asked} of {k}" if mech.checker.halted else f"all {k} answered"
    middle.set_title(f"{sum(mech.wrong)} flagged of m = {mech.m}; {halted}\n{status}",
                     fontsize=8)  # fmt: skip
    middle.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22))
    plot_errors(right, t, h, P, eta, top=3)
    right.set_xlim(-3, adaptive.WIDGET_K_MAX + 3)
    right.set_title(f"n = {n:,}, η = {eta:.3g}", fontsize=9)
    right.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22))
    for ax in axes:
        ax.minorticks_off()  # a tick at every decade reads as well, and draws much faster


# --- Chapter 03: the projection mechanism -------------------------------------------------------


def draw_geometry(ax, workload: Workload, true: object, noisy: object, projected: object) -> None:
    """The picture of Algorithm 1 for ``m = 2`` (a 2-D axis) or ``m = 3`` (a 3-D axis): the points
    ``S_Q``, their hull ``K_Q``, the true answer, the noisy answer and its projection."""
    points = projection._adjoint(workload, np.eye(workload.k)).T  # |X| x m: the points Q(r)
    true, noisy, projected = (np.asarray(v, dtype=float) for v in (true, noisy, projected))
    hull = ConvexHull(points)
    if workload.k == 2:
        loop = np.r_[hull.vertices, hull.vertices[:1]]
        ax.fill(*points[loop].T, color=viz.PALETTE["sky"], alpha=0.25, label=r"$K_Q$")
    else:
        faces = Poly3DCollection(
            points[hull.simplices],
            facecolor=to_rgba(viz.PALETTE["sky"], 0.15),
            edgecolor=to_rgba(viz.PALETTE["blue"], 0.6),
            linewidth=0.6,
            label=r"$K_Q$",
        )  # translucent faces with drawn edges, so that the hull reads as a solid
        ax.add_collection3d(faces)
    ax.scatter(*points.T, color=viz.PALETTE["blue"], s=18, label=r"$S_Q = \{Q(r)\}$")
    ax.scatter(*true, color=viz.PALETTE["black"], marker="*", s=120, label=r"true $Q(x)$")
    ax.scatter(*noisy, color=viz.PALETTE["vermillion"], s=40, label=r"noisy $\tilde y$")
    ax.scatter(*projected, color=viz.PALETTE["green"], s=40, label=r"projected $\hat y$")
    ax.plot(*np.stack([noisy, projected]).T, color=viz.PALETTE["black"], linestyle=":", linewidth=1)
    ax.set_xlabel(r"$q_1$")
    ax.set_ylabel(r"$q_2$")
    if workload.k == 3:
        ax.set_zlabel(r"$q_3$")


#: The explorable's shaded bands: where :func:`dpteach.theory.projection_error_ratio` is at most
#: the level (the projection is guaranteed to remove at least ``1 - level`` of the error).
_BANDS = [(1 - 1e-9, 0.12, "guaranteed: removes some"), (0.5, 0.2, "guaranteed: removes half")]


def explore_figure(epsilon: float, n: int, m: int) -> None:
    """The chapter's explorable, a pure function of its sliders. Left: the average error against
    ``n`` for these ``m`` and ``epsilon``: exact without projection, and
    :func:`dpteach.theory.projection_error_ratio` times it (Theorem 9, and the dimension of
    ``K_Q``), both dashed; the measured average errors of :func:`explore_run` at ``n``. Right:
    the ``(n, m)`` plane, where that bound guarantees that projection removes at least half the
    error shaded, and this run, coloured by the share it removed. Axes fixed over the sliders'
    ranges; the shares are rounded to whole percents."""
    runs = projection.explore_run(epsilon, n, m)
    plain, projected = (float(np.sqrt(np.mean(runs[k] ** 2))) for k in ("gaussian", "projected"))
    removed = max(0.0, 1 - projected / plain)  # 0 up to the solver's tolerance when inside K_Q
    args = (projection.EXPLORE_DOMAIN, epsilon, projection.EXPLORE_DELTA)
    fig, (left, right) = viz.subplots(ncols=2)
    ns = np.geomspace(projection.EXPLORE_N[0] / 1.3, projection.EXPLORE_N[1] * 1.3, 40)
    exact = np.array([theory.gaussian_average_error(m, round(k), *args[1:]) for k in ns])
    ratio = np.array([theory.projection_error_ratio(m, round(k), *args) for k in ns])
    crossover = theory.projection_crossover_n(m, *args)
    dimension = math.sqrt(min(m, projection.EXPLORE_DOMAIN - 1) / m)
    for level, alpha, label in _BANDS:  # where the bound promises something, along n
        # ratio <= level: everywhere by the dimension of K_Q, else for n <= crossover level^2
        edge = ns[-1] if dimension <= level else min(crossover * level**2, ns[-1])
        if edge > ns[0]:
            left.axvspan(ns[0], edge, color=viz.PALETTE["green"], alpha=alpha, linewidth=0,
                         label=label)  # fmt: skip
    viz.bound(left, ns, exact, "no projection (exact)", color=viz.PALETTE["vermillion"])
    viz.bound(left, ns, ratio * exact, r"projected: bound (Thm 9, dim $K_Q$)",
              color=viz.PALETTE["blue"])  # fmt: skip
    left.plot([n], [plain], "s", color=viz.PALETTE["vermillion"], label="measured, no projection")
    left.plot([n], [projected], "o", color=viz.PALETTE["blue"], label="measured, projected")
    left.set(xscale="log", yscale="log", xlim=(ns[0], ns[-1]), ylim=(5e-5, 300),
             xlabel="number of people $n$", ylabel="average error (3 runs)")  # fmt: skip
    left.set_title(f"m = {m}, ε = {epsilon:.3g}: projection removes {removed:.0%}", fontsize=9)
    left.legend(fontsize=7, loc="lower left")
    ms = np.geomspace(projection.EXPLORE_M[0] / 1.3, projection.EXPLORE_M[1] * 1.3, 40)
    grid = np.array([[theory.projection_error_ratio(round(j), round(k), *args) for k in ns]
                     for j in ms])  # fmt: skip
    for level, alpha, label in _BANDS:
        right.contourf(ns, ms, grid, levels=[0, level], colors=[viz.PALETTE["green"]],
                       alpha=alpha)  # fmt: skip
        right.plot([], [], "s", color=viz.PALETTE["green"], alpha=2 * alpha, markersize=8,
                   label=label)  # fmt: skip
    right.contour(ns, ms, grid, levels=[band[0] for band in _BANDS][::-1],
                  colors=[viz.PALETTE["black"]], linestyles=["--", ":"][::-1],
                  linewidths=1.2)  # fmt: skip
    color = "green" if removed >= 0.5 else "orange" if removed >= 0.1 else "vermillion"
    right.plot([n], [m], "*", markersize=14, color=viz.PALETTE[color], markeredgecolor="black",
               label=f"this run: {removed:.0%} removed")  # fmt: skip
    right.set(xscale="log", yscale="log", xlim=(ns[0], ns[-1]), ylim=(ms[0], ms[-1]),
              xlabel="number of people $n$", ylabel="number of queries $m$")  # fmt: skip
    right.set_title(f"n = {n:,}, ε = {epsilon:.3g}, |X| = {projection.EXPLORE_DOMAIN}", fontsize=9)
    right.legend(fontsize=7, loc="lower right")
    for ax in (left, right):
        ax.minorticks_off()  # a tick at every decade reads as well, and draws much faster


# --- Chapter 06: reconstruction ------------------------------------------------------------------


def attack_figure(noise: float, n: int, ratio: int) -> None:
    """The chapter's explorable: one LP attack with answers within ``E = noise * sqrt(n)``
    (uniform noise) on ``m = ratio * n`` random subset queries, drawn as histograms (side by
    side in each bin) of the LP's fractional solution for the people whose bit is 0 and for
    those whose bit is 1; rounding at 1/2 (dashed) gets right the bits on the correct side."""
    noise = check.nonnegative(noise, "noise")
    run = reconstruction.lp_attack(n, ratio * n, error=noise * math.sqrt(n), rng=2026)
    _, ax = viz.subplots()
    bins = np.linspace(0, 1, 21)
    ax.hist(
        [run.decoded[run.secret == 0], run.decoded[run.secret == 1]],
        bins=bins,
        color=[viz.PALETTE["blue"], viz.PALETTE["orange"]],
        label=["people whose bit is 0", "people whose bit is 1"],
    )  # side by side in each bin
    ax.axvline(0.5, color=viz.PALETTE["black"], linestyle="--", linewidth=1.4, label="round at 1/2")
    ax.set(xlabel=r"LP decoding's $\hat x_i$", ylabel="people", xlim=(0, 1))
    ax.set_title(
        f"E = {noise:.2g}·√n, n = {n}, m = {ratio}n: {run.fraction:.0%} of the bits recovered",
        fontsize=9,
    )
    ax.set_ylim(top=1.3 * ax.get_ylim()[1])  # room for the legend above the bars
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8, loc="upper center", ncols=3, columnspacing=1.0)


# --- Chapter 06: the landscape -------------------------------------------------------------------


def _edges(values: Sequence[float], log: bool) -> np.ndarray:
    """Cell edges around grid values: midpoints, and half a step beyond each end."""
    v = np.log10(values) if log else np.asarray(values, dtype=float)
    mid = (v[1:] + v[:-1]) / 2
    out = np.concatenate([[2 * v[0] - mid[0]], mid, [2 * v[-1] - mid[-1]]])
    return 10**out if log else out


def _text_color(hex_color: str) -> str:
    r, g, b = (int(hex_color[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.5 else "black"


#: The landscape's maps mark a winner's error from theory by a hatch, a contender not measured by
#: a small open circle in the cell's upper right corner.
THEORY_HATCH = "///"
_UNRUN_MARK = {"marker": "o", "markersize": 3.5, "markerfacecolor": "none", "linestyle": "none"}


def draw_winners(ax, ns, ds, winners, values, *, theory=None, poor=None, unrun=None) -> None:
    """Colour cell ``(n, d)`` by the mechanism ``winners[i, j]`` (an index into
    :data:`~dpteach.landscape.NAMES`,
    -1: none) and write its error ``values[i, j]``; cells where ``theory[i, j]`` are hatched
    ``///`` (the winner's error comes from theory, not from the map), cells where ``unrun[i, j]``
    get a small circle (a contender was not measured there: the winner is the best of the others)
    and cells where ``poor[i, j]`` get a cross (no better than the data-free uniform answer). A
    cell with winner -1 (no error below 1, which says nothing: every answer lies in [0, 1]) is
    left white, marked "≥ 1"."""

    colors = [landscape.MECHANISMS[name].color for name in landscape.NAMES]
    shown = np.ma.masked_less(np.asarray(winners, dtype=float), 0)
    xe, ye = _edges(ns, True), _edges(ds, False)
    ax.set(xlim=(xe[0], xe[-1]), ylim=(ye[0], ye[-1]))
    ax.pcolormesh(_edges(ns, True), _edges(ds, False), shown.T, cmap=ListedColormap(colors),
                  vmin=-0.5, vmax=len(landscape.NAMES) - 0.5, edgecolors="white",
                  linewidth=0.5)  # fmt: skip
    w, h = np.log10(xe), ye
    hatched, marks = {}, {}  # by the colour of the cell's text: one collection each
    for i, n in enumerate(ns):
        for j, d in enumerate(ds):
            if winners[i, j] < 0:
                ax.text(n, d, "≥ 1", ha="center", va="center", fontsize=7, color="grey")
                continue
            color = _text_color(colors[winners[i, j]])
            label = f"{values[i, j]:.2g}" + ("×" if poor is not None and poor[i, j] else "")
            style = "italic" if theory is not None and theory[i, j] else "normal"
            ax.text(n, d, label, ha="center", va="center", fontsize=7, color=color,
                    fontstyle=style)  # fmt: skip
            if theory is not None and theory[i, j]:
                x0, x1 = 10 ** w[i], 10 ** w[i + 1]
                corners = [(x0, h[j]), (x1, h[j]), (x1, h[j + 1]), (x0, h[j + 1])]
                hatched.setdefault(color, []).append(corners)
            if unrun is not None and unrun[i, j]:
                marks.setdefault(color, []).append(
                    (10 ** (w[i] + 0.88 * (w[i + 1] - w[i])), h[j] + 0.8 * (h[j + 1] - h[j]))
                )
    for color, cells in hatched.items():
        ax.add_collection(PolyCollection(cells, facecolor="none", edgecolor=color,
                                         hatch=THEORY_HATCH, linewidth=0, alpha=0.5))  # fmt: skip
    for color, points in marks.items():
        ax.plot(*np.transpose(points), **_UNRUN_MARK, color=color)
    ax.set_xscale("log")
    ax.set_xlabel("records $n$")
    ax.set_ylabel(r"binary attributes $d$ ($|\mathcal{X}| = 2^d$)")
    ax.set_yticks(ds)
    ax.grid(False)


def draw_theory_boundaries(ax, metric: str = "max", pure: bool = False) -> None:
    """Dashed lines where the mechanism with the smallest error *in theory*
    (:func:`~dpteach.landscape.theory_error`, at the map's setting) changes, on a fine grid of
    ``n`` and ``d``
    (drawn as the edges between its cells); where no mechanism's theory promises an error below
    1 counts as a region of its own."""
    ns = np.geomspace(landscape.NS[0] / 1.5, landscape.NS[-1] * 1.5, 25)
    ds = tuple(range(landscape.DS[0] - 1, landscape.DS[-1] + 2, 2))
    best = landscape.theory_winners(metric, pure, tuple(int(x) for x in ns), ds)
    x, y = _edges(ns, True), _edges(ds, False)
    segments = [
        [(x[i + 1], y[j]), (x[i + 1], y[j + 1])]
        for i in range(len(ns) - 1)
        for j in range(len(ds))
        if best[i, j] != best[i + 1, j]
    ]
    segments += [
        [(x[i], y[j + 1]), (x[i + 1], y[j + 1])]
        for i in range(len(ns))
        for j in range(len(ds) - 1)
        if best[i, j] != best[i, j + 1]
    ]
    ax.add_collection(LineCollection(segments, colors="black", linestyles="--", linewidths=1.3))


def _hatch_handle(hatch: str, label: str) -> Patch:
    return Patch(facecolor="white", edgecolor="grey", hatch=hatch, label=label)


def _unrun_handle(label: str) -> Line2D:
    return Line2D([], [], **_UNRUN_MARK, color="black", label=label)


def plot_map(grid: landscape.LandscapeMap):
    """Chapter 06's map: the measured winner of each cell for the max and the mean error,
    among the ``eps``-DP mechanisms (top) and all of them at ``delta = 1e-6`` (bottom), with the
    theory's boundaries dashed; a small circle marks a cell where a contender was not run."""
    fig, axes = viz.subplots(ncols=2, nrows=2, figsize=(viz.PAGE_WIDTH_IN, 6.6),
                             sharex=True, sharey=True)  # fmt: skip
    for row, pure in zip(axes, (True, False)):
        for ax, metric in zip(row, ("max", "mean")):
            best = grid.winners(metric, pure=pure)
            values = np.take_along_axis(grid.errors[metric], best[None], axis=0)[0]
            poor = values >= grid.uniform[metric]
            best = np.where(values < 1, best, -1)
            unrun = np.array([[bool(c) for c in row] for row in grid.unrun(pure)])
            draw_winners(ax, grid.ns, grid.ds, best, values, poor=poor, unrun=unrun)
            draw_theory_boundaries(ax, metric, pure)
            privacy = r"$\varepsilon$-DP" if pure else r"$(\varepsilon, \delta)$-DP allowed"
            ax.set_title(f"{metric} error, {privacy}", fontsize=9)
            ax.label_outer()
    handles = [
        Patch(color=landscape.MECHANISMS[m].color, label=landscape.MECHANISMS[m].label)
        for m in landscape.NAMES
    ]
    handles.append(Line2D([], [], color="black", linestyle="--", label="theory's boundaries"))
    handles.append(Line2D([], [], color="black", marker="$×$", linestyle="none",
                          label="no better than uniform"))  # fmt: skip
    handles.append(_unrun_handle("a contender not run (too slow)"))
    fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=7)
    return fig


def plot_slices(grid: landscape.LandscapeMap, ds: Sequence[int] = (8, 20), metric: str = "max"):
    """Each mechanism's measured error against ``n`` (markers: the mean of its runs) at a few
    ``d`` of the map, with its theory curve (:func:`~dpteach.landscape.theory_error`) dashed in
    the same colour."""

    fig, axes = viz.subplots(ncols=len(ds), figsize=(viz.PAGE_WIDTH_IN, 4.4), sharey=True)
    fine = np.geomspace(grid.ns[0], grid.ns[-1], 25).astype(int)
    for ax, d in zip(np.atleast_1d(axes), ds):
        j = grid.ds.index(d)
        for m, name in enumerate(grid.names):
            color, label = landscape.MECHANISMS[name].color, landscape.MECHANISMS[name].label
            ax.plot(grid.ns, grid.errors[metric][m, :, j], "o-", color=color, label=label,
                    markersize=4)  # fmt: skip
            curve = [landscape.theory_error(name, int(n), d, metric=metric)[0] for n in fine]
            curve = np.where(np.isfinite(curve), curve, np.nan)  # inf: no guarantee at that n
            viz.bound(ax, fine, curve, "_", color=color)
        ax.plot(grid.ns, grid.uniform[metric][:, j], ":", color="grey", label="uniform answer")
        k, tables = landscape.sizes(d)
        ax.set(xscale="log", yscale="log", xlabel="records $n$",
               title=f"d = {d}: k = {k:,} queries, T = {tables:,} tables")  # fmt: skip
        ax.title.set_fontsize(9)
        ax.set_ylim(top=2)  # above 1 an error says nothing: every answer lies in [0, 1]
    np.atleast_1d(axes)[0].set_ylabel(f"{metric} error (dashed: theory)")
    fig.legend(*np.atleast_1d(axes)[0].get_legend_handles_labels(), loc="outside lower center",
               ncols=4, fontsize=7)  # fmt: skip
    return fig


def draw_recommended_map(epsilon: float, workload: str, metric: str = "max") -> None:
    """The map :func:`recommend` reads, at ``epsilon`` for the marginals of ``workload`` (a key
    of :data:`landscape.WORKLOADS`): each cell coloured by the mechanism with the smallest
    :func:`~dpteach.landscape.estimates`, ``eps``-DP only (left) and with ``delta = 1e-6``
    (right). Hatched cells (italic numbers) come from theory: the map does not cover them; a
    small circle marks a contender the map did not measure there, compared by its worst-case
    bound only."""
    if workload not in landscape.WORKLOADS:
        raise ValueError(f"workload must be one of {list(landscape.WORKLOADS)}, got {workload!r}")
    widths = landscape.WORKLOADS[workload]
    fig, axes = viz.subplots(ncols=2, figsize=(viz.PAGE_WIDTH_IN, 4.2), sharey=True)
    for ax, delta in zip(axes, (0.0, landscape.DELTA)):
        best = np.full((len(landscape.NS), len(landscape.DS)), -1)
        values, from_theory = np.zeros(best.shape), np.zeros(best.shape, dtype=bool)
        unmeasured = np.zeros(best.shape, dtype=bool)
        for i, n in enumerate(landscape.NS):
            for j, d in enumerate(landscape.DS):
                if d < max(widths):
                    continue
                found = landscape.estimates(n, d, widths, epsilon, delta, metric)
                name = min(found, key=lambda m: found[m].value)
                values[i, j] = found[name].value
                best[i, j] = landscape.NAMES.index(name) if values[i, j] < 1 else -1
                from_theory[i, j] = found[name].source != "measured"
                unmeasured[i, j] = not from_theory[i, j] and any(
                    e.source == "bound" for e in found.values()
                )
        draw_winners(ax, landscape.NS, landscape.DS, best, values, theory=from_theory,
                     unrun=unmeasured)  # fmt: skip
        privacy = "pure DP" if delta == 0 else r"$\delta = 10^{-6}$ allowed"
        ax.set_title(f"{workload} marginals, ε = {epsilon:g}, {privacy}", fontsize=9)
        ax.label_outer()
    handles = [
        Patch(color=landscape.MECHANISMS[m].color, label=landscape.MECHANISMS[m].label)
        for m in landscape.NAMES
    ]
    handles.append(_hatch_handle(THEORY_HATCH, "from theory (not on the map)"))
    handles.append(_unrun_handle("a contender not measured"))
    fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=7)
