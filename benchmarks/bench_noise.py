"""Speed of the floating-point-safe noise (exact discrete Laplace and Gaussian) against numpy.

The safe mechanisms draw exact discrete noise with numpy's exact uniform integers (Canonne,
Kamath and Steinke 2020, Algorithms 1-3, vectorised). Measured: ``dp.gaussian`` and
``dp.laplace`` on one vector of 10^5 values (with the ratio to the naive ``safe=False`` draw of
the same size in the same process, ``rng.normal`` / ``rng.laplace``: the machine is shared, so
the ratio is steadier than the seconds), and one-at-a-time scalar releases per second. Median of
5 repeats.

Usage: python benchmarks/bench_noise.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import dpteach as dp


def _median_time(run, repeats: int) -> float:
    times = []
    for seed in range(repeats):
        start = time.perf_counter()
        run(seed)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(quick: bool = False) -> list[dict]:
    size, scalars, repeats = (10_000, 200, 3) if quick else (100_000, 5_000, 5)
    zeros = np.zeros(size)
    rows = []
    for name, call in (
        ("gaussian", lambda s, safe: dp.gaussian(
            zeros, sensitivity=1.0, epsilon=1.0, delta=1e-6, rng=s, safe=safe)),
        ("laplace", lambda s, safe: dp.laplace(
            zeros, sensitivity=1.0, epsilon=1.0, rng=s, safe=safe)),
    ):  # fmt: skip
        safe = _median_time(lambda s, call=call: call(s, True), repeats)
        naive = _median_time(lambda s, call=call: call(s, False), repeats)
        rows.append({
            "target": "noise",
            "measure": f"safe {name}: one vector of {size:,} exact draws (validation included)",
            "value": safe * 1e3,
            "unit": "ms",
            "goal": "<= 500 ms per 10^5",
            "met": safe * 1e5 / size <= 0.5,
            "notes": f"{size / safe:,.0f} draws/s; {safe / naive:.0f} x numpy's naive draw",
        })  # fmt: skip

        def one_at_a_time(seed: int, name=name) -> None:
            gen = np.random.default_rng(seed)
            for _ in range(scalars):
                if name == "gaussian":
                    dp.gaussian(0.0, sensitivity=1.0, epsilon=1.0, delta=1e-6, rng=gen)
                else:
                    dp.laplace(0.0, sensitivity=1.0, epsilon=1.0, rng=gen)

        per_second = scalars / _median_time(one_at_a_time, repeats)
        rows.append({
            "target": "noise",
            "measure": f"safe {name}: scalar releases one at a time (validation included)",
            "value": per_second,
            "unit": "draws/s",
            "goal": ">= 1,000 draws/s",
            "met": per_second >= 1_000,
            "notes": f"{scalars:,} calls of dp.{name}(0.0, ...)",
        })  # fmt: skip
    return rows


if __name__ == "__main__":
    for row in run():
        print(f"{row['measure']:<72} {row['value']:>12,.1f} {row['unit']:<9} "
              f"goal {row['goal']:<18} met={row['met']}  {row['notes']}")  # fmt: skip
