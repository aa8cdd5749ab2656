"""Live figures: sliders that re-run an experiment and redraw its figure, in Jupyter.

:func:`log_slider` and :func:`int_slider` make the sliders; :func:`interactive_figure` puts them
above a figure drawn by a pure function ``draw(**slider_values)``, redrawn (by a
:class:`~dpteach.frames.FrameRenderer`) when a slider is released; :func:`explorable` shows that
live widget in Jupyter and the same figure precomputed on a grid (:mod:`dpteach.static`) in the
website and the PDF. Heavy recomputation waits for the slider to be released
(``continuous_update=False``).
"""

from __future__ import annotations

import asyncio
import base64
import gc
import math
import os
from collections.abc import Callable, Sequence

import ipywidgets as widgets

from . import _validate as check
from .frames import FrameRenderer
from .static import StaticFigure, static_figure


def _check_range(description: str, value: float, low: float, high: float) -> None:
    if not low < high:
        raise ValueError(f"{description}: low must be below high, got low={low}, high={high}")
    if not low <= value <= high:
        raise ValueError(
            f"{description}: the default value must lie in [low, high] = [{low}, {high}], "
            f"got {value} (it is not clamped silently)"
        )


def log_slider(
    description: str, value: float, low: float, high: float, *, steps_per_decade: int = 16
) -> widgets.FloatLogSlider:
    """A log-scale slider over ``[low, high]`` (e.g. for epsilon or alpha).

    Its positions are ``value * 10**(j / steps_per_decade)`` for integers ``j``: the grid is
    anchored at the default, so the slider can always be moved back to it (to ``epsilon = 1``
    when that is the default, and then through every power of ten in range). The ends are the
    outermost grid points inside ``[low, high]``. The default of 16 steps per decade keeps the
    exponents exact binary fractions. A default outside ``[low, high]`` raises ``ValueError``.
    """
    for name, x in (("value", value), ("low", low), ("high", high)):
        check.positive(x, f"{description}: {name}")
    steps = check.integer(steps_per_decade, "steps_per_decade", minimum=1)
    _check_range(description, value, low, high)
    centre, step = math.log10(value), 1 / steps
    below = math.floor((centre - math.log10(low)) * steps + 1e-9)
    above = math.floor((math.log10(high) - centre) * steps + 1e-9)
    return widgets.FloatLogSlider(
        value=value,
        base=10,
        min=centre - below * step,
        max=centre + above * step,
        step=step,
        description=description,
        continuous_update=False,
        readout_format=".3g",
    )


def int_slider(
    description: str, value: int, low: int, high: int, step: int = 1
) -> widgets.IntSlider:
    """An integer slider over ``low, low + step, ..., high`` (e.g. for n, k or a round t).

    ``high - low`` and ``value - low`` must be multiples of ``step`` (so that both the maximum
    and the default can be reached), and ``value`` must lie in ``[low, high]``: anything else
    raises ``ValueError`` instead of being clamped silently.
    """
    value = check.integer(value, f"{description}: value")
    low = check.integer(low, f"{description}: low")
    high = check.integer(high, f"{description}: high")
    step = check.integer(step, f"{description}: step", minimum=1)
    if low == high:
        raise ValueError(f"{description}: low must be below high, got low = high = {low}")
    _check_range(description, value, low, high)
    if (high - low) % step or (value - low) % step:
        raise ValueError(
            f"{description}: high - low ({high - low}) and value - low ({value - low}) must be "
            f"multiples of step={step}, or the slider cannot reach them"
        )
    return widgets.IntSlider(
        value=value, min=low, max=high, step=step, description=description, continuous_update=False
    )


#: Resolution of the live widgets' figures (dots per inch of the figure's size).
LIVE_DPI = 100

#: Seconds without a move after which a live widget collects garbage (see :class:`LiveFigure`).
IDLE_COLLECTION_DELAY = 1.0


