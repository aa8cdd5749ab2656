"""Figures whose sliders move in a static web page: a drawing function precomputed on a grid.

:func:`static_figure` renders ``draw(**values)`` (a :class:`~dpteach.frames.FrameRenderer`
frame) at every point of a grid of slider values and shows them with plain HTML range inputs and
a few lines of inline JavaScript that swap the images: no kernel, no network (Jupyter Book pages,
the PDF; GitHub's viewer shows the default frame). :func:`dpteach.widgets.explorable` pairs it
with the live widget.
"""

from __future__ import annotations

import base64
import html
import itertools
import json
import numbers
import re
from collections.abc import Callable, Sequence

import numpy as np
from matplotlib.axis import Axis
from matplotlib.text import Text

from . import _validate as check
from .frames import FrameRenderer

#: What the static sliders run in the page: pick the frame of the chosen grid point, show values.
_STATIC_JS = """(function () {
  "use strict";
  var root = document.currentScript.parentNode;
  var spec = JSON.parse(root.querySelector("script.dpteach-frames").textContent);
  var img = root.querySelector("img");
  var first = img.getAttribute("src");
  var inputs = root.querySelectorAll("input[type=range]");
  function update() {
    var k = 0;
    inputs.forEach(function (input, i) {
      var pos = Number(input.value);
      k = k * spec.labels[i].length + pos;
      input.parentNode.querySelector("output").textContent = spec.labels[i][pos];
      input.setAttribute("aria-valuetext", spec.labels[i][pos]);
    });
    img.setAttribute("src", spec.frames[spec.index[k]] || first);
  }
  inputs.forEach(function (input) { input.addEventListener("input", update); });
})();"""

_STATIC_CSS = (
    ".dpteach-static{margin:.5em 0}"
    ".dpteach-static label{display:inline-flex;align-items:center;gap:.4em;margin:0 1.2em .3em 0}"
    ".dpteach-static output{min-width:3.5em;font-variant-numeric:tabular-nums}"
    ".dpteach-static img{max-width:100%;height:auto;display:block}"
)


