"""The guard against machine-dependent notebook outputs: `make test` runs the notebooks a second
time under the BLAS kernel ``scripts/other_blas_kernel.py`` names. These tests show that the name
is another kernel the machine runs, and that OpenBLAS really switches to it."""

from __future__ import annotations

import importlib.util
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "other_blas_kernel.py"


def _script():
    spec = importlib.util.spec_from_file_location("other_blas_kernel", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("own", "machine", "other"),
    [
        ("Haswell", "x86_64", "Sandybridge"),
        ("SkylakeX", "x86_64", "Sandybridge"),
        ("Zen", "x86_64", "Sandybridge"),
        ("Sandybridge", "x86_64", "Nehalem"),
        ("Nehalem", "x86_64", None),  # already generic: nothing older is worth the time
        ("NEOVERSEN1", "aarch64", "ARMV8"),
        ("armv8", "aarch64", None),
        (None, "x86_64", None),  # numpy not on OpenBLAS
        ("Haswell", "ppc64le", None),
    ],
)
def test_the_other_kernel_is_one_the_machine_runs(own, machine, other):
    assert _script().other_kernel(own, machine) == other


def _kernel_under(coretype: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    code = f"import sys; sys.path.insert(0, {str(SCRIPT.parent)!r}); "
    code += "import other_blas_kernel as k; print(k.own_kernel() or '')"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_the_second_pass_really_runs_on_another_kernel():
    own = _kernel_under(os.environ.get("OPENBLAS_CORETYPE"))
    other = _script().other_kernel(own or None, platform.machine())
    if other is None:
        pytest.skip(f"no other kernel to try on this machine (numpy's BLAS kernel: {own!r})")
    switched = _kernel_under(other)
    assert switched.lower() == other.lower() != own.lower()
