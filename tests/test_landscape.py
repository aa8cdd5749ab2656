"""Chapter 06's landscape (dpteach.landscape): the committed map reproduces, the theory behind it
is right, and recommend() answers sensibly and refuses bad input."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import dpteach as dp
from dpteach import landscape, theory

MAP = landscape.load_map()


def test_the_map_covers_its_grid_with_every_mechanism_run_or_explained():
    assert MAP.ns == landscape.NS and MAP.ds == landscape.DS and MAP.names == landscape.NAMES
    assert MAP.meta["cells"] == len(landscape.NS) * len(landscape.DS)
    assert MAP.meta["seconds"] > 0 and MAP.meta["neighbours"] == "replace-one"
    ran = MAP.runs > 0
    for m, name in enumerate(MAP.names):
        for i, n in enumerate(MAP.ns):
            for j, d in enumerate(MAP.ds):
                assert ran[m, i, j] != ((name, n, d) in MAP.not_run), (name, n, d)
                assert ran[m, i, j] == np.isfinite(MAP.errors["max"][m, i, j])
                # a run is skipped exactly when the cost model says so (deterministic), but
                # for the cells filled with one run above the limit (benchmarks --fill)
                if (name, n, d) in MAP.filled:
                    assert MAP.runs[m, i, j] == 1 and landscape.repetitions(name, n, d) == 0
                else:
                    assert MAP.runs[m, i, j] == landscape.repetitions(name, n, d)
    # every baseline ran everywhere on this grid: only the iterative ones can be too slow
    for name in ("tables-laplace", "tables-gaussian", "query-laplace", "query-gaussian"):
        assert ran[MAP.names.index(name)].all(), name


# The cheap cells, re-run: every number must come out as committed. The noise is exact discrete
# noise drawn from integers and the data are integers, so the baselines reproduce to the last bit
# on any machine; the iterative ones go through floating-point reductions (exp, sums) whose last
# bits may differ between processors, hence the relative tolerance 1e-6 (far below the
# differences between mechanisms the map compares, which are 10 % and more).
SAMPLE = [(1_000, 4), (31_623, 4), (10_000, 8), (1_000, 12)]


@pytest.mark.parametrize("n, d", SAMPLE)
def test_sample_cells_reproduce_the_committed_map(n, d):
    cheap = [m for m in landscape.NAMES if 0 < landscape.repetitions(m, n, d)]
    cheap = [m for m in cheap if landscape.seconds(m, n, d) < 0.5]
    assert len(cheap) >= 6, cheap
    cell = landscape.grid_cell(n, d, mechanisms=cheap)
    i, j = MAP.ns.index(n), MAP.ds.index(d)
    for metric in ("max", "mean"):
        assert cell["uniform"][metric] == pytest.approx(MAP.uniform[metric][i, j], rel=1e-12)
        for name in cheap:
            m = MAP.names.index(name)
            got = np.mean(cell["runs"][name][metric])
            rel = 1e-12 if name not in ("mwem", "private-mw", "projection") else 1e-6
            assert got == pytest.approx(MAP.errors[metric][m, i, j], rel=rel), (name, metric)


def test_measured_baselines_agree_with_their_expected_errors():
    """In every cell the noisy tables' (Laplace) mean max error over its runs is within 4
    standard deviations (the max of k exponentials of scale b has sd at most b pi/sqrt(6)) of
    theory's exact expected max, and a theory 30 % too high is caught in some cell."""
    name = "tables-laplace"
    m = MAP.names.index(name)
    checked = 0
    for i, n in enumerate(MAP.ns):
        for j, d in enumerate(MAP.ds):
            runs = MAP.runs[m, i, j]
            expected, _ = landscape.theory_error(name, n, d, metric="max")
            k, tables = landscape.sizes(d)
            b = 2 * tables / n
            sd = b * math.pi / math.sqrt(6) / math.sqrt(runs)
            assert abs(MAP.errors["max"][m, i, j] - expected) < 4 * sd, (n, d)
            # a theory wrong by 30 % would be caught somewhere
            checked += abs(MAP.errors["max"][m, i, j] - 1.3 * expected) > 4 * sd
    assert checked > 0


