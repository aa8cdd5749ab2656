"""The book's figures: its style, and the plotting helpers every chapter draws with.

A chapter's figure is a pure function ``draw(**slider_values)`` written with ordinary matplotlib
calls on ``fig, ax = viz.subplots()``, with theoretical bounds drawn by :func:`bound` (dashed) and
measurements by :func:`measured`. The same function feeds the live widget
(:mod:`dpteach.widgets`) and the website's precomputed frames (:mod:`dpteach.static`), both
rendered by a :class:`~dpteach.frames.FrameRenderer`. The style itself (palette, sizes, rc
settings) is :mod:`dpteach.style`, whose names are also found here.
"""

from __future__ import annotations

import numbers
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib import animation

from . import theory
from .frames import active_renderer
from .style import COLORS, PAGE_WIDTH_IN, PALETTE, SMALLEST_FONT_PT, STYLE, figure_size, use_style

__all__ = [
    "COLORS",
    "PAGE_WIDTH_IN",
    "PALETTE",
    "SMALLEST_FONT_PT",
    "STYLE",
    "baseline_bounds",
    "bound",
    "histogram_animation",
    "histogram_bars",
    "measured",
    "subplots",
    "use_style",
]


def subplots(ncols: int = 1, nrows: int = 1, **kwargs):
    """``plt.subplots`` in the book's style, with a constrained layout.

    While a :class:`~dpteach.frames.FrameRenderer` renders a frame, it draws on the renderer's
    one reused figure instead.
    """
    with mpl.rc_context(STYLE):
        kwargs.setdefault("figsize", figure_size(ncols))
        renderer = active_renderer()
        if renderer is not None:
            return renderer.subplots(nrows, ncols, **kwargs)
        return plt.subplots(nrows, ncols, layout="constrained", **kwargs)


def bound(ax, x: Sequence[float], y: Sequence[float], label: str, color: str | None = None):
    """Draw a theoretical bound: a dashed line."""
    color = color or PALETTE["black"]
    return ax.plot(x, y, linestyle="--", linewidth=1.6, color=color, label=label)


def measured(
    ax,
    x: Sequence[float],
    y: np.ndarray,
    label: str,
    color: str | None = None,
    marker: str = "o",
):
    """Draw measurements; ``y`` of shape ``(len(x), seeds)`` gets its mean and a 10-90% band."""
    y = np.asarray(y, dtype=float)
    if y.ndim == 1:
        return ax.plot(x, y, marker=marker, color=color, label=label)
    (line,) = ax.plot(x, y.mean(axis=1), marker=marker, color=color, label=label)
    lo, hi = np.quantile(y, [0.1, 0.9], axis=1)
    ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
    return [line]


def histogram_bars(ax, p: np.ndarray, p_hat: np.ndarray, labels: Sequence[str] | None = None):
    """The true histogram ``p`` against a synthetic one ``p_hat``, side by side."""
    x = np.arange(len(p))
    ax.bar(x - 0.2, p, width=0.4, color=PALETTE["blue"], label="true $p$")
    ax.bar(x + 0.2, p_hat, width=0.4, color=PALETTE["orange"], label=r"synthetic $\hat p$")
    if labels is not None:
        ax.set_xticks(x, labels, rotation=90, fontsize=7)
    ax.set_xlabel("cell $x$ of the universe $X$")
    ax.set_ylabel("mass")
    ax.legend()


