"""Browser tests in headless Chromium (Debian's package, driven by Playwright).

* A widget made by :mod:`dpteach.widgets`, served live by Voilà, redraws its figure when its
  slider moves.
* The built website renders math (MathJax), figures and saved widgets, loading nothing from the
  network.

They skip with a clear message where Chromium, Playwright, Voilà or Jupyter Book is missing;
``.ci/run`` installs all of them, so CI runs them.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
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

pytestmark = pytest.mark.browser

if CHROMIUM is None:
    pytest.skip(
        "Chromium is not installed (apt-get install chromium); browser tests skipped",
        allow_module_level=True,
    )
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    """A page that records every request leaving this machine."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    pg = context.new_page()
    pg.remote_requests = []
    pg.on("request", lambda r: r.url.startswith(LOCAL) or pg.remote_requests.append(r.url))
    yield pg
    context.close()


SLIDER_NOTEBOOK = """\
import matplotlib.pyplot as plt
from dpteach import viz, widgets

viz.use_style()


def draw(epsilon):
    fig, ax = viz.subplots()
    ax.bar(["noise scale"], [1 / epsilon])
    ax.set_ylim(0, 12)
    ax.set_title(f"epsilon = {epsilon:.3g}")


widgets.interactive_figure(draw, epsilon=widgets.log_slider("ε", 1.0, 0.1, 10))
"""


@pytest.fixture(scope="module")
def voila_url(tmp_path_factory):
    pytest.importorskip("voila", reason="voila is not installed")
    folder = tmp_path_factory.mktemp("voila")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SLIDER_NOTEBOOK)]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, folder / "slider.ipynb")
    port = _free_port()
    env = dict(os.environ, MPLBACKEND="module://matplotlib_inline.backend_inline")
    proc = subprocess.Popen(
        [sys.executable, "-m", "voila", "slider.ipynb", "--no-browser", f"--port={port}",
         "--Voila.ip=127.0.0.1", "--ServerApp.token=", "--ServerApp.password="],
        cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            time.sleep(0.3)
        else:
            pytest.fail("Voilà did not start within 60 s")
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_slider_redraws_figure_in_live_page(page, voila_url):
    page.goto(voila_url, timeout=120_000)
    figure = page.locator(".widget-output img").first
    figure.wait_for(timeout=120_000)
    before = figure.get_attribute("src")
    handle = page.locator(".widget-slider .noUi-handle").first
    handle.focus()
    for _ in range(5):
        handle.press("ArrowRight")
    page.wait_for_function(
        "src => { const img = document.querySelector('.widget-output img');"
        " return img && img.getAttribute('src') !== src; }",
        arg=before,
        timeout=60_000,
    )
    assert page.locator(".widget-output img").first.get_attribute("src") != before
    # (Voilà's own page asks a CDN for an icon font; the website test below checks offline use.)


@pytest.fixture(scope="module")
def site_url():
    """The website, built by ``scripts/build_book.sh`` if needed, served on loopback."""
    html = ROOT / "_build" / "html"
    index = html / "index.html"
    sources = [*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "notebooks").glob("*.md")]
    if not index.exists() or max(p.stat().st_mtime for p in sources) > index.stat().st_mtime:
        jupyter_book = shutil.which("jupyter-book", path=str(Path(sys.executable).parent))
        if jupyter_book is None:
            pytest.skip("jupyter-book is not installed: the website test needs the book extra")
        env = dict(os.environ, PATH=f"{Path(jupyter_book).parent}{os.pathsep}{os.environ['PATH']}")
        subprocess.run(["bash", str(ROOT / "scripts" / "build_book.sh")], env=env, check=True)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def test_website_renders_math_figures_and_widgets(page, site_url):
    page.goto(site_url + "notebooks/00_query_release.html", wait_until="load")
    page.wait_for_function("document.querySelectorAll('mjx-container').length > 5", timeout=60_000)
    assert page.locator("mjx-container").count() > 5, "MathJax did not typeset the page"
    images = page.locator("img")
    assert images.count() > 0
    widths = images.evaluate_all("imgs => imgs.map(i => i.complete ? i.naturalWidth : 0)")
    assert all(w > 0 for w in widths), f"figures failed to load: {widths}"
    page.wait_for_selector(".widget-slider", timeout=60_000)
    assert page.locator(".widget-output img").count() > 0, "widget figure missing"
    assert page.remote_requests == [], f"the page reached the network: {page.remote_requests}"


@pytest.mark.parametrize(
    "name",
    ["intro", "notation", "00_query_release", "01_iterative_construction",
     "04_private_multiplicative_weights", "A_privacy_auditing", "bibliography"],
)  # fmt: skip
def test_every_page_loads_offline(page, site_url, name):
    response = page.goto(site_url + f"notebooks/{name}.html", wait_until="load")
    assert response is not None and response.ok
    assert page.remote_requests == [], f"{name} reached the network: {page.remote_requests}"
