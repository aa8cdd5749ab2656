"""Widget factories: sliders that re-run an experiment and redraw its figure.

Every factory returns a widget that draws its default-parameter figure as soon as it is made, so
the figure is part of the saved notebook and of the static website (where the sliders need a
live kernel to move). Heavy recomputation waits for the slider to be released
(``continuous_update=False``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import ipywidgets as widgets
import matplotlib.pyplot as plt


def log_slider(description: str, value: float, low: float, high: float) -> widgets.FloatLogSlider:
    """A log-scale slider over ``[low, high]`` (e.g. for epsilon or alpha)."""
    return widgets.FloatLogSlider(
        value=value,
        base=10,
        min=math.log10(low),
        max=math.log10(high),
        step=(math.log10(high) - math.log10(low)) / 40,
        description=description,
        continuous_update=False,
        readout_format=".3g",
    )


def int_slider(
    description: str, value: int, low: int, high: int, step: int = 1
) -> widgets.IntSlider:
    """An integer slider (e.g. for n, k or a round t)."""
    return widgets.IntSlider(
        value=value, min=low, max=high, step=step, description=description, continuous_update=False
    )


def interactive_figure(draw: Callable[..., None], **controls: widgets.ValueWidget) -> widgets.VBox:
    """A widget: ``controls`` above a figure drawn by ``draw(**values)``.

    ``draw`` receives the current value of every control by name and draws with matplotlib
    (``plt.subplots`` or :func:`dpteach.viz.subplots`); the figure is shown in an output area
    that is redrawn whenever a control changes. The default figure is drawn immediately.
    """
    if not controls:
        raise ValueError("controls must name at least one widget")
    out = widgets.Output()

    def redraw(_change=None) -> None:
        out.clear_output(wait=True)
        with out:
            draw(**{name: c.value for name, c in controls.items()})
            plt.show()

    for control in controls.values():
        control.observe(redraw, names="value")
    redraw()
    box = widgets.VBox([widgets.HBox(list(controls.values())), out])
    return box
