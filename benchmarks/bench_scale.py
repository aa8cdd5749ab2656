"""Issue 15, target 8: how large a universe X each algorithm handles, and the memory it takes.

Each algorithm runs on ``d`` binary attributes (``|X| = 2^d``), 1,000 random records, the workload
of the first four attributes' 1-way marginals (8 queries; dense queries of the same cells where an
algorithm takes vectors), in a fresh subprocess that reports the peak memory it allocates beyond
the imports and the data (tracemalloc's peak). From the largest two sizes measured the memory per
cell is fitted, and with it the largest ``|X|`` the package's default limits allow
(``dpteach._validate.MAX_DENSE_SIZE = 2**24`` cells, ``MAX_BYTES`` = 1 GiB per array; the median
mechanism's and SmallDB's candidate limits) and what ``|X|`` would fit in 24 GiB if a user raised
them. Then each runs just over its limit: it must refuse with a ``ValueError`` naming the size it
would need, having allocated (tracemalloc) under a sixteenth of that array ("met");
``tests/test_scale_limits.py`` asserts the same.

Usage: python benchmarks/bench_scale.py [--quick]
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

ROOT_MEMORY = 24 * 2**30  # bytes: the figure the issue asks for
N_RECORDS = 1_000


def setup(d: int, seed: int = 0):
    """The data (1,000 random records over ``d`` binary attributes) and the 1-way workload."""
    import numpy as np

    import dpteach as dp

    domain = dp.Domain.binary(d)
    records = np.random.default_rng(seed).integers(0, 2, size=(N_RECORDS, d))
    data = dp.Dataset(records, domain)
    workload = dp.MarginalWorkload(domain, [(a,) for a in domain.names[:4]])
    return data, workload


def _stream(data):
    from dpteach import streams

    return streams.DatabaseStream(data.records, data.domain, n0=N_RECORDS // 2)


def _dense_queries(data, k: int = 3):
    """``k`` cells' indicator queries (dense vectors over X), built without a dense histogram."""
    import numpy as np

    q = np.zeros((k, data.domain.size))
    q[np.arange(k), np.arange(k)] = 1.0
    return q


def _laplace(data, Q):
    from dpteach import baselines

    return baselines.laplace_answers(Q.answer(data.histogram()), n=data.n, epsilon=1.0, rng=0)


def _gaussian(data, Q):
    from dpteach import baselines

    true = Q.answer(data.histogram())
    return baselines.gaussian_answers(true, n=data.n, epsilon=1.0, delta=1e-6, rng=0)


def _ic(data, Q):
    from dpteach import iterative

    dua = iterative.MultiplicativeWeightsDUA(data.domain.size, alpha=0.25)
    return iterative.iterative_construction(data, Q, dua, alpha=0.5, epsilon=1.0, rng=0)


def _mwem(data, Q):
    from dpteach import mw

    return mw.mwem(data, Q, epsilon=1.0, rounds=3, rng=0)


def _private_mw(data, Q):
    from dpteach import mw

    return mw.private_mw(data, Q, epsilon=1.0, alpha=0.3, rng=0)


def _online_pmw(data, Q):
    from dpteach import mw

    pmw = mw.OnlinePMW(data, epsilon=1.0, alpha=0.3, rng=0)
    return [pmw.answer(q) for q in _dense_queries(data)]


def _median(data, Q):
    from dpteach import adaptive, median

    candidates = median.small_databases(data.domain.size, 1)
    mech = median.MedianMechanism(data.histogram() * data.n, candidates=candidates, eta=0.1)
    return adaptive.interact(mech, adaptive.fixed_queries(_dense_queries(data)))


def _projection(data, Q):
    from dpteach import projection

    return projection.projection_mechanism(data, Q, epsilon=1.0, delta=1e-6, rng=0)


def _smalldb(data, Q):
    from dpteach import smalldb

    return smalldb.smalldb(data, Q, epsilon=1.0, alpha=0.5, m=1, rng=0)


def _bb_scheduler(data, Q):
    from dpteach import growing

    box = growing.MWEMBox(rounds=2)
    return growing.bb_scheduler(_stream(data), box, Q, epsilon=1.0, gamma=1.0, rng=0)


def _pmwg(data, Q):
    from dpteach import growing

    pmwg = growing.PMWG(_stream(data), epsilon=1.0, alpha=0.3, rng=0)
    return [pmwg.answer(q) for q in _dense_queries(data)]