def _check_controls(controls: dict) -> None:
    if not controls:
        raise ValueError("controls must name at least one widget")
    for name, control in controls.items():
        if not isinstance(control, widgets.ValueWidget):
            raise TypeError(
                f"control {name!r} must be an ipywidgets value widget (e.g. "
                f"widgets.FloatSlider(...)), got {type(control).__name__} {control!r:.40}"
            )


class LiveFigure(widgets.VBox):
    """Sliders above a figure drawn by ``draw(**values)``; see :func:`interactive_figure`.

    ``redraw()`` draws the figure again; ``renderer`` is its
    :class:`~dpteach.frames.FrameRenderer` (``renderer.relayouts`` counts the frames laid out
    again, ``renderer.timings`` splits the last frame's time).

    Each frame leaves the last one's artists behind for Python's cyclic garbage collector, and
    they pile up in its oldest generation until a full collection walks every object of the
    process: 0.1-0.25 s with numpy, scipy, matplotlib and ipywidgets loaded, every few moves,
    inside whichever move sets it off. So when the reader pauses (no move for
    :data:`IDLE_COLLECTION_DELAY` seconds, timed on the kernel's event loop) the widget runs
    that collection itself, and a move cancels a collection still waiting. Without a running
    event loop (a script) Python collects as usual.
    """

    def __init__(self, draw: Callable[..., None], controls: dict, first: bytes | None = None):
        _check_controls(controls)
        self.draw, self.controls = draw, dict(controls)
        self.renderer = FrameRenderer(dpi=LIVE_DPI)
        self.output = widgets.Output()
        self._pending: list[asyncio.TimerHandle] = []  # the collection waiting for a pause
        super().__init__([widgets.HBox(list(self.controls.values())), self.output])
        for control in self.controls.values():
            control.observe(self.redraw, names="value")
        if first is None:
            self.redraw()
        else:
            self._show(first)

    def redraw(self, change: dict | None = None) -> None:
        """Draw the figure for the controls' current values; after a move (``change``), an
        error raised by ``draw`` is shown where the figure was, at creation it propagates."""
        while self._pending:
            self._pending.pop().cancel()
        try:
            values = {name: control.value for name, control in self.controls.items()}
            png = self.renderer.render(self.draw, values)
        except Exception as err:
            if change is None:
                raise
            text = f"{type(err).__name__}: {err}\n"
            self.output.outputs = ({"output_type": "stream", "name": "stderr", "text": text},)
        else:
            self._show(png)
        self._collect_in_the_pause()

    def _show(self, png: bytes) -> None:
        data = {"image/png": base64.b64encode(png).decode("ascii"), "text/plain": "<Figure>"}
        self.output.outputs = ({"output_type": "display_data", "data": data, "metadata": {}},)

    def _collect_in_the_pause(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop: Python collects as usual
            return
        self._pending.append(loop.call_later(IDLE_COLLECTION_DELAY, gc.collect))


def interactive_figure(draw: Callable[..., None], **controls: widgets.ValueWidget) -> LiveFigure:
    """A widget: ``controls`` above a figure drawn by ``draw(**values)``.

    ``draw`` receives the current value of every control by name and draws one figure with
    :func:`dpteach.viz.subplots` (or ``plt.subplots``); the figure is rendered to a PNG at
    :data:`LIVE_DPI` by one :class:`~dpteach.frames.FrameRenderer` (a figure reused from move to
    move) and shown in an output area, replaced in one step whenever a control changes (an error
    raised by ``draw`` after a move is shown there instead). The default figure is drawn
    immediately (an error raised then propagates). See :class:`LiveFigure`.
    """
    return LiveFigure(draw, controls)


class Explorable:
    """A live widget in Jupyter, precomputed sliders in the website; see :func:`explorable`."""

    def __init__(self, widget: LiveFigure, static: StaticFigure):
        self.widget, self.static = widget, static

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        return {**data, "text/html": self.static.html}

    def __repr__(self) -> str:
        return f"Explorable(live widget + {self.static!r})"


#: The environment variable that makes :func:`explorable` precompute every grid position.
PRECOMPUTE_VARIABLE = "DPTEACH_PRECOMPUTE"


def precompute_default() -> bool:
    """Whether :func:`explorable` draws its whole grid when not told: ``DPTEACH_PRECOMPUTE=1`` in
    the environment (``scripts/execute_notebooks.py`` sets it: it executes the chapters for the
    website), else only the default position (a reader in Jupyter moves the live widget)."""
    value = os.environ.get(PRECOMPUTE_VARIABLE, "0")
    if value not in ("0", "1"):
        raise ValueError(f"{PRECOMPUTE_VARIABLE} must be 0 or 1, got {value!r}")
    return value == "1"


def explorable(
    draw: Callable[..., None],
    *,
    grid: dict[str, Sequence],
    dpi: int = 100,
    alt: str = "figure",
    precompute: bool | None = None,
    **controls: widgets.ValueWidget,
) -> Explorable:
    """One figure, two versions from the same pure ``draw``: live in Jupyter, static in the book.

    ``controls`` are the sliders of :func:`interactive_figure` (same names as
    the arguments of ``draw``); ``grid`` gives, for each of them, the positions to precompute for
    the website (each control's current value must be one of them: it is the figure shown first).
    The result is displayed as a single output carrying two representations: the ipywidgets view
    (which Jupyter, JupyterLab, Voilà and VS Code prefer, so the figure is live there) and an
    HTML version made by :func:`static_figure` (slider labels from each control's description),
    which the website prefers (``nb_mime_priority_overrides`` in ``book.yml`` ranks ``text/html``
    above the widget view), and so the printed book (``make pdf``); a viewer without widgets
    (GitHub, a notebook not yet run) shows its default frame. So no cell tag is needed and the
    two versions cannot disagree. The live widget opens on the default frame (in the static
    frames' palette when ``dpi`` is the live :data:`~dpteach.widgets.LIVE_DPI`).

    With ``precompute`` (default: :func:`precompute_default`, true when the chapters are
    executed for the website), every grid point is drawn when the cell runs, a fraction of a
    second per point for a typical figure, so keep the grid to a few dozen points; without, only
    the default point is, and the static version's sliders are fixed there (a reader in Jupyter
    sees the live widget, which needs none of the others). ``.static`` reports the positions and
    bytes. Usage, one cell in a chapter::

        widgets.explorable(
            draw,
            grid={"epsilon": [0.1, 0.3, 1, 3, 10], "n": [100, 1000, 10000]},
            epsilon=widgets.log_slider("ε", 1.0, 0.1, 10),
            n=widgets.int_slider("n", 1000, 100, 10000, 100),
        )

    with the cell tagged ``nbval-ignore-output`` (widget ids change from run to run), and one
    line of prose above it, e.g. "*In Jupyter the sliders recompute the figure; on the website
    they move between precomputed positions.*"
    """
    _check_controls(controls)
    if not isinstance(grid, dict):
        raise TypeError(f"grid must be a dict {{control name: slider values}}, got {grid!r:.80}")
    if set(grid) != set(controls):
        raise ValueError(f"grid names {sorted(grid)} must be the controls {sorted(controls)}")
    if precompute is None:
        precompute = precompute_default()
    elif not isinstance(precompute, bool):
        raise TypeError(f"precompute must be True, False or None, got {precompute!r}")
    static = static_figure(
        draw,
        default={name: c.value for name, c in controls.items()},
        labels={name: c.description or name for name, c in controls.items()},
        dpi=dpi,
        alt=alt,
        only_default=not precompute,
        **{name: grid[name] for name in controls},
    )
    # the live widget opens on the default frame just drawn (at the live resolution, no need to
    # draw it twice); each move then renders afresh, in full colour
    live = LiveFigure(draw, controls, first=static.default_frame if dpi == LIVE_DPI else None)
    live.add_class("dpteach-explorable")  # how a test (or a reader's CSS) finds the main figure
    return Explorable(live, static)
