"""Print the whole book to one PDF, offline: ``make pdf``.

Usage: python scripts/print_pdf.py [--out _build/dpteach.pdf]

Prints every page of the built website (``_build/html``, in the order of ``notebooks/_toc.yml``)
with Debian's Chromium, served on loopback with every other request blocked, once MathJax has
typeset the mathematics and the saved widgets have drawn their default figures; then joins the
pages with pikepdf (qpdf's Python binding) into a book a reader can use:

* a table of contents (chapters and their sections, with page numbers and links) on page 1,
  bookmarks (the PDF outline) for every chapter and its sections, a page number on every page;
* links between pages, to sections and to citations jump inside the PDF; a link to any other
  file of the website goes to the published site when ``DPTEACH_SITE_URL`` is set (its address,
  e.g. https://<owner>.github.io/<repo>/) and is dropped otherwise: never to the print server;
* the print style of ``notebooks/_static/dpteach.css`` wraps code and output lines instead of
  cutting them, and keeps cells and slider rows with their figures on one page where they fit.

Solutions are printed open (this is the instructor's book; ``make student`` makes the students'
notebooks). Figures made by ``dpteach.widgets.explorable`` print their static version at the default
slider position. Needs the ``browser`` extra (Playwright, driving the system Chromium; never
``playwright install``, and pikepdf).
"""

from __future__ import annotations

import argparse
import functools
import html
import http.server
import os
import shutil
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import yaml

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
LOCAL = ("http://127.0.0.1", "data:", "blob:", "about:")
MARGIN = {"top": "15mm", "bottom": "18mm", "left": "12mm", "right": "12mm"}
# The pages are laid out (and measured, below) at the width they are printed at: A4 less margins.
PRINT_WIDTH_PX = round((210 - 12 - 12) / 25.4 * 96)
PRINT_HEIGHT_PX = round((297 - 15 - 18) / 25.4 * 96)
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


# Chromium writes a named destination only for the target of a link within the same page: a
# hidden same-page link to every id makes each section, equation and reference a destination.
# Returns the page's title and its sections (id, title) for the outline and the contents.
MARK_DESTINATIONS = """() => {
  const article = document.querySelector("article.bd-article") || document.body;
  const box = document.createElement("div");
  box.style.display = "none";
  for (const el of article.querySelectorAll("[id]")) {
    const a = document.createElement("a");
    a.href = "#" + el.id;
    box.appendChild(a);
  }
  document.body.appendChild(box);
  const text = h => { const c = h.cloneNode(true);
    c.querySelectorAll(".headerlink, .toc-backref").forEach(e => e.remove());
    return c.textContent.replace(/\\s+/g, " ").trim(); };
  const h1 = article.querySelector("h1");
  const sections = [...article.querySelectorAll("section > h2")]
    .map(h => [h.parentElement.id, text(h)]);
  return {title: h1 ? text(h1) : document.title, sections: sections};
}"""


# In the print layout: a box the print style keeps on one page but which is taller than a page
# may break anywhere inside (else Chromium leaves its empty frame on the page before); a display
# equation wider than the page is scaled down to fit (MathJax 3 does not break lines). Then every
# box whose content is still wider than the box, and so would be cut at its edge, is reported.
FIT_FOR_PRINT = """(pageHeight) => {
  const kept = 'div.cell_input, div.cell_output div.output, div.math, figure, table';
  for (const box of document.querySelectorAll(kept)) {  // taller than a page: it must break
    if (box.getBoundingClientRect().height > 0.95 * pageHeight) {
      for (const el of [box, ...box.querySelectorAll("*")]) el.style.breakInside = "auto";
    }
  }
  for (const math of document.querySelectorAll('mjx-container[display="true"]')) {
    const room = math.parentElement.clientWidth, need = math.scrollWidth;
    if (need > room) math.style.fontSize = `${Math.floor(100 * room / need) - 1}%`;
  }
  const boxes = 'pre, div.math, mjx-container[display="true"], table, div.output, .dpteach-static';
  return [...document.querySelectorAll(boxes)]
    .filter(el => el.getClientRects().length && el.scrollWidth > el.clientWidth + 1)
    .map(el => el.textContent.trim().split("\\n")[0].slice(0, 80));
}"""


