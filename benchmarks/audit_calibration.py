"""Calibration of the auditor: how often are correct mechanisms flagged at alpha = 0.05, and how
many samples does it take to flag each broken one reliably (at alpha = 1e-3)?

For each positive control, 200 audits with different seeds at alpha = 0.05; the auditor promises
a false-alarm rate of at most alpha (the acceptance bar is 8 %). For each negative control
(including Roth's sparse vector, too slow for the appendix), the smallest sample size at which
19 of 20 seeds flag it (:func:`dpteach.audit.samples_to_flag`). Prints the figures and the times.

Usage: python benchmarks/audit_calibration.py
"""

from __future__ import annotations

import time

import numpy as np

import dpteach as dp
from dpteach import _broken as broken
from dpteach.audit import PAIRS, audit, samples_to_flag

SEEDS, ALPHA, SAMPLES = 200, 0.05, 20_000

CONTROLS = {
    "laplace (eps = 1)": (
        lambda x, rng, size: dp.laplace(np.full(size, x), sensitivity=1.0, epsilon=1.0, rng=rng),
        0.0, 1.0, 1.0, "scalar",
    ),
    "exponential (eps = 1, 50 outcomes)": (
        lambda u, rng, size: dp.exponential(u, sensitivity=1.0, epsilon=1.0, rng=rng, size=size),
        np.r_[1.0, np.zeros(49)], np.r_[0.0, np.ones(49)], 1.0, "discrete",
    ),
}  # fmt: skip

SIZES = [1_000, 2_000, 3_000, 5_000, 10_000, 20_000, 30_000, 50_000, 100_000, 200_000, 500_000]
BROKEN = {  # sampler, pair, claimed eps, delta, kind
    "Laplace, scale / 1.2": (broken.laplace_scaled(1 / 1.2), "count", 1.0, 0.0, "scalar"),
    "Gaussian, sigma / 2": (broken.gaussian_scaled(0.5, dp.gaussian_sigma(1.0, 1.0, 1e-5)),
                            "count", 1.0, 1e-5, "scalar"),
    "exponential without the 2": (broken.exponential_without_two(), "one vs rest", 1.0, 0.0,
                                  "discrete"),
    "SVT, Lee-Clifton (c = 3)": (broken.sparse_vector("lee-clifton", cutoff=3), "alternating",
                                 1.0, 0.0, "discrete"),
    "SVT, Roth (eps = 2)": (broken.sparse_vector("roth", epsilon=2.0, encode="first"),
                            "m below then one", 2.0, 0.0, "discrete"),
}  # fmt: skip


def main() -> None:
    print(f"{SEEDS} audits each, alpha = {ALPHA}, {SAMPLES} samples per sample set")
    for name, (sampler, d, d_prime, eps, kind) in CONTROLS.items():
        start = time.perf_counter()
        flags = [
            audit(sampler, d, d_prime, epsilon=eps, samples=SAMPLES, rng=seed, alpha=ALPHA,
                  kind=kind).flagged
            for seed in range(SEEDS)
        ]  # fmt: skip
        elapsed = time.perf_counter() - start
        print(f"{name:40s} false alarms {np.mean(flags):6.1%}   ({elapsed:.1f} s)")
    print("\nsmallest sample size flagged in >= 19 of 20 seeds (alpha = 1e-3)")
    for name, (sampler, pair, eps, delta, kind) in BROKEN.items():
        start = time.perf_counter()
        n = samples_to_flag(sampler, *PAIRS[pair], epsilon=eps, delta=delta, sizes=SIZES, kind=kind)
        elapsed = time.perf_counter() - start
        print(f"{name:40s} {n if n is None else f'{n:,}':>10}   ({elapsed:.1f} s)")


if __name__ == "__main__":
    main()
