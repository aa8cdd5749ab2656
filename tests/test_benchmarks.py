"""The benchmark harness runs: ``benchmarks/run_all.py --quick`` on one fast module writes the
JSON results (with the machine and the numpy reference) and the table between BENCHMARKS.md's
markers, keeping the prose around it. No timing is asserted (speed is measured, not tested)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEYS = {"target", "measure", "value", "unit", "goal", "met", "notes"}


def test_run_all_quick_writes_the_json_and_the_markdown_table(tmp_path):
    markdown = tmp_path / "BENCHMARKS.md"
    markdown.write_text("# Benchmarks\n\nprose before\n\n<!-- results:start -->\nold table\n"
                        "<!-- results:end -->\n\nprose after\n")  # fmt: skip
    out = tmp_path / "results.json"
    subprocess.run(
        [sys.executable, str(ROOT / "benchmarks/run_all.py"), "--quick", "--only", "widgets",
         "--json", str(out), "--markdown", str(markdown)],
        check=True, cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    results = json.loads(out.read_text())
    assert set(results["modules"]) == {"widgets"}
    rows = results["modules"]["widgets"]["rows"]
    assert rows and all(set(row) == KEYS for row in rows)
    assert all(row["target"].startswith("6 ") and row["value"] > 0 for row in rows)
    assert results["reference"] > 0
    assert {"cpu", "cores", "ram", "numpy", "date", "load"} <= set(results["machine"])
    text = markdown.read_text()
    assert text.startswith("# Benchmarks\n\nprose before") and text.endswith("prose after\n")
    assert "old table" not in text and "| 6. Widgets |" in text
    assert "| 1. Marginals at the bandwidth limit | *not measured yet" in text  # pending rows
