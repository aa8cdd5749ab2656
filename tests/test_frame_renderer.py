"""dpteach.frames.FrameRenderer: frames drawn on one reused figure are what a fresh figure gives,
leave nothing open and carry nothing from one frame to the next; the live widget uses one."""

from __future__ import annotations

import base64
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from dpteach import viz, widgets  # noqa: E402
from dpteach.frames import FrameRenderer  # noqa: E402


def draw(epsilon, grey=False):
    fig, ax = viz.subplots()
    if grey:
        fig.set_facecolor("0.5")
    ax.plot([0, 1], [0, epsilon], label=r"$\varepsilon$")
    ax.set_title(f"epsilon = {epsilon}")
    ax.legend()


def draw_with_pyplot(epsilon):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, epsilon])


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def test_a_reused_figure_renders_what_a_fresh_renderer_renders():
    before = plt.get_fignums()
    reused = FrameRenderer(dpi=60, reuse_layout=False)  # layout reuse: test_frame_layout.py
    frames = [reused.render(draw, {"epsilon": e}) for e in (1.0, 2.0, 1.0)]
    assert frames[0] == frames[2] != frames[1]
    assert frames[1] == FrameRenderer(dpi=60).render(draw, {"epsilon": 2.0})
    assert plt.get_fignums() == before
    assert pixels(frames[0]).shape == (round(3.8 * 60), round(6.4 * 0.85 * 60), 3)


def test_nothing_leaks_from_one_frame_to_the_next():
    renderer = FrameRenderer(dpi=40)
    grey = pixels(renderer.render(draw, {"epsilon": 1.0, "grey": True}))
    white = pixels(renderer.render(draw, {"epsilon": 1.0}))
    assert tuple(grey[0, 0]) == (128, 128, 128) and tuple(white[0, 0]) == (255, 255, 255)
    assert len(renderer.figure.axes) == 1


def test_a_pyplot_figure_is_rendered_and_closed_and_two_figures_are_refused():
    before = plt.get_fignums()
    renderer = FrameRenderer(dpi=40)
    assert pixels(renderer.render(draw_with_pyplot, {"epsilon": 1.0})).shape[2] == 3
    assert plt.get_fignums() == before

    def two(epsilon):
        draw(epsilon)
        draw_with_pyplot(epsilon)

    with pytest.raises(ValueError, match="exactly one figure; it created 2"):
        renderer.render(two, {"epsilon": 1.0})
    assert plt.get_fignums() == before


def test_build_makes_the_figure_without_rasterising_it():
    before = plt.get_fignums()
    renderer = FrameRenderer(dpi=40)
    figure = renderer.build(draw, {"epsilon": 2.0})
    assert figure is renderer.figure and figure.axes[0].get_title() == "epsilon = 2.0"
    assert renderer.timings == {}  # nothing rendered
    made = renderer.build(draw_with_pyplot, {"epsilon": 3.0})  # returned, closed to pyplot
    assert made is not renderer.figure and made.axes[0].lines[0].get_ydata()[1] == 3.0
    assert plt.get_fignums() == before
    with pytest.raises(ValueError, match="exactly one figure; it created 0"):
        renderer.build(lambda epsilon: None, {"epsilon": 1.0})
    for method in (renderer.build, renderer.render):
        with pytest.raises(TypeError, match="draw must be a drawing function, got NoneType"):
            method(None, {"epsilon": 1.0})
        with pytest.raises(TypeError, match="values must be a dict of slider values"):
            method(draw, [1.0])
    assert plt.get_fignums() == before


def test_the_live_widget_shows_the_renderers_png_and_redraws_on_change():
    eps = widgets.log_slider("ε", 1.0, 0.1, 10)
    box = widgets.interactive_figure(draw, epsilon=eps)
    out = box.children[1]
    first = out.outputs[0]["data"]["image/png"]
    expected = FrameRenderer(dpi=widgets.LIVE_DPI).render(draw, {"epsilon": 1.0})
    assert base64.b64decode(first) == expected
    eps.value = 10.0
    assert len(out.outputs) == 1 and out.outputs[0]["data"]["image/png"] != first


def test_an_error_after_a_move_is_shown_in_the_widget_and_at_creation_raised():
    def fragile(epsilon):
        if epsilon > 5:
            raise ValueError("epsilon too large for this figure")
        draw(epsilon)

    eps = widgets.log_slider("ε", 1.0, 0.1, 10)
    box = widgets.interactive_figure(fragile, epsilon=eps)
    eps.value = 10.0
    (shown,) = box.children[1].outputs
    assert shown["output_type"] == "stream" and "epsilon too large" in shown["text"]
    with pytest.raises(ValueError, match="too large"):
        widgets.interactive_figure(fragile, epsilon=widgets.log_slider("ε", 10.0, 0.1, 10))


def test_an_explorable_opens_its_live_widget_on_the_static_default_frame_then_renders():
    eps = widgets.log_slider("ε", 1.0, 0.1, 10)
    both = widgets.explorable(
        draw, grid={"epsilon": [0.1, 1.0, 10.0]}, precompute=True, epsilon=eps
    )
    out = both.widget.children[1]
    assert base64.b64decode(out.outputs[0]["data"]["image/png"]) == both.static.default_frame
    assert both.static.default_frame == both.static.frames[1]  # epsilon = 1, the default
    assert both.widget.renderer.timings == {}  # the default was not drawn a second time
    eps.value = 10.0
    moved = base64.b64decode(out.outputs[0]["data"]["image/png"])
    fresh = FrameRenderer(dpi=widgets.LIVE_DPI).render(draw, {"epsilon": 10.0})
    assert moved == fresh  # a move renders afresh, in full colour
    sharp = widgets.explorable(draw, grid={"epsilon": [10.0]}, dpi=150, epsilon=eps)
    first = base64.b64decode(sharp.widget.children[1].outputs[0]["data"]["image/png"])
    assert first != sharp.static.default_frame  # another resolution: the live one is drawn
    assert pixels(first).shape[0] == round(3.8 * widgets.LIVE_DPI)


