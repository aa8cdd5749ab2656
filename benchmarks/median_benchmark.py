"""Chapter 02's costs: enumerating candidate sets, and answering queries with the median mechanism.

For each (|X|, n'): the number of multisets C(|X| + n' - 1, n'), the time to enumerate them with
``median.small_databases``, and the time per query of ``median.MedianMechanism`` (100 random
counting queries on a sample of 5,000 records). The last rows are at the enumeration limits.

Usage: python benchmarks/median_benchmark.py
"""

from __future__ import annotations

import time

import numpy as np

from dpteach import adaptive, median

SIZES = [(16, 5), (4, 40), (4, 100), (8, 16), (2, 1_999_999), (8, 22)]


def main() -> None:
    print(f"{'|X|':>4} {'n_prime':>9} {'candidates':>11} {'enum. (s)':>10} {'ms per query':>13}")
    for size, n_prime in SIZES:
        start = time.perf_counter()
        C = median.small_databases(size, n_prime)
        enumerate_s = time.perf_counter() - start
        rng = np.random.default_rng(0)
        counts = rng.multinomial(5000, rng.dirichlet(np.ones(size)))
        Q = (rng.random((100, size)) < 0.5).astype(float)
        start = time.perf_counter()
        mm = median.MedianMechanism(counts, candidates=C, eta=0.05)
        adaptive.interact(mm, adaptive.fixed_queries(Q))
        per_query = (time.perf_counter() - start) / len(Q) * 1000
        print(f"{size:>4} {n_prime:>9,} {C.shape[0]:>11,} {enumerate_s:>10.3f} {per_query:>13.2f}")


if __name__ == "__main__":
    main()