@dataclass
class Part:
    """One web page printed: its PDF, title, sections, and where it starts in the book."""

    name: str
    path: Path
    title: str
    sections: list = field(default_factory=list)
    first: int = 0  # index of its first page in the book


def book_pages() -> list[str]:
    """The book's pages in reading order (``notebooks/intro``, ...), from ``_toc.yml``."""
    toc = yaml.safe_load((ROOT / "notebooks" / "_toc.yml").read_text())
    pages = [toc["root"], *(c["file"] for c in toc.get("chapters", []))]
    for part in toc.get("parts", []):
        pages += [c["file"] for c in part["chapters"]]
    return pages


def print_book(out: Path, *, pages: list[str] | None = None, browser=None) -> dict:
    """Print ``pages`` (default: every page of the book) into ``out``, one PDF with contents,
    outline and page numbers; return its page count, the web pages printed, the formulas and
    figures rendered, and the links resolved inside the book, sent to the site, or dropped.
    ``browser``: a Playwright Chromium to use (default: launch Debian's)."""
    import pikepdf  # noqa: F401  (fail early, before printing, if it is missing)

    pages = pages or book_pages()
    missing = [p for p in pages if not (SITE / f"{p}.html").exists()]
    if missing:
        sys.exit(f"print_pdf: build the website first (make book); missing {missing}")
    server, url = _serve(SITE)
    info = {"chapters": len(pages), "formulas": 0, "images": 0, "blocked": [], "cut": []}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            if browser is not None:
                info |= _print_and_join(browser, url, pages, Path(tmp), out, info)
            else:
                from playwright.sync_api import sync_playwright

                chromium = shutil.which("chromium") or shutil.which("chromium-browser")
                if chromium is None:
                    sys.exit("print_pdf: Chromium is needed (apt-get install chromium)")
                with sync_playwright() as p:
                    launched = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
                    info |= _print_and_join(launched, url, pages, Path(tmp), out, info)
                    launched.close()
        finally:
            server.shutdown()
    return info


def _print_and_join(browser, url, pages, tmp: Path, out: Path, info: dict) -> dict:
    context = browser.new_context(viewport={"width": PRINT_WIDTH_PX, "height": 1400})
    page = context.new_page()

    def route(r):
        if r.request.url.startswith(LOCAL):
            return r.continue_()
        info["blocked"].append(r.request.url)
        return r.abort()

    page.route("**/*", route)
    try:
        parts = [_print_page(page, url, name, tmp, info) for name in pages]
        contents = _print_contents(page, url, parts, tmp)
    finally:
        context.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    return _join(contents, parts, url, out)


def _print_page(page, url: str, name: str, tmp: Path, info: dict) -> Part:
    page.emulate_media(media="screen")
    page.goto(f"{url}{name}.html", wait_until="load", timeout=120_000)
    info["formulas"] += page.evaluate(WAIT_FOR_MATH)
    page.wait_for_function(WIDGETS_DRAWN, timeout=120_000)
    page.evaluate(OPEN_EVERYTHING)
    page.wait_for_load_state("networkidle")
    info["images"] += page.evaluate(
        "() => [...document.images].filter(i => i.naturalWidth > 0).length"
    )
    marks = page.evaluate(MARK_DESTINATIONS)
    page.emulate_media(media="print")
    info["cut"] += [(name, text) for text in page.evaluate(FIT_FOR_PRINT, PRINT_HEIGHT_PX)]
    path = tmp / f"{name.replace('/', '_')}.pdf"
    page.pdf(path=str(path), format="A4", print_background=True, margin=MARGIN)
    return Part(name, path, marks["title"], [tuple(s) for s in marks["sections"]])


def _destinations(pdf) -> dict[str, tuple[int, float]]:
    """A printed page's named destinations: name -> (page index, height on the page)."""
    index = {page.objgen: i for i, page in enumerate(pdf.pages)}
    found = {}
    for name, dest in (pdf.Root.get("/Dests") or {}).items():
        page = index.get(dest[0].objgen)
        if page is not None:
            found[name[1:]] = (page, float(dest[3]))
    return found


