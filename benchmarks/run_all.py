"""Run every benchmark of issue 15 (``benchmarks/bench_*.py``), print one table, write
``benchmarks/results.json`` and regenerate the table in ``BENCHMARKS.md``.

Each module exposes ``run(quick: bool = False) -> list[dict]``, one dict per measured figure
(``target``, ``measure``, ``value``, ``unit``, ``goal``, ``met``, ``notes``). A plain numpy
reference is measured in the same run (one ``numpy.sum`` pass over 2^22 doubles, median of 9),
so that timings can be compared across machines as ratios; the machine (CPU, cores, RAM, numpy,
date, load average before and after) is recorded beside the rows. With ``--only``, the other
modules' rows already in the JSON file are kept (each with its own date and load), so a partial
run updates the table without erasing it.

Usage: python benchmarks/run_all.py [--quick] [--only NAME ...] [--json PATH] [--markdown PATH]
(NAME: ``widgets`` for ``bench_widgets.py``; ``make benchmarks`` runs them all.)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
START, END = "<!-- results:start -->", "<!-- results:end -->"
TARGETS = {
    "1": "Marginals at the bandwidth limit",
    "2": "MW update <= 3 passes",
    "3": "MWEM that scales",
    "4": "Accuracy per second against the references",
    "5": "Adult, about 10^6 cells",
    "6": "Widgets",
    "7": "The book",
    "8": "Scale table",
    "noise": "Exact noise (issue 11): the safe samplers' speed",
}


def reference_seconds(repeats: int = 9) -> float:
    """One ``numpy.sum`` pass over 2^22 float64 (32 MiB), median of ``repeats``."""
    return sum_pass_seconds(2**22, repeats)


def sum_pass_seconds(size: int, repeats: int = 5) -> float:
    """One ``numpy.sum`` pass over ``size`` float64, median of ``repeats``: the benchmarks' unit."""
    x = np.random.default_rng(0).random(size)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        x.sum()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def machine() -> dict:
    def first(path: str, key: str) -> str:
        try:
            for line in Path(path).read_text().splitlines():
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
        except OSError:
            pass
        return "unknown"

    return {
        "cpu": first("/proc/cpuinfo", "model name") if sys.platform == "linux"
        else platform.processor() or "unknown",
        "cores": os.cpu_count(),
        "ram": first("/proc/meminfo", "MemTotal"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load": [round(x, 2) for x in os.getloadavg()],
    }  # fmt: skip


def modules(only: list[str] | None) -> dict[str, Path]:
    found = {p.stem.removeprefix("bench_"): p for p in sorted(HERE.glob("bench_*.py"))}
    if only:
        wanted = {name.removeprefix("bench_").removesuffix(".py") for name in only}
        unknown = wanted - set(found)
        if unknown:
            raise SystemExit(f"no benchmark module {sorted(unknown)}; there are {sorted(found)}")
        found = {k: v for k, v in found.items() if k in wanted}
    return found


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # dataclasses and pickling look their module up there
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def _value(row: dict) -> str:
    v = row["value"]
    text = f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"
    return f"{text} {row['unit']}".strip()


def table(results: dict) -> str:
    """The markdown table: every target of issue 15, its measured figures, met or not."""
    lines = ["| target | measure | value | × numpy pass | goal | met | notes |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    by_target: dict[str, list] = {k: [] for k in TARGETS}
    for name, entry in results["modules"].items():
        for row in entry["rows"]:
            key = row["target"].split()[0]
            by_target.setdefault(key, []).append((name, entry, row))
    for key, rows in by_target.items():
        title = f"{key}. {TARGETS[key]}" if key.isdigit() else TARGETS.get(key, key)
        if not rows:
            lines.append(f"| {title} | *not measured yet (its bench module has not landed)* "
                         "| | | | | |")  # fmt: skip
            continue
        for _, entry, row in rows:
            ratio = (f"{row['value'] / entry['reference']:,.0f}"
                     if row["unit"] == "s" and entry.get("reference") else "")  # fmt: skip
            cells = [title, row["measure"], _value(row), ratio, row["goal"],
                     "yes" if row["met"] else "**no**", row["notes"]]  # fmt: skip
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
            title = ""
    return "\n".join(lines)


def markdown(results: dict) -> str:
    m = results["machine"]
    runs = "; ".join(f"`{name}` {e['date']}, load {e['load']}{' (quick)' if e['quick'] else ''}"
                     for name, e in results["modules"].items())  # fmt: skip
    return (
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['ram']} RAM; Python {m['python']}, "
        f"numpy {m['numpy']}. Reference: one `numpy.sum` pass over 2^22 doubles took "
        f"{results['reference'] * 1e3:.2f} ms (the × column divides each time by it).\n"
        f"Runs: {runs}.\n\n{table(results)}"
    )


def write_markdown(path: Path, results: dict) -> None:
    text = path.read_text() if path.exists() else f"# Benchmarks\n\n{START}\n{END}\n"
    if START not in text or END not in text:
        text = text.rstrip() + f"\n\n{START}\n{END}\n"
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    path.write_text(f"{head}{START}\n{markdown(results)}\n{END}{tail}")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few seconds per module")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="e.g. widgets book")
    parser.add_argument("--json", type=Path, default=HERE / "results.json")
    parser.add_argument("--markdown", type=Path, default=ROOT / "BENCHMARKS.md")
    args = parser.parse_args(argv)

    results = {"modules": {}}
    if args.only and args.json.exists():
        results = json.loads(args.json.read_text())
    reference = reference_seconds()
    for name, path in modules(args.only).items():
        print(f"--- {name}", flush=True)
        load_before = [round(x, 2) for x in os.getloadavg()]
        start = time.perf_counter()
        rows = load(path).run(quick=args.quick)
        for row in rows:
            print(f"{row['measure'][:70]:70s} {_value(row):>16s}  "
                  f"{'met' if row['met'] else 'NOT MET':7s} {row['goal']}", flush=True)  # fmt: skip
        results["modules"][name] = {
            "rows": rows, "quick": args.quick, "seconds": time.perf_counter() - start,
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "load": [load_before, [round(x, 2) for x in os.getloadavg()]],
            "reference": reference,
        }  # fmt: skip
    results["machine"], results["reference"] = machine(), reference
    args.json.write_text(json.dumps(results, indent=1) + "\n")
    write_markdown(args.markdown, results)
    print(f"reference numpy.sum pass: {reference * 1e3:.2f} ms; wrote {args.json} and "
          f"{args.markdown}")  # fmt: skip
    return results


if __name__ == "__main__":
    main()
