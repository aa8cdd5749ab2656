"""Every page of the built website as a reader sees it, in headless Chromium (issue 24).

* Math renders: once MathJax has typeset the page, no TeX is left in its text (a backslash
  command such as ``\\alpha``, or a ``$``) outside a typeset formula, code or a script.
* Nothing scrolls the whole page sideways at a phone's width (390 px): wide display equations,
  figures and code scroll inside their own boxes.
* Figures stay readable: each figure's smallest text, at the size the page shows it, is at least
  9 px (the PNG's dpi × :data:`dpteach.viz.SMALLEST_FONT_PT` / 72 × shown width / natural width),
  on a desktop page (1200 px) and at 390 px.

The detectors are checked on crafted pages first, so a test that passes has looked. Reuses the
website fixtures of ``tests/test_browser.py`` (build once if stale, serve on loopback, Chromium).
"""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import pytest

tb = pytest.importorskip("test_browser")  # skips the module, as it does, without Chromium
from dpteach import viz  # noqa: E402

pytestmark = pytest.mark.browser
browser, site_url, page = tb.browser, tb.site_url, tb.page  # the shared fixtures

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


@pytest.fixture(scope="module")
def desktop(browser):
    context = browser.new_context(viewport=DESKTOP)
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


@pytest.mark.parametrize("name", tb.PAGES)
def test_page_renders_its_math_and_fits_a_phone(site_url, phone, desktop, name):
    url = site_url + f"notebooks/{name}.html"
    pg = _open(desktop, url)
    wide = _faults(pg, _site_folder())
    pg.close()
    pg = _open(phone, url)
    narrow = _faults(pg, _site_folder())
    tb.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=tb.SCREENSHOTS / f"{name}-390.png")  # what a phone shows first
    pg.close()
    problems = []
    if wide["tex"]:
        problems.append(f"unrendered TeX in the page: {wide['tex'][:5]}")
    if narrow["sideways"]["excess"] > 0:
        sideways = narrow["sideways"]
        problems.append(f"the page scrolls {sideways['excess']} px sideways at 390 px: "
                        f"{sideways['culprits']}")  # fmt: skip
    for width, faults in [("1200", wide), ("390", narrow)]:
        if faults["small"]:
            problems.append(f"figure text below 9 px at {width} px: {faults['small']}")
    assert problems == [], f"{name}: " + "; ".join(problems)


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
