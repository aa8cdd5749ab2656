"""The project's own set-up files agree with each other."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent

# Conda-only entries with no counterpart in pyproject's Python dependencies.
CONDA_ONLY = {"python", "pip", "nodejs"}


def _split(requirement: str) -> tuple[str, str]:
    requirement = requirement.split(";")[0]  # environment markers do not apply to conda
    name, spec = re.match(r"^([A-Za-z0-9_.\-]+)\s*(.*)$", requirement.strip()).groups()
    return name.lower().replace("_", "-"), spec.replace(" ", "")


def _pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs += extra
    return dict(_split(r) for r in reqs)


def _conda_requirements() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    specs = [d for d in env["dependencies"] if isinstance(d, str)]
    return {name: spec for name, spec in map(_split, specs) if name not in CONDA_ONLY}


def test_environment_yml_matches_pyproject():
    assert _conda_requirements() == _pyproject_requirements()


def test_python_floor_agrees():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    python = [d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python")]
    assert python == ["python" + project["requires-python"]]


def test_no_exact_pins():
    for name, spec in _pyproject_requirements().items():
        assert "==" not in spec, f"{name} is pinned exactly ({spec}); bound it loosely"


def test_package_version_matches_pyproject():
    import dpteach

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert dpteach.__version__ == project["version"]
