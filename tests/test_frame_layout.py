"""dpteach.frames.FrameRenderer keeps the constrained layout of a figure structure from frame to
frame only while everything fits: no label is clipped by the figure's edge or reaches into the
next axes, and a frame that fits is pixel-identical to a fresh render whenever the kept layout is
the one a fresh render would make."""

from __future__ import annotations

import itertools

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402

from dpteach import viz  # noqa: E402
from dpteach.frames import FrameRenderer  # noqa: E402

SHORT, LONG = "y", "a much longer y-axis label\non two lines"


def one(value, ylabel=SHORT):
    fig, ax = viz.subplots()
    ax.plot([0, 1], [0, value], label="line")
    ax.set(ylim=(0, 1), xlabel="x", ylabel=ylabel, title=f"value = {value:.2f}")
    ax.legend()


def pair(value, legend="line", ylabel="left"):
    fig, (left, right) = viz.subplots(ncols=2)
    left.plot([0, 1], [0, value], label=legend)
    left.set(ylim=(0, 1), ylabel=ylabel)
    left.legend(loc="upper left", bbox_to_anchor=(1, 1))  # outside, towards the right axes
    right.plot([0, 1], [1, value])
    right.set(ylim=(0, 1), ylabel="right")


def inside_and_apart(renderer: FrameRenderer) -> bool:
    """Every axes' decorations lie inside the figure and the two axes' do not meet."""
    fig = renderer.figure
    box = fig.canvas.get_renderer()
    tight = [ax.get_tightbbox(box) for ax in fig.axes]
    inside = all(
        t.x0 >= 0 and t.y0 >= 0 and t.x1 <= fig.bbox.width and t.y1 <= fig.bbox.height
        for t in tight
    )
    return inside and not any(a.overlaps(b) for a, b in itertools.combinations(tight, 2))


def positions(renderer: FrameRenderer) -> list:
    return [tuple(ax.get_position().bounds) for ax in renderer.figure.axes]


def test_frames_that_fit_the_kept_layout_are_what_a_fresh_render_gives():
    renderer = FrameRenderer(dpi=60)
    for value in (0.2, 0.5, 0.9):
        frame = renderer.render(one, {"value": value})
        fresh = FrameRenderer(dpi=60, reuse_layout=False).render(one, {"value": value})
        assert frame == fresh
    assert renderer.relayouts == 0 and len(renderer._layouts) == 1


@pytest.mark.parametrize("draw, small, large", [
    (one, {"value": 0.5}, {"value": 0.5, "ylabel": LONG}),
    (pair, {"value": 0.5}, {"value": 0.5, "legend": "a much longer legend entry here"}),
])  # fmt: skip
def test_labels_that_no_longer_fit_get_a_fresh_layout_and_none_is_clipped(draw, small, large):
    renderer = FrameRenderer(dpi=60)
    renderer.render(draw, small)
    kept = positions(renderer)
    frame = renderer.render(draw, large)
    assert renderer.relayouts == 1 and positions(renderer) != kept
    assert inside_and_apart(renderer)
    assert frame == FrameRenderer(dpi=60, reuse_layout=False).render(draw, large)


def test_on_the_kept_layout_the_labels_are_inside_the_figure_and_the_axes_stay_still():
    renderer = FrameRenderer(dpi=60)
    renderer.render(one, {"value": 0.5, "ylabel": LONG})
    kept = positions(renderer)
    frame = renderer.render(one, {"value": 0.5})  # a narrower label fits the wider margin
    assert renderer.relayouts == 0 and positions(renderer) == kept
    assert inside_and_apart(renderer)
    fresh = FrameRenderer(dpi=60, reuse_layout=False)
    assert fresh.render(one, {"value": 0.5}) != frame  # a fresh layout would be tighter
    assert positions(fresh) != kept