def _contents_html(parts: list[Part], offset: int, title: str, url: str) -> str:
    """The table of contents: each chapter and its sections, linked, with its page number."""
    rows = []
    for part in parts:
        rows.append(f'<li class="chapter"><a href="{url}{part.name}.html">{html.escape(part.title)}'
                    f'</a><span>{part.first + offset + 1}</span></li>')  # fmt: skip
        for anchor, heading, number in part.sections:
            rows.append(f'<li><a href="{url}{part.name}.html#{anchor}">{html.escape(heading)}</a>'
                        f"<span>{number + offset + 1}</span></li>")  # fmt: skip
    return f"""<!doctype html><html><head><meta charset="utf-8"><style>
body {{ font-family: sans-serif; font-size: 10.5pt; margin: 0; }}
h1 {{ font-size: 20pt; font-weight: 500; margin: 0 0 .2em; }}
h2 {{ font-size: 13pt; font-weight: 500; margin: 1.2em 0 .6em; }}
ul {{ list-style: none; padding: 0; margin: 0; }}
li {{ display: flex; padding: .12em 0 .12em 1.5em; break-inside: avoid; }}
li.chapter {{ padding-left: 0; margin-top: .6em; font-weight: 600; }}
li a {{ color: inherit; text-decoration: none; flex: 1; }}
li span {{ padding-left: 1em; font-variant-numeric: tabular-nums; }}
</style></head><body><h1>{html.escape(title)}</h1><h2>Contents</h2>
<ul>{"".join(rows)}</ul></body></html>"""


def _print_contents(page, url: str, parts: list[Part], tmp: Path) -> Path:
    """Print the table of contents; the book's page numbers count its own pages too."""
    import pikepdf

    first = 0
    for part in parts:
        with pikepdf.open(part.path) as pdf:
            dests, part.first = _destinations(pdf), first
            part.sections = [(a, t, first + dests[a][0]) for a, t in part.sections if a in dests]
            first += len(pdf.pages)
    title = yaml.safe_load((ROOT / "book.yml").read_text())["title"]
    path, length = tmp / "contents.pdf", 1
    for _ in range(3):  # its own length shifts the numbers it prints (rarely its length)
        page.set_content(_contents_html(parts, length, title, url))  # links: as the pages'

        page.pdf(path=str(path), format="A4", margin=MARGIN)
        with pikepdf.open(path) as pdf:
            if len(pdf.pages) == length:
                return path
            length = len(pdf.pages)
    raise RuntimeError("print_pdf: the table of contents does not settle on a length")


def _join(contents: Path, parts: list[Part], url: str, out: Path) -> dict:
    """One PDF: the contents, then every part; links resolved, outline, page numbers."""
    import pikepdf

    book = pikepdf.new()
    sources = [pikepdf.open(contents), *(pikepdf.open(part.path) for part in parts)]
    try:
        offset, spans, targets = 0, [], {}  # spans: (first, last, part name) of each source
        for source, name in zip(sources, [None, *(part.name for part in parts)]):
            dests = _destinations(source)
            if name is not None:
                targets[name] = (offset, dests)
            spans.append((offset, offset + len(source.pages), name, dests))
            with warnings.catch_warnings():  # named destinations are resolved by hand below
                warnings.simplefilter("ignore", pikepdf.PageCopyWarning)
                book.pages.extend(source.pages)
            offset += len(source.pages)
        counts = _resolve_links(book, spans, targets, url)
        _outline(book, parts, targets)
        _number_pages(book)
        book.save(out)
    finally:
        for source in sources:
            source.close()
    return {"pages": len(book.pages), "contents": len(sources[0].pages), **counts}


