"""The recorded benchmark run (make bench-record WHAT=store: docs/bench/report.md and bench.png,
workbook/benchmarks/results.json) is a whole run, and its report is the record rendered."""
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from bench import report
FOLDER = ROOT / "docs" / "bench"
DATA = ROOT / "workbook" / "benchmarks"   # the record's figures, package data the appendix reads


def record():
    return json.loads((DATA / "results.json").read_text())


def test_the_record_is_a_full_run():
    run = record()
    assert not run["quick"]
    assert {"overhead", "growth", "contention", "notebooks", "setup"} <= set(run)
    assert {r["impl"] for r in run["overhead"]} >= {"floor", "store", "reference", "json only"}
    assert run["growth"]["sizes"] == [100, 1_000, 10_000, 100_000]
    assert len(run["notebooks"]["chapters"]) == 6 and not run["notebooks"]["failed"]
    assert (FOLDER / "bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_is_the_record_rendered():
    assert (FOLDER / "report.md").read_text() == report.markdown(record())


def test_readme_table_shows_every_target_with_a_verdict():
    lines = report.readme_table(record())
    assert len(lines) == 2 + len(report.TARGETS)
    assert all(line.endswith(("| PASS |", "| MISS |")) for line in lines[2:])


def test_the_record_timed_the_set_up_from_fresh_clones_with_empty_caches():
    setup = record()["setup"]
    assert not setup["warm"] and setup["lab"]["installer"].startswith("uv ")
    assert " passed" in setup["test"]["summary"] and "failed" not in setup["test"]["summary"]
