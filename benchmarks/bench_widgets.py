"""Issue 15, target 6: every widget's callback, render included, at its defaults and across its
sliders' ranges.

Each notebook's widgets (``widgets.explorable`` and ``widgets.interactive_figure`` calls) are
captured by executing only the code cells they need (found by the names they use) with both
factories patched to record the drawing function and its controls. Then the live widget is built
(:func:`dpteach.widgets.interactive_figure`, no kernel needed) and timed as a reader feels it,
draw and PNG render included, on an event loop as in a kernel and with a pause before each move
(in which the widget collects garbage, as it does when a reader pauses): its redraw at the
defaults (median of 3) and each move of one control, alone, to up to 5 positions over its range,
then to the corner where every numeric slider is at its maximum. Positions are first visits in
this process (no frame of the static grid was precomputed), so caches help only where a draw
shares work with an earlier position. For reference, the notes give matplotlib's own cost of
drawing the last figure again with nothing changed (``canvas.draw()``, no PNG): a floor for any
redraw of that figure; and the full garbage collections (Python's generation 2, which walk every
object of the process, the scientific stack's included) inside the timed moves and between them,
with their time.

Usage: python benchmarks/bench_widgets.py [--quick]
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import contextlib
import gc
import io
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
FACTORIES = ("explorable", "interactive_figure")
GOAL_MEDIAN, GOAL_MAX = 0.2, 0.4  # seconds


@dataclass
class Widget:
    notebook: str
    name: str
    draw: object
    controls: dict
    grid: dict | None = None
    times: dict = field(default_factory=dict)
    relayouts: int = 0
    parts: list = field(default_factory=list)  # FrameRenderer.timings of each timed move
    full_collections: list = field(default_factory=list)  # (seconds, inside a move)


def _names(source: str) -> tuple[set[str], set[str]]:
    """The names a cell defines (assigns, defines, imports, takes as arguments) and the names it
    reads without defining them."""
    defined, used = set(), set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else defined).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((a.asname or a.name).split(".")[0] for a in node.names)
    return defined, used - defined - set(dir(builtins))


def _code_cells(path: Path) -> list[str]:
    cells = json.loads(path.read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def _needed(cells: list[str], last: int) -> list[int]:
    """Indices of the cells before ``last`` that define what ``last`` needs, transitively."""
    needed, chosen = _names(cells[last])[1], [last]
    for i in range(last - 1, -1, -1):
        defined, used = _names(cells[i])
        if defined & needed:
            chosen.append(i)
            needed = (needed - defined) | used
    return sorted(chosen)


def widget_cells(path: Path) -> list[int]:
    """Indices (among the code cells) of the cells a notebook's widgets need: each widget's own
    cell and, transitively, the earlier cells defining what it uses."""
    cells = _code_cells(path)
    needed = {
        i
        for last, source in enumerate(cells)
        if any(f"{f}(" in source for f in FACTORIES)
        for i in _needed(cells, last)
    }
    return sorted(needed)


def capture(path: Path) -> list[Widget]:
    """The widgets of one notebook, with the state their drawing functions need."""
    from dpteach import widgets

    cells = _code_cells(path)
    found: list[Widget] = []

    recording = []  # True while the widget's own cell runs (an earlier widget cell it needs
    # may run first: its widget is recorded when its own turn comes)

    def explorable(draw, *, grid, **kwargs):
        controls = {k: v for k, v in kwargs.items() if k not in ("dpi", "alt")}
        if recording[-1]:
            found.append(Widget(path.stem, draw.__name__, draw, controls, grid))

    def interactive_figure(draw, **controls):
        if recording[-1]:
            found.append(Widget(path.stem, draw.__name__, draw, controls))

    originals = widgets.explorable, widgets.interactive_figure
    widgets.explorable, widgets.interactive_figure = explorable, interactive_figure
    quiet = contextlib.redirect_stdout(io.StringIO())  # the cells' prints
    try:
        with quiet:
            for last, source in enumerate(cells):
                if any(f"{f}(" in source for f in FACTORIES):
                    namespace = {"__name__": "__main__"}
                    for i in _needed(cells, last):
                        recording.append(i == last)
                        exec(compile(cells[i], f"{path.name}[{i}]", "exec"), namespace)
    finally:
        widgets.explorable, widgets.interactive_figure = originals
    return found


def positions(control, count: int = 5) -> list:
    """Up to ``count`` values spread over a control's range, its ends included."""
    if hasattr(control, "options"):
        return list(control.options)
    if hasattr(control, "base"):  # FloatLogSlider
        steps = round((control.max - control.min) / control.step)
        picks = np.unique(np.linspace(0, steps, count).round().astype(int))
        return [float(control.base ** (control.min + j * control.step)) for j in picks]
    picks = np.unique(np.linspace(control.min, control.max, count).round())
    return [int(control.min + (v - control.min) // control.step * control.step) for v in picks]


#: The reader's pause before each move, in seconds (shortened: the widget's idle garbage
#: collection, :data:`dpteach.widgets.IDLE_COLLECTION_DELAY`, is set to half of it here).
PAUSE = 0.05


def _timed(action, moving: list) -> tuple[float, float]:
    moving[0] = True
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    moving[0] = False
    return wall, cpu


def measure(widget: Widget, *, quick: bool = False) -> Widget:
    """Time the live widget (:func:`dpteach.widgets.interactive_figure`) of ``widget`` on an
    event loop, as in a kernel, pausing before each move: its redraw at the defaults, then each
    control moved alone over its range, then the corner."""
    from dpteach import widgets

    moving, started = [False], []

    def full_collections(phase: str, info: dict) -> None:
        if info["generation"] == 2:
            if phase == "start":
                started.append(time.perf_counter())
            else:
                widget.full_collections.append((time.perf_counter() - started.pop(), moving[0]))

    delay, widgets.IDLE_COLLECTION_DELAY = widgets.IDLE_COLLECTION_DELAY, PAUSE / 2
    gc.callbacks.append(full_collections)
    try:
        asyncio.run(_measure(widget, quick, moving))
    finally:
        gc.callbacks.remove(full_collections)
        widgets.IDLE_COLLECTION_DELAY = delay
    return widget


async def _measure(widget: Widget, quick: bool, moving: list) -> None:
    from dpteach import widgets

    box = widgets.interactive_figure(widget.draw, **widget.controls)  # draws the default once

    async def move(action, split: bool = True) -> tuple[float, float]:
        await asyncio.sleep(PAUSE)
        timed = _timed(action, moving)
        if split:  # where the move's time went: draw function, rendering, PNG encoding
            widget.parts.append(dict(box.renderer.timings))
        return timed

    widget.times["default"] = [await move(box.redraw) for _ in range(1 if quick else 3)]
    if quick:
        return
    default = {name: c.value for name, c in widget.controls.items()}
    sweep = []
    for name, control in widget.controls.items():
        for value in positions(control):
            if value != default[name]:
                sweep.append(await move(lambda c=control, v=value: setattr(c, "value", v)))
        control.value = default[name]
    tops = {n: positions(c)[-1] for n, c in widget.controls.items() if not hasattr(c, "options")}
    if len(tops) > 1:  # move all but the last one there (untimed), then time the last move
        *first, (name, value) = tops.items()
        for other, top in first:
            widget.controls[other].value = top
        sweep.append(await move(lambda: setattr(widget.controls[name], "value", value)))
    widget.times["sweep"] = sweep
    widget.relayouts = box.renderer.relayouts
    canvas = box.renderer.figure.canvas  # the last frame, drawn again with nothing changed
    widget.times["floor"] = [await move(canvas.draw, split=False) for _ in range(3)]


def _split(widget: Widget) -> str:
    parts = {k: np.median([p[k] for p in widget.parts]) for k in ("draw", "render", "encode")}
    return (
        "median split: draw function (computation and artists) {draw:.3f} s, rendering "
        "(layout and rasterising) {render:.3f} s, PNG encoding {encode:.3f} s"
    ).format(**parts)


def _collections(widget: Widget) -> str:
    inside = [t for t, moving in widget.full_collections if moving]
    pauses = [t for t, moving in widget.full_collections if not moving]
    return (f"full garbage collections: {len(inside)} inside the timed moves "
            f"({sum(inside):.3f} s), {len(pauses)} between them ({sum(pauses):.3f} s)")  # fmt: skip


def run(quick: bool = False) -> list[dict]:
    paths = (
        [NOTEBOOKS / "A_privacy_auditing.ipynb"]
        if quick
        else sorted(NOTEBOOKS.glob("[0-9A-Z]*.ipynb"))
    )
    rows = []
    for path in paths:
        for widget in capture(path):
            measure(widget, quick=quick)
            default, default_cpu = np.median(widget.times["default"], axis=0)
            sweep = [wall for wall, _ in widget.times.get("sweep", [])]
            worst = max([default, *sweep])
            rows.append({
                "target": "6 widgets",
                "measure": f"{widget.notebook} {widget.name}: callback + render at the defaults "
                           f"(median of {len(widget.times['default'])})",
                "value": float(default), "unit": "s", "goal": f"<= {GOAL_MEDIAN} s",
                "met": bool(default <= GOAL_MEDIAN),
                "notes": f"CPU {default_cpu:.3f} s" + ("" if quick else
                         f"; {len(sweep)} other positions: min {min(sweep):.3f}, median "
                         f"{np.median(sweep):.3f}, max {max(sweep):.3f} s; kept layout redone "
                         f"for {widget.relayouts} of them; matplotlib's redraw of the last "
                         f"frame unchanged {np.median(widget.times['floor'], axis=0)[0]:.3f} s; "
                         + _split(widget) + "; " + _collections(widget)),
            })  # fmt: skip
            if sweep:
                rows.append({
                    "target": "6 widgets",
                    "measure": f"{widget.notebook} {widget.name}: worst callback + render "
                               "over the slider ranges",
                    "value": float(worst), "unit": "s", "goal": f"<= {GOAL_MAX} s",
                    "met": bool(worst <= GOAL_MAX), "notes": "",
                })  # fmt: skip
    rows.append({
        "target": "6 widgets",
        "measure": "reference: a pure-Python loop of 3,000,000 multiply-adds (min of 5)",
        "value": python_reference(), "unit": "s", "goal": "(report)", "met": True,
        "notes": "the widgets' time is mostly Python (matplotlib): this machine's Python speed "
                 "varied by up to 1.8x within an hour, so compare runs through it",
    })  # fmt: skip
    return rows


def python_reference() -> float:
    """Seconds for a fixed pure-Python loop, the fastest of 5: the yardstick for these rows."""

    def loop() -> int:
        total = 0
        for i in range(3_000_000):
            total += i * i
        return total

    return min(_timed(loop, [False])[0] for _ in range(5))


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(f"{row['measure']:90s} {row['value']:8.3f} {row['unit']} "
              f"({'met' if row['met'] else 'NOT met'}) {row['notes']}")  # fmt: skip
