"""Issue 15, targets 1 and 2: marginal tables and multiplicative-weights updates, in passes.

A *pass* is one ``np.sum(p)`` over the histogram the operation works on, in the same process;
every figure is the median time of the operation over the median time of that pass, the two
timed alternately so that a change of the machine's load affects both. The histograms are
random (the cost of a reduction does not depend on the values).

* Target 1: ``MarginalWorkload.table`` for every 3-way attribute set of 20 binary attributes
  (2^20 cells), a fixed sample of the sets of 24 (2^24 cells), and every 3-way set of a
  non-binary domain of 907,200 cells: the median and the worst ratio. Then all 3-way marginals
  at once (``_answer``, which shares work through cached block tables), per marginal, against
  the old method (``p.reshape(shape).sum(axis=others)`` for each marginal).
* Target 2: the MW step for a marginal query without a dense query vector
  (``MarginalWorkload.reweight``): one cell (``_reweight`` of a negation-closed workload, the
  step ``learn`` and ``private_mw`` take) and a whole 3-way table, against the old dense
  ``mw_update(p, q, eta)``; then the non-diagnostic part of a ``learn``/``private_mw`` round on
  all 3-way marginals of 2^20 cells (one update and the answers to the whole workload).

Usage: ``python benchmarks/bench_marginals.py [--quick]``
"""

from __future__ import annotations

import itertools
import math
import sys
import time

import numpy as np

import dpteach as dp
from dpteach import mw
from dpteach.results import kl_divergence

NON_BINARY = (3, 5, 2, 7, 4, 3, 6, 2, 5, 3, 2)  # 907,200 cells


def passes(operation, p: np.ndarray, repeats: int) -> np.ndarray:
    """``[median, min]`` of the time of ``operation()`` over the same statistic of the time of
    ``np.sum(p)``, timed alternately. The median is the figure; the min (the cost when neither
    was preempted) is given beside it, as the machine is shared."""
    ours, reference = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        np.sum(p)
        middle = time.perf_counter()
        operation()
        ours.append(time.perf_counter() - middle)
        reference.append(middle - start)
    return np.array([np.median(ours) / np.median(reference), min(ours) / min(reference)])


def histogram(size: int, seed: int = 0) -> np.ndarray:
    p = np.random.default_rng(seed).random(size)
    return p / p.sum()


def naive_table(p: np.ndarray, shape: tuple[int, ...], axes: tuple[int, ...]) -> np.ndarray:
    """The old ``MarginalWorkload.table``: one reshape and one sum over the other axes."""
    others = tuple(a for a in range(len(shape)) if a not in axes)
    kept = sorted(axes)
    return np.transpose(p.reshape(shape).sum(axis=others), [kept.index(a) for a in axes])


def row(target, measure, value, unit, goal, met, notes="") -> dict:
    return {
        "target": target,
        "measure": measure,
        "value": round(float(value), 3),
        "unit": unit,
        "goal": goal,
        "met": bool(met),
        "notes": notes,
    }


def table_ratios(shape: tuple[int, ...], every: int, repeats: int) -> tuple[np.ndarray, list]:
    """The ratio for every ``every``-th 3-way attribute set (axes), and the sets."""
    domain = dp.Domain({f"a{i}": n for i, n in enumerate(shape)})
    sets = list(itertools.combinations(range(domain.d), 3))[::every]
    Q = dp.MarginalWorkload(domain, [[domain.names[a] for a in s] for s in sets])
    p = histogram(domain.size)
    ratios = [passes(lambda m=m: Q.table(p, m), p, repeats) for m in range(len(sets))]
    return np.array(ratios), sets


def median_and_worst(ratios, sets, measure: str, notes: str) -> list[dict]:
    """Rows for the median and the worst set (by median times; min-based figures in the notes)."""
    worst = int(np.argmax(ratios[:, 0]))
    notes += (
        f"; worst: axes {sets[worst]}; by min times: median {np.median(ratios[:, 1]):.2f}, "
        f"worst {ratios[:, 1].max():.2f}"
    )
    return [
        row("1 marginals", f"{measure}: {name}", value, "passes", "<= 2 passes", value <= 2, notes)
        for name, value in (("median", np.median(ratios[:, 0])), ("worst", ratios[worst, 0]))
    ]