def _format_value(value) -> str:
    """A slider value as its readout shows it: integers with thousands separators, other
    numbers to 3 significant digits (``1,000,000``, ``0.316``), anything else as ``str``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return str(value)
    if isinstance(value, numbers.Integral):
        return f"{value:,}"
    rounded = float(f"{float(value):.3g}")
    return f"{rounded:,.0f}" if rounded.is_integer() else f"{rounded:.15g}"


def _same(a, b) -> bool:
    """Equal, or equal up to rounding (a log slider's value may differ in the last digit)."""
    numbers = (int, float, np.integer, np.floating)
    if isinstance(a, numbers) and isinstance(b, numbers):
        return bool(np.isclose(a, b, rtol=1e-9, atol=0))
    return a == b


class StaticFigure:
    """Precomputed frames of a figure with HTML range sliders; see :func:`static_figure`.

    Attributes: ``names`` (slider names), ``grid`` (their values), ``default`` (the position
    shown first, one index per slider), ``default_frame`` (its PNG), ``positions`` (grid
    points), ``frames`` (distinct PNGs), ``html`` (the self-contained HTML) and ``nbytes`` (its
    size in bytes, what a page grows by).
    """

    def __init__(self, names, grid, default, labels, frames, index, *, alt: str):
        self.names, self.grid, self.default = list(names), [list(g) for g in grid], tuple(default)
        self.positions = len(index)
        self.frames = frames
        flat = 0
        for pos, values in zip(self.default, self.grid):
            flat = flat * len(values) + pos
        uris = ["data:image/png;base64," + base64.b64encode(f).decode("ascii") for f in frames]
        self.default_frame = frames[index[flat]]
        first = uris[index[flat]]
        uris[index[flat]] = ""  # the <img> already holds it; the script reads it from there
        value_labels = [[_format_value(v) for v in values] for values in self.grid]
        spec = json.dumps({"labels": value_labels, "frames": uris, "index": index},
                          separators=(",", ":"))  # fmt: skip
        controls = "".join(
            f'<label>{html.escape(label)} <input type="range" min="0" max="{len(values) - 1}" '
            f'step="1" value="{pos}" name="{html.escape(name)}" '
            f'aria-valuetext="{html.escape(values[pos])}"{" disabled" * (len(values) == 1)}> '
            f'<output style="min-width:{max(map(len, values))}ch">{html.escape(values[pos])}'
            "</output></label>"
            for name, label, values, pos in zip(self.names, labels, value_labels, self.default)
        )
        self.html = (
            f'<div class="dpteach-static"><style>{_STATIC_CSS}</style>'
            f'<div class="dpteach-static-controls">{controls}</div>'
            f'<img src="{first}" alt="{html.escape(alt)}">'
            f'<script type="application/json" class="dpteach-frames">{spec}</script>'
            f"<script>{_STATIC_JS}</script></div>"
        )
        self.nbytes = len(self.html.encode("utf-8"))

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        sliders = ", ".join(f"{n} ({len(g)})" for n, g in zip(self.names, self.grid))
        return (f"StaticFigure({sliders}: {self.positions} positions, {len(self.frames)} "
                f"distinct frames, {self.nbytes / 1e6:.2f} MB)")  # fmt: skip


def static_figure(
    draw: Callable[..., None],
    *,
    default: dict | None = None,
    labels: dict[str, str] | None = None,
    dpi: int = 100,
    colors: int | None = 256,
    alt: str = "figure",
    only_default: bool = False,
    **grid: Sequence,
) -> StaticFigure:
    """A figure whose sliders move in a static web page: ``draw`` precomputed on a grid.

    ``draw(**values)`` must be a pure function of its slider values that creates exactly one
    matplotlib figure (``viz.subplots``); it is called once for every point of the grid given by
    the keyword arguments (``epsilon=[0.1, 1, 10], n=[100, 1000]``: 6 points, in the book's
    style), each figure saved as a PNG at ``dpi`` with a ``colors``-colour palette (``None``:
    full colour) and identical frames stored once. The result displays as HTML: one
    ``<input type="range">`` per slider with its current value beside it, the image, and a few
    lines of inline JavaScript that swap the image, so it works with no kernel and no network
    (Jupyter Book pages, the PDF, GitHub's viewer shows the default frame). ``default`` names
    the starting value of each slider (default: the first of its grid); ``labels`` the text
    before each slider (default: its name). ``.nbytes`` is what it adds to a page. With
    ``only_default``, only the default point is drawn and every slider is fixed there (how
    :func:`dpteach.widgets.explorable` saves time where a live widget does the moving).

    The grid has ``prod(len(values))`` points: keep it to a few dozen (every position should
    teach something) so that the notebook stays fast and under its 5 MB budget.
    """
    if not grid:
        raise ValueError("static_figure needs at least one slider grid, e.g. epsilon=[0.1, 1, 10]")
    _check_grid(grid)
    default, labels = default or {}, labels or {}
    for key in (*default, *labels):
        if key not in grid:
            raise ValueError(f"{key!r} is not a slider; the sliders are {list(grid)}")
    start = [_position(name, values, default.get(name, values[0])) for name, values in grid.items()]
    if check.boolean(only_default, "only_default"):
        grid = {name: [values[pos]] for (name, values), pos in zip(grid.items(), start)}
        start = [0] * len(grid)
    renderer = FrameRenderer(dpi=dpi, colors=colors)
    frames: list[bytes] = []
    seen: dict[bytes, int] = {}
    index = []
    for point in itertools.product(*grid.values()):
        values = dict(zip(grid, point))
        png = renderer.render(draw, values)
        check_readouts(renderer.figure, {labels.get(n, n): v for n, v in values.items()})
        index.append(seen.setdefault(png, len(frames)))
        if index[-1] == len(frames):
            frames.append(png)
    return StaticFigure(grid, grid.values(), start, [labels.get(n, n) for n in grid], frames,
                        index, alt=alt)  # fmt: skip


def check_readouts(fig, readouts: dict[str, object]) -> None:
    """Refuse a figure whose text contradicts a slider's readout.

    Wherever a text of ``fig`` (a title, an axis label, a legend, a text or annotation; not the
    tick labels, which are the axes' numbers and categories) writes a slider's label followed
    by ``=`` and a number (``"round t = 26 of 26"`` for the slider ``t``), the number must be
    the slider's value ``readouts[label]`` to the precision it is written with: a reader who
    sets t = 27 must not read t = 26 under it. Raises ``ValueError`` naming both numbers. Reads
    the texts as drawn or not yet drawn (no tick is made to read them).
    """
    texts = list(_texts(fig))
    for label, value in readouts.items():
        if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
            continue
        number = r"(-?[0-9][0-9,]*(?:\.[0-9]+)?)(?![0-9e])"  # 27, 200,000, 0.15; not 1e5
        pattern = rf"(?<![\w\\^{{]){re.escape(label)}\s*=\s*{number}"
        for text in texts:
            for shown in re.findall(pattern, text):
                decimals = len(shown.partition(".")[2])
                if abs(float(shown.replace(",", "")) - float(value)) > 0.5 * 10.0**-decimals:
                    raise ValueError(
                        f"the figure says {label} = {shown} where the slider {label} reads "
                        f"{_format_value(value)}: {text!r}"
                    )


def _texts(artist):
    """The strings of every text in ``artist`` and its children, an axis's tick labels aside."""
    if isinstance(artist, Text):
        yield artist.get_text()
    if isinstance(artist, Axis):  # its label and offset; its ticks are made only when asked
        children = [artist.label, artist.get_offset_text()]
    else:
        children = artist.get_children()
    for child in children:
        yield from _texts(child)


def _check_grid(grid: dict) -> None:
    for name, values in grid.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence | np.ndarray):
            raise ValueError(
                f"grid {name!r} must be a non-empty sequence of slider values (a list, tuple, "
                f"range or array), got {type(values).__name__}; write e.g. {name}=[0.1, 1, 10]"
            )
        if len(values) == 0:
            raise ValueError(f"grid {name!r} must be a non-empty sequence, got {values!r}")


def _position(name: str, values: Sequence, value) -> int:
    """Where ``value`` is in a slider's grid ``values``."""
    matches = [i for i, v in enumerate(values) if _same(v, value)]
    if not matches:
        raise ValueError(f"default {name}={value!r} is not in its grid {list(values)}")
    return matches[0]
