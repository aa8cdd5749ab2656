"""The code is formatted and linted with ruff (pyproject.toml; notebooks/ruff.toml keeps the
notebooks to the 88 columns a website code cell shows)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


@pytest.mark.parametrize("args", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff(args):
    if RUFF is None:
        pytest.fail("ruff is not installed: it is part of the test extra")
    done = subprocess.run([RUFF, *args, "."], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
