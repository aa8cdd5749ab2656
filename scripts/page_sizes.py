"""The size of every page of the built website, with what it alone loads: ``make sizes``.

Usage: python scripts/page_sizes.py [--budget-mb 5]   (exit status 1 if a page is over budget)

For each page of ``_build/html/notebooks``: the HTML (saved outputs, widget state and the frames
of precomputed sliders are inlined in it), plus the images it references from ``_images``; and
the number of precomputed slider figures and positions on it. Assets every page shares (MathJax,
the theme, the widget manager: ``_static``) are reported once, separately.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
SOURCES = (
    "notebooks/*.ipynb",
    "notebooks/*.md",
    "notebooks/_toc.yml",
    "notebooks/_static/*",
    "book.yml",
    "scripts/book_extension.py",
)


@dataclass
class PageSize:
    name: str
    html_bytes: int
    image_bytes: int
    static_figures: int
    positions: int

    @property
    def total(self) -> int:
        return self.html_bytes + self.image_bytes


def ensure_site(python: str = sys.executable) -> Path:
    """``_build/html``, rebuilt by ``scripts/build_book.sh`` when a source is newer than it or it
    was built for another repository address (``DPTEACH_REPOSITORY_URL``). Processes that ask at
    once (the test suite's parallel workers) wait on a lock file: the site is built once."""
    SITE.parent.mkdir(parents=True, exist_ok=True)
    with open(SITE.parent / ".site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        return _ensure_site(python)


def _ensure_site(python: str) -> Path:
    index, repository = SITE / "index.html", SITE / ".repository"
    sources = [p for pattern in SOURCES for p in ROOT.glob(pattern)]
    fresh = index.exists() and max(p.stat().st_mtime for p in sources) <= index.stat().st_mtime
    wanted = os.environ.get("DPTEACH_REPOSITORY_URL", "")
    if fresh and repository.exists() and repository.read_text() == wanted:
        return SITE
    jupyter_book = shutil.which("jupyter-book", path=str(Path(python).parent))
    if jupyter_book is None:
        raise FileNotFoundError("jupyter-book is not installed (the book extra): cannot build")
    env = dict(os.environ, PATH=f"{Path(jupyter_book).parent}{os.pathsep}{os.environ['PATH']}")
    build = ["bash", str(ROOT / "scripts" / "build_book.sh")]
    subprocess.run(build, env=env, check=True, stdout=sys.stderr)
    return SITE


def static_sliders(html: str) -> list[int]:
    """The number of positions of each precomputed slider figure in a page's HTML."""
    frames = r'<script type="application/json" class="dpteach-frames">(.*?)</script>'
    specs = re.findall(frames, html)
    return [len(json.loads(spec)["index"]) for spec in specs]


def page_sizes(site: Path = SITE) -> list[PageSize]:
    sizes = []
    for page in sorted((site / "notebooks").glob("*.html")):
        html = page.read_text(encoding="utf-8")
        images = set(re.findall(r'src="(?:\.\./)?(_images/[^"]+)"', html))
        positions = static_sliders(html)
        sizes.append(PageSize(
            name=page.stem,
            html_bytes=page.stat().st_size,
            image_bytes=sum((site / src).stat().st_size for src in images),
            static_figures=len(positions),
            positions=sum(positions),
        ))  # fmt: skip
    return sizes


def shared_bytes(site: Path = SITE) -> int:
    return sum(p.stat().st_size for p in (site / "_static").rglob("*") if p.is_file())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget-mb", type=float, default=5.0)
    args = parser.parse_args(argv)
    ensure_site()
    budget = args.budget_mb * 2**20
    print(f"{'page':36} {'HTML':>9} {'images':>9} {'total':>9}  sliders (positions)")
    over = []
    for s in page_sizes():
        flag = "  OVER BUDGET" if s.total > budget else ""
        print(f"{s.name:36} {s.html_bytes / 2**20:8.2f}M {s.image_bytes / 2**20:8.2f}M "
              f"{s.total / 2**20:8.2f}M  {s.static_figures} ({s.positions}){flag}")  # fmt: skip
        if flag:
            over.append(s.name)
    print(f"shared by every page (_static): {shared_bytes() / 2**20:.1f} MB; budget per page: "
          f"{args.budget_mb:g} MB (MiB)")  # fmt: skip
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
