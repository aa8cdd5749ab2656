"""Live widgets in a real browser, served by Voilà and by JupyterLab (headless Chromium).

A widget made by :func:`dpteach.widgets.interactive_figure` (inside
:func:`dpteach.widgets.explorable`, whose static twin must stay hidden there) redraws its figure
when its slider is dragged; every chapter opened in JupyterLab runs, renders the book's MyST
markup (admonitions, folded solutions, citations) through jupyterlab-myst, and its main widget is
live. A module of its own, so that the test suite's parallel workers run it beside the website
tests of ``tests/test_site_render.py``; it shares the browser fixtures and helpers of
``tests/test_browser.py`` (and, like them, skips where Chromium is missing).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("test_browser")  # skips the module, as it does, without Chromium
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from bench_lab import start_lab  # noqa: E402  (JupyterLab, as the benchmark runs it)
from bench_widgets import widget_cells  # noqa: E402
from test_browser import (  # noqa: E402  (the shared fixtures and helpers)
    CHAPTER_NOTEBOOKS,
    KERNELSPEC,
    ROOT,
    SCREENSHOTS,
    _drag_slider,
    _free_port,
    _wait_for_port,
    browser,
    live_page,
    sync_api,
)

pytestmark = pytest.mark.browser
__all__ = ["browser", "live_page"]  # fixtures used by name


SLIDER_NOTEBOOK = """\
import matplotlib.pyplot as plt
from dpteach import viz, widgets

viz.use_style()


def draw(epsilon):
    fig, ax = viz.subplots()
    ax.bar(["noise scale"], [1 / epsilon])
    ax.set_ylim(0, 12)
    ax.set_title(f"epsilon = {epsilon:.3g}")


# The live widget (made by widgets.interactive_figure) with its precomputed twin for the website.
epsilon = widgets.log_slider("ε", 1.0, 0.1, 10)
widgets.explorable(draw, grid={"epsilon": [0.1, 1.0, 10.0]}, epsilon=epsilon)
"""


def _slider_notebook(folder: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SLIDER_NOTEBOOK)]
    nb.metadata["kernelspec"] = KERNELSPEC
    nbformat.write(nb, folder / "slider.ipynb")


def _server(command: list[str], folder: Path, port: int, what: str):
    env = dict(
        os.environ,
        MPLBACKEND="module://matplotlib_inline.backend_inline",
        JUPYTER_CONFIG_DIR=str(folder / ".config"),
        JUPYTER_RUNTIME_DIR=str(folder / ".runtime"),
    )
    proc = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        _wait_for_port(port, 90, what)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def voila_url(tmp_path_factory):
    pytest.importorskip("voila", reason="voila is not installed")
    folder = tmp_path_factory.mktemp("voila")
    _slider_notebook(folder)
    port = _free_port()
    yield from _server(
        [sys.executable, "-m", "voila", "slider.ipynb", "--no-browser", f"--port={port}",
         "--Voila.ip=127.0.0.1", "--ServerApp.token=", "--ServerApp.password="],
        folder, port, "Voilà",
    )  # fmt: skip


def _widget_copy(folder: Path, name: str) -> None:
    """A copy of chapter ``name`` in ``folder``, every Markdown cell kept and, of its code, the
    cells its widgets need (``bench_widgets.widget_cells``), without saved outputs: Run All then
    runs what the widgets need, and nothing shown ran elsewhere. (Every cell is run twice by
    nbval, under two BLAS kernels; here the test is JupyterLab's rendering and live widgets.)"""
    path = ROOT / "notebooks" / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    keep = {id(code[i]) for i in widget_cells(path)}
    nb.cells = [c for c in nb.cells if c.cell_type != "code" or id(c) in keep]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, folder / f"{name}.ipynb")


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory):
    pytest.importorskip("jupyterlab", reason="jupyterlab is not installed (the browser extra)")
    folder = tmp_path_factory.mktemp("lab")
    _slider_notebook(folder)
    for name in CHAPTER_NOTEBOOKS:
        _widget_copy(folder, name)
    proc, url = start_lab(folder)
    yield url
    proc.terminate()
    proc.wait(timeout=30)


