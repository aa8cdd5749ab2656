"""Execute notebooks top to bottom and save them in place, with outputs and widget state.

Usage: python scripts/execute_notebooks.py [NOTEBOOK ...]   (default: every notebook in notebooks/)

The saved widget state lets the static website render the widgets and their default figures.
Each notebook's run time is printed (the book promises under a minute per notebook).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def execute(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=True,
    ).execute()
    elapsed = time.perf_counter() - start
    nbformat.write(nb, path)
    return elapsed


def main(argv: list[str]) -> None:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        print(f"{path.name}: {execute(path):.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
