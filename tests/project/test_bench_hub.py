"""make bench WHAT=hub (bench/hub.py): the record in docs/bench/ is a whole run, rendered as its report."""
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from bench import hub as bench

RECORD = ROOT / "docs" / "bench"


def record():
    return json.loads((RECORD / "hub.json").read_text())


def test_the_record_is_a_full_run_and_its_report():
    found = record()
    assert found["students"] == 10 == len(found["seconds"]) == len(found["memory"])
    assert found["summary"] == bench.summary(found)
    assert all(m["server MiB"] > 0 and m["kernel MiB"] > 0 for m in found["memory"].values())
    assert (RECORD / "hub.md").read_text() == bench.markdown(found)
