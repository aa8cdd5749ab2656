"""Prepare the bundled copy of the UCI Adult data: ``dpteach/datasets/adult.csv.gz``.

Usage: python scripts/prepare_adult.py [SOURCE_DIR]   (default: ../shared/data/adult)

The source is ``adult_pgm.csv`` (48,842 rows = the UCI training and test splits together), every
column already coded as small integers in the discretisation of the private-pgm / AIM / RAP
literature, and ``adult_pgm_domain.json`` with each column's number of values. The script checks
every value against the domain sizes built into :mod:`dpteach.adult` and writes a gzip-compressed
CSV with a header line; the output is byte-reproducible (gzip mtime 0, no file name).

Data: Becker, B. and Kohavi, R. (1996). Adult. UCI Machine Learning Repository.
https://doi.org/10.24432/C5XW20. Licensed CC BY 4.0. Coding from the private-pgm project
(Apache-2.0).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpteach.adult import ADULT_DOMAIN, ADULT_ROWS  # noqa: E402


def prepare(source: Path, target: Path) -> None:
    sizes = json.loads((source / "adult_pgm_domain.json").read_text())
    if sizes != ADULT_DOMAIN:
        raise SystemExit(f"domain sizes differ from dpteach.adult.ADULT_DOMAIN: {sizes}")
    with open(source / "adult_pgm.csv", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = [[int(v) for v in row] for row in reader]
    if header != list(ADULT_DOMAIN) or len(rows) != ADULT_ROWS:
        raise SystemExit(f"unexpected header or row count: {header}, {len(rows)} rows")
    for row in rows:
        for name, value in zip(header, row, strict=True):
            if not 0 <= value < ADULT_DOMAIN[name]:
                raise SystemExit(f"{name}={value} is outside 0..{ADULT_DOMAIN[name] - 1}")
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows([header, *rows])
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
            gz.write(text.getvalue().encode())
    print(f"wrote {target} ({target.stat().st_size:,} bytes, {len(rows):,} rows)")


if __name__ == "__main__":
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "data" / "adult"
    prepare(src, ROOT / "dpteach" / "datasets" / "adult.csv.gz")