@pytest.mark.parametrize("name", ["histogram-laplace", "histogram-gaussian"])
def test_histogram_normal_approximation_is_about_ten_percent_high(name):
    """The noisy histogram's max error against theory.histogram_errors' normal approximation,
    which treats the tables as independent (those sharing attributes are correlated, which lowers
    the max): no cell is measured above it by 4 standard deviations, and over the map the
    measurements are 0.9 times it (its docstring's "about 10 % high") within 4 standard
    deviations, a band that a theory 30 % off either way leaves. The max of the queries' noise is
    Lipschitz in the cells' noise with the largest query's constant, so one run's standard
    deviation is at most that query's s (Gaussian concentration), sqrt(2) s for Laplace noise
    (the Laplace distribution's Poincare constant, 4 b^2 with s^2 = 2 b^2 c)."""
    m, pure = MAP.names.index(name), landscape.MECHANISMS[name].pure
    ratios, sds = [], []
    for i, n in enumerate(MAP.ns):
        for j, d in enumerate(MAP.ds):
            expected, _ = landscape.theory_error(name, n, d, metric="max")
            s = float(theory.histogram_rms_error(2.0 ** (d - 2), n, 1.0, 0.0 if pure else 1e-6))
            sd = (math.sqrt(2) if pure else 1.0) * s / math.sqrt(MAP.runs[m, i, j])
            measured = MAP.errors["max"][m, i, j]
            assert measured < expected + 4 * sd, (n, d)
            ratios.append(measured / expected)
            sds.append(sd / expected)
    pooled, pooled_sd = np.mean(ratios), math.sqrt(np.sum(np.square(sds))) / len(sds)
    assert abs(pooled - 0.9) < 4 * pooled_sd
    for wrong in (0.7, 1.3):  # a theory 30 % off would be caught
        assert abs(pooled / wrong - 0.9) > 4 * pooled_sd


def test_histogram_errors_normal_approximation_and_mwem_bound():
    # one group, Gaussian noise: the mean is exact, sqrt(2/pi) times the RMS
    mean, top = theory.histogram_errors([4.0], [10], 500, 1.0, 1e-6)
    rms = float(theory.histogram_rms_error(4, 500, 1.0, 1e-6))
    assert mean == pytest.approx(rms * math.sqrt(2 / math.pi))
    assert rms < top < rms * math.sqrt(2 * math.log(20)) + rms
    with pytest.raises(ValueError, match="counts"):
        theory.histogram_errors([4.0, 2.0], [10], 500, 1.0)
    # the MWEM bound is the minimum over integer T of HLM12's two terms
    size, k, n = 2**8, 560, 10_000
    brute = min(
        2 * math.sqrt(math.log(size) / t) + 10 * t * math.log(k) / n for t in range(1, 5000)
    )
    assert theory.mwem_max_error_bound(size, k, n, 1.0) == pytest.approx(brute)


def test_effective_n_gives_the_same_noise():
    # Laplace: scale c / (n eps); Gaussian: sigma of sensitivity c/n at (eps, delta)
    assert landscape.effective_n("tables-laplace", 2_000, 0.5, 0.0) == pytest.approx(1_000)
    n_eff = landscape.effective_n("tables-gaussian", 2_000, 0.5, 1e-8)
    assert dp.gaussian_sigma(1 / n_eff, 1.0, 1e-6) == pytest.approx(
        dp.gaussian_sigma(1 / 2_000, 0.5, 1e-8), rel=1e-9
    )


def test_recommend_reads_the_map_and_falls_back_to_theory():
    pure = landscape.recommend(10_000, 8)
    assert pure.mechanism in landscape.MECHANISMS and landscape.MECHANISMS[pure.mechanism].pure
    assert all(landscape.MECHANISMS[m].pure for m in pure.estimates)
    assert pure.estimates[pure.mechanism].source == "measured"
    i, j = MAP.ns.index(10_000), MAP.ds.index(8)
    winner = MAP.names[MAP.winners("max", pure=True)[i, j]]
    assert pure.mechanism == winner  # on a grid point: the measured winner
    assert "k = 560" in pure.reason and "T = 84" in pure.reason
    approx = landscape.recommend(10_000, 8, delta=1e-6)
    assert any(not landscape.MECHANISMS[m].pure for m in approx.estimates)
    # off the map (other widths): theory only, the baselines' exact errors
    off = landscape.recommend(10_000, 8, widths=[1])
    assert {e.source for e in off.estimates.values()} <= {"exact", "approx", "bound"}
    assert off.mechanism == min(off.estimates, key=lambda m: off.estimates[m].value)
    # pure DP: only nε matters, so eps = 0.1 at 10 n is eps = 1 at n (measured part)
    a, b = landscape.estimates(100_000, 8, epsilon=0.1, delta=0), landscape.estimates(10_000, 8)
    assert a["mwem"].value == pytest.approx(b["mwem"].value)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"n": 0, "d": 8}, ValueError, "n"),
        ({"n": 1000.5, "d": 8}, TypeError, "n"),
        ({"n": 1000, "d": 0}, ValueError, "d"),
        ({"n": 1000, "d": 65}, ValueError, "at most 64"),
        ({"n": 1000, "d": 8, "widths": []}, ValueError, "widths"),
        ({"n": 1000, "d": 8, "widths": "23"}, TypeError, "widths"),
        ({"n": 1000, "d": 8, "widths": [9]}, ValueError, "at most d"),
        ({"n": 1000, "d": 8, "epsilon": 0}, ValueError, "epsilon"),
        ({"n": 1000, "d": 8, "epsilon": True}, TypeError, "epsilon"),
        ({"n": 1000, "d": 8, "delta": 1.0}, ValueError, "delta"),
        ({"n": 1000, "d": 8, "metric": "rms"}, ValueError, "metric"),
    ],
)
def test_recommend_refuses_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        landscape.recommend(**kwargs)


