"""Widgets that teach (issue 28): every slider of every chapter's explorables changes what is drawn.

Each chapter's explorables (``widgets.explorable`` calls) are captured by running only the cells
they need, as ``benchmarks/bench_widgets.py`` does. For each one and each of its sliders, moved
across its website positions with the others at their defaults:

* the slider has at least three website positions (a choice: all its options);
* the *data* drawn changes at every position (the lines, bars, patches, collections and images
  of the figure's axes, not only a title or a label), and the frames are distinct images;
* every readout agrees with the figure's own text (:func:`dpteach.static.check_readouts`);
* the drawing is a pure function of its slider values: the default, drawn again at the end, is
  the same image.

And every point of every website grid (all combinations of the sliders' positions, as
``make notebooks`` precomputes them) draws, and its figure's text agrees with its readouts. The
figure is built but not rasterised (:meth:`~dpteach.frames.FrameRenderer.build`: a readout is
read off the texts), so the whole grid costs what its experiments and artists cost.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from dpteach.frames import FrameRenderer  # noqa: E402
from dpteach.static import check_readouts  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_widgets import capture  # noqa: E402

CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9A]*_*.ipynb"))


def drawn_data(figure) -> list[np.ndarray]:
    """What the axes of ``figure`` draw, in data coordinates: each line's points, each patch's
    corners, each collection's offsets and paths, each image's array (no text)."""
    data = []
    for ax in figure.axes:
        for line in ax.lines:
            data.append(np.asarray(line.get_xydata(), dtype=float))
        for patch in ax.patches:
            data.append(patch.get_patch_transform().transform(patch.get_path().vertices))
        for collection in ax.collections:
            data.append(np.asarray(collection.get_offsets(), dtype=float))
            data += [np.asarray(path.vertices, dtype=float) for path in collection.get_paths()]
        for image in ax.images:
            data.append(np.asarray(image.get_array(), dtype=float))
    return data


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(
        x.shape == y.shape and np.allclose(x, y, rtol=1e-9, atol=1e-12, equal_nan=True)
        for x, y in zip(a, b)
    )


def test_the_data_signature_sees_a_change_of_data_and_not_of_a_title():
    from dpteach import viz

    def draw(height, title):
        fig, ax = viz.subplots()
        ax.bar([0, 1], [1, height])
        ax.set_title(title)

    renderer = FrameRenderer(dpi=30)
    seen = []
    for height, title in [(1, "a"), (1, "b"), (2, "a")]:
        renderer.render(draw, {"height": height, "title": title})
        seen.append(drawn_data(renderer.figure))
    assert _same(seen[0], seen[1]) and not _same(seen[0], seen[2])


@pytest.fixture(scope="module")
def captured():
    cache = {}

    def get(path: Path):
        if path not in cache:
            cache[path] = [w for w in capture(path) if w.grid is not None]
        return cache[path]

    return get


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_every_slider_moves_the_data_on_the_website(captured, path):
    explorables = captured(path)
    assert explorables, f"{path.stem} has no explorable"
    for widget in explorables:
        labels = {name: c.description or name for name, c in widget.controls.items()}
        default = {name: c.value for name, c in widget.controls.items()}
        renderer = FrameRenderer(dpi=40, reuse_layout=False)  # each frame its own layout
        first = renderer.render(widget.draw, default)
        for name, values in widget.grid.items():
            where = f"{path.stem}, {widget.name}, slider {labels[name]}"
            control = widget.controls[name]
            if hasattr(control, "options"):  # a choice: every option on the website
                wanted = len(control.options)
                assert len(values) == wanted, f"{where}: {len(values)} of {wanted} options"
            else:
                assert len(values) >= 3, f"{where}: {len(values)} website positions, want >= 3"
            frames, data = [], []
            for value in values:
                point = {**default, name: value}
                frames.append(renderer.render(widget.draw, point))
                check_readouts(renderer.figure, {labels[n]: v for n, v in point.items()})
                data.append(drawn_data(renderer.figure))
            for (i, a), (j, b) in itertools.combinations(enumerate(data), 2):
                assert not _same(a, b), (
                    f"{where}: positions {values[i]} and {values[j]} draw the same data"
                )
            assert len(set(frames)) == len(frames), f"{where}: two positions share a frame"
        again = renderer.render(widget.draw, default)
        assert again == first, f"{path.stem}, {widget.name}: the default drew differently"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_every_point_of_every_website_grid_draws_with_its_readouts(captured, path):
    for widget in captured(path):
        labels = {name: c.description or name for name, c in widget.controls.items()}
        default = {name: c.value for name, c in widget.controls.items()}
        names = list(widget.grid)
        renderer = FrameRenderer()
        for values in itertools.product(*widget.grid.values()):
            point = {**default, **dict(zip(names, values))}
            figure = renderer.build(widget.draw, point)
            try:
                check_readouts(figure, {labels[n]: v for n, v in point.items()})
            except ValueError as exc:
                raise AssertionError(f"{path.stem}, {widget.name} at {point}: {exc}") from None
