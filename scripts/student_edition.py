"""Write the student edition: copies of the notebooks with every exercise solution removed.

Usage: python scripts/student_edition.py [--out DIR] [NOTEBOOK ...]
       (default: every notebooks/*.ipynb into _build/student/notebooks/)

Removed, each replaced by a marker (a "Your solution" quote in Markdown, plain Markdown that reads
the same in JupyterLab with or without its MyST renderer; a comment in code):

* every MyST admonition whose title starts with "Solution" (```` ```{admonition} Solution ````
  or ``:::{admonition} Solution``, any fence length, usually ``:class: dropdown``);
* every cell tagged ``solution``: the code that computes an answer, which the notebooks place
  right after the exercise's Solution block and fold on the website (tag ``hide-cell``). A code
  cell keeps a comment, loses its outputs and is shown unfolded.

The originals are not touched. Standard library only: notebooks are read and written as JSON,
in nbformat's layout.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPENING = re.compile(r"^[ \t]*(?P<fence>`{3,}|:{3,})\{admonition\}[ \t]+Solution\b", re.IGNORECASE)
MARKDOWN_MARKER = (
    "\n> **Your solution.** *The worked solution is removed in the student edition:"
    " write yours here.*\n\n"
)
CODE_MARKER = "# The worked solution is removed in the student edition: write your code here.\n"
# What folds a solution's code cell on the website (myst-nb) and in JupyterLab.
FOLDING_TAGS = {"hide-cell", "hide-input", "hide-output"}
FOLDING_METADATA = ("mystnb", "jupyter")


def strip_markdown(text: str) -> tuple[str, int]:
    """``text`` with every Solution admonition replaced by a marker, and how many there were."""
    lines = text.splitlines(keepends=True)
    out, removed, i = [], 0, 0
    while i < len(lines):
        opening = OPENING.match(lines[i])
        if opening is None:
            out.append(lines[i])
            i += 1
            continue
        fence = opening["fence"]
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = next((j for j in range(i + 1, len(lines)) if closing.match(lines[j])), None)
        if end is None:
            raise ValueError(f"a Solution block opened with {fence} is never closed: {lines[i]!r}")
        out.append(MARKDOWN_MARKER)
        removed += 1
        i = end + 1
    return "".join(out), removed


def strip_notebook(nb: dict) -> int:
    """Remove the solutions from notebook ``nb`` (a JSON dict) in place; return how many."""
    removed = 0
    for cell in nb["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        metadata = cell.get("metadata", {})
        if "solution" in metadata.get("tags", []):
            if cell["cell_type"] == "code":
                new, cell["outputs"], cell["execution_count"] = CODE_MARKER, [], None
            else:
                new = MARKDOWN_MARKER
            drop = FOLDING_TAGS | {"solution"}
            metadata["tags"] = [tag for tag in metadata["tags"] if tag not in drop]
            for key in FOLDING_METADATA:
                metadata.pop(key, None)
            removed += 1
        elif cell["cell_type"] == "markdown":
            new, count = strip_markdown(source)
            removed += count
        else:
            continue
        cell["source"] = new.splitlines(keepends=True)
    return removed


def write_student_edition(paths: list[Path], out: Path) -> dict[str, int]:
    """Write the stripped copy of each notebook into ``out``; return solutions removed per file."""
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for path in paths:
        nb = json.loads(path.read_text(encoding="utf-8"))
        counts[path.name] = strip_notebook(nb)
        text = json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
        (out / path.name).write_text(text, encoding="utf-8")
    return counts


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "student" / "notebooks")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for name, count in write_student_edition(paths, args.out).items():
        print(f"student_edition: {name}: {count} solution(s) removed")
    print(f"student_edition: written to {args.out}")


if __name__ == "__main__":
    main(sys.argv[1:])
