"""Speed of the floating-point-safe Laplace mechanism against numpy's naive Laplace noise.

Draws 10^5 noisy values (one vector) with ``dp.laplace`` (safe, the default: exact discrete
Laplace on a power-of-two grid) and with ``safe=False``; then 10^4 one-at-a-time scalar draws and
10^4 AboveThreshold queries (the sparse-vector path). Best of 5 runs each.

Usage: python benchmarks/safe_laplace.py
"""

from __future__ import annotations

import time

import numpy as np

import dpteach as dp


def best_of(run, repeats: int = 5) -> float:
    times = []
    for seed in range(repeats):
        start = time.perf_counter()
        run(seed)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    zeros = np.zeros(100_000)
    safe = best_of(lambda s: dp.laplace(zeros, sensitivity=1.0, epsilon=1.0, rng=s))
    naive = best_of(lambda s: dp.laplace(zeros, sensitivity=1.0, epsilon=1.0, rng=s, safe=False))
    print(f"10^5 draws in one vector: safe {safe * 1e3:.1f} ms, naive {naive * 1e3:.1f} ms")

    def scalars(seed: int) -> None:
        gen = np.random.default_rng(seed)
        for _ in range(10_000):
            dp.laplace(0.0, sensitivity=1.0, epsilon=1.0, rng=gen)

    print(f"10^4 scalar draws: safe {best_of(scalars, 3) * 1e3:.0f} ms")

    def sparse(seed: int) -> None:
        sv = dp.Sparse(1e9, sensitivity=1.0, epsilon=1.0, rng=seed, cutoff=1)
        for _ in range(10_000):
            sv.test(0.0)

    print(f"10^4 sparse-vector queries: {best_of(sparse, 3) * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
