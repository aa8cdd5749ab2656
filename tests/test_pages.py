"""The pages that describe the book tell the truth about it: the introduction, the syllabus and the
README list and link every chapter of ``notebooks/_toc.yml``, call none of them unfinished, state
the prerequisites once, and give each chapter a time that follows the syllabus's stated method."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
INTRO, SYLLABUS, README = NOTEBOOKS / "intro.md", NOTEBOOKS / "syllabus.md", ROOT / "README.md"
STALE = re.compile(
    r"in preparation|being written|to be written|coming soon|forthcoming"
    r"|not yet (written|published)|\bTODO\b|\bTBD\b",
    re.IGNORECASE,
)
# The syllabus's method: reading at 70 words a minute, 10 minutes to run the notebook and move its
# sliders, 15 to 30 minutes per exercise; each stated bound within half an hour of the method's.
WORDS_PER_MINUTE, RUN_MINUTES, EXERCISE_MINUTES, SLACK_HOURS = 70, 10, (15, 30), 0.5


def _toc_entries() -> list[str]:
    """Every page of ``_toc.yml`` but the root, in order (chapters, or parts with chapters)."""
    toc = yaml.safe_load((NOTEBOOKS / "_toc.yml").read_text())
    entries = [entry["file"] for entry in toc.get("chapters", [])]
    for part in toc.get("parts", []):
        entries += [entry["file"] for entry in part["chapters"]]
    return [Path(entry).name for entry in entries]


def _chapters() -> list[str]:
    """The chapters of ``_toc.yml``: its numbered or lettered entries (``00_…``, ``A_…``)."""
    return [name for name in _toc_entries() if re.match(r"(\d+|[A-Z])_", name)]


def _page(name: str) -> str:
    """A chapter's file name: a notebook, or a MyST Markdown page."""
    return next(f"{name}{s}" for s in (".ipynb", ".md") if (NOTEBOOKS / f"{name}{s}").exists())


def _links(path: Path) -> set[str]:
    """The targets of the Markdown links of ``path``, without any ``#anchor``."""
    targets = re.findall(r"\]\(([^)\s]+)\)", path.read_text(encoding="utf-8"))
    return {target.split("#")[0] for target in targets}


def _syllabus_rows() -> dict[str, str]:
    """The syllabus table's rows, by the notebook each links."""
    rows = {}
    for line in SYLLABUS.read_text(encoding="utf-8").splitlines():
        if line.startswith("|") and (link := re.search(r"\]\(([^)#]+)\.(ipynb|md)\)", line)):
            rows[link[1]] = line
    return rows


def test_the_table_of_contents_has_the_chapters():
    assert len(_chapters()) >= 7  # 00 to 05 and the appendix


@pytest.mark.parametrize("page", [INTRO, SYLLABUS, README], ids=lambda p: p.name)
def test_every_chapter_is_linked(page):
    prefix = "notebooks/" if page == README else ""
    missing = [name for name in _chapters() if prefix + _page(name) not in _links(page)]
    assert not missing, f"{page.name} does not link {missing}"


def test_the_intro_links_every_page_of_the_book():
    links = _links(INTRO)
    missing = [name for name in _toc_entries() if _page(name) not in links]
    assert not missing, f"intro.md does not link {missing}"


@pytest.mark.parametrize("page", [INTRO, SYLLABUS, README], ids=lambda p: p.name)
def test_no_chapter_is_called_unfinished(page):
    stale = [line for line in page.read_text(encoding="utf-8").splitlines() if STALE.search(line)]
    assert not stale, f"{page.name}: {stale[:2]}"


def test_the_prerequisites_are_stated_once_in_the_syllabus():
    """The syllabus states them under a label; the intro refers to it and names no chapters of
    Dwork and Roth's book of its own (the two pages once disagreed on which)."""
    syllabus = SYLLABUS.read_text(encoding="utf-8")
    assert re.search(r"^\(prerequisites\)=\n## ", syllabus, re.MULTILINE)
    assert "DworkRoth14" in syllabus
    intro = INTRO.read_text(encoding="utf-8")
    assert "<prerequisites>`" in intro
    assert not re.search(r"DworkRoth14.{0,40}Chapters?\s+\d", intro, re.DOTALL)


def test_the_intro_title_is_not_the_book_title():
    """The browser tab shows "<page title> — <book title>": the same words twice otherwise."""
    book = yaml.safe_load((ROOT / "book.yml").read_text())["title"]
    heading = re.search(r"^# (.+)$", INTRO.read_text(encoding="utf-8"), re.MULTILINE)[1]
    assert heading.strip().lower() != book.strip().lower()


def _minutes_asked(name: str) -> tuple[float, float]:
    """What the syllabus's method gives for a chapter, in minutes: its text outside the solutions
    read at 70 words a minute, 10 minutes to run it, 15 to 30 minutes per exercise."""
    path = NOTEBOOKS / _page(name)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        cells = json.loads(text)["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    text = re.sub(r"(`{3,}|:{3,})\{admonition\}\s+Solution.*?\n\1[ \t]*$", "", text,
                  flags=re.DOTALL | re.MULTILINE | re.IGNORECASE)  # fmt: skip
    exercises = len(re.findall(r"^\s*\*\*Exercise\s", text, re.MULTILINE))
    base = len(text.split()) / WORDS_PER_MINUTE + RUN_MINUTES
    return base + exercises * EXERCISE_MINUTES[0], base + exercises * EXERCISE_MINUTES[1]


@pytest.mark.parametrize("name", _chapters())
def test_each_chapter_has_an_honest_time(name):
    row = _syllabus_rows().get(name)
    assert row, f"the syllabus has no row for {name}"
    time = re.search(r"\|\s*(\d+(?:\.\d+)?)–(\d+(?:\.\d+)?) h\s*\|\s*$", row)
    assert time, f"the syllabus gives {name} no time (as 'a–b h' in the last column)"
    stated = float(time[1]), float(time[2])
    low, high = (minutes / 60 for minutes in _minutes_asked(name))
    assert abs(stated[0] - low) <= SLACK_HOURS and abs(stated[1] - high) <= SLACK_HOURS, (
        f"{name}: the syllabus says {stated[0]}–{stated[1]} h, its method gives "
        f"{low:.1f}–{high:.1f} h"
    )


def test_the_syllabus_states_the_method_its_times_follow():
    syllabus = SYLLABUS.read_text(encoding="utf-8")
    assert f"{WORDS_PER_MINUTE} words a minute" in syllabus
    assert f"{RUN_MINUTES} minutes to run" in syllabus
    assert "{}–{} minutes per exercise".format(*EXERCISE_MINUTES) in syllabus