def test_the_fit_check_accepts_every_fresh_constrained_layout():
    """So the kept layout is only ever redone for a frame that really does not fit."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    cases = [
        (one, {"value": 0.5}),
        (one, {"value": 0.5, "ylabel": LONG}),
        (pair, {"value": 0.5}),
        (pair, {"value": 0.5, "legend": "a longer legend"}),
    ]
    for draw, values in cases:
        renderer = FrameRenderer(dpi=60)
        renderer.render(draw, values)  # the first frame: a fresh layout
        assert renderer._fits(ConstrainedLayoutEngine()) and inside_and_apart(renderer)


def test_each_figure_structure_keeps_its_own_layout():
    renderer = FrameRenderer(dpi=60)
    frames = [renderer.render(d, {"value": 0.5}) for d in (one, pair, one, pair)]
    assert frames[0] == frames[2] and frames[1] == frames[3] and frames[0] != frames[1]
    assert renderer.relayouts == 0 and len(renderer._layouts) == 2


def test_a_draw_with_its_own_layout_keeps_it():
    def adjusted(value):
        fig, ax = viz.subplots()
        fig.set_layout_engine(None)  # then places its axes itself
        fig.subplots_adjust(left=0.3, right=0.9)
        ax.plot([0, 1], [0, value])

    renderer = FrameRenderer(dpi=60)
    for value in (0.5, 0.7):
        renderer.render(adjusted, {"value": value})
        assert renderer.figure.axes[0].get_position().x0 == pytest.approx(0.3)
    assert not renderer._layouts


def test_the_histogram_animation_draws_each_frame_once_on_one_layout(monkeypatch):
    import base64
    import io
    import re

    import numpy as np
    from matplotlib.figure import Figure
    from PIL import Image

    draws = []
    original = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda fig, r: draws.append(1) or original(fig, r))
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(6))
    frames = {t: rng.dirichlet(np.ones(6)) for t in (0, 1, 3, 7)}
    html = viz.histogram_animation(p, frames, potential=np.linspace(1, 0, 8))
    assert len(draws) == len(frames) + 1  # one layout pass, then one draw per frame
    pngs = re.findall(r"data:image/png;base64,([^\"]+)\"", html)
    images = [np.asarray(Image.open(io.BytesIO(base64.b64decode(b)))) for b in pngs]
    assert len(images) == len(frames) and len({im.tobytes() for im in images}) == len(frames)
    assert len({im.shape for im in images}) == 1  # one figure size, one layout
    assert not re.search(r'<link rel="stylesheet"[^>]*https?://', html)  # offline


def test_a_frame_that_does_not_fit_gets_a_layout_that_fits_it_and_the_kept_ones_frames():
    """Sliding back and forth between frames that need different margins lays out once."""
    right = {"value": 0.5, "legend": "a much longer legend entry here"}  # a wider gap between

    renderer = FrameRenderer(dpi=60)
    renderer.render(pair, {"value": 0.5, "ylabel": LONG})  # a wider left margin
    kept = positions(renderer)
    renderer.render(pair, right)
    assert renderer.relayouts == 1 and inside_and_apart(renderer)
    fresh = FrameRenderer(dpi=60, reuse_layout=False)
    fresh.render(pair, right)
    for inner, a, b in zip(positions(renderer), kept, positions(fresh)):
        x0, y0 = max(a[0], b[0]), max(a[1], b[1])  # inside both the kept and the fresh box
        x1, y1 = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
        # (figure fractions: 1e-5 of a 7-inch figure at 60 dpi is a 240th of a pixel)
        assert inner == pytest.approx((x0, y0, x1 - x0, y1 - y0), abs=1e-5)
    assert positions(renderer) != positions(fresh) != kept  # neither layout alone
    for values in ({"value": 0.5, "ylabel": LONG}, right, {"value": 0.9}, right):
        renderer.render(pair, values)
        assert renderer.relayouts == 1 and inside_and_apart(renderer)


def test_a_figure_too_full_for_its_size_is_laid_out_afresh_every_frame():
    """Its own constrained layout leaves the title sticking out: no kept layout could fit, so
    every frame is laid out as a fresh render would be (and none counts as a relayout)."""

    def crowded(value):
        fig, ax = viz.subplots(figsize=(1.5, 1.2))
        ax.plot([0, 1], [0, value])
        ax.set_title("a title far too long for so small a figure")

    renderer = FrameRenderer(dpi=60)
    for value in (1.0, 1000.0, 1.0):
        fresh = FrameRenderer(dpi=60, reuse_layout=False).render(crowded, {"value": value})
        assert renderer.render(crowded, {"value": value}) == fresh
    assert renderer.relayouts == 0 and list(renderer._layouts.values()) == [None]
