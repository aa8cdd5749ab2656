"""Beyond its limit, every algorithm of the scale table (benchmarks/bench_scale.py) refuses with
an error that names the size and the limit, before allocating anything of that size.

Each runs just over the package's default limit: |X| = 2^25 cells for the dense algorithms
(``dpteach._validate.MAX_DENSE_SIZE = 2^24``), and just over the candidate-matrix limit for the
median mechanism and SmallDB. "Before allocating" is checked with tracemalloc (numpy reports its
allocations to it): the refusal's peak stays far below one dense array over X.
"""

from __future__ import annotations

import importlib.util
import sys
import tracemalloc
from pathlib import Path

import pytest

from dpteach import _validate, median

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("bench_scale", ROOT / "benchmarks/bench_scale.py")
bench_scale = importlib.util.module_from_spec(spec)
sys.modules.setdefault("bench_scale", bench_scale)
spec.loader.exec_module(bench_scale)

DENSE_D = 25  # 2^25 = 33,554,432 cells, just over MAX_DENSE_SIZE
CANDIDATE_D = 13  # m' = 1: a 2^13 x 2^13 candidate matrix, 2^26 > MAX_CANDIDATE_CELLS = 2^24


@pytest.mark.parametrize("name", list(bench_scale.CASES))
def test_just_over_the_limit_each_algorithm_refuses_before_allocating(name):
    run, _, _, kind = bench_scale.CASES[name]
    d = DENSE_D if kind == "dense" else CANDIDATE_D
    assert 2**d > bench_scale.largest_default(kind)  # just over the limit the table reports
    data, workload = bench_scale.setup(d)
    figure = f"{2**d:,}" if kind == "dense" else f"{2 ** (2 * d):,}"
    limit = f"{_validate.MAX_DENSE_SIZE:,}" if kind == "dense" else (
        f"{median.MAX_CANDIDATE_CELLS:,}")  # fmt: skip
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as refused:
            run(data, workload)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(refused.value)
    assert figure in message and limit in message, message
    refused_bytes = 8 * int(figure.replace(",", ""))  # the float64 array it would have made
    assert peak < refused_bytes / 16, f"{name} allocated {peak:,} bytes before refusing"
