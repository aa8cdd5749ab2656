"""Figures whose sliders move without a kernel (dpteach.static.static_figure / explorable), the
figure style's own background (readable in the website's dark mode), and the page-size budget."""

from __future__ import annotations

import base64
import importlib.util
import io
import json
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from dpteach import viz, widgets  # noqa: E402
from dpteach.static import check_readouts, static_figure  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUDGET = 5 * 2**20  # bytes per chapter page, with its images and precomputed frames


def draw(epsilon, n):
    fig, ax = viz.subplots()
    ax.bar(["noise scale"], [1 / (epsilon * n)])
    ax.set_ylim(0, 0.02)
    ax.set_title(f"epsilon = {epsilon:.3g}, n = {n}")


def draw_ignoring_n(epsilon, n):
    fig, ax = viz.subplots()
    ax.plot([0, 1], [0, epsilon])


def _spec(html: str) -> dict:
    text = re.search(r'class="dpteach-frames">(.*?)</script>', html).group(1)
    return json.loads(text)


def _png(uri: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).convert("RGBA")


def draw_stopped_run(t):
    """A run that stopped after 26 rounds, titled with the round it shows."""
    fig, ax = viz.subplots()
    ax.plot([0, 1])
    ax.set_title(f"round t = {min(t, 26)} of 26")


def draw_stopped_run_honestly(t):
    fig, ax = viz.subplots()
    ax.plot([0, 1])
    ax.set_title(f"round t = {t} of 26" if t <= 26 else f"t = {t}: stopped after 26 rounds")


def test_a_figure_that_contradicts_its_slider_readout_is_refused():
    with pytest.raises(ValueError, match=r"says t = 26 where the slider t reads 27"):
        static_figure(draw_stopped_run, t=[0, 26, 27])
    assert static_figure(draw_stopped_run_honestly, t=[0, 26, 27]).positions == 3
    # what a title writes is compared at the precision it is written with, by the slider's label
    fig, ax = plt.subplots()
    ax.set_title(r"$\varepsilon$ = 0.32, ε = 0.32, n = 200,000, t = 1e5, $D^t$")
    check_readouts(fig, {"ε": 0.3162, "n": 200_000, "t": 7})
    for wrong in ({"ε": 0.3}, {"n": 100_000}):
        with pytest.raises(ValueError, match="where the slider"):
            check_readouts(fig, wrong)
    # read in an axis label and a legend too, on a figure never drawn (no tick is made for it)
    ax.set_xlabel("α = 0.2")
    ax.plot([0, 1], label="k = 12")
    ax.legend()
    for wrong in ({"α": 0.3}, {"k": 11}):
        with pytest.raises(ValueError, match="where the slider"):
            check_readouts(fig, wrong)
    plt.close(fig)


def test_every_grid_point_is_a_frame_and_the_html_has_one_range_input_per_slider():
    before = plt.get_fignums()  # figures other tests left open are not ours to judge
    fig = static_figure(draw, epsilon=[0.5, 1.0, 2.0], n=[100, 1000], default={"n": 1000})
    assert fig.positions == 6 and len(fig.frames) == 6  # every point draws a different title
    assert plt.get_fignums() == before, "frames must be closed after rendering"
    html = fig.html
    inputs = re.findall(r'<input type="range" min="0" max="(\d+)" step="1" value="(\d+)"', html)
    assert inputs == [("2", "0"), ("1", "1")]
    assert re.findall(r"<output[^>]*>(.*?)</output>", html) == ["0.5", "1,000"]
    # each readout is as wide as its longest value, so the row does not jump when it changes
    assert re.findall(r'<output style="min-width:(\d+)ch">', html) == ["3", "5"]
    spec = _spec(html)
    assert spec["labels"] == [["0.5", "1", "2"], ["100", "1,000"]]
    assert len(spec["index"]) == 6 and sorted(set(spec["index"])) == list(range(6))
    # The default position (epsilon=0.5, n=1000: flat index 0 * 2 + 1) is the <img> itself.
    default = spec["index"][1]
    assert spec["frames"][default] == ""
    assert all(f for i, f in enumerate(spec["frames"]) if i != default)
    first = re.search(r'<img src="(data:image/png;base64,[^"]+)"', html).group(1)
    assert base64.b64decode(first.split(",", 1)[1]) == fig.frames[default]
    assert fig.nbytes == len(html.encode("utf-8"))
    assert "6 positions" in repr(fig)


def test_identical_frames_are_stored_once():
    fig = static_figure(draw_ignoring_n, epsilon=[1.0, 2.0], n=[1, 2, 3])
    assert fig.positions == 6 and len(fig.frames) == 2
    assert _spec(fig.html)["index"] == [0, 0, 0, 1, 1, 1]


def test_frames_are_compressed_pngs_with_an_opaque_white_background():
    fig = static_figure(draw, epsilon=[1.0], n=[100], dpi=80)
    image = Image.open(io.BytesIO(fig.frames[0]))
    assert image.format == "PNG" and image.mode == "P"  # a 256-colour palette
    assert image.size == (round(6.4 * 0.85 * 80), round(3.8 * 80))
    rgba = np.asarray(image.convert("RGBA"))
    assert (rgba[..., 3] == 255).all(), "transparent pixels would show the dark theme through"
    assert tuple(rgba[0, 0]) == (255, 255, 255, 255)
    full = static_figure(draw, epsilon=[1.0], n=[100], dpi=80, colors=None)
    assert len(fig.frames[0]) < len(full.frames[0])


