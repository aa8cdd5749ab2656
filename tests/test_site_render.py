"""Every page of the built website as a reader sees it, in headless Chromium (issue 24).

Each page is loaded once, at a desktop's width (1200 px) with the network blocked, and every
check below runs on that one load (a page of a chapter takes seconds to typeset):

* It works offline: it loads, it reaches for nothing outside this machine, logs no console error,
  shows every figure and the favicon, and no repository button where no repository is set.
* Math renders: once MathJax has typeset the page, no TeX is left in its text (a backslash
  command such as ``\\alpha``, or a ``$``) outside a typeset formula, code or a script.
* Its precomputed sliders work without a kernel: in each precomputed figure (a chapter has at
  least its main one), each slider with more than one position changes its readout and the
  figure when moved.
* Code cells fit the page width (the notebooks keep code to 88 columns, ``notebooks/ruff.toml``).
* Nothing scrolls the whole page sideways at a phone's width (the page resized to 390 px): wide
  display equations, figures and code scroll inside their own boxes.
* Figures stay readable: each figure's smallest text, at the size the page shows it, is at least
  9 px (the PNG's dpi × :data:`dpteach.viz.SMALLEST_FONT_PT` / 72 × shown width / natural width),
  at 1200 px and at 390 px; and in dark mode a figure keeps its light background and its ink.

Screenshots (light, dark, 390 px) go to ``_build/screenshots/``. The detectors are checked on
crafted pages first, so a test that passes has looked. Reuses the website fixtures of
``tests/test_browser.py`` (build once if stale, serve on loopback, Chromium).
"""

from __future__ import annotations

import base64
import io
import os
import re
from pathlib import Path

import pytest

tb = pytest.importorskip("test_browser")  # skips the module, as it does, without Chromium
from dpteach import viz  # noqa: E402

pytestmark = pytest.mark.browser
browser, site_url = tb.browser, tb.site_url  # the shared fixtures
CHAPTERS = [name for name in tb.PAGES if re.match(r"(\d\d|A)_", name)]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1200, "height": 900}
SMALLEST_TEXT_PX = 9

# TeX left in the text once MathJax is done: a command (\alpha, \frac), a delimiter (\( or \[)
# or a dollar sign, in any text node that is not inside a typeset formula, code, or a script; and
# any formula MathJax typeset with an error (an undefined command is shown in red). Returns the
# snippets.
UNRENDERED_TEX = r"""() => {
  const skip = "script, style, noscript, template, textarea, pre, code, kbd, mjx-container";
  const found = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    const el = node.parentElement;
    if (!el || el.closest(skip)) continue;
    const text = node.textContent;
    const m = /\\[A-Za-z()[\]]|\$/.exec(text);
    if (m) found.push(text.slice(Math.max(0, m.index - 40), m.index + 60).replace(/\s+/g, " "));
  }
  const errors = 'mjx-merror, [data-mjx-error], mjx-assistive-mml mtext[mathcolor="red"]';
  for (const error of document.querySelectorAll(errors)) {
    const math = error.closest("mjx-container") || error;  // a formula MathJax could not typeset
    found.push("TeX error: " + (error.getAttribute("data-mjx-error") || "") + ": "
               + math.textContent.slice(0, 80));
  }
  return found;
}"""

# How far the page scrolls sideways, and the outermost elements that stick out of it.
SIDEWAYS = r"""() => {
  const root = document.documentElement, width = root.clientWidth;
  const out = [];
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= width + 1) continue;
    let clipped = false;  // inside a box that scrolls (or clips) on its own: not the page's fault
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== "visible") { clipped = true; break; }
    }
    if (clipped) continue;
    const parent = el.parentElement && el.parentElement.getBoundingClientRect();
    if (parent && parent.right > width + 1) continue;  // its parent sticks out already
    const name = el.tagName.toLowerCase() + (el.className && typeof el.className === "string"
      ? "." + el.className.trim().split(/\s+/).join(".") : "");
    out.push(`${name} (+${Math.round(r.right - width)} px): `
             + el.textContent.trim().slice(0, 60).replace(/\s+/g, " "));
  }
  return {excess: root.scrollWidth - root.clientWidth, culprits: out.slice(0, 5)};
}"""

