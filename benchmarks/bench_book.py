"""Issue 15, target 7: every notebook executes in under 30 s, all of them in under 2 minutes.

Each notebook is executed in a fresh kernel as ``scripts/execute_notebooks.py`` does (nothing is
saved): its wall-clock time, its kernel's CPU time (start-up included), and its three slowest
cells (from nbclient's per-cell timing). The target is the execution a reader (or ``make test``)
runs: each ``widgets.explorable`` draws its default position only. The execution for the website
(``make notebooks``: every explorable precomputes its whole grid of slider positions) is reported
too, in rows of its own. ``--quick`` executes only the first code cell of one notebook (a check
that the harness runs).

Usage: python benchmarks/bench_book.py [--quick] [NOTEBOOK ...]
"""

from __future__ import annotations

import importlib.util
import sys
from datetime import datetime
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
GOAL_EACH, GOAL_ALL = 30.0, 120.0  # seconds


def _executor():
    script = ROOT / "scripts/execute_notebooks.py"
    spec = importlib.util.spec_from_file_location("execute_notebooks", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cell_seconds(nb: nbformat.NotebookNode) -> list[tuple[float, int, str]]:
    """(seconds, index, first line) of every executed code cell, slowest first."""
    times = []
    for i, cell in enumerate(nb.cells):
        timing = cell.get("metadata", {}).get("execution", {})
        if "iopub.execute_input" in timing and "shell.execute_reply" in timing:
            start, end = (datetime.fromisoformat(timing[k].replace("Z", "+00:00"))
                          for k in ("iopub.execute_input", "shell.execute_reply"))  # fmt: skip
            first = next((line for line in cell.source.splitlines() if line.strip()), "")
            times.append(((end - start).total_seconds(), i, first[:60]))
    return sorted(times, reverse=True)


def run(quick: bool = False, paths: list[Path] | None = None) -> list[dict]:
    executor = _executor()
    if quick:
        return _quick(executor)
    paths = paths or sorted((ROOT / "notebooks").glob("[0-9A-Z]*.ipynb"))
    return _executions(executor, paths, precompute=False) + _executions(
        executor, paths, precompute=True
    )


def _executions(executor, paths: list[Path], *, precompute: bool) -> list[dict]:
    how = "for the website (every slider position drawn)" if precompute else "execution"
    rows, total = [], 0.0
    for path in paths:
        nb, wall, cpu = executor.run(path, precompute=precompute)
        total += wall
        slow = "; ".join(f"cell {i} {s:.1f} s ({line})" for s, i, line in cell_seconds(nb)[:3])
        rows.append({
            "target": "7 book", "measure": f"{path.stem}: {how} (wall)", "value": wall,
            "unit": "s", "goal": "(report)" if precompute else f"< {GOAL_EACH:.0f} s",
            "met": precompute or wall < GOAL_EACH,
            "notes": f"kernel CPU {cpu:.1f} s; slowest cells: {slow}",
        })  # fmt: skip
    if len(paths) > 1:
        rows.append({
            "target": "7 book", "measure": f"all {len(paths)} notebooks, {how} (wall)",
            "value": total, "unit": "s", "goal": "(report)" if precompute else
            f"< {GOAL_ALL:.0f} s", "met": precompute or total < GOAL_ALL, "notes": "",
        })  # fmt: skip
    return rows


def _quick(executor) -> list[dict]:
    import tempfile

    source = sorted((ROOT / "notebooks").glob("[0-9A-Z]*.ipynb"))[0]
    nb = nbformat.read(source, as_version=4)
    nb.cells = [next(c for c in nb.cells if c.cell_type == "code")]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / source.name
        nbformat.write(nb, path)
        _, wall, cpu = executor.run(path, precompute=False)
    return [{
        "target": "7 book", "measure": f"{source.stem}: first code cell only (quick)",
        "value": wall, "unit": "s", "goal": "(harness check)", "met": True,
        "notes": f"kernel CPU {cpu:.1f} s",
    }]  # fmt: skip


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--quick"]
    for row in run(quick="--quick" in sys.argv, paths=[Path(a) for a in args] or None):
        print(f"{row['measure']:45s} {row['value']:7.1f} {row['unit']} "
              f"({'met' if row['met'] else 'NOT met'}) {row['notes']}")  # fmt: skip
