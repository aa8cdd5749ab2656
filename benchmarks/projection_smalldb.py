"""Projection mechanism and SmallDB: error, time and certificate at growing sizes.

1. Average error (Definition 4) of the Gaussian mechanism with and without projection, at
   m = 10, 100, 1,000 (and 4,000) random counting queries over |X| = 256, n = 1,000, eps = 1,
   delta = 1e-6, mean of 5 runs; the projection's time and certified duality gap.
2. SmallDB: time to enumerate and score the candidate sets, up to the largest one the limits
   allow over |X| = 8 (all 2-way marginals of 3 binary attributes).

Usage: python benchmarks/projection_smalldb.py
"""

from __future__ import annotations

import time

import numpy as np

import dpteach as dp
from dpteach import projection, smalldb, theory

DOM = dp.Domain.binary(8)
DATA = dp.correlated_data(DOM, 1000, rng=1)

print(f"{'m':>6} {'no projection':>14} {'projected':>10} {'time (s)':>9} {'max gap':>9}")
for m in (10, 100, 1000, 4000):
    workload = dp.random_queries(DOM.size, m, rng=m)
    true = workload.answer(DATA.histogram())
    plain, projected, times, gaps = [], [], [], []
    for seed in range(5):
        start = time.perf_counter()
        run = projection.projection_mechanism(DATA, workload, epsilon=1.0, delta=1e-6, rng=seed)
        times.append(time.perf_counter() - start)
        plain.append(np.sqrt(np.mean((run.info["noisy"] - true) ** 2)))
        projected.append(np.sqrt(np.mean((run.answers - true) ** 2)))
        gaps.append(run.info["gap"])
    print(f"{m:6d} {np.mean(plain):14.4f} {np.mean(projected):10.4f} {np.mean(times):9.2f} "
          f"{max(gaps):9.1e}")  # fmt: skip

dom3 = dp.Domain.binary(3)
data3 = dp.correlated_data(dom3, 2000, rng=0)
marginals = dp.MarginalWorkload.all_kway(dom3, 2)
print(f"\n{'m':>3} {'candidates':>12} {'time (s)':>9} {'max error':>10}")
for m in (10, 16, 20, 22):
    start = time.perf_counter()
    result = smalldb.smalldb(data3, marginals, epsilon=1.0, alpha=0.5, m=m, rng=0)
    elapsed = time.perf_counter() - start
    count = theory.smalldb_candidates(dom3.size, m)
    print(f"{m:3d} {count:12,d} {elapsed:9.2f} {result.trace[0].max_error:10.4f}")
