"""Issue 27: a slider move's figure update, as a reader feels it in JupyterLab in the browser.

Each chapter (a copy without saved outputs) is opened in a JupyterLab served on loopback and run
with Run All in headless Chromium (Debian's ``chromium``, driven by Playwright). Then every slider
of every explorable (``.dpteach-explorable``: the chapter's live figures) is moved by keyboard,
as a reader may, one step of the noUiSlider page (PageUp, five slider steps) at a time from its
default to its top end, then to its bottom end (Home), then back up one page: each move is timed
from the key press to the moment the figure's image changes in the page, so the time includes
the kernel's draw and render, the widget message, and the browser's decoding. A move that does
not change the slider's readout (already at that end) is not timed.

Goal (issue 27): median <= 0.25 s and worst <= 0.6 s per chapter, on 2 cores.

Usage: python benchmarks/bench_lab.py [--quick] [--json out.json] [chapter-stem ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9A]*_*.ipynb"))
GOAL_MEDIAN, GOAL_MAX = 0.25, 0.6  # seconds
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update"]  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_chapters(folder: Path, names: list[str]) -> None:
    """Copies of the chapters ``names`` in ``folder``, without their saved outputs: whatever
    runs there, ran."""
    for name in names:
        nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        nb.metadata.pop("widgets", None)
        nbformat.write(nb, folder / f"{name}.ipynb")


def start_lab(folder: Path) -> tuple[subprocess.Popen, str]:
    """A JupyterLab serving ``folder`` on loopback, its settings and workspaces inside it (every
    cell rendered, no news, no update check): the process and its URL."""
    settings = folder / ".settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    port = _free_port()
    env = dict(os.environ, MPLBACKEND="module://matplotlib_inline.backend_inline",
               JUPYTER_CONFIG_DIR=str(folder / ".config"),
               JUPYTER_RUNTIME_DIR=str(folder / ".runtime"))  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--allow-root",
         "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password=",
         f"--ServerApp.root_dir={folder}", "--LabApp.news_url=None",
         "--LabApp.extension_manager=readonly",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         f"--LabApp.user_settings_dir={folder / '.settings'}",
         f"--LabApp.workspaces_dir={folder / '.workspaces'}"],
        cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, f"http://127.0.0.1:{port}/"
        time.sleep(0.3)
    proc.terminate()
    raise RuntimeError("JupyterLab did not start within 90 s")


def _run_all(page, url: str) -> None:
    page.goto(url, timeout=120_000)
    idle = ".jp-Notebook-ExecutionIndicator[data-status='idle']"
    page.wait_for_selector(idle, timeout=120_000)
    for dialog in page.locator(".jp-Dialog .jp-mod-accept").all():
        dialog.click()
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='busy']", timeout=30_000)
    page.wait_for_selector(idle, timeout=600_000)
    # every cell has run: no prompt still waiting ("[*]") and the last one numbered
    page.wait_for_function(
        "() => ![...document.querySelectorAll('.jp-InputPrompt')]"
        ".some(p => p.textContent.includes('*'))",
        timeout=600_000,
    )


def _move(page, widget, handle, key: str) -> float | None:
    """Press ``key`` on a slider's handle; the seconds until the widget's figure changed, or
    None when the slider did not move (already at that end)."""
    output = widget.locator(".widget-output").first.element_handle()
    before = output.evaluate("o => o.querySelector('img')?.getAttribute('src')")
    position = handle.get_attribute("aria-valuenow")
    handle.focus()
    start = time.perf_counter()
    page.keyboard.press(key)
    if handle.get_attribute("aria-valuenow") == position:
        return None
    page.wait_for_function(
        "([o, src]) => { const img = o.querySelector('img');"
        " return !img || img.getAttribute('src') !== src; }",
        arg=[output, before], polling="raf", timeout=60_000,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    if output.evaluate("o => !o.querySelector('img')"):
        raise RuntimeError(f"the move ({key}) showed no figure: {output.text_content()[:300]}")
    return seconds


def _sweep(page, pages: int) -> dict[str, list[float]]:
    """Move every slider of every explorable over its range; the seconds of each move by
    slider ("figure k: label")."""
    times: dict[str, list[float]] = {}
    widgets = page.locator(".dpteach-explorable")
    for k in range(widgets.count()):
        widget = widgets.nth(k)
        sliders = widget.locator(".widget-slider")
        for j in range(sliders.count()):
            slider = sliders.nth(j)
            label = slider.locator(".widget-label").first.text_content().strip()
            handle = slider.locator(".noUi-handle").first
            handle.scroll_into_view_if_needed()
            keys = ["PageUp"] * pages + ["End", "Home", "PageUp"]
            moves = [_move(page, widget, handle, key) for key in keys]
            times[f"figure {k + 1}: {label}"] = [t for t in moves if t is not None]
            page.wait_for_timeout(1_200)  # a reader's pause: the widget collects garbage
    return times


def measure(names: list[str], *, pages: int = 4) -> dict[str, dict]:
    from playwright import sync_api

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        copy_chapters(folder, names)
        proc, url = start_lab(folder)
        try:
            with sync_api.sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
                for name in names:
                    context = browser.new_context(viewport={"width": 1200, "height": 900})
                    page = context.new_page()
                    _run_all(page, f"{url}lab/workspaces/{name}/tree/{name}.ipynb?reset")
                    page.wait_for_timeout(1_500)
                    by_slider = _sweep(page, pages)
                    flat = [t for ts in by_slider.values() for t in ts]
                    results[name] = {
                        "moves": len(flat),
                        "median": statistics.median(flat) if flat else None,
                        "worst": max(flat) if flat else None,
                        "by_slider": {k: [round(t, 3) for t in v] for k, v in by_slider.items()},
                    }
                    print(f"{name:40s} {len(flat):4d} moves  median {results[name]['median']:.3f}"
                          f" s  worst {results[name]['worst']:.3f} s", flush=True)  # fmt: skip
                    page.locator(".lm-MenuBar-itemLabel", has_text="Kernel").first.click()
                    page.locator(".lm-Menu-itemLabel", has_text="Shut Down Kernel").first.click()
                    for button in page.locator(".jp-Dialog .jp-mod-accept").all():
                        button.click()
                    context.close()
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    return results


def run(quick: bool = False) -> list[dict]:
    """Rows for ``benchmarks/run_all.py``: each chapter's median and worst move."""
    results = measure(CHAPTERS[:2] if quick else CHAPTERS, pages=1 if quick else 4)
    rows = []
    for name, r in results.items():
        for stat, goal in (("median", GOAL_MEDIAN), ("worst", GOAL_MAX)):
            rows.append({"measure": f"JupyterLab slider move, {name}: {stat} of {r['moves']}",
                         "value": r[stat], "unit": "s", "goal": f"<= {goal} s",
                         "met": r[stat] is not None and r[stat] <= goal})  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="chapter stems (default: all)")
    parser.add_argument("--quick", action="store_true", help="one page up per slider")
    parser.add_argument("--json", type=Path, help="write the per-move times here")
    args = parser.parse_args()
    results = measure(args.chapters or CHAPTERS, pages=1 if args.quick else 4)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
