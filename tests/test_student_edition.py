"""The student edition (``make student``, ``scripts/student_edition.py``): per exercise, no line
and no number of the solution survives; a marker stands where each solution was; every remaining
code cell still runs; and on the website every answer sits inside its collapsed solution."""

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


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    counts = student_edition.write_student_edition(NOTEBOOKS, out)
    return out, counts


def _md(text, tags=()):
    return {"cell_type": "markdown", "metadata": {"tags": list(tags)}, "source": text}


def _code(text, tags=(), **metadata):
    out = [{"output_type": "stream", "name": "stdout", "text": "42\n"}]
    return {"cell_type": "code", "metadata": {"tags": list(tags), **metadata}, "source": text,
            "outputs": out, "execution_count": 1}  # fmt: skip


def _notebook(*cells) -> dict:
    cells = [{"id": f"cell-{i}", **cell} for i, cell in enumerate(cells)]
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


FOLDED = {"jupyter": {"source_hidden": True}, "mystnb": {"code_prompt_show": "Show"}}


def test_solutions_are_replaced_by_markers_and_the_rest_is_kept():
    nb = _notebook(
        _md("**Exercise 1.** Compute it.\n\n````{admonition} Solution\n:class: dropdown\nSECRET-A "
            "uses\n```python\nx = 1\n```\nand more SECRET-B.\n````\nKeep this line.\n"),
        _md(":::{admonition} solution to exercise 2\n:class: dropdown\nSECRET-C\n:::\n"),
        _md("```{admonition} Hint\n:class: dropdown\nA hint stays.\n```\n"),
        _code("answer = 42  # SECRET-D\nprint(answer)", ["solution", "hide-cell", "x"], **FOLDED),
        _md("SECRET-E in a tagged markdown cell", tags=["solution"]),
        _code("print('kept')", ["hide-input"]),
    )  # fmt: skip
    assert student_edition.strip_notebook(nb) == 4  # two blocks, two tagged cells
    text = json.dumps(nb)
    assert "SECRET" not in text
    assert text.count("removed in the student edition") == 4
    sources = [_source(c) for c in nb["cells"]]
    assert "**Exercise 1.**" in sources[0]
    # The marker is a quote of its own: the next line is not pulled into it, and it is no fence
    # (which JupyterLab without its MyST renderer shows as a code block).
    assert "\n\nKeep this line." in sources[0] and "```" not in sources[0]
    assert "A hint stays." in sources[2]
    solution_code = nb["cells"][3]
    assert solution_code["outputs"] == [] and solution_code["execution_count"] is None
    assert solution_code["metadata"] == {"tags": ["x"]}  # no longer folded, no solution tag
    assert sources[5] == "print('kept')" and nb["cells"][5]["outputs"]
    assert nb["cells"][5]["metadata"]["tags"] == ["hide-input"]


def test_the_marker_is_plain_markdown():
    marker = student_edition.MARKDOWN_MARKER.strip()
    assert marker.startswith("> **Your solution.**") and "\n" not in marker


def test_an_unclosed_solution_is_an_error_not_a_leak():
    nb = _notebook(_md("```{admonition} Solution\nSECRET\n"))
    with pytest.raises(ValueError, match="never closed"):
        student_edition.strip_notebook(nb)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_marker_stands_where_each_solution_was(edition, path):
    out, counts = edition
    original = json.loads(path.read_text())
    markdown = "\n".join(_source(c) for c in original["cells"] if c["cell_type"] == "markdown")
    blocks = len(re.findall(r"\{admonition\}\s+Solution", markdown, re.IGNORECASE))
    tagged = sum("solution" in c["metadata"].get("tags", []) for c in original["cells"])
    assert blocks >= 3, f"{path.name}: fewer than three solutions"
    assert counts[path.name] == blocks + tagged
    student = json.loads((out / path.name).read_text())
    student_text = "\n".join(_source(c) for c in student["cells"])
    assert student_text.count("removed in the student edition") == blocks + tagged
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


def _runs(original: dict, student: Path) -> str | None:
    """Why the student edition ``student`` of notebook ``original`` fails to run, or None.

    When its code without the markers is the original's code with only its last cells cut off
    (solution cells come after every other code cell), it is a prefix of what nbval re-runs in
    the same suite and is not run again here; otherwise it is run."""
    code = [_source(c) for c in original["cells"] if c["cell_type"] == "code"]
    cells = json.loads(student.read_text())["cells"]
    kept = [_source(c) for c in cells if c["cell_type"] == "code"]
    kept = [source for source in kept if source != student_edition.CODE_MARKER]
    if kept == code[: len(kept)]:
        return None
    error = _run(student, student.parent)
    return None if error is None else str(error)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_remaining_code_cell_runs(edition, path):
    out, _ = edition
    error = _runs(json.loads(path.read_text()), out / path.name)
    assert error is None, f"the student edition of {path.name} fails: {error}"


def test_a_solution_cell_that_later_code_needs_is_caught(tmp_path):
    nb = _notebook(_code("x = 6 * 7", ["solution"]), _code("print(x)"))
    original = json.loads(json.dumps(nb))
    student_edition.strip_notebook(nb)
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    assert "NameError" in _runs(original, tmp_path / "nb.ipynb")