def _resolve_links(book, spans, targets, url: str) -> dict:
    """Every link that pointed at the print server now jumps inside the book, goes to the
    published site (``DPTEACH_SITE_URL``) or, for neither, is removed (its text stays)."""
    import pikepdf

    site = os.environ.get("DPTEACH_SITE_URL", "").rstrip("/")
    counts = {"internal": 0, "site": 0, "dropped": 0, "external": 0}

    def goto(index: int, top: float | None):
        page = book.pages[index].obj
        return pikepdf.Array([page, pikepdf.Name.XYZ, None, top, None])

    for first, last, _name, dests in spans:
        for index in range(first, last):
            page = book.pages[index]
            kept = pikepdf.Array()
            for annot in page.obj.get("/Annots", pikepdf.Array()):
                action = annot.get("/A")
                if "/Dest" in annot and isinstance(annot.Dest, pikepdf.Name | pikepdf.String):
                    target = dests.get(str(annot.Dest).lstrip("/"))
                    if target is None:
                        counts["dropped"] += 1
                        continue
                    annot.Dest = goto(first + target[0], target[1])
                    counts["internal"] += 1
                elif action is not None and str(action.get("/URI", "")).startswith(url):
                    address = str(action.URI)[len(url) :]
                    path, _, fragment = address.partition("#")
                    name = unquote(path).removesuffix(".html")
                    if name in targets:
                        start, part_dests = targets[name]
                        where = part_dests.get(unquote(fragment), (0, None))
                        del annot["/A"]
                        annot.Dest = goto(start + where[0], where[1])
                        counts["internal"] += 1
                    elif site:
                        action.URI = pikepdf.String(f"{site}/{address}")
                        counts["site"] += 1
                    else:
                        counts["dropped"] += 1
                        continue
                elif action is not None and "/URI" in action:
                    counts["external"] += 1
                kept.append(annot)
            if "/Annots" in page.obj:
                page.obj.Annots = book.make_indirect(kept)
    return counts


def _outline(book, parts: list[Part], targets) -> None:
    """Bookmarks: the contents, each chapter, and each chapter's sections."""
    from pikepdf import OutlineItem, PageLocation

    with book.open_outline() as outline:
        outline.root.append(OutlineItem("Contents", 0))
        for part in parts:
            start, dests = targets[part.name]
            item = OutlineItem(part.title, start)
            for anchor, heading, _ in part.sections:
                page, top = dests[anchor]
                item.children.append(OutlineItem(heading, start + page, PageLocation.XYZ,
                                                 top=top))  # fmt: skip
            outline.root.append(item)


def _number_pages(book) -> None:
    """A page number at the foot of every page (Helvetica, centred)."""
    import pikepdf

    font = book.make_indirect(pikepdf.Dictionary(
        Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica,
        Encoding=pikepdf.Name.WinAnsiEncoding,
    ))  # fmt: skip
    for number, page in enumerate(book.pages, start=1):
        name = page.add_resource(font, pikepdf.Name.Font, prefix="PageNo")
        box = [float(v) for v in page.mediabox]
        text = str(number)
        x = (box[0] + box[2]) / 2 - 0.556 * 9 * len(text) / 2  # Helvetica digits: 0.556 em
        stream = f"Q q BT {name} 9 Tf 0.4 g {x:.2f} {box[1] + 24:.2f} Td ({text}) Tj ET Q"
        page.contents_add(pikepdf.Stream(book, b"q "), prepend=True)  # the page's own state,
        page.contents_add(pikepdf.Stream(book, stream.encode()), prepend=False)  # restored


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "dpteach.pdf")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    info = print_book(args.out)
    print(f"print_pdf: {args.out} ({args.out.stat().st_size / 1e6:.1f} MB, {info['pages']} pages "
          f"from {info['chapters']} web pages, {info['formulas']} formulas, {info['images']} "
          f"figures) in {time.perf_counter() - start:.0f} s")  # fmt: skip
    print(f"print_pdf: {info['contents']} page(s) of contents; links: {info['internal']} inside "
          f"the book, {info['site']} to DPTEACH_SITE_URL, {info['external']} elsewhere, "
          f"{info['dropped']} dropped (to no page of the book, no site address set)")  # fmt: skip
    if info["cut"]:
        print(f"print_pdf: cut at the right edge (page, text): {info['cut']}", file=sys.stderr)
    if info["blocked"]:
        print(f"print_pdf: blocked network requests: {info['blocked']}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
