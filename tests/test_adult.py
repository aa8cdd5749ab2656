"""The bundled UCI Adult data."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpteach import _validate
from dpteach.adult import ADULT_DOMAIN, ADULT_ROWS, ADULT_SUBSETS, load_adult

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT.parent / "shared" / "data" / "adult"


def test_shape_and_domain():
    adult = load_adult()
    assert adult.n == ADULT_ROWS == 48_842
    assert adult.domain.names == tuple(ADULT_DOMAIN)
    assert adult.domain.shape == tuple(ADULT_DOMAIN.values())
    assert np.all(adult.records >= 0)
    assert np.all(adult.records < np.array(adult.domain.shape))


def test_known_facts_of_the_uci_data():
    adult = load_adult(["sex", "income>50K"])
    # UCI Adult (train + test): 16,192 women; 11,687 people with income > 50K (23.93 %).
    assert np.sum(adult.records[:, 0] == 0) == 16_192
    assert np.sum(adult.records[:, 1] == 1) == 11_687


@pytest.mark.parametrize("name", sorted(ADULT_SUBSETS))
def test_presets_fit_a_dense_histogram(name):
    adult = load_adult(name)
    assert adult.domain.names == tuple(ADULT_SUBSETS[name])
    assert adult.domain.size <= _validate.MAX_DENSE_SIZE
    p = adult.histogram()
    assert p.shape == (adult.domain.size,) and abs(p.sum() - 1) < 1e-12


def test_projection_keeps_the_order_given_and_the_people():
    full = load_adult()
    part = load_adult(["income>50K", "age"])
    assert part.domain.names == ("income>50K", "age")
    np.testing.assert_array_equal(part.records, full.records[:, [13, 0]])


def test_callers_cannot_corrupt_the_cache():
    first = load_adult("tiny")
    first.records[:] = 0
    assert load_adult("tiny").records.any()


@pytest.mark.parametrize(
    ("attributes", "error", "match"),
    [
        ("huge", ValueError, "preset"),
        (["age", "height"], ValueError, "height"),
        (["age", "age"], ValueError, "distinct"),
        ([1, 2], ValueError, "unknown attribute"),
    ],
)
def test_bad_attributes(attributes, error, match):
    with pytest.raises(error, match=match):
        load_adult(attributes)


@pytest.mark.skipif(not SOURCE.exists(), reason="the Adult source files are not present")
def test_bundled_file_is_reproducible(tmp_path):
    script = ROOT / "scripts" / "prepare_adult.py"
    code = (
        "import sys, runpy; from pathlib import Path;"
        f"m = runpy.run_path({str(script)!r});"
        f"m['prepare'](Path({str(SOURCE)!r}), Path({str(tmp_path / 'adult.csv.gz')!r}))"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    bundled = (ROOT / "dpteach" / "datasets" / "adult.csv.gz").read_bytes()
    assert (tmp_path / "adult.csv.gz").read_bytes() == bundled
