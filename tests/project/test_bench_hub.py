"""make bench WHAT=hub (bench/hub.py): the record in docs/bench/, and docs/hub.md's quote of it."""
import json
import re
from pathlib import Path

from bench import hub as bench

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "docs" / "bench"
QUOTE = re.compile(
    r"`make bench WHAT=hub` \(([0-9-]+ [0-9:]+), \[bench/hub\.md\]\(bench/hub\.md\)\): (\d+) students "
    r"logging in at the same moment ran their first cell in ([0-9.]+) s \(median\) to ([0-9.]+) s \(the "
    r"slowest\) with no server running, and in ([0-9.]+) s to ([0-9.]+) s with their servers started ahead "
    r"\(make hub-servers took ([0-9.]+) s\); a student's server held ([0-9.]+) MiB \(PSS, median\) and its "
    r"kernel ([0-9.]+) MiB\. For (\d+) students: ([0-9.]+) GiB, (\d+) cores cold, (\d+) cores with the "
    r"servers started ahead")


def record():
    return json.loads((RECORD / "hub.json").read_text())


def test_the_record_is_a_full_run_and_its_report():
    found = record()
    assert found["students"] == 30
    for name in ("cold", "ahead"):
        assert len(found[name]["steps"]) == len(found[name]["students"]) == 30
        assert all(s["server PSS MiB"] > 0 and s["kernel PSS MiB"] > 0 for s in found[name]["students"].values())
        assert all(steps["cell executed"] >= steps["server ready"] > 0 for steps in found[name]["steps"].values())
        assert len(found[name]["loadavg"]) == 2 and all(len(load.split()) == 5 for load in found[name]["loadavg"])
    assert found["summary"] == bench.summary(found)
    assert (RECORD / "hub.md").read_text() == bench.markdown(found)


def quoted(text):
    match = QUOTE.search(text)
    assert match, "docs/hub.md's make bench WHAT=hub sentence is missing or reworded"
    when, students, *numbers = match.groups()
    return [when, int(students), *[float(n) for n in numbers]]


def expected(found):
    s = found["summary"]
    return [found["when"], s["students"], s["cold"]["median"], s["cold"]["slowest"], s["ahead"]["median"],
            s["ahead"]["slowest"], s["ahead"]["servers started ahead s"], s["cold"]["server PSS MiB"],
            s["cold"]["kernel PSS MiB"], s["plan"]["students"], s["plan"]["memory GiB"], s["plan"]["cores cold"],
            s["plan"]["cores ahead"]]


def test_the_hub_guide_quotes_the_record():
    assert quoted((ROOT / "docs" / "hub.md").read_text()) == expected(record())


def test_a_stale_quote_is_caught():
    text = (ROOT / "docs" / "hub.md").read_text()
    slowest = record()["summary"]["cold"]["slowest"]
    stale = text.replace(f"to {slowest} s (the slowest)", f"to {slowest + 1} s (the slowest)")
    assert stale != text and quoted(stale) != expected(record())
