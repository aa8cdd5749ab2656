"""Chapter 06's landscape: which mechanism has the smallest error on all 2- and 3-way marginals
of d binary attributes, over a grid of n and |X| = 2^d (issue 29, Part 2).

Every cell of ``dpteach.landscape.NS x DS`` is measured by ``landscape.grid_cell``: the data
(``latent_class_data``, seeded by the cell), then each mechanism's runs at eps = 1 (delta = 1e-6
for the Gaussian ones and the projection mechanism), each seeded by the cell, the mechanism and
the repetition. A run whose estimated time (``landscape.seconds``) passes
``landscape.RUN_SECONDS`` is recorded as not run, with the estimate. The result is written to
``dpteach/datasets/landscape.json`` (bundled with the package; the chapter and
``landscape.recommend`` read it), with the grid's size, the run time and the machine.

Usage: nice -n 10 python benchmarks/landscape.py [--out PATH] [--ns N ...] [--ds D ...] [--resume]
(``--resume`` keeps the cells an interrupted run saved in ``landscape.partial.json``; the run
time recorded is the sum of every cell's time.)

``--fill NAME`` instead runs mechanism ``NAME`` once in every cell of ``--out`` (within ``--ns``
and ``--ds``) where it was not run, above the time limit, and writes each result into ``--out``
as it comes (marked ``"filled"``; an interrupted fill resumes where it stopped).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from dpteach import landscape

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "dpteach" / "datasets" / "landscape.json"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--ns", type=int, nargs="+", default=list(landscape.NS))
    parser.add_argument("--ds", type=int, nargs="+", default=list(landscape.DS))
    parser.add_argument(
        "--resume", action="store_true", help="keep the cells an interrupted run saved"
    )
    parser.add_argument(
        "--fill", choices=landscape.NAMES, help="run NAME once where --out has it not run"
    )
    args = parser.parse_args(argv)
    if args.fill:
        return fill(args.out, args.fill, args.ns, args.ds)
    partial_path = args.out.with_suffix(".partial.json")
    kept = {}
    if args.resume and partial_path.exists():
        kept = {(c["n"], c["d"]): c for c in json.loads(partial_path.read_text())["cells"]}

    planned = sum(
        landscape.repetitions(m, n, d) * landscape.seconds(m, n, d)
        for n in args.ns
        for d in args.ds
        for m in landscape.NAMES
        if (n, d) not in kept
    )
    print(
        f"grid: {len(args.ns)} n x {len(args.ds)} d = {len(args.ns) * len(args.ds)} cells "
        f"({len(kept)} kept), {len(landscape.NAMES)} mechanisms; estimated {planned / 60:.0f} min",
        flush=True,
    )
    start, cpu = time.perf_counter(), time.process_time()
    cells = []
    for d in args.ds:
        for n in args.ns:
            if (n, d) in kept:
                cells.append(kept[(n, d)])
                continue
            t0 = time.perf_counter()
            cell = landscape.grid_cell(n, d)
            cell["seconds"] = round(time.perf_counter() - t0, 1)
            cells.append(cell)
            best = min((np.mean(r["max"]), m) for m, r in cell["runs"].items() if "max" in r)
            skipped = [m for m, r in cell["runs"].items() if "not_run" in r]
            print(
                f"n = {n:>9,} d = {d:2d}: {cell['seconds']:6.1f} s; best max error "
                f"{best[1]} {best[0]:.3g}; uniform {cell['uniform']['max']:.3g}; "
                f"not run: {', '.join(skipped) or '-'}",
                flush=True,
            )
            partial_path.write_text(json.dumps({"cells": cells}) + "\n")
    partial_path.unlink(missing_ok=True)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    total = sum(c["seconds"] for c in cells)
    runs = sum(len(r.get("max", ())) for c in cells for r in c["runs"].values())
    meta = {
        "ns": args.ns,
        "ds": args.ds,
        "mechanisms": list(landscape.NAMES),
        "widths": list(landscape.WIDTHS),
        "epsilon": landscape.EPSILON,
        "delta": landscape.DELTA,
        "seed": landscape.SEED,
        "data": "latent_class_data(Domain.binary(d), n, rng=default_rng([SEED, n, d]))",
        "neighbours": "replace-one",
        "cells": len(cells),
        "runs": runs,
        "run_seconds": landscape.RUN_SECONDS,
        "cells_per_second": landscape.CELLS_PER_SECOND,
        "seconds": round(total, 1),
        "last_invocation_seconds": round(elapsed, 1),
        "last_invocation_cpu_seconds": round(cpu, 1),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, numpy {np.__version__}",
        "load": [round(x, 2) for x in os.getloadavg()],
    }
    result = {"meta": meta, "cells": cells}
    args.out.write_text(json.dumps(result, indent=0, separators=(",", ":")) + "\n")
    print(
        f"{len(cells)} cells, {runs} runs: {total:.0f} s in all (this invocation {elapsed:.0f} s,"
        f" {cpu:.0f} s CPU); wrote {args.out}"
    )
    return result


def fill(out: Path, name: str, ns: list[int], ds: list[int]) -> dict:
    """Run ``name`` once in each cell of ``out`` where it was not run (above the time limit)."""
    result = json.loads(out.read_text())
    for cell in sorted(result["cells"], key=lambda c: (c["d"], c["n"])):
        if cell["n"] not in ns or cell["d"] not in ds or "not_run" not in cell["runs"][name]:
            continue
        t0 = time.perf_counter()
        data = landscape.cell_data(cell["n"], cell["d"])
        W = landscape.workload(cell["d"])
        run = landscape.run_errors(name, data, W, W.answer(data), repetition=0)
        cell["runs"][name] = {key: [run[key]] for key in ("max", "mean", "seconds")}
        cell["runs"][name]["filled"] = "one run above the time limit (benchmarks --fill)"
        seconds = round(time.perf_counter() - t0, 1)
        cell["seconds"] = round(cell["seconds"] + seconds, 1)
        result["meta"]["runs"] += 1
        result["meta"]["seconds"] = round(result["meta"]["seconds"] + seconds, 1)
        out.write_text(json.dumps(result, indent=0, separators=(",", ":")) + "\n")
        print(
            f"n = {cell['n']:>9,} d = {cell['d']:2d}: {name} {run['seconds']:.1f} s, max error "
            f"{run['max']:.3g} (uniform {cell['uniform']['max']:.3g})",
            flush=True,
        )
    return result


if __name__ == "__main__":
    main()
