"""Beyond its limit, every algorithm of the scale table (benchmarks/bench_scale.py) refuses with
an error that names the size it would need and the limit, before allocating anything that large.

Each runs just over the package's default limit: |X| = 2^25 cells for the dense algorithms
(``dpteach._validate.MAX_DENSE_SIZE = 2^24``), and a 2^13 x 2^13 candidate matrix for the median
mechanism and SmallDB (``median.MAX_CANDIDATE_CELLS = 2^24`` entries). "Before allocating" is
checked with tracemalloc (numpy reports its allocations to it): the peak stays under a sixteenth
of the array refused.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from dpteach import _validate, median

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("bench_scale", ROOT / "benchmarks/bench_scale.py")
bench_scale = importlib.util.module_from_spec(spec)
sys.modules.setdefault("bench_scale", bench_scale)
spec.loader.exec_module(bench_scale)


@pytest.mark.parametrize("name", list(bench_scale.CASES))
def test_just_over_the_limit_each_algorithm_refuses_before_allocating(name):
    kind = bench_scale.CASES[name][3]
    assert 2 ** bench_scale.just_over(kind) == 2 * bench_scale.largest_default(kind)
    result = bench_scale.refusal(name)
    assert result["refused"], result
    limit = _validate.MAX_DENSE_SIZE if kind == "dense" else median.MAX_CANDIDATE_CELLS
    assert f"{limit:,}" in result["message"], result["message"]
