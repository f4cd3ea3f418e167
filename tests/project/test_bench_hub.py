"""make bench-hub (bench/hub.py): the record in docs/bench/ and the README's quote of it."""
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from bench import hub as bench

RECORD = ROOT / "docs" / "bench"
QUOTE = re.compile(r"`make bench WHAT=hub` \(([0-9-]+ [0-9:]+), \[docs/bench/hub\.md\]\(docs/bench/hub\.md\)\): "
                   r"(\d+) students logging in at the same moment each reached a usable JupyterLab in "
                   r"([0-9.]+) s \(the first\) to ([0-9.]+) s \(the last\), median ([0-9.]+) s; a single-user "
                   r"server held (\d+) MiB \(median; at most (\d+) MiB\)")


def record():
    return json.loads((RECORD / "hub.json").read_text())


def test_the_record_is_a_full_run_and_its_report():
    found = record()
    assert found["students"] == 10 == len(found["seconds"]) == len(found["memory"])
    assert found["summary"] == bench.summary(found)
    assert all(m["server MiB"] > 0 and m["kernel MiB"] > 0 for m in found["memory"].values())
    assert (RECORD / "hub.md").read_text() == bench.markdown(found)


def quoted(readme):
    match = QUOTE.search(readme)
    assert match, "the README's make bench-hub sentence is missing or reworded"
    when, students, first, last, median, server, most = match.groups()
    return {"when": when, "students": int(students), "first": float(first), "last": float(last),
            "median": float(median), "server MiB": int(server), "server MiB max": int(most)}


def expected(found):
    summary = found["summary"]
    return {"when": found["when"], "students": summary["students"], "first": summary["first"],
            "last": summary["last"], "median": summary["median"], "server MiB": summary["server MiB"],
            "server MiB max": summary["server MiB max"]}


def test_the_readme_quotes_the_record():
    assert quoted((ROOT / "README.md").read_text()) == expected(record())


def test_a_stale_quote_is_caught():
    readme = (ROOT / "README.md").read_text()
    found = record()
    stale = readme.replace(f"to {found['summary']['last']} s (the last)", f"to {found['summary']['last'] + 1} s (the last)")
    assert stale != readme and quoted(stale) != expected(found)
