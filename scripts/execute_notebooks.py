"""Execute notebooks top to bottom and save them in place, with outputs and widget state.

Usage: python scripts/execute_notebooks.py [NOTEBOOK ...]   (default: every notebook in notebooks/)

The saved widget state lets the static website render the widgets and their default figures.
The kernels run with ``DPTEACH_PRECOMPUTE=1``, so that every ``widgets.explorable`` precomputes its
whole grid of slider positions for the website (a reader's Jupyter draws only the default one).
Each notebook's wall-clock and CPU time (of its kernel) is printed, then the total (the book
promises under 30 s per notebook and under 2 minutes for all; ``benchmarks/bench_book.py``
measures the same without saving, with each notebook's slowest cells).
"""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(path: Path, *, precompute: bool = True) -> tuple[nbformat.NotebookNode, float, float]:
    """Execute the notebook at ``path`` in a fresh kernel: the executed notebook, its wall-clock
    seconds and the CPU seconds of its kernel (start-up included). Nothing is saved.
    ``precompute``: the explorables draw their whole grid (as for the website), else only their
    default position (as in a reader's Jupyter)."""
    nb = nbformat.read(path, as_version=4)
    before = os.environ.get("DPTEACH_PRECOMPUTE")
    os.environ["DPTEACH_PRECOMPUTE"] = "1" if precompute else "0"  # the kernel inherits it
    cpu, start = _children_cpu(), time.perf_counter()
    try:
        NotebookClient(
            nb,
            timeout=600,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
            store_widget_state=True,
        ).execute()
    finally:
        if before is None:
            del os.environ["DPTEACH_PRECOMPUTE"]
        else:
            os.environ["DPTEACH_PRECOMPUTE"] = before
    return nb, time.perf_counter() - start, _children_cpu() - cpu


def execute(path: Path) -> tuple[float, float]:
    """Execute the notebook and save it in place; its wall-clock and CPU seconds."""
    nb, wall, cpu = run(path)
    nbformat.write(nb, path)
    return wall, cpu


def main(argv: list[str]) -> None:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    total = 0.0
    for path in paths:
        wall, cpu = execute(path)
        total += wall
        print(f"{path.name}: {wall:.1f} s (kernel CPU {cpu:.1f} s)", flush=True)
    if len(paths) > 1:
        print(f"total: {total:.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