#: name -> (run(data, workload), sizes d measured, quick sizes, the limit that binds).
CASES = {
    "Laplace baseline": (_laplace, (16, 18, 20), (10, 12), "dense"),
    "Gaussian baseline": (_gaussian, (16, 18, 20), (10, 12), "dense"),
    "IC (MW DUA)": (_ic, (14, 16, 18), (10, 12), "dense"),
    "MWEM (3 rounds)": (_mwem, (16, 18, 20), (10, 12), "dense"),
    "private MW": (_private_mw, (14, 16, 18), (10, 12), "dense"),
    "online PMW": (_online_pmw, (16, 18, 20), (10, 12), "dense"),
    "median mechanism (m' = 1)": (_median, (8, 10, 11), (6, 8), "candidates"),
    "projection mechanism": (_projection, (14, 16, 18), (10, 12), "dense"),
    "SmallDB (m = 1)": (_smalldb, (8, 10, 11), (6, 8), "candidates"),
    "BBScheduler (MWEM box)": (_bb_scheduler, (14, 16, 18), (10, 12), "dense"),
    "PMWG": (_pmwg, (16, 18, 20), (10, 12), "dense"),
}


def child(name: str, d: int) -> dict:
    """Run one case in this process; the peak memory it allocates beyond its inputs (traced by
    tracemalloc, which sees numpy's arrays: unlike the process's ``ru_maxrss`` it is not hidden
    by a higher high-water mark left by the set-up) and its seconds."""
    import resource
    import tracemalloc

    data, workload = setup(d)
    tracemalloc.start()
    start = time.perf_counter()
    CASES[name][0](data, workload)
    seconds = time.perf_counter() - start
    extra = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"peak": peak, "extra": extra, "seconds": seconds}


def just_over(kind: str) -> int:
    """The ``d`` of the smallest ``|X| = 2^d`` beyond the default limit."""
    return largest_default(kind).bit_length()


def refusal(name: str) -> dict:
    """Run one case just over its limit in this process: did it refuse with a ValueError naming
    the size it would need, and how many bytes did it allocate first (tracemalloc's peak)?"""
    import tracemalloc

    kind = CASES[name][3]
    d = just_over(kind)
    data, workload = setup(d)
    cells = 2**d if kind == "dense" else 4**d  # the array it would make: X, or |X| x |X|
    tracemalloc.start()
    try:
        CASES[name][0](data, workload)
        message = ""
    except ValueError as err:
        message = str(err)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    refused = f"{cells:,}" in message and peak < 8 * cells / 16
    return {"d": d, "refused": refused, "peak": peak, "message": message}


def measure(name: str, d: int | str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", name, str(d)], check=True,
                         capture_output=True, text=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def largest_default(kind: str) -> int:
    """The largest |X| (a power of two) the package's default limits let the case run at."""
    from dpteach import _validate, median

    if kind == "dense":
        return min(_validate.MAX_DENSE_SIZE, _validate.MAX_BYTES // 8)
    # m' = 1: |X| candidates and a |X| x |X| candidate matrix
    return min(median.MAX_CANDIDATES, int(median.MAX_CANDIDATE_CELLS**0.5))


def run(quick: bool = False) -> list[dict]:
    rows = []
    for name, (_, sizes, quick_sizes, kind) in CASES.items():
        ds = quick_sizes if quick else sizes
        points = {d: measure(name, d) for d in ds}
        (d1, a), (d2, b) = list(points.items())[-2:]
        power = 2 if kind == "candidates" else 1  # the candidate matrix grows like |X|^2
        per_cell = max((b["extra"] - a["extra"]) / (2 ** (power * d2) - 2 ** (power * d1)), 0.0)
        limit = largest_default(kind)
        mib = ", ".join(f"2^{d}: {p['extra'] / 2**20:.0f} MiB in {p['seconds']:.2f} s"
                        for d, p in points.items())  # fmt: skip
        at_limit = (b["extra"] + per_cell * (limit**power - 2 ** (power * d2))) / 2**30
        in_24 = (ROOT_MEMORY / per_cell) ** (1 / power) if per_cell > 0 else float("inf")
        over = measure(name, "refuse")
        rows.append({
            "target": "8 scale", "measure": f"{name}: largest |X| at the default limits",
            "value": float(limit), "unit": "cells", "goal": "refuses beyond, before allocating",
            "met": over["refused"],
            "notes": f"peak memory beyond the inputs {mib}; fitted {per_cell:.1f} B per "
                     f"{'|X|^2 entry' if power == 2 else 'cell'}, so ~{at_limit:.2f} GiB at the "
                     f"limit; 24 GiB would hold |X| ~ {in_24:,.0f} (limits raised); at 2^"
                     f"{over['d']}: {'refused' if over['refused'] else 'NOT refused'} after "
                     f"{over['peak'] / 2**10:.0f} KiB allocated",
        })  # fmt: skip
    return rows


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        name, size = sys.argv[2], sys.argv[3]
        print(json.dumps(refusal(name) if size == "refuse" else child(name, int(size))))
    else:
        for row in run(quick="--quick" in sys.argv):
            print(f"{row['measure']:60s} {row['value']:>12,.0f}  {row['notes']}")