def baseline_bounds(ax, *, n: int, epsilon: float, delta: float, k_max: int) -> None:
    """The chapter-00 theory curves against the number of queries ``k`` (log-log axes):
    Laplace's exact expected max error ``b H_k`` and its ``beta = 0.05`` bound, and the Gaussian
    ``beta = 0.05`` bound (:mod:`dpteach.theory`)."""
    if isinstance(k_max, bool) or not isinstance(k_max, numbers.Integral) or k_max < 1:
        raise ValueError(f"k_max must be an integer >= 1 (the largest number of queries), got "
                         f"{k_max!r}")  # fmt: skip
    ks = np.unique(np.geomspace(1, k_max, 60).astype(int))
    curves = [
        (theory.laplace_expected_max_error, r"Laplace, $E[\max] = bH_k$", "sky"),
        (theory.laplace_max_error, r"Laplace bound ($\beta = 0.05$)", "blue"),
    ]
    for fn, label, color in curves:
        bound(ax, ks, [fn(k, n, epsilon) for k in ks], label, color=PALETTE[color])
    gaussian = [theory.gaussian_max_error(k, n, epsilon, delta) for k in ks]
    bound(ax, ks, gaussian, r"Gaussian bound ($\beta = 0.05$)", color=PALETTE["vermillion"])
    ax.set(xscale="log", yscale="log", xlabel="number of queries $k$")
    ax.set_ylabel(r"max error $\max_i |a_i - q_i(D)|$")


def histogram_animation(
    p: np.ndarray,
    frames: dict[int, np.ndarray],
    *,
    potential: np.ndarray | None = None,
    labels: Sequence[str] | None = None,
    interval: int = 400,
) -> str:
    """An HTML/JavaScript animation of synthetic histograms ``p_hat_t`` converging to ``p``.

    ``frames`` maps a round ``t`` to ``p_hat_t``; with ``potential`` (indexed by round), a second
    panel draws ``D(p || p_hat_t)`` with the current round marked. Plays in a static page (no
    kernel): matplotlib's HTML writer (``animation.HTMLWriter``, what ``to_jshtml`` uses) grabs
    one frame per round, all on the first frame's layout; the CDN stylesheet it adds is dropped
    so the page stays offline.
    """
    if not isinstance(frames, dict) or not frames:
        raise ValueError(
            "frames must be a non-empty dict {round t: histogram p_hat_t}, e.g. a result's "
            f"snapshots; got {type(frames).__name__} {frames!r:.60}"
        )
    rounds = sorted(frames)
    with mpl.rc_context(STYLE):
        fig, axes = plt.subplots(1, 2 if potential is not None else 1, figsize=(PAGE_WIDTH_IN, 3),
                                 layout="constrained", squeeze=False)  # fmt: skip
        ax = axes[0, 0]
        x = np.arange(len(p))
        ax.bar(x - 0.2, p, width=0.4, color=PALETTE["blue"], label="true $p$")
        bars = ax.bar(x + 0.2, frames[rounds[0]], width=0.4, color=PALETTE["orange"],
                      label=r"synthetic $\hat p_t$")  # fmt: skip
        ax.set_ylim(0, 1.1 * max(p.max(), max(f.max() for f in frames.values())))
        ax.set(xlabel="cell $x$ of the universe $X$", ylabel="mass")
        if labels is not None:
            ax.set_xticks(x, labels, rotation=90, fontsize=7)
        ax.legend(loc="upper right")
        title = ax.set_title(f"round t = {rounds[-1]}")  # the widest title, for the layout
        if potential is not None:
            pot = axes[0, 1]
            pot.plot(np.arange(len(potential)), potential, color=PALETTE["vermillion"])
            pot.set(xlabel="round $t$", ylabel=r"potential $D(p\,\|\,\hat p_t)$")
            marker = pot.axvline(rounds[0], color=PALETTE["black"], linewidth=1)
        # Only heights, the title's number and a marker move between frames: lay out once and
        # keep that layout for every frame (with no layout engine at all, savefig draws each
        # frame once, not a second time for a layout pass).
        fig.canvas.draw()
        fig.set_layout_engine(None)
        writer = animation.HTMLWriter(fps=1000 / interval, embed_frames=True,
                                      default_mode="once")  # fmt: skip
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "animation.html"
            with writer.saving(fig, path, dpi=fig.dpi):
                for t in rounds:
                    for bar, height in zip(bars, frames[t]):
                        bar.set_height(height)
                    title.set_text(f"round t = {t}")
                    if potential is not None:
                        marker.set_xdata([t, t])
                    writer.grab_frame()
            html = path.read_text()
        plt.close(fig)
    return re.sub(r'<link rel="stylesheet"[^>]*https?://[^>]*>', "", html)
