"""The printed book (``make pdf``, ``scripts/print_pdf.py``) is one a reader can use (issue 24):

* no link points at the temporary print server (localhost); cross-references and citations
  jump inside the PDF;
* an outline (bookmarks) with every page of the book, a table of contents on page 1, and a
  page number at the foot of every page;
* no text runs beyond the right margin (code and output wrap; ``pdftotext -bbox`` gives every
  word's box), and no page ends in an empty code box (its cell moved to the next page).

The whole book is printed once for the module (about a minute and a half), with the website and
the Chromium of ``tests/test_browser.py``. Needs pikepdf, and poppler's ``pdftotext`` and
``pdftoppm``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

tb = pytest.importorskip("test_browser")  # skips the module, as it does, without Chromium
pikepdf = pytest.importorskip("pikepdf", reason="pikepdf is not installed (the browser extra)")

pytestmark = pytest.mark.browser
browser, site_url = tb.browser, tb.site_url  # the shared fixtures
PDFTOTEXT = shutil.which("pdftotext")
RIGHT_MARGIN_PT = 12 / 25.4 * 72  # print_pdf.MARGIN["right"], 12 mm


@pytest.fixture(scope="module")
def book(browser, site_url, tmp_path_factory):
    """The whole book printed once: (path, the printer's report)."""
    if PDFTOTEXT is None:
        pytest.skip("pdftotext is not installed (apt-get install poppler-utils)")
    out = tmp_path_factory.mktemp("pdf") / "dpteach.pdf"
    info = tb.print_pdf.print_book(out, browser=browser)
    return out, info


def _links(pdf) -> list:
    return [a for page in pdf.pages for a in page.obj.get("/Annots", []) if a.Subtype == "/Link"]


def test_every_page_is_printed_offline_with_its_math_and_figures(book):
    path, info = book
    pages = tb.print_pdf.book_pages()
    chapters = [p for p in pages if re.match(r"notebooks/(\d\d|A)_", p)]
    assert path.read_bytes().startswith(b"%PDF") and info["chapters"] == len(pages), info
    assert info["formulas"] > 100 * len(chapters) and info["images"] > len(chapters), info
    assert info["blocked"] == [], f"printing reached for the network: {info['blocked']}"


def test_no_link_points_at_the_print_server_and_references_resolve_inside(book):
    path, info = book
    with pikepdf.open(path) as pdf:
        links = _links(pdf)
        uris = [str(a.A.URI) for a in links if "/A" in a and "/URI" in a.A]
        local = [u for u in uris if re.match(r"https?://(127\.|localhost|\[::1\])", u)]
        assert local == [], f"{len(local)} links point at the print server: {local[:3]}"
        inside = [a for a in links if "/Dest" in a]
        pages = {p.objgen for p in pdf.pages}
        assert all(a.Dest[0].objgen in pages for a in inside), "a link jumps to no page"
    # Every citation and cross-reference of the website is a link inside the book.
    assert info["internal"] == len(inside) > 100, info
    assert info["blocked"] == [], f"printing reached for the network: {info['blocked']}"


def test_outline_and_contents_list_every_chapter(book):
    path, info = book
    titles = [_title(name) for name in tb.print_pdf.book_pages()]
    assert 1 <= info["contents"] <= 3, info
    with pikepdf.open(path) as pdf, pdf.open_outline() as outline:
        top = [item.title for item in outline.root]
        sections = sum(len(item.children) for item in outline.root)
    assert top == ["Contents", *titles], top
    assert sections > 3 * len(titles), "chapters' sections missing from the outline"
    contents = "".join(_text(path, page) for page in range(1, info["contents"] + 1))
    for title in titles:
        assert " ".join(title.split()[:3]) in " ".join(contents.split()), f"{title} not in contents"


def test_every_page_has_its_number(book):
    path, info = book
    pages = _text(path).split("\f")[: info["pages"]]
    assert len(pages) == info["pages"] > 20
    unnumbered = [i for i, text in enumerate(pages, start=1)
                  if not re.search(rf"(^|\n)\s*{i}\s*$", text.rstrip())]  # fmt: skip
    assert unnumbered == [], f"pages without their number at the foot: {unnumbered[:10]}"


def test_no_text_beyond_the_right_margin(book):
    """Two ways: in the print layout, no box (code, output, equation, table) is wider than its
    content lets it be, so nothing is cut at its edge; in the PDF, no word ends in the margin."""
    path, info = book
    assert info["cut"] == [], f"cut at the right edge (page, text): {info['cut'][:8]}"
    words = subprocess.run([PDFTOTEXT, "-bbox", str(path), "-"], capture_output=True, text=True,
                           check=True).stdout  # fmt: skip
    beyond, number = [], 0
    for line in words.splitlines():
        if line.lstrip().startswith("<page "):
            number += 1
            width = float(re.search(r'width="([\d.]+)"', line).group(1))
        elif m := re.search(
            r'<word xMin="[\d.]+" yMin="[\d.]+" xMax="([\d.]+)"[^>]*>(.*)</word>', line
        ):
            if float(m.group(1)) > width - RIGHT_MARGIN_PT + 2:  # 2 pt: a glyph's side bearing
                beyond.append((number, m.group(2)))
    assert beyond == [], f"{len(beyond)} words beyond the right margin (page, word): {beyond[:8]}"


def test_no_page_ends_in_an_empty_code_box(book, tmp_path):
    """A cell moved whole to the next page leaves nothing behind: no page's last block is a
    shaded box (code, output) a centimetre or more high with no ink in it."""
    import numpy as np
    from PIL import Image

    path, info = book
    subprocess.run(["pdftoppm", "-gray", "-r", "40", str(path), str(tmp_path / "p")], check=True)
    empty = []
    for number, image in enumerate(sorted(tmp_path.glob("p-*.pgm")), start=1):
        grey = np.asarray(Image.open(image)).astype(int)
        body = grey[: grey.shape[0] * (297 - 18) // 297, 40:-40]  # above the foot's margin
        inked = np.flatnonzero((body < 250).any(axis=1))
        if not len(inked):
            continue
        top = last = inked[-1]
        while top > 0 and 200 < np.median(body[top]) < 250:  # a shaded row of the box
            top -= 1
        # 16 rows: 1 cm; ink: anything well below the box's shade (244), a grey comment too
        if last - top >= 16 and not (body[top + 1 : last + 1] < 200).any():
            empty.append(number)
    assert len(empty) == 0 and number == info["pages"], f"pages ending in an empty box: {empty}"


def _text(path, page: int | None = None) -> str:
    pages = ["-f", str(page), "-l", str(page)] if page else []
    command = [PDFTOTEXT, "-layout", *pages, str(path), "-"]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


class _H1(HTMLParser):
    """The text of a page's first <h1> (its title), without the heading's link mark."""

    def __init__(self):
        super().__init__()
        self.depth, self.done, self.skip, self.text = 0, False, 0, ""

    def handle_starttag(self, tag, attrs):
        if tag == "h1" and not self.done:
            self.depth = 1
        elif self.depth and "headerlink" in (dict(attrs).get("class") or ""):
            self.skip = 1

    def handle_endtag(self, tag):
        if tag == "h1" and self.depth:
            self.depth, self.done = 0, True
        elif tag == "a" and self.skip:
            self.skip = 0

    def handle_data(self, data):
        if self.depth and not self.skip:
            self.text += data


def _title(name: str) -> str:
    parser = _H1()
    parser.feed((tb.ROOT / "_build" / "html" / f"{name}.html").read_text(encoding="utf-8"))
    return " ".join(parser.text.split())
