"""Print the whole book to one PDF, offline: ``make pdf``.

Usage: python scripts/print_pdf.py [--out _build/dpteach.pdf]

Prints every page of the built website (``_build/html``, in the order of ``notebooks/_toc.yml``)
with Debian's Chromium, served on loopback with every other request blocked, once MathJax has
typeset the mathematics and the saved widgets have drawn their default figures; then joins the
pages with ``qpdf`` (Debian package ``qpdf``). Solutions are printed open (this is the
instructor's book; ``make student`` makes the students' notebooks). Figures made by
``dpteach.viz.explorable`` print their static version at the default slider position.
Needs the ``browser`` extra (Playwright, driving the system Chromium; never ``playwright install``).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
LOCAL = ("http://127.0.0.1", "data:", "blob:", "about:")

# Resolves once MathJax (if the page loads it) has typeset everything.
WAIT_FOR_MATH = """async () => {
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) {
    await mj.startup.promise;
    if (mj.typesetPromise) await mj.typesetPromise();
  }
  return document.querySelectorAll("mjx-container").length;
}"""

# True once every saved widget view has been rendered next to its script tag.
WIDGETS_DRAWN = """() => [...document.querySelectorAll(
  'script[type="application/vnd.jupyter.widget-view+json"]')]
  .every(s => s.parentElement.querySelector(".jupyter-widgets"))"""

# Open every collapsed block (solutions, hidden inputs), for the printed page.
OPEN_EVERYTHING = """() => {
  document.querySelectorAll(".toggle-hidden").forEach(e => e.classList.remove("toggle-hidden"));
  document.querySelectorAll("details").forEach(d => { d.open = true; });
  document.querySelectorAll("button.toggle-button").forEach(b => b.remove());
}"""


def _serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def book_pages() -> list[str]:
    """The book's pages in reading order (``notebooks/intro``, ...), from ``_toc.yml``."""
    toc = yaml.safe_load((ROOT / "notebooks" / "_toc.yml").read_text())
    pages = [toc["root"], *(c["file"] for c in toc.get("chapters", []))]
    for part in toc.get("parts", []):
        pages += [c["file"] for c in part["chapters"]]
    return pages


def print_book(out: Path, *, pages: list[str] | None = None, browser=None) -> dict:
    """Print ``pages`` (default: every page of the book) into ``out``, one PDF; return its page
    count, the web pages printed, and the formulas and figures rendered. ``browser``: a
    Playwright Chromium to use (default: launch Debian's)."""
    qpdf = shutil.which("qpdf")
    if qpdf is None:
        sys.exit("print_pdf: qpdf is needed to join the pages (apt-get install qpdf)")
    pages = pages or book_pages()
    missing = [p for p in pages if not (SITE / f"{p}.html").exists()]
    if missing:
        sys.exit(f"print_pdf: build the website first (make book); missing {missing}")
    server, url = _serve(SITE)
    info = {"chapters": len(pages), "formulas": 0, "images": 0, "blocked": []}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            if browser is not None:
                parts = _print_pages(browser, url, pages, Path(tmp), info)
            else:
                from playwright.sync_api import sync_playwright

                chromium = shutil.which("chromium") or shutil.which("chromium-browser")
                if chromium is None:
                    sys.exit("print_pdf: Chromium is needed (apt-get install chromium)")
                with sync_playwright() as p:
                    launched = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
                    parts = _print_pages(launched, url, pages, Path(tmp), info)
                    launched.close()
        finally:
            server.shutdown()
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([qpdf, "--empty", "--pages", *map(str, parts), "--", str(out)], check=True)
    count = subprocess.run([qpdf, "--show-npages", str(out)], check=True, capture_output=True)
    return {"pages": int(count.stdout), **info}


def _print_pages(browser, url: str, pages: list[str], tmp: Path, info: dict) -> list[Path]:
    """Each page to a PDF in ``tmp``, network blocked; tallies formulas and figures in ``info``."""
    context = browser.new_context(viewport={"width": 1000, "height": 1400})
    page = context.new_page()

    def route(r):
        if r.request.url.startswith(LOCAL):
            return r.continue_()
        info["blocked"].append(r.request.url)
        return r.abort()

    page.route("**/*", route)
    parts = []
    for name in pages:
        page.emulate_media(media="screen")
        page.goto(f"{url}{name}.html", wait_until="networkidle", timeout=120_000)
        info["formulas"] += page.evaluate(WAIT_FOR_MATH)
        page.wait_for_function(WIDGETS_DRAWN, timeout=120_000)
        page.evaluate(OPEN_EVERYTHING)
        page.wait_for_load_state("networkidle")
        info["images"] += page.evaluate(
            "() => [...document.images].filter(i => i.naturalWidth > 0).length"
        )
        page.emulate_media(media="print")
        parts.append(tmp / f"{len(parts):02d}.pdf")
        margin = {"top": "15mm", "bottom": "15mm", "left": "12mm", "right": "12mm"}
        page.pdf(path=str(parts[-1]), format="A4", print_background=True, margin=margin)
    context.close()
    return parts


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "dpteach.pdf")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    info = print_book(args.out)
    print(f"print_pdf: {args.out} ({args.out.stat().st_size / 1e6:.1f} MB, {info['pages']} pages "
          f"from {info['chapters']} web pages, {info['formulas']} formulas, {info['images']} "
          f"figures) in {time.perf_counter() - start:.0f} s")  # fmt: skip
    if info["blocked"]:
        print(f"print_pdf: blocked network requests: {info['blocked']}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
