"""Frames: a drawing function rendered to PNG images, frame after frame, on one reused figure.

A chapter's figure is a pure function ``draw(**slider_values)`` written with ordinary matplotlib
calls on the figure :func:`dpteach.viz.subplots` gives it. The precomputed sliders of the website
(:mod:`dpteach.static`) and every move of a live widget (:mod:`dpteach.widgets`) render it with a
:class:`FrameRenderer`, so both show the same pixels for the same values.
"""

from __future__ import annotations

import contextvars
import io
import time
from collections.abc import Callable, Mapping

import matplotlib as mpl
import matplotlib.pyplot as plt
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.transforms import Bbox
from PIL import Image

from . import _validate as check
from .style import STYLE

#: The largest resolution a frame is drawn at (dots per inch of the figure's size).
MAX_DPI = 600

#: The renderer whose figure :func:`dpteach.viz.subplots` draws on, while it renders a frame.
_ACTIVE: contextvars.ContextVar[FrameRenderer | None] = contextvars.ContextVar(
    "dpteach_frame_renderer", default=None
)


def active_renderer() -> FrameRenderer | None:
    """The :class:`FrameRenderer` rendering a frame now (inside its :meth:`~FrameRenderer.render`),
    else None: :func:`dpteach.viz.subplots` then draws on its figure instead of a new one."""
    return _ACTIVE.get()