# --- Per exercise: what a student must not see, found independently of the script. -------------

EXERCISE = re.compile(r"^\s*\*\*Exercise\s+(\w+)")
SOLUTION = re.compile(r"\{admonition\}\s+Solution", re.IGNORECASE)
FENCE = re.compile(r"^\s*(`{3,}|:{3,})\s*$")
NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
SHOWN_OUTPUTS = ("text/plain", "text/markdown", "text/latex")


def _output_text(cell: dict) -> str:
    texts = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            texts.append("".join(out["text"]))
        for mime in SHOWN_OUTPUTS:
            if mime in out.get("data", {}):
                texts.append("".join(out["data"][mime]))
    return "\n".join(texts)


def _split_exercises(nb: dict) -> tuple[dict[str, dict], list[str]]:
    """Each exercise's solution, and the notebook's lines outside every solution.

    An exercise runs from its ``**Exercise N`` line to the next one (or the next heading). Its
    solution is its ``{admonition} Solution`` block *and everything after the block* up to the
    end of the exercise: text, code and outputs. Returns ``{N: solution}`` and the lines outside;
    a solution is a dict: ``lines`` (text, code, outputs), ``open`` (what of it a web page shows
    uncollapsed: text after the block, code cells not tagged ``hide-cell``), ``dropdown`` (the
    block has ``:class: dropdown``)."""
    exercises: dict[str, dict] = {}
    outside: list[str] = []
    current, state = None, "outside"  # outside | statement | block | after
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            lines = _source(cell).splitlines() + _output_text(cell).splitlines()
            if state != "after":
                outside += lines
                continue
            exercises[current]["lines"] += lines
            if "hide-cell" not in cell["metadata"].get("tags", []):
                exercises[current]["open"].append(f"code cell {index}")
            continue
        for line in _source(cell).splitlines():
            if match := EXERCISE.match(line):
                current, state = match[1], "statement"
                exercises[current] = {"lines": [], "open": [], "dropdown": False}
            elif line.startswith("#"):
                current, state = None, "outside"
            elif state == "statement" and SOLUTION.search(line):
                state = "block"
            elif state == "block" and FENCE.match(line):
                state = "after"
            elif state == "block" and line.strip().startswith(":class:"):
                exercises[current]["dropdown"] |= "dropdown" in line
            elif state in ("block", "after"):
                exercises[current]["lines"].append(line)
                if state == "after" and line.strip():
                    exercises[current]["open"].append(f"cell {index}: {line[:40]!r}")
            else:
                outside.append(line)
    return exercises, outside


def _exercise_cases() -> list:
    cases = []
    for path in NOTEBOOKS:
        exercises, _ = _split_exercises(json.loads(path.read_text()))
        cases += [pytest.param(path, n, id=f"{path.stem}-exercise-{n}") for n in exercises]
    return cases


EXERCISES = _exercise_cases()


def test_every_notebook_has_exercises():
    assert {case.values[0] for case in EXERCISES} == set(NOTEBOOKS)


@pytest.mark.parametrize(("path", "exercise"), EXERCISES)
def test_no_answer_survives_per_exercise(edition, path, exercise):
    """The student edition holds no line of the exercise's solution (text, code or output) and no
    number the solution states (in its text or its outputs), unless the rest of the notebook
    states them too."""
    out, _ = edition
    exercises, outside = _split_exercises(json.loads(path.read_text()))
    solution = exercises[exercise]["lines"]
    assert any(line.strip() for line in solution), f"{path.name}, Exercise {exercise}: no solution"
    outside_text = "\n".join(outside)
    student_nb = json.loads((out / path.name).read_text())
    student = "\n".join(_source(c) + "\n" + _output_text(c) for c in student_nb["cells"])
    lines = {s for line in solution if len(s := line.strip()) >= 20 and s not in outside_text}
    leaked_lines = sorted(line for line in lines if line in student)
    numbers = set(NUMBER.findall("\n".join(solution))) - set(NUMBER.findall(outside_text))
    leaked_numbers = sorted(numbers & set(NUMBER.findall(student)))
    assert not leaked_lines and not leaked_numbers, (
        f"{path.name}, Exercise {exercise}: the student edition still shows "
        f"{len(leaked_lines)} line(s) of the solution {leaked_lines[:2]} and the numbers "
        f"{leaked_numbers[:8]}"
    )


@pytest.mark.parametrize(("path", "exercise"), EXERCISES)
def test_the_website_shows_each_answer_only_inside_its_collapsed_solution(path, exercise):
    """A solution is a dropdown admonition; a code cell that belongs to it is collapsed with its
    output (``hide-cell``); no text of it follows the admonition, open on the page."""
    solution = _split_exercises(json.loads(path.read_text()))[0][exercise]
    assert solution["dropdown"], f"{path.name}, Exercise {exercise}: solution is not a dropdown"
    assert not solution["open"], (
        f"{path.name}, Exercise {exercise}: shown open on the website: {solution['open']}"
    )