def _figure_changes_when_dragged(pg, output: str, scope: str = "", timeout=120_000) -> None:
    """Drag the first slider (within ``scope``) and wait for the figure in ``output`` to change.
    A drag the slider did not follow (its readout unchanged: the page was still laying itself
    out under the mouse) is made again."""
    figure = pg.locator(f"{output} img").first
    figure.wait_for(state="attached", timeout=timeout)
    before = figure.get_attribute("src")
    slider = pg.locator(f"{scope} .widget-slider".strip()).first
    readout = slider.locator(".widget-readout").first
    for _ in range(3):
        value = readout.text_content()
        _drag_slider(pg, slider)
        with contextlib.suppress(sync_api.TimeoutError):
            pg.wait_for_function(
                "([el, value]) => el.textContent !== value",
                arg=[readout.element_handle(), value],
                timeout=5_000,
            )
            break
    pg.wait_for_function(
        "([sel, src]) => { const img = document.querySelector(sel);"
        " return img && img.getAttribute('src') !== src; }",
        arg=[f"{output} img", before],
        timeout=60_000,
    )
    assert pg.locator(f"{output} img").first.get_attribute("src") != before


def test_slider_redraws_figure_in_voila(live_page, voila_url):
    live_page.goto(voila_url, timeout=120_000)
    _figure_changes_when_dragged(live_page, ".widget-output")
    # (Voilà's own page asks a CDN for an icon font; the website tests below check offline use.)


def _answer_dialogs(page) -> None:
    """Answer any dialog JupyterLab put up (a kernel choice, a lost connection it recovered from,
    a restarted kernel) with its default button, and report its text: a dialog must not block
    the clicks that follow, and the test judges only what the widget then does."""
    dialogs = page.locator(".jp-Dialog")
    while (shown := dialogs.count()) > 0:
        dialog = dialogs.last  # the one on top
        text = " ".join(dialog.inner_text().split())
        warnings.warn(f"JupyterLab showed a dialog: {text!r}; answered by default", stacklevel=2)
        accept = dialog.locator(".jp-Dialog-button.jp-mod-accept")
        if accept.count():
            accept.first.click()
        else:
            page.keyboard.press("Escape")
        page.wait_for_function(
            "n => document.querySelectorAll('.jp-Dialog').length < n", arg=shown, timeout=10_000
        )


def _open_when_idle(page, url: str) -> None:
    """Open a notebook in JupyterLab and wait until its kernel is connected and idle."""
    page.goto(url, timeout=120_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
    _answer_dialogs(page)


def test_slider_redraws_figure_in_jupyterlab(live_page, lab_url):
    page = live_page
    _open_when_idle(page, lab_url + "lab/tree/slider.ipynb")
    prompt = page.locator(".jp-Notebook .jp-Cell .jp-InputPrompt").first
    for _ in range(5):  # a key pressed while the notebook is still settling can be lost
        _answer_dialogs(page)
        page.locator(".jp-Notebook .jp-Cell .jp-InputArea-editor").first.click()
        page.keyboard.press("Shift+Enter")
        with contextlib.suppress(sync_api.TimeoutError):  # "[*]:" while running, then "[1]:"
            started = "p => /\\[[*1]\\]/.test(p.textContent)"
            page.wait_for_function(started, arg=prompt.element_handle(), timeout=5_000)
            break
    _figure_changes_when_dragged(page, ".jp-OutputArea-output .widget-output")
    assert page.locator(".dpteach-static").count() == 0, "JupyterLab should show the live widget"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "jupyterlab-widget.png")


# What JupyterLab shows of the book's MyST markup: each rendered Markdown cell, its admonitions.
MARKUP = """() => {
  const views = [...document.querySelectorAll(
    '.jp-MarkdownCell .jp-RenderedMarkdown, .jp-MarkdownCell .jp-InputArea > .myst')];
  const admonitions = [...document.querySelectorAll('.jp-MarkdownCell .myst-admonition')];
  return {
    views: views.length,
    raw: views.filter(v => /[{](admonition|cite)[}]/.test(v.textContent))
              .map(v => v.textContent.slice(0, 80)),
    objectives: admonitions.filter(a => a.tagName === 'ASIDE'
                                        && a.textContent.startsWith('Learning objectives')).length,
    solutions: admonitions.filter(a => a.tagName === 'DETAILS'
                                       && a.textContent.startsWith('Solution')).map(a => a.open),
  };
}"""