# Each figure of the page's outputs: its source, natural and shown width.
FIGURES = """() => [...document.querySelectorAll(".cell_output img, .output img")]
  .filter(img => img.naturalWidth > 0 && img.getBoundingClientRect().width > 0)
  .map(img => ({src: img.currentSrc || img.src, natural: img.naturalWidth,
                shown: img.getBoundingClientRect().width, alt: img.alt || ""}))"""


def _png_dpi(data: bytes) -> float:
    """The dpi a PNG was drawn at: its pHYs chunk (matplotlib's savefig writes the figure's dpi),
    else the style's (the precomputed frames of :func:`dpteach.static.static_figure` are written
    without metadata, at the renderer's dpi, the style's unless a chapter asks otherwise)."""
    from PIL import Image

    dpi = Image.open(io.BytesIO(data)).info.get("dpi")
    return float(dpi[0]) if dpi else float(viz.STYLE["savefig.dpi"])


def _png_bytes(src: str, site: Path) -> bytes:
    if src.startswith("data:image/png;base64,"):
        return base64.b64decode(src.split(",", 1)[1])
    path = re.sub(r"^https?://[^/]+/", "", src).split("#")[0].split("?")[0]
    return (site / path).read_bytes()


def smallest_text_px(figure: dict, site: Path) -> float:
    """The smallest text of ``figure`` on screen, in CSS px: the book's smallest font (points),
    at the PNG's dpi, scaled as the page shows the image."""
    data = _png_bytes(figure["src"], site)
    if not data.startswith(b"\x89PNG"):
        return float("inf")  # not a matplotlib figure (an icon, a logo)
    natural_px = viz.SMALLEST_FONT_PT * _png_dpi(data) / 72
    return natural_px * figure["shown"] / figure["natural"]


def _open(context, url: str):
    pg = context.new_page()
    pg.goto(url, wait_until="load")
    pg.evaluate(tb.WAIT_FOR_MATH)
    pg.wait_for_function(tb.WIDGETS_DRAWN, timeout=60_000)
    pg.evaluate(tb.print_pdf.OPEN_EVERYTHING)  # solutions too
    pg.evaluate(tb.WAIT_FOR_MATH)
    return pg


@pytest.fixture(scope="module")
def phone(browser):
    context = browser.new_context(viewport=PHONE)
    yield context
    context.close()


def _faults(pg, site: Path) -> dict:
    return {
        "tex": pg.evaluate(UNRENDERED_TEX),
        "sideways": pg.evaluate(SIDEWAYS),
        "small": [
            (f["alt"][:40], round(smallest_text_px(f, site), 1))
            for f in pg.evaluate(FIGURES)
            if smallest_text_px(f, site) < SMALLEST_TEXT_PX
        ],
    }


def _site_folder() -> Path:
    return tb.ROOT / "_build" / "html"


# --- Every page, loaded once ----------------------------------------------------------------


@pytest.fixture(scope="module", params=tb.PAGES)
def site_page(request, browser, site_url):
    """The page, loaded once for the checks below (pytest runs them one page after another):
    at 1200 px, offline, its math typeset and its saved widgets drawn. ``name``, ``ok`` (the
    response) and ``formulas`` (how many MathJax typeset) are set on it."""
    context = browser.new_context(viewport=DESKTOP)
    pg = tb.offline_page(context)
    name = request.param
    response = pg.goto(site_url + f"notebooks/{name}.html", wait_until="load")
    pg.name, pg.ok = name, response is not None and response.ok
    pg.formulas = pg.evaluate(tb.WAIT_FOR_MATH)
    pg.wait_for_function(tb.WIDGETS_DRAWN, timeout=60_000)
    yield pg
    context.close()


