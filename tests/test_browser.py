"""Browser tests in headless Chromium (Debian's package, driven by Playwright).

The shared fixtures and helpers (Chromium, offline pages, the website built once and served on
loopback) live here. Every page of the website is checked in ``tests/test_site_render.py``, the
live widgets in Voilà and JupyterLab in ``tests/test_live_widgets.py``, the printed book in
``tests/test_pdf.py``. Here:

* Precomputed sliders (:func:`dpteach.widgets.explorable`), in a small book built from a demo
  notebook: moving a slider swaps the figure and shows the new value, with no kernel, and the
  figure stays readable in dark mode.

They skip with a clear message where Chromium, Playwright, Voilà, JupyterLab or Jupyter Book is
missing; ``.ci/run`` installs all of them, so CI runs them.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import importlib.util
import io
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "_build" / "screenshots"
CHAPTER_NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9A]*_*.ipynb"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL = ("http://127.0.0.1", "data:", "blob:", "about:")
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}

pytestmark = pytest.mark.browser

if CHROMIUM is None:
    pytest.skip(
        "Chromium is not installed (apt-get install chromium); browser tests skipped",
        allow_module_level=True,
    )
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


def _book_pages() -> list[str]:
    toc = yaml.safe_load((ROOT / "notebooks" / "_toc.yml").read_text())
    files = [toc["root"], *(c["file"] for c in toc.get("chapters", []))]
    files += [c["file"] for part in toc.get("parts", []) for c in part["chapters"]]
    return [Path(f).name for f in files]


PAGES = _book_pages()


def _script(name: str):
    """A module of ``scripts/`` (not a package), loaded by path."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


# The page-readiness checks the PDF printer uses: MathJax has typeset the page (returns the
# number of formulas); every saved widget view is drawn beside its script tag.
print_pdf = _script("print_pdf")
WAIT_FOR_MATH, WIDGETS_DRAWN = print_pdf.WAIT_FOR_MATH, print_pdf.WIDGETS_DRAWN


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.3)
    pytest.fail(f"{what} did not start within {seconds:.0f} s")