def target_1(quick: bool) -> list[dict]:
    rows = []
    for d, every, repeats in [(16, 8, 3)] if quick else [(20, 1, 5), (24, 8, 3)]:
        ratios, sets = table_ratios((2,) * d, every, repeats)
        which = "all" if every == 1 else f"every {every}th of the"
        notes = f"{which} {math.comb(d, 3):,} 3-way sets ({len(ratios)} timed), {repeats} repeats"
        measure = f"table of a 3-way marginal, 2^{d} cells, binary"
        rows += median_and_worst(ratios, sets, measure, notes)
    shape = NON_BINARY[:7] if quick else NON_BINARY
    ratios, sets = table_ratios(shape, 1, 3 if quick else 5)
    measure = f"table of a 3-way marginal, {math.prod(shape):,} cells, sizes {shape}"
    rows += median_and_worst(ratios, sets, measure, f"all {len(ratios)} 3-way sets")

    d = 14 if quick else 20
    domain = dp.Domain.binary(d)
    Q = dp.MarginalWorkload.all_kway(domain, 3)
    p = histogram(domain.size)
    start = time.perf_counter()
    plan = Q._sharing_plan()  # planned once per workload, then reused
    planning = time.perf_counter() - start
    count = len(Q.marginals)
    shared = passes(lambda: Q._answer(p), p, 3 if quick else 5) / count
    old = passes(lambda: [naive_table(p, domain.shape, ax) for ax in Q._axes], p, 3) / count
    over_p = sum(source < 0 for source, _, _ in plan.tables)
    notes = (
        f"{count:,} marginals: {shared[0] * count:.0f} passes in all (by min times "
        f"{shared[1] * count:.0f}), {over_p} of the "
        f"{len(plan.tables)} cached tables read from p; old method {old[0]:.2f} passes per "
        f"marginal ({old[0] / shared[0]:.0f}x slower); planning once per workload "
        f"{planning * 1e3:.0f} ms"
    )
    measure = f"all 3-way marginals of 2^{d} cells (_answer), per marginal"
    rows.append(row("1 marginals", measure, shared[0], "passes", "<= 1.5", shared[0] <= 1.5, notes))
    return rows


def update_rows(d: int, repeats: int) -> list[dict]:
    domain = dp.Domain.binary(d)
    sets = [(0, 1, 2), (5, 11, d - 1), (d - 3, d - 2, d - 1), (0, d // 2, d - 1), (3, 4, d - 1)]
    sets.append((3, 8, d - 4))
    Q = dp.MarginalWorkload(domain, [tuple(f"x{a}" for a in s) for s in sets])
    closed = Q.with_negations()
    p = histogram(domain.size)
    work = p.copy()
    factors = np.random.default_rng(1).normal(size=(len(sets), 2, 2, 2))
    cells = [8 * m + 5 for m in range(len(sets))]
    figures = {
        "one cell": [
            passes(lambda i=i: closed._reweight(work, i, 0.05), work, repeats) for i in cells
        ],
        "one negated cell": [
            passes(lambda i=i: closed._reweight(work, Q.k + i, 0.05), work, repeats) for i in cells
        ],
        "a whole 3-way table": [
            passes(lambda m=m: Q.reweight(work, m, factors[m]), work, repeats)
            for m in range(len(sets))
        ],
    }
    # the old step built the dense query vector every time
    dense = [passes(lambda i=i: mw.mw_update(work, Q._query(i), 0.05), work, 3) for i in cells[:2]]
    assert abs(work.sum() - 1) < 1e-9
    notes = (
        f"worst over {len(sets)} attribute sets {sets}; old dense mw_update with the "
        f"query built: {np.median(np.array(dense)[:, 0]):.1f} passes"
    )
    rows = []
    for what, values in figures.items():
        values = np.array(values)
        worst, median = values[:, 0].max(), np.median(values[:, 0])
        notes_here = (
            f"median {median:.2f}; by min times worst {values[:, 1].max():.2f}, "
            f"median {np.median(values[:, 1]):.2f}; {notes}"
        )
        measure = f"reweight, {what}, 2^{d} cells: worst"
        rows.append(row("2 MW update", measure, worst, "passes", "<= 3", worst <= 3, notes_here))
    return rows


def round_row(d: int, quick: bool) -> dict:
    domain = dp.Domain.binary(d)
    Q = dp.MarginalWorkload.all_kway(domain, 3)
    closed = Q.with_negations()
    p = histogram(domain.size)
    work = p.copy()
    i = closed.k // 3

    def step():  # what learn and private_mw do every round, apart from the KL diagnostic
        closed._reweight(work, i, 0.05)
        closed._answer(work)

    def old_step():
        mw.mw_update(work, closed._query(i), 0.05)
        answers = np.concatenate([naive_table(work, domain.shape, a).ravel() for a in Q._axes])
        np.concatenate([answers, 1 - answers])

    new, old = passes(step, work, 3), passes(old_step, work, 2 if quick else 1)
    kl = passes(lambda: kl_divergence(p, work), work, 3)
    notes = (
        f"{closed.k:,} queries with negations; by min times {new[1]:.0f}; old round "
        f"{old[0]:.0f} passes ({old[0] / new[0]:.0f}x); the trace's KL potential adds "
        f"{kl[0]:.0f} passes"
    )
    measure = f"learn/private_mw round, all 3-way marginals of 2^{d} cells (update + answers)"
    return row("2 MW update", measure, new[0], "passes", "(report)", True, notes)


def target_2(quick: bool) -> list[dict]:
    rows = []
    for d in [14] if quick else [20, 24]:
        rows += update_rows(d, 3 if quick else 7)
    return rows + [round_row(14 if quick else 20, quick)]


def run(quick: bool = False) -> list[dict]:
    """Every figure of targets 1 and 2 (``quick``: small sizes, a few seconds; no goal is met
    or missed meaningfully then)."""
    return target_1(quick) + target_2(quick)


if __name__ == "__main__":
    import os

    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for r in run(quick="--quick" in sys.argv):
        mark = "met" if r["met"] else "NOT met"
        print(
            f"[{r['target']}] {r['measure']}: {r['value']:g} {r['unit']} "
            f"(goal {r['goal']}: {mark}) -- {r['notes']}"
        )