def test_page_works_offline_without_console_errors(site_page):
    pg, name = site_page, site_page.name
    assert pg.ok, f"{name} did not load"
    images = pg.locator("img").evaluate_all("imgs => imgs.map(i => i.naturalWidth)")
    assert all(w > 0 for w in images), f"{name}: figures failed to load: {images}"
    icon = pg.evaluate("fetch(document.querySelector('link[rel=icon]').href).then(r => r.ok)")
    assert icon, f"{name}: the favicon is missing"
    assert pg.remote_requests == [], f"{name} reached for the network: {pg.remote_requests}"
    assert pg.console_errors == [], f"{name} logged console errors: {pg.console_errors}"
    if not os.environ.get("DPTEACH_REPOSITORY_URL"):  # no repository set: no button for one
        buttons = pg.locator(".bd-header-article a[href^='http']")
        links = buttons.evaluate_all("links => links.map(a => a.href)")
        assert links == [], f"{name}: repository or launch buttons with no repository: {links}"
    figure = pg.locator(".cell_output img").first
    if figure.count():
        figure.scroll_into_view_if_needed()
    tb.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=tb.SCREENSHOTS / f"{name}-light.png")


def test_precomputed_sliders_move_the_figure_without_a_kernel(site_page):
    pg, name = site_page, site_page.name
    figures = pg.locator(".dpteach-static")
    if name in CHAPTERS:
        assert pg.formulas > 5, f"{name}: MathJax typeset {pg.formulas} formulas"
        assert figures.count() >= 1, f"{name}: no precomputed main widget"
    for j in range(figures.count()):
        figure = figures.nth(j)
        img, sliders = figure.locator("img"), figure.locator("input[type=range]")
        readouts = figure.locator("output")
        seen = {img.get_attribute("src")}
        moved = 0
        for i in range(sliders.count()):
            if sliders.nth(i).get_attribute("max") == "0":
                continue  # a slider fixed at one position on the website
            before = readouts.nth(i).text_content()
            sliders.nth(i).focus()
            pg.keyboard.press("End" if sliders.nth(i).get_attribute("value") == "0" else "Home")
            assert readouts.nth(i).text_content() != before, f"{name} #{j}: slider {i} unchanged"
            seen.add(img.get_attribute("src"))
            moved += 1
        assert moved >= 1 and len(seen) >= 2, f"{name} #{j}: {moved} move(s), figure unchanged"
    assert pg.console_errors == [], f"{name}: console errors: {pg.console_errors}"


LONGEST_LINES_OF_OVERFLOWING_CELLS = """() => [...document.querySelectorAll(".cell_input pre")]
  .filter(pre => pre.scrollWidth > pre.clientWidth + 1)
  .map(pre => pre.textContent.split("\\n").reduce((a, b) => (a.length >= b.length ? a : b)))"""


def test_code_cells_fit_the_page_width(site_page):
    """At 1200 px, the theme shows the notebooks' 88 columns without a horizontal scroll bar."""
    overflowing = site_page.evaluate(LONGEST_LINES_OF_OVERFLOWING_CELLS)
    assert overflowing == [], f"{site_page.name}: code cells scroll sideways: {overflowing}"


def test_math_renders_and_figures_are_readable_on_a_desktop(site_page):
    site_page.evaluate(tb.print_pdf.OPEN_EVERYTHING)  # solutions too
    site_page.evaluate(tb.WAIT_FOR_MATH)
    faults = _faults(site_page, _site_folder())
    assert faults["tex"] == [], f"{site_page.name}: unrendered TeX: {faults['tex'][:5]}"
    assert faults["small"] == [], f"{site_page.name}: figure text below 9 px: {faults['small']}"


def test_page_fits_a_phone_and_its_figures_stay_readable(site_page):
    pg, name = site_page, site_page.name
    pg.evaluate(tb.print_pdf.OPEN_EVERYTHING)
    pg.set_viewport_size(PHONE)
    try:
        pg.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        pg.evaluate("window.scrollTo(0, 0)")
        faults = _faults(pg, _site_folder())
        tb.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=tb.SCREENSHOTS / f"{name}-390.png")  # what a phone shows first
    finally:
        pg.set_viewport_size(DESKTOP)
    sideways = faults["sideways"]
    assert sideways["excess"] <= 0, (
        f"{name}: the page scrolls {sideways['excess']} px sideways at 390 px: "
        f"{sideways['culprits']}"
    )
    assert faults["small"] == [], f"{name}: figure text below 9 px at 390 px: {faults['small']}"


