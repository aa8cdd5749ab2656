"""Structural checks on the committed notebooks (nbval re-runs them and compares outputs).

nbval passes silently on a notebook saved without outputs, so this module checks that every
notebook was executed top to bottom and saved, and that it follows the book's conventions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MAX_BYTES = 5 * 2**20


def _cells(path: Path, kind: str) -> list[dict]:
    cells = json.loads(path.read_text())["cells"]
    return [c for c in cells if c["cell_type"] == kind and "".join(c["source"]).strip()]


def _toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "notebooks" / "_toc.yml").read_text())
    files = [toc["root"]]
    for entry in toc.get("chapters", []):
        files.append(entry["file"])
    for part in toc.get("parts", []):
        files += [c["file"] for c in part["chapters"]]
    return files


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found in notebooks/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_executed_top_to_bottom(path):
    counts = [c["execution_count"] for c in _cells(path, "code")]
    assert counts, f"{path.name} has no code cells"
    assert None not in counts, f"{path.name}: {counts.count(None)} code cell(s) not executed"
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: not run top to bottom once"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_errors_or_svg_in_outputs(path):
    for cell in _cells(path, "code"):
        for out in cell.get("outputs", []):
            assert out["output_type"] != "error", f"{path.name}: a cell raised {out.get('ename')}"
            assert "image/svg+xml" not in out.get("data", {}), f"{path.name}: SVG output"
            if out["output_type"] == "stream":
                assert out["name"] != "stderr" or "Warning" not in "".join(out["text"]), (
                    f"{path.name}: a warning was printed: {''.join(out['text'])[:200]}"
                )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_conventions(path):
    assert path.stat().st_size < MAX_BYTES, f"{path.name} is larger than {MAX_BYTES} bytes"
    text = "\n".join("".join(c["source"]) for c in _cells(path, "markdown")).lower()
    assert "learning objectives" in text, f"{path.name} has no learning objectives"
    assert "exercise" in text and "solution" in text, f"{path.name} has no exercises/solutions"
    code = "\n".join("".join(c["source"]) for c in _cells(path, "code"))
    assert "np.random.seed" not in code and "np.random.rand" not in code, "global numpy RNG"
    for cell in _cells(path, "code"):
        assert not "".join(cell["source"]).rstrip().endswith(";"), (
            f"{path.name}: a trailing ';' (nbval ignores it; write `_ = ...`)"
        )


def test_every_notebook_is_in_the_table_of_contents():
    listed = set(_toc_files())
    for path in NOTEBOOKS:
        assert f"notebooks/{path.stem}" in listed, f"{path.name} is missing from _toc.yml"
    for entry in listed:
        stem = ROOT / entry
        assert stem.with_suffix(".ipynb").exists() or stem.with_suffix(".md").exists(), entry


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_saved_slider_moves_its_figure_without_a_kernel(path):
    """A widget output carries a static twin (``widgets.explorable``'s ``text/html``), which the
    website shows: a bare ipywidgets view would show sliders there that move nothing."""
    for i, cell in enumerate(json.loads(path.read_text())["cells"]):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW in data:
                assert "dpteach-static" in "".join(data.get("text/html", "")), (
                    f"{path.name}, cell {i}: a widget without precomputed frames (a slider "
                    "that needs a kernel): make it a widgets.explorable"
                )