def test_bad_mechanism_names_and_cells_are_refused():
    with pytest.raises(ValueError, match="mechanism"):
        landscape.cost("smalldb", 1000, 8)
    with pytest.raises(ValueError, match="mechanism"):
        landscape.grid_cell(1000, 4, mechanisms=["nope"])
    with pytest.raises(ValueError, match="delta"):
        landscape.theory_error("projection", 1000, 8, delta=0.0)


def test_cell_data_restores_the_dense_limit_and_refuses_too_many_records():
    from dpteach import _validate

    limit = _validate.MAX_DENSE_SIZE
    data = landscape.cell_data(1_000, 4)
    assert data.n == 1_000 and data.domain.d == 4 and _validate.MAX_DENSE_SIZE == limit
    with pytest.raises(ValueError, match="records"):
        landscape.cell_data(2**25, 24)  # refused before anything is drawn
    assert _validate.MAX_DENSE_SIZE == limit


def test_recommend_says_none_where_no_error_is_below_one():
    hopeless = landscape.recommend(100, 40, widths=(3,), epsilon=0.01)
    assert hopeless.mechanism is None and "no mechanism is useful" in hopeless.reason
    assert min(e.value for e in hopeless.estimates.values()) >= 1


def test_cells_with_a_contender_not_run_are_named():
    for pure in (True, False):
        unrun = MAP.unrun(pure)
        for (name, n, d), _ in MAP.not_run.items():
            i, j = MAP.ns.index(n), MAP.ds.index(d)
            expected = landscape.MECHANISMS[name].pure or not pure
            assert (name in unrun[i][j]) == expected
        lines = MAP.describe_winners("max", pure)
        for (name, n, d), _ in MAP.not_run.items():
            if landscape.MECHANISMS[name].pure or not pure:
                line, label = lines[MAP.ds.index(d)], landscape.MECHANISMS[name].label
                assert re.search(rf"not run[^()]*{re.escape(label)}", line), (name, n, d)


def test_private_mw_without_a_certified_alpha_has_no_guarantee():
    k, _ = landscape.sizes(22, (2,))
    assert theory.private_mw_alpha(2**22, k, 2_000, 1.0) == 1.0  # none certified
    bound, kind = landscape.theory_error("private-mw", 2_000, 22, widths=(2,))
    assert math.isinf(bound) and kind == "bound"
    # 2-way marginals only: off the map, so private MW is compared by its theory
    reason = landscape.recommend(2_000, 22, widths=(2,)).reason
    assert "private MW (lecture) (no guarantee at this n)" in reason
    # the measured workload, on the map's grid: the uniform answer's error for reference
    assert "uniform answer" in landscape.recommend(2_000, 22).reason


def test_estimates_on_the_grids_edge_read_the_map_despite_rounding():
    # n sigma_1 / sigma_1 may round below n = 1,000, the grid's first row: still on the map
    found = landscape.estimates(landscape.NS[0], 4, delta=landscape.DELTA)
    assert {e.source for e in found.values()} == {"measured"}
    assert not any(e.interpolated for e in found.values())


def test_the_recommended_map_refuses_a_workload_it_does_not_know():
    from dpteach import figures

    with pytest.raises(ValueError, match="workload must be one of"):
        figures.draw_recommended_map(1.0, "7-way")
