"""The book's one figure style: palette, sizes and matplotlib settings.

Colour-blind-safe Okabe-Ito palette, labelled axes, legends, PNG output in notebooks (SVG embeds a
timestamp and would change on every run). Figures carry their own opaque white background, so they
stay readable in the website's dark mode. Every figure module of the package draws under
:data:`STYLE`; a notebook applies it with :func:`use_style`.
"""

from __future__ import annotations

import matplotlib as mpl

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

#: The smallest text in the book's figures, in points (legends beside dense plots, the tick labels
#: of long histograms; no figure code asks for less). ``tests/test_site_render.py`` checks that
#: every figure on the website shows it at 9 px or more.
SMALLEST_FONT_PT = 7

#: The widest figure, in inches: at the style's 100 dpi it is shown at (almost) its natural size in
#: the website's text column (about 690 px in a 1200 px window), so a figure of several panels is
#: drawn at the size it is shown, not shrunk to two thirds (at a phone's width it scrolls).
PAGE_WIDTH_IN = 7.0

STYLE = {
    "axes.prop_cycle": mpl.cycler(color=COLORS),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    # An opaque background of its own: readable on the website's light and dark themes alike
    # (matplotlib-inline's default is a transparent figure, black text on a dark page).
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.transparent": False,
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
    except ImportError:  # not in IPython
        return
    set_matplotlib_formats("png")


def figure_size(ncols: int = 1) -> tuple[float, float]:
    """The default size of a figure of ``ncols`` panels side by side, in inches: a single panel a
    little narrower than the style's default, several panels the page's width."""
    width, height = STYLE["figure.figsize"]
    return (width * 0.85 if ncols == 1 else PAGE_WIDTH_IN, height)
