"""Widget factories: sliders that re-run an experiment and redraw its figure.

Every factory returns a widget that draws its default-parameter figure as soon as it is made, so
the figure is part of the saved notebook and of the static website (where the sliders need a
live kernel to move). Heavy recomputation waits for the slider to be released
(``continuous_update=False``).
"""

from __future__ import annotations

import asyncio
import gc
import math
from collections.abc import Callable

import ipywidgets as widgets

from . import _validate as check


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

#: Seconds without a move after which a live widget collects garbage (see
#: :func:`interactive_figure`).
IDLE_COLLECTION_DELAY = 1.0


def interactive_figure(draw: Callable[..., None], **controls: widgets.ValueWidget) -> widgets.VBox:
    """A widget: ``controls`` above a figure drawn by ``draw(**values)``.

    ``draw`` receives the current value of every control by name and draws one figure with
    :func:`dpteach.viz.subplots` (or ``plt.subplots``); the figure is rendered to a PNG at
    :data:`LIVE_DPI` by one :class:`dpteach.viz.FrameRenderer` (a figure reused from move to
    move) and shown in an output area, replaced in one step whenever a control changes (an error
    raised by ``draw`` after a move is shown there instead). The default figure is drawn
    immediately (an error raised then propagates). ``box.redraw()`` draws again;
    ``box.renderer`` is the renderer (its ``relayouts`` count the frames laid out again).

    Each frame leaves the last one's artists behind for Python's cyclic garbage collector, and
    they pile up in its oldest generation until a full collection walks every object of the
    process: 0.1-0.25 s with numpy, scipy, matplotlib and ipywidgets loaded, every few moves,
    inside whichever move sets it off. So when the reader pauses (no move for
    :data:`IDLE_COLLECTION_DELAY` seconds, timed on the kernel's event loop) the widget runs
    that collection itself, and a move cancels a collection still waiting. Without a running
    event loop (a script) Python collects as usual.
    """
    return _live_figure(draw, controls)


def _live_figure(draw: Callable[..., None], controls: dict, first: bytes | None = None):
    """:func:`interactive_figure`, opening on the PNG ``first`` (the default figure already
    rendered, e.g. a static frame of :func:`dpteach.viz.explorable`) if given."""
    import base64

    from .viz import FrameRenderer

    if not controls:
        raise ValueError("controls must name at least one widget")
    for name, control in controls.items():
        if not isinstance(control, widgets.ValueWidget):
            raise TypeError(
                f"control {name!r} must be an ipywidgets value widget (e.g. "
                f"widgets.FloatSlider(...)), got {type(control).__name__} {control!r:.40}"
            )
    out = widgets.Output()
    renderer = FrameRenderer(dpi=LIVE_DPI)

    def show(png: bytes) -> None:
        data = {"image/png": base64.b64encode(png).decode("ascii"), "text/plain": "<Figure>"}
        out.outputs = ({"output_type": "display_data", "data": data, "metadata": {}},)

    pending = []  # the garbage collection waiting for the reader's pause, if any

    def collect_in_the_pause() -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop: Python collects as usual
            return
        pending.append(loop.call_later(IDLE_COLLECTION_DELAY, gc.collect))

    def redraw(change=None) -> None:
        while pending:
            pending.pop().cancel()
        try:
            png = renderer.render(draw, {name: c.value for name, c in controls.items()})
        except Exception as err:  # a slider move shows the error where the figure was
            if change is None:
                raise
            text = f"{type(err).__name__}: {err}\n"
            out.outputs = ({"output_type": "stream", "name": "stderr", "text": text},)
        else:
            show(png)
        collect_in_the_pause()

    for control in controls.values():
        control.observe(redraw, names="value")
    if first is None:
        redraw()
    else:
        show(first)
    box = widgets.VBox([widgets.HBox(list(controls.values())), out])
    box.redraw, box.renderer = redraw, renderer
    return box