def ticks_and_scales(scale="linear", labels=False, look=None):
    """A frame whose ticks change with its arguments; ``look`` changes something on its axes
    (their ticks, colours, spines) that must not reach the next frame."""
    fig, (left, right) = viz.subplots(ncols=2)
    x = np.arange(1, 9)
    left.plot(x, x**2, "o-")
    left.set_yscale(scale)
    if labels:
        left.set_xticks(x, [f"cell {i}" for i in x], rotation=90, fontsize=7, ha="right")
    right.bar(x, 1 / x, label="1/x")
    right.legend()  # at its best place
    if labels:  # a legend spread over the width of the axes
        left.plot(x, x**2 + 9, "s-")
        left.legend(["squares", "shifted"], mode="expand", ncols=2, loc="upper left")
    if look == "tick_params":
        right.tick_params(labelsize=5, colors="red")
    elif look == "facecolor":
        right.set_facecolor("0.8")
    elif look == "spine":
        right.spines["left"].set_color("red")
    elif look == "tick lines":
        for line in right.get_yticklines():
            line.set_markersize(12)
    elif look == "tick boxes":
        for label in right.get_yticklabels():
            label.set_bbox({"facecolor": "yellow"})


FRAMES = [  # each look comes before a frame that has none
    {}, {"scale": "log"}, {"labels": True}, {}, {"scale": "log", "labels": True},
    {"look": "tick_params"}, {}, {"look": "facecolor"}, {}, {"look": "spine"}, {},
    {"look": "tick lines"}, {"labels": True}, {"look": "tick boxes"}, {},
]  # fmt: skip


def test_nothing_a_frame_sets_on_its_axes_reaches_the_next_frame():
    """Scales, tick labels, tick parameters, colours, spines, twin axes: each frame on the
    reused figure is what a renderer that never drew before gives."""
    reused = FrameRenderer(dpi=50, reuse_layout=False)
    for values in FRAMES:
        fresh = FrameRenderer(dpi=50, reuse_layout=False).render(ticks_and_scales, values)
        assert reused.render(ticks_and_scales, values) == fresh, values

    def twin(value):
        fig, ax = viz.subplots(ncols=2, sharey=value > 1)
        ax[0].plot([0, 1], [0, value])
        if value > 1:
            ax[0].twinx().plot([0, 1], [value, 0], color="red")

    for value in (1.0, 2.0, 1.0):  # a twin and shared axes, then neither
        fresh = FrameRenderer(dpi=50, reuse_layout=False).render(twin, {"value": value})
        assert reused.render(twin, {"value": value}) == fresh
    assert len(reused.figure.axes) == 2


def test_timings_split_a_frame_into_draw_render_and_encode():
    renderer = FrameRenderer(dpi=50)
    renderer.render(ticks_and_scales, {"labels": True})
    assert set(renderer.timings) == {"draw", "render", "encode"}
    assert all(t > 0 for t in renderer.timings.values())


def test_a_live_widget_collects_garbage_in_the_readers_pause_not_during_moves(monkeypatch):
    import asyncio
    import gc

    monkeypatch.setattr(widgets, "IDLE_COLLECTION_DELAY", 0.05)
    full = []

    def count(phase, info):
        if phase == "stop" and info["generation"] == 2:
            full.append(1)

    async def reader():
        eps = widgets.log_slider("ε", 1.0, 0.1, 10)
        widgets.interactive_figure(draw, epsilon=eps)
        await asyncio.sleep(0.1)  # the pause after the first frame: one collection
        seen = [len(full)]
        eps.value = 10.0
        eps.value = 1.0  # the second move cancels the first one's collection
        seen.append(len(full))
        await asyncio.sleep(0.1)
        seen.append(len(full))
        return seen

    automatic = gc.isenabled()
    gc.disable()  # only the widget's own collections, then
    gc.callbacks.append(count)
    try:
        assert asyncio.run(reader()) == [1, 1, 2]
        eps = widgets.log_slider("ε", 1.0, 0.1, 10)
        widgets.interactive_figure(draw, epsilon=eps)  # no event loop: none scheduled
        eps.value = 10.0
        assert len(full) == 2
    finally:
        gc.callbacks.remove(count)
        if automatic:
            gc.enable()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"dpi": 0}, ValueError, "dpi must be >= 1"),
        ({"dpi": 10_000}, ValueError, "dpi must be at most 600"),
        ({"dpi": 72.5}, TypeError, "dpi"),
        ({"colors": 1}, ValueError, "colors must be >= 2"),
        ({"colors": 1000}, ValueError, "colors must be None"),
        ({"reuse_layout": "yes"}, TypeError, "reuse_layout must be True or False"),
    ],
)
def test_a_renderer_refuses_a_resolution_or_palette_it_cannot_draw(kwargs, error, message):
    with pytest.raises(error, match=message):
        FrameRenderer(**kwargs)