def test_the_book_style_draws_on_its_own_white_background():
    viz.use_style()
    fig, ax = viz.subplots()
    ax.plot([0, 1], [0, 1])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")  # what the inline backend does, with the style's defaults
    plt.close(fig)
    rgba = np.asarray(Image.open(buf).convert("RGBA"))
    assert (rgba[..., 3] == 255).all() and tuple(rgba[1, 1]) == (255, 255, 255, 255)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "at least one slider"),
        ({"epsilon": []}, "non-empty"),
        ({"epsilon": "abc"}, "non-empty"),
        ({"epsilon": [1.0], "n": [1], "default": {"epsilon": 3.0}}, "not in its grid"),
        ({"epsilon": [1.0], "n": [1], "labels": {"delta": "δ"}}, "not a slider"),
    ],
)
def test_bad_grids_are_refused_with_a_clear_message(kwargs, message):
    with pytest.raises(ValueError, match=message):
        static_figure(draw, **kwargs)


def test_a_draw_that_makes_no_figure_or_two_is_refused():
    before = plt.get_fignums()
    with pytest.raises(ValueError, match="exactly one figure; it created 0"):
        static_figure(lambda x: None, x=[1])
    with pytest.raises(ValueError, match="exactly one figure; it created 2"):
        static_figure(lambda x: (plt.figure(), plt.figure()), x=[1])
    assert plt.get_fignums() == before


def _controls():
    return {
        "epsilon": widgets.log_slider("ε", 1.0, 0.1, 10),
        "n": widgets.int_slider("n", 1000, 100, 10000, 100),
    }


def test_explorable_carries_the_live_widget_and_the_static_figure_in_one_output():
    grid = {"epsilon": [0.1, 1.0, 10.0], "n": [100, 1000]}
    both = widgets.explorable(draw, grid=grid, precompute=True, **_controls())
    bundle = both._repr_mimebundle_()
    view = bundle["application/vnd.jupyter.widget-view+json"]
    assert view["model_id"] == both.widget.model_id
    assert bundle["text/html"] == both.static.html
    # The static figure starts where the sliders start, with their descriptions as labels.
    assert both.static.default == (1, 1)
    assert re.findall(r"<label>(\S+) <input", both.static.html) == ["ε", "n"]
    plt.close("all")


def test_explorable_draws_only_its_default_position_unless_told_to_precompute(monkeypatch):
    grid = {"epsilon": [0.1, 1.0, 10.0], "n": [100, 1000]}
    full = widgets.explorable(draw, grid=grid, precompute=True, **_controls())
    monkeypatch.delenv(widgets.PRECOMPUTE_VARIABLE, raising=False)
    assert not widgets.precompute_default()
    lean = widgets.explorable(draw, grid=grid, **_controls())  # as in a reader's Jupyter
    assert (lean.static.positions, full.static.positions) == (1, 6)
    assert lean.static.default_frame == full.static.default_frame
    assert lean.static.html.count(" disabled>") == 2  # the static sliders stay where they are
    assert " disabled>" not in full.static.html
    monkeypatch.setenv(widgets.PRECOMPUTE_VARIABLE, "1")  # as scripts/execute_notebooks.py runs
    assert widgets.explorable(draw, grid=grid, **_controls()).static.positions == 6
    monkeypatch.setenv(widgets.PRECOMPUTE_VARIABLE, "yes")
    with pytest.raises(ValueError, match="DPTEACH_PRECOMPUTE must be 0 or 1"):
        widgets.explorable(draw, grid=grid, **_controls())
    with pytest.raises(TypeError, match="precompute must be"):
        widgets.explorable(draw, grid=grid, precompute="no", **_controls())
    with pytest.raises(ValueError, match="not in its grid"):  # checked without precomputing
        widgets.explorable(
            draw, grid={"epsilon": [0.1], "n": [1000]}, precompute=False, **_controls()
        )
    plt.close("all")


def test_explorable_refuses_a_grid_that_does_not_match_its_controls():
    with pytest.raises(ValueError, match="must be the controls"):
        widgets.explorable(draw, grid={"epsilon": [1.0]}, **_controls())
    with pytest.raises(ValueError, match="not in its grid"):
        widgets.explorable(draw, grid={"epsilon": [0.1, 10.0], "n": [1000]}, **_controls())
    plt.close("all")


def test_the_book_prefers_the_static_version_of_an_explorable():
    """myst-nb picks the lowest priority; the widget view's default is 10 in every builder."""
    import yaml

    config = yaml.safe_load((ROOT / "book.yml").read_text())["sphinx"]["config"]
    overrides = {(b, m): p for b, m, p in config["nb_mime_priority_overrides"]}
    assert overrides[("html", "text/html")] < 10


def _page_sizes():
    spec = importlib.util.spec_from_file_location("page_sizes", ROOT / "scripts/page_sizes.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("page_sizes", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_chapter_page_is_within_its_size_budget():
    page_sizes = _page_sizes()
    try:
        site = page_sizes.ensure_site()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    sizes = {s.name: s for s in page_sizes.page_sizes(site)}
    chapters = [p.stem for p in (ROOT / "notebooks").glob("*.ipynb")]
    assert set(chapters) <= set(sizes), "a chapter has no page"
    over = {name: f"{sizes[name].total / 2**20:.1f} MB" for name in chapters
            if sizes[name].total > BUDGET}  # fmt: skip
    assert not over, f"pages over the {BUDGET / 2**20:.0f} MB budget: {over}"
    assert all(sizes[name].html_bytes > 0 for name in chapters)