def _serve(folder: Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def offline_page(context):
    """A new page of ``context`` whose requests may not leave this machine (they are blocked and
    recorded in ``remote_requests``), and which records every console error and uncaught
    exception (``console_errors``)."""
    pg = context.new_page()
    pg.remote_requests, pg.console_errors = [], []

    def route(r):
        if r.request.url.startswith(LOCAL):
            return r.continue_()
        pg.remote_requests.append(r.request.url)
        return r.abort()

    context.route("**/*", route)
    pg.on("console", lambda m: m.type == "error" and pg.console_errors.append(m.text))
    pg.on("pageerror", lambda e: pg.console_errors.append(f"uncaught: {e}"))
    return pg


@pytest.fixture
def page(browser):
    """An offline page (:func:`offline_page`) at 1200 px."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    yield offline_page(context)
    context.close()


@pytest.fixture
def live_page(browser):
    """A plain page for the live servers (JupyterLab loads hundreds of files: routing each one
    through the blocking handler above would make the test slow)."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    yield context.new_page()
    context.close()


def _drag_slider(pg, slider) -> None:
    """Drag a noUiSlider (ipywidgets 8) handle a third of its track to the right, by mouse."""
    slider.scroll_into_view_if_needed()
    handle = slider.locator(".noUi-handle").first
    track = slider.locator(".noUi-target").first.bounding_box()
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    pg.mouse.move(x, y)
    pg.mouse.down()
    pg.mouse.move(min(x + track["width"] / 3, track["x"] + track["width"] - 2), y, steps=8)
    pg.mouse.up()


# --- The built website ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def site_url():
    """The website, built by ``scripts/build_book.sh`` if missing or stale, served on loopback."""
    try:
        site = _script("page_sizes").ensure_site()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    server, url = _serve(site)
    yield url
    server.shutdown()


def dark_mode(pg) -> None:
    """Click the theme's colour-mode button until the page is dark."""
    button = pg.locator(".theme-switch-button >> visible=true").first
    for _ in range(3):
        if pg.evaluate("document.documentElement.dataset.theme") == "dark":
            return
        button.click()
    assert pg.evaluate("document.documentElement.dataset.theme") == "dark"


def readable(png: bytes) -> tuple[int, float]:
    """A screenshot's background (its most common grey level) and share of dark ink pixels."""
    import numpy as np
    from PIL import Image

    grey = np.asarray(Image.open(io.BytesIO(png)).convert("L"))
    return int(np.bincount(grey.ravel()).argmax()), float((grey < 100).mean())


# --- Precomputed sliders, in a small book of one demo page ------------------------------------

DEMO_NOTEBOOK = """\
from dpteach import viz, widgets

viz.use_style()


def draw(epsilon, n):
    fig, ax = viz.subplots()
    ax.bar(["Laplace scale 1/(n ε)"], [1 / (n * epsilon)])
    ax.set_ylim(0, 0.02)
    ax.set_title(f"ε = {epsilon:.3g}, n = {n}")


widgets.explorable(
    draw,
    grid={"epsilon": [0.1, 0.3, 1.0, 3.0], "n": [100, 1000]},
    epsilon=widgets.log_slider("ε", 1.0, 0.1, 10),
    n=widgets.int_slider("n", 100, 100, 1000, 100),
    precompute=True,
)
"""


@pytest.fixture(scope="module")
def demo_url(site_url, tmp_path_factory):
    """A one-page book, with the website's configuration, of an executed demo notebook."""
    nbclient = pytest.importorskip("nbclient")
    jupyter_book = shutil.which("jupyter-book", path=str(Path(sys.executable).parent))
    book = tmp_path_factory.mktemp("demo_book")
    (book / "notebooks").mkdir()
    (book / "scripts").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Precomputed sliders"),
                nbformat.v4.new_code_cell(DEMO_NOTEBOOK)]  # fmt: skip
    nb.metadata["kernelspec"] = KERNELSPEC
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", store_widget_state=True,
                            resources={"metadata": {"path": str(book)}}).execute()  # fmt: skip
    nbformat.write(nb, book / "notebooks" / "demo.ipynb")
    for path in ["book.yml", "scripts/book_extension.py", "notebooks/references.bib",
                 "notebooks/favicon.svg"]:  # fmt: skip
        shutil.copy(ROOT / path, book / path)
    shutil.copytree(ROOT / "notebooks" / "_static", book / "notebooks" / "_static")
    (book / "web_assets").symlink_to(ROOT / "web_assets")
    (book / "_toc.yml").write_text("format: jb-book\nroot: notebooks/demo\n")
    subprocess.run(
        [jupyter_book, "build", ".", "--config", "book.yml", "--toc", str(book / "_toc.yml"),
         "--builder", "html", "-n", "-W"],
        cwd=book, check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    server, url = _serve(book / "_build" / "html")
    yield url + "notebooks/demo.html"
    server.shutdown()


def test_precomputed_sliders_swap_the_figure_without_a_kernel(page, demo_url):
    page.goto(demo_url, wait_until="load")
    figure = page.locator(".dpteach-static")
    assert figure.count() == 1, "the book should show the static version"
    assert page.locator(".cell_output .jupyter-widgets").count() == 0, "live widget shown too"
    img, sliders = figure.locator("img"), figure.locator("input[type=range]")
    readouts = figure.locator("output")
    assert sliders.count() == 2 and readouts.all_text_contents() == ["1", "100"]
    seen = {img.get_attribute("src")}
    sliders.nth(0).focus()
    page.keyboard.press("ArrowRight")  # epsilon: 1 -> 3
    assert readouts.all_text_contents() == ["3", "100"]
    seen.add(img.get_attribute("src"))
    sliders.nth(1).focus()
    page.keyboard.press("ArrowRight")  # n: 100 -> 1000
    assert readouts.all_text_contents() == ["3", "1,000"]
    seen.add(img.get_attribute("src"))
    sliders.nth(0).focus()
    page.keyboard.press("Home")  # epsilon: 0.1
    assert readouts.all_text_contents() == ["0.1", "1,000"]
    seen.add(img.get_attribute("src"))
    assert len(seen) == 4, "every slider move shows a different figure"
    assert all(src.startswith("data:image/png;base64,") for src in seen)
    dark_mode(page)
    background, ink = readable(img.screenshot())
    assert background > 180 and ink > 0.002, f"unreadable in dark mode ({background}, {ink:.1%})"
    page.screenshot(path=SCREENSHOTS / "static-sliders-demo-dark.png")
    assert page.remote_requests == [] and page.console_errors == [], (
        page.remote_requests,
        page.console_errors,
    )
