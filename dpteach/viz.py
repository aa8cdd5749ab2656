"""The one figure style of the book.

Colour-blind-safe Okabe-Ito palette, labelled axes, legends, theoretical bounds as dashed lines,
PNG output in notebooks (SVG embeds a timestamp and would change on every run).
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np

#: Okabe and Ito (2008) colour-blind-safe palette.
PALETTE = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "sky": "#56B4E9",
    "purple": "#CC79A7",
    "yellow": "#F0E442",
    "black": "#000000",
}
COLORS = list(PALETTE.values())

STYLE = {
    "axes.prop_cycle": mpl.cycler(color=COLORS),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "figure.figsize": (6.4, 3.8),
    "font.size": 10,
    "legend.frameon": False,
    "image.cmap": "viridis",
}


def use_style() -> None:
    """Apply the book's style globally, and make notebook figures PNG."""
    mpl.rcParams.update(STYLE)
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("png")
    except ImportError:  # not in IPython
        pass


def subplots(ncols: int = 1, nrows: int = 1, **kwargs):
    """``plt.subplots`` in the book's style, with a constrained layout."""
    with mpl.rc_context(STYLE):
        width, height = STYLE["figure.figsize"]
        kwargs.setdefault("figsize", (width * min(ncols, 2) * 0.85 + 1.2 * (ncols > 2), height))
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
    from . import theory

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
    kernel); the CDN stylesheet matplotlib adds is dropped so the page stays offline.
    """
    import re

    from matplotlib import animation

    rounds = sorted(frames)
    with mpl.rc_context(STYLE | {"figure.dpi": 70}):
        fig, axes = plt.subplots(1, 2 if potential is not None else 1, figsize=(10, 3.6),
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
        title = ax.set_title("")
        if potential is not None:
            pot = axes[0, 1]
            pot.plot(np.arange(len(potential)), potential, color=PALETTE["vermillion"])
            pot.set(xlabel="round $t$", ylabel=r"potential $D(p\,\|\,\hat p_t)$")
            marker = pot.axvline(rounds[0], color=PALETTE["black"], linewidth=1)

        def update(t):
            for bar, height in zip(bars, frames[t]):
                bar.set_height(height)
            title.set_text(f"round t = {t}")
            if potential is not None:
                marker.set_xdata([t, t])
            return bars

        anim = animation.FuncAnimation(fig, update, frames=rounds, interval=interval)
        html = anim.to_jshtml(default_mode="once")
        plt.close(fig)
    return re.sub(r'<link rel="stylesheet"[^>]*https?://[^>]*>', "", html)