class FrameRenderer:
    """Renders ``draw(**values)`` to PNG bytes, frame after frame, on one reused figure.

    Every figure a drawing function makes with :func:`dpteach.viz.subplots` is drawn on the
    renderer's own Agg figure (cleared, then given a fresh grid of axes by ``Figure.subplots``;
    it is not registered with pyplot), so the figure, its canvas and its renderer (with their
    text-layout and mathtext caches) are made once, not once per frame. A draw that calls
    ``plt.subplots`` still works (its figure is saved and closed). The image is taken at ``dpi``
    (the figure's own size, no tight-bbox pass) from the canvas's pixels and encoded once as PNG
    by Pillow: with ``colors``, quantised first to a palette of that many colours (median cut,
    which keeps the few colours of a plot exact; no dithering) and compressed at zlib's default
    level; without, compressed at zlib's fastest level (a live frame is shown once).

    The constrained layout is computed once per figure structure (size, and the kind and grid
    cell of every axes) and kept, through ``Figure.set_layout_engine`` and
    ``Axes.set_position``, for the later frames of that structure *while everything still
    fits*: every axes' decorations (tick labels, axis labels, title, legends) and every
    figure-level text and legend lie inside the figure by the layout's padding, and no axes'
    decorations reach into another axes' (measured as the layout engine measures, on what was
    just drawn: the tick labels in view, the axis labels, titles, texts and legends). A frame
    that does not fit is laid out afresh (``relayouts`` counts them) and drawn with each axes
    inside both its fresh box and its kept one, if everything fits there (else on its fresh
    layout), and that layout is kept from then on. So a frame is pixel-identical to a fresh
    render whenever its own layout would be the one kept, and otherwise differs only in where
    its axes sit: they stay still from one slider position to the next, so what moves is the
    data. A figure too full for its size, whose own layout does not fit, is laid out afresh
    every frame, as ``reuse_layout=False`` lays out every frame.

    ``timings`` holds the seconds the last frame spent in ``draw`` (the experiment's computation
    and the matplotlib calls that build the artists), in rendering (layout and rasterising) and
    in encoding the PNG.
    """

    def __init__(self, *, dpi: int = 100, colors: int | None = None, reuse_layout: bool = True):
        dpi = check.integer(dpi, "dpi", minimum=1)
        if dpi > MAX_DPI:
            raise ValueError(
                f"dpi must be at most {MAX_DPI} (a frame is drawn in memory), got {dpi}"
            )
        if colors is not None:
            colors = check.integer(colors, "colors", minimum=2)
            if colors > 256:
                raise ValueError(f"colors must be None (full colour) or 2 to 256, got {colors}")
        reuse_layout = check.boolean(reuse_layout, "reuse_layout")
        with mpl.rc_context(STYLE):
            self.figure = Figure(dpi=dpi)
        FigureCanvasAgg(self.figure)
        self.dpi, self.colors, self.reuse_layout = dpi, colors, reuse_layout
        self.relayouts = 0
        self.timings: dict[str, float] = {}
        self._layouts: dict[tuple, list[Bbox] | None] = {}  # structure -> the axes' positions
        self._figures_made = 0

    def subplots(self, nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float], **kwargs):
        """The renderer's figure, cleared (with whatever a previous frame set on it), sized
        ``figsize`` at the renderer's dpi, with a constrained layout and a fresh grid of axes."""
        self._figures_made += 1
        fig = self.figure
        fig.clear()
        fig.set_size_inches(figsize)
        fig.set_dpi(self.dpi)
        fig.set_facecolor(mpl.rcParams["figure.facecolor"])
        fig.set_layout_engine("constrained")
        return fig, fig.subplots(nrows, ncols, **kwargs)

    def build(self, draw: Callable[..., None], values: dict) -> Figure:
        """The figure of ``draw(**values)``, its artists made but not rasterised (what a frame's
        texts say can be read off it, at a fraction of a frame's cost); ``draw`` must make
        exactly one figure. It is the renderer's own, unless ``draw`` called ``plt.subplots``:
        that figure is returned closed to pyplot."""
        return self._build(draw, values)[0]

    def render(self, draw: Callable[..., None], values: dict) -> bytes:
        """``draw(**values)`` as PNG bytes; ``draw`` must make exactly one figure."""
        start = time.perf_counter()
        fig, made_by_pyplot = self._build(draw, values)
        drawn = time.perf_counter()
        if made_by_pyplot:  # saved as matplotlib saves it
            buf = io.BytesIO()
            with mpl.rc_context(STYLE):
                fig.savefig(buf, format="png", dpi=self.dpi)
            image = Image.open(buf)
        else:  # our Agg canvas: its pixels directly, no PNG encoded and decoded in between
            with mpl.rc_context(STYLE):
                self._draw_canvas()
            canvas = self.figure.canvas
            size = canvas.get_width_height(physical=True)
            image = Image.frombuffer("RGBA", size, canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        rendered = time.perf_counter()
        image = image.convert("RGB")  # the figure is opaque
        if self.colors is not None:
            image = image.quantize(colors=self.colors, dither=Image.Dither.NONE)
        out = io.BytesIO()
        image.save(out, format="png", compress_level=6 if self.colors is not None else 1)
        self.timings = {"draw": drawn - start, "render": rendered - drawn,
                        "encode": time.perf_counter() - rendered}  # fmt: skip
        return out.getvalue()

    def _build(self, draw: Callable[..., None], values: dict) -> tuple[Figure, bool]:
        """Run ``draw(**values)``: the one figure it made, and whether pyplot made it."""
        if not callable(draw):
            raise TypeError(f"draw must be a drawing function, got {type(draw).__name__}")
        if not isinstance(values, Mapping):
            raise TypeError(
                f"values must be a dict of slider values (name -> value), "
                f"got {type(values).__name__}"
            )
        before = set(plt.get_fignums())
        self._figures_made = 0
        token = _ACTIVE.set(self)
        try:
            with mpl.rc_context(STYLE):
                draw(**values)
        finally:
            _ACTIVE.reset(token)
        new = [n for n in plt.get_fignums() if n not in before]
        figures = [plt.figure(n) for n in new]
        for n in new:
            plt.close(n)
        if self._figures_made + len(new) != 1:
            raise ValueError(
                f"draw must create exactly one figure; it created {self._figures_made + len(new)}"
            )
        return (figures[0], True) if figures else (self.figure, False)

    def _structure(self) -> tuple:
        """What a kept layout must match: the figure's size and every axes' kind and cell."""
        fig, cells = self.figure, []
        for ax in fig.axes:
            spec = ax.get_subplotspec()
            grid = spec and spec.get_gridspec()
            cells.append((type(ax).__name__, ax.get_label(), spec and spec.get_geometry(),
                          grid and (grid.get_geometry(), tuple(grid.get_width_ratios() or ()),
                                    tuple(grid.get_height_ratios() or ()))))  # fmt: skip
        return tuple(fig.get_size_inches()), fig.dpi, tuple(cells)

    def _draw_canvas(self) -> None:
        """Draw the figure on the kept layout of its structure if everything fits there, else
        on a layout that fits both this frame and the kept one's (see the class docstring)."""
        fig = self.figure
        engine = fig.get_layout_engine()
        if not (self.reuse_layout and isinstance(engine, ConstrainedLayoutEngine)):
            fig.canvas.draw()  # a draw that chose its own layout keeps it
            return
        key = self._structure()
        kept = self._layouts.get(key)
        fig.set_layout_engine("none")
        if kept is not None:
            self._place(kept)
            fig.canvas.draw()
            if self._fits(engine):  # measured on what was just drawn
                return
            self.relayouts += 1
        engine.execute(fig)  # this frame's own constrained layout
        layout = [ax.get_position(original=True).frozen() for ax in fig.axes]
        if kept is not None:  # each axes inside both boxes: both frames' decorations fit
            inner = [Bbox.from_extents(max(a.x0, b.x0), max(a.y0, b.y0), min(a.x1, b.x1),
                                       min(a.y1, b.y1)) for a, b in zip(kept, layout)]  # fmt: skip
            self._place(inner)
            fig.canvas.draw()
            if self._fits(engine):
                self._layouts[key] = inner
                return
            self._place(layout)
        fig.canvas.draw()
        # a figure too full for its size overflows even its own layout: lay it out every frame
        self._layouts[key] = layout if self._fits(engine) else None

    def _place(self, layout: list[Bbox]) -> None:
        for ax, position in zip(self.figure.axes, layout):
            ax.set_position(position)
            ax.set_in_layout(True)  # which set_position turns off

    def _fits(self, engine: ConstrainedLayoutEngine) -> bool:
        """Whether the decorations just drawn lie inside the figure, by the constrained layout's
        padding, and clear of each other's axes (see the class docstring)."""
        fig = self.figure
        renderer = fig.canvas.get_renderer()
        pad = engine.get()
        w, h = pad["w_pad"] * fig.dpi - 1, pad["h_pad"] * fig.dpi - 1  # a pixel of rounding
        width, height = fig.bbox.width, fig.bbox.height
        axes = [ax for ax in fig.axes if ax.get_visible() and ax.get_in_layout()]
        boxes = [_drawn_extent(ax, renderer) for ax in axes]
        others = [a.get_window_extent(renderer) for a in (*fig.texts, *fig.legends)
                  if a.get_visible()]  # fmt: skip
        if any(box.x0 < w or box.y0 < h or box.x1 > width - w or box.y1 > height - h
               for box in (*boxes, *others)):  # fmt: skip
            return False
        return not any(  # the decorations of axes side by side (not twins or insets) meet
            boxes[i].overlaps(boxes[j])
            for i in range(len(axes))
            for j in range(i)
            if not axes[i].bbox.overlaps(axes[j].bbox)
        )


def _drawn_extent(ax, renderer) -> Bbox:
    """The box around ``ax`` and the decorations its last draw placed: the tick labels of the
    ticks in view, the axis labels and offset texts, the title, the texts and the legend. (What
    ``Axes.get_tightbbox`` measures, read from the drawn texts instead of working the ticks out
    again: a third of a frame's time.)"""
    texts = [ax.title, *ax.texts]
    for axis in (ax.xaxis, ax.yaxis, *([ax.zaxis] if hasattr(ax, "zaxis") else [])):
        texts += [axis.label, axis.get_offset_text()]
        low, high = sorted(axis.get_view_interval())
        slack = 1e-9 * max(abs(low), abs(high), 1e-300)
        for tick in (*axis.get_major_ticks(), *axis.get_minor_ticks()):
            if low - slack <= tick.get_loc() <= high + slack:
                texts += [tick.label1, tick.label2]
    boxes = [ax.bbox] + [t.get_window_extent(renderer) for t in texts
                         if t.get_visible() and t.get_in_layout() and t.get_text()]  # fmt: skip
    legend = ax.get_legend()
    if legend is not None and legend.get_visible():
        boxes.append(legend.get_window_extent(renderer))
    return Bbox.union(boxes)