def test_page_is_readable_in_dark_mode(site_page):
    pg, name = site_page, site_page.name
    tb.dark_mode(pg)
    pg.wait_for_timeout(300)  # the theme's colour transition
    figure = pg.locator(".cell_output img").first
    if figure.count():
        figure.scroll_into_view_if_needed()
    pg.screenshot(path=tb.SCREENSHOTS / f"{name}-dark.png")
    if figure.count():
        background, ink = tb.readable(figure.screenshot())
        assert background > 180 and ink > 0.002, (
            f"{name}: a figure is unreadable in dark mode (background {background}, {ink:.1%} ink)"
        )
    assert pg.console_errors == [], f"{name}: console errors in dark mode: {pg.console_errors}"


# --- The detectors catch what they look for --------------------------------------------------

CRAFTED = """<!doctype html><html><head>
<link rel="stylesheet" href="_static/styles/sphinx-book-theme.css">
<link rel="stylesheet" href="_static/dpteach.css">
<script>window.MathJax = {tex: {inlineMath: [["\\\\(", "\\\\)"], ["$", "$"]]}};</script>
<script defer src="_static/mathjax/tex-mml-chtml.js"></script></head>
<body><main><p>Typeset: $\\alpha \\le 1$ and \\(\\beta\\).</p>
<pre>code may say $HOME and \\n</pre>
<div class="cell_output"><img alt="figure" src="FIGURE" style="width: 300px"></div>
%s
</main></body></html>"""
# What myst-parser makes of display math inside a paragraph (chapter 01 before issue 24), a
# formula with a TeX error, and a line wider than a phone.
BROKEN = (
    '<p>for\n$<span class="math notranslate nohighlight">\\(\\alpha \\ge 1\\)</span>'
    '<span class="math notranslate nohighlight">\\(\nso long as \\)</span>\\gamma \\le 1$.</p>'
    "<p>\\(x^{2\\)</p><p>\\(\\undefinedcommand x\\)</p>"
) + ('<p style="white-space: nowrap">' + "x" * 120 + "</p>")


def _figure_data_url(width_in: float) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context(viz.STYLE):
        fig, ax = plt.subplots(figsize=(width_in, 2))
        ax.set_title("a figure")
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


@pytest.mark.parametrize("broken", [False, True])
def test_the_detectors_catch_raw_tex_a_wide_page_and_a_shrunk_figure(
    site_url, phone, tmp_path, broken
):
    """A crafted page with the site's own MathJax and CSS: clean, every detector is quiet; with a
    fault of each kind (TeX MathJax leaves alone, a line wider than a phone, a figure shrunk
    to a third), each one fires."""
    site = _site_folder()
    width_in = 12 if broken else 3  # 1200 px or 300 px, shown at 300 px
    html = CRAFTED.replace("FIGURE", _figure_data_url(width_in)) % (BROKEN if broken else "")
    crafted = site / f"_crafted_test_page_{broken}.html"  # a name of its own: no cached copy
    crafted.write_text(html)
    try:
        pg = _open(phone, site_url + crafted.name)
        assert pg.locator("mjx-container").count() >= 2, "MathJax did not typeset the page"
        faults = _faults(pg, site)
        pg.close()
    finally:
        crafted.unlink()
    if broken:
        tex = " ".join(faults["tex"])
        assert "\\gamma" in tex and "\\(x^{2" in tex and "\\undefinedcommand" in tex, faults
        assert faults["sideways"]["excess"] > 100, faults
        assert faults["small"] and faults["small"][0][1] < SMALLEST_TEXT_PX, faults
    else:
        assert faults["tex"] == [] and faults["sideways"]["excess"] <= 0, faults
        assert faults["small"] == [], faults
