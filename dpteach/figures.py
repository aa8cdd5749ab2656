"""The chapters' own figures, where the drawing is too long for a notebook cell.

Each is a pure function of its arguments written with :mod:`dpteach.viz` (most are a chapter's
explorable, ``widgets.explorable(figures.median_run_figure, ...)``); the experiments they draw
live with the mathematics (:mod:`dpteach.adaptive`, :mod:`dpteach.projection`,
:mod:`dpteach.reconstruction`), which imports nothing from here or from the drawing layer.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.colors import to_rgba
from mpl_toolkits.mplot3d.art3d import Poly3DCollection
from scipy.spatial import ConvexHull

from . import _validate as check
from . import adaptive, projection, reconstruction, theory, viz
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
    ``5 eta / 4`` instead, and errors beyond the axis drawn as triangles at its top."""
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
    viz.bound(ax, end, [1.25, 1.25], r"$5\eta/4$: good-event guarantee")
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
    for level, alpha, label in _BANDS:  # where the bound promises something, along n
        inside = ns[ratio <= level]
        if inside.size:
            left.axvspan(ns[0], inside.max(), color=viz.PALETTE["green"], alpha=alpha,
                         linewidth=0, label=label)  # fmt: skip
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
    right.set_title(f"n = {n:,}, |X| = {projection.EXPLORE_DOMAIN}", fontsize=9)
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