def _book_markup_renders(page, name: str) -> None:
    """JupyterLab renders the book's MyST (jupyterlab-myst, in the lab extra): the learning
    objectives are an admonition, not a code block of raw source; every solution is a folded
    dropdown; no rendered cell shows a directive's or a role's source."""
    cells = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4).cells
    markdown = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    solutions = len(re.findall(r"\{admonition\}\s+Solution", markdown))
    with contextlib.suppress(sync_api.TimeoutError):  # checked below, with a clearer message
        page.wait_for_function(  # Markdown cells render one after another
            f"() => ({MARKUP})().solutions.length >= {solutions}", timeout=60_000
        )
    markup = page.evaluate(MARKUP)
    assert markup["views"] and not markup["raw"], (
        f"{name}: MyST markup shown as source in JupyterLab (is jupyterlab-myst installed?): "
        f"{markup['raw'][:2]}"
    )
    assert markup["objectives"] == 1, f"{name}: the learning objectives are no admonition"
    assert len(markup["solutions"]) == solutions and not any(markup["solutions"]), (
        f"{name}: {solutions} solutions, as folded dropdowns: {markup['solutions']}"
    )


@pytest.mark.parametrize("name", CHAPTER_NOTEBOOKS)
def test_each_chapter_main_widget_is_live_in_jupyterlab(live_page, lab_url, name):
    """Open the chapter in JupyterLab: its MyST markup renders (admonitions, folded solutions).
    Run all its cells (the Markdown and what its widgets need, :func:`_widget_copy`): every
    explorable shows its live figure, and dragging the main widget's first slider has the kernel
    redraw it (the live version of the website's precomputed one)."""
    page = live_page
    _open_when_idle(page, lab_url + f"lab/workspaces/{name}/tree/{name}.ipynb?reset")  # alone
    _book_markup_renders(page, name)
    started = (
        "() => [...document.querySelectorAll('.jp-InputPrompt')]"
        ".some(p => /\\[[*0-9]/.test(p.textContent))"
    )
    for _ in range(3):  # a menu opened while the notebook is still settling can be lost
        _answer_dialogs(page)
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        with contextlib.suppress(sync_api.TimeoutError):
            page.wait_for_function(started, timeout=20_000)
            break
    main = ".dpteach-explorable"
    try:
        _figure_changes_when_dragged(page, f"{main} .widget-output", main, timeout=300_000)
    except Exception:
        page.screenshot(path=SCREENSHOTS / f"jupyterlab-{name}-failed.png", full_page=True)
        raise
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=300_000)
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    tracebacks = [e for e in errors.all_text_contents() if "Traceback" in e or "Error" in e]
    assert tracebacks == [], f"{name}: a cell failed in JupyterLab: {tracebacks[:1]}"
    cells = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4).cells
    explorables = sum("widgets.explorable(" in c.source for c in cells if c.cell_type == "code")
    live = page.locator(f"{main} .widget-output img").count()
    assert live == explorables >= 1, f"{name}: {live} of {explorables} explorables are live"
    page.screenshot(path=SCREENSHOTS / f"jupyterlab-{name}.png")
    page.locator(".lm-MenuBar-itemLabel", has_text="Kernel").first.click()  # free the CPU
    page.locator(".lm-Menu-itemLabel", has_text="Shut Down Kernel").first.click()
    page.wait_for_function(  # the kernel gone, or a confirmation (where Lab asks for one)
        "() => document.querySelector('.jp-Dialog, "
        '.jp-Notebook-ExecutionIndicator[data-status="unknown"]\')',
        timeout=30_000,
    )
    if page.locator(".jp-Dialog").count():
        page.locator(".jp-Dialog-button.jp-mod-accept").first.click()
