"""Calibration of the auditor: how often are correct mechanisms flagged at alpha = 0.05?

For each positive control, 200 audits with different seeds at alpha = 0.05; the auditor promises
a false-alarm rate of at most alpha (the acceptance bar is 8 %). Prints the rate and the time.

Usage: python benchmarks/audit_calibration.py
"""

from __future__ import annotations

import time

import numpy as np

import dpteach as dp
from dpteach.audit import audit

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


if __name__ == "__main__":
    main()
