"""The student edition (``make student``, ``scripts/student_edition.py``): no solution survives,
a marker stands where each was, and every remaining code cell still runs."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SCRIPT = ROOT / "scripts" / "student_edition.py"
_spec = importlib.util.spec_from_file_location("student_edition", SCRIPT)
student_edition = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(student_edition)


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def _solution_lines(text: str) -> list[str]:
    """The lines of every Solution block of ``text``, found independently of the script: from a
    line containing ``{admonition} Solution`` to the next line made of fence characters only."""
    lines, inside, found = text.splitlines(), False, []
    for line in lines:
        if re.search(r"\{admonition\}\s+Solution", line, re.IGNORECASE):
            inside = True
        elif inside and re.fullmatch(r"\s*(`{3,}|:{3,})\s*", line):
            inside = False
        elif inside and not line.lstrip().startswith(":class:"):
            found.append(line.strip())
    return found


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    counts = student_edition.write_student_edition(NOTEBOOKS, out)
    return out, counts


def _notebook(fence: str = "```") -> dict:
    def md(text, tags=()):
        return {"cell_type": "markdown", "metadata": {"tags": list(tags)}, "source": text}

    def code(text, tags=()):
        out = [{"output_type": "stream", "name": "stdout", "text": "42\n"}]
        return {"cell_type": "code", "metadata": {"tags": list(tags)}, "source": text,
                "outputs": out, "execution_count": 1}  # fmt: skip

    return {"cells": [
        md("**Exercise 1.** Compute it.\n\n````{admonition} Solution\n:class: dropdown\nSECRET-A "
           "uses\n```python\nx = 1\n```\nand more SECRET-B.\n````\n\nKeep this line.\n"),
        md(":::{admonition} solution to exercise 2\n:class: dropdown\nSECRET-C\n:::\n"),
        md("```{admonition} Hint\n:class: dropdown\nA hint stays.\n```\n"),
        code("answer = 6 * 7  # SECRET-D\nprint(answer)", tags=["solution"]),
        md("SECRET-E in a tagged markdown cell", tags=["solution"]),
        code("print('kept')"),
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip


def test_solutions_are_replaced_by_markers_and_the_rest_is_kept():
    nb = _notebook()
    assert student_edition.strip_notebook(nb) == 4  # two blocks, two tagged cells
    text = json.dumps(nb)
    assert "SECRET" not in text
    assert text.count("removed in the student edition") == 4
    sources = [_source(c) for c in nb["cells"]]
    assert "Keep this line." in sources[0] and "**Exercise 1.**" in sources[0]
    assert "A hint stays." in sources[2]
    assert nb["cells"][3]["outputs"] == [] and nb["cells"][3]["execution_count"] is None
    assert "solution" not in nb["cells"][3]["metadata"]["tags"]
    assert sources[5] == "print('kept')" and nb["cells"][5]["outputs"]


def test_an_unclosed_solution_is_an_error_not_a_leak():
    nb = {"cells": [{"cell_type": "markdown", "metadata": {},
                     "source": "```{admonition} Solution\nSECRET\n"}]}  # fmt: skip
    with pytest.raises(ValueError, match="never closed"):
        student_edition.strip_notebook(nb)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_solution_text_survives(edition, path):
    out, counts = edition
    original = json.loads(path.read_text())
    markdown = "\n".join(_source(c) for c in original["cells"] if c["cell_type"] == "markdown")
    blocks = len(re.findall(r"\{admonition\}\s+Solution", markdown, re.IGNORECASE))
    tagged = sum("solution" in c["metadata"].get("tags", []) for c in original["cells"])
    assert blocks + tagged >= 3, f"{path.name}: fewer than three solutions to remove"
    assert counts[path.name] == blocks + tagged
    student = json.loads((out / path.name).read_text())
    student_text = "\n".join(_source(c) for c in student["cells"])
    assert student_text.count("removed in the student edition") == blocks + tagged
    solution = [line for line in _solution_lines(markdown) if len(line) >= 20]
    outside = markdown
    for line in solution:
        outside = outside.replace(line, "")
    leaked = [line for line in solution if line in student_text and line not in outside]
    assert solution and not leaked, f"{path.name}: solution text survives: {leaked[:3]}"
    assert len(student["cells"]) == len(original["cells"])


def _run(path: Path, folder: Path):
    """Execute a notebook in ``folder``; the error of its first failing cell, or None."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as error:
        return error
    return None


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_remaining_code_cell_runs(edition, path):
    """Where the student edition kept every code cell unchanged (solutions are markdown), its code
    is the committed notebook's, which nbval re-runs in the same suite; otherwise run it here."""
    out, _ = edition
    code = [_source(c) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    student = json.loads((out / path.name).read_text())["cells"]
    if [_source(c) for c in student if c["cell_type"] == "code"] == code:
        return
    error = _run(out / path.name, out)
    assert error is None, f"the student edition of {path.name} fails: {error}"
