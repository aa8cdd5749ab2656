"""Laplace vs Gaussian baselines on UCI Adult two-way marginals (chapter 00's numbers).

k random queries from all 1,582 two-way marginal cells of the "medium" Adult subset
(n = 48,842, |X| = 1,814,400), epsilon = 1, delta = 1e-6 (analytic Gaussian), 20 trials.

Usage: python benchmarks/baselines.py
"""

from __future__ import annotations

import time

import dpteach as dp
from dpteach import baselines, theory

KS = [100, 1000]
EPSILON, DELTA, TRIALS = 1.0, 1e-6, 20


def main() -> None:
    start = time.perf_counter()
    adult = dp.load_adult("medium")
    Q = dp.MarginalWorkload.all_kway(adult.domain, 2)
    errors = baselines.max_error_sweep(
        Q, adult, ks=KS, epsilon=EPSILON, delta=DELTA, trials=TRIALS, rng=1
    )
    elapsed = time.perf_counter() - start
    print(
        f"Adult, n = {adult.n}, eps = {EPSILON}, delta = {DELTA}, {TRIALS} trials ({elapsed:.2f} s)"
    )
    print(
        f"{'k':>5s} {'mechanism':9s} {'mean max error':>15s} {'range':>16s} {'bound, b=.05':>13s}"
    )
    for i, k in enumerate(KS):
        bounds = {
            "laplace": theory.laplace_max_error(k, adult.n, EPSILON),
            "gaussian": theory.gaussian_max_error(k, adult.n, EPSILON, DELTA),
        }
        for name, bound in bounds.items():
            e = errors[name][i]
            print(f"{k:5d} {name:9s} {e.mean():15.4f} {e.min():8.4f}-{e.max():.4f} {bound:13.4f}")


if __name__ == "__main__":
    main()
