"""make reliability-record (tools/reliability.py): docs/reliability/figures.md is what the command
renders from the records beside it, and each record has the shape the command writes. Counts in
prose are never checked here: a record changes only when its command runs again."""
import importlib.util
import json
from pathlib import Path

import pytest

from quoted import checks

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("reliability", ROOT / "tools" / "reliability.py")
reliability = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reliability)

RECORDS = sorted((ROOT / "docs" / "reliability").glob("*.json"))


def test_the_page_is_rendered_from_the_records():
    assert RECORDS, "no record in docs/reliability/: make reliability-record RUN=test"
    assert reliability.PAGE.read_text() == reliability.markdown(reliability.records())


def test_every_record_file_is_a_run_the_command_knows():
    assert {path.stem for path in RECORDS} <= set(reliability.RUNS)


@pytest.mark.parametrize("path", RECORDS, ids=[path.stem for path in RECORDS])
def test_a_record_names_its_commit_machine_load_and_command(path):
    record = json.loads(path.read_text())
    assert record["run"] == path.stem and record["command"] == reliability.RUNS[path.stem]
    assert len(record["commit"]) == 40 and isinstance(record["clean"], bool)
    assert {"cores", "system", "python", "sqlite"} <= set(record["machine"])
    if path.stem in reliability.TARGETS:
        assert record["exit status"] == 0 and record["tests"]["failed"] == 0
        assert record["tests"]["passed"] + record["tests"]["skipped"] <= record["tests"]["collected"]
        assert len(record["load before"]) == len(record["load after"]) == 3
    if path.stem == "loaded":
        assert len(record["runs"]) == record["times"]
        assert record["passed"] == sum(run["passed"] for run in record["runs"])
    if path.stem == "ci":
        ran = [command["command"] for command in record["commands"]]
        # .ci/run's commands at the record's commit (they may have changed since: the page names it)
        assert ran == record["planned"][:len(ran)]
        # make test among them: a command of its own, or one of make checks' suites
        suites = [suite["command"] for command in record["commands"] for suite in command.get("suites", [])]
        assert "make test" in record["planned"] + suites
        assert record["passed"] == (len(ran) == len(record["planned"])
                                    and all(command["exit status"] == 0 for command in record["commands"]))
        assert all(command["cpu seconds"] >= 0 and command["seconds"] > 0 for command in record["commands"])


def test_the_ci_run_takes_the_commands_ci_runs_in_their_order():
    from quoted import ci_commands
    assert [f"make {target}" for target in reliability.ci_targets()] == ci_commands()


def test_the_suites_of_a_command_are_read_from_its_output_in_the_order_they_ended():
    commands = reliability.suite_commands(ROOT)
    hub, postgres = [line for line, target in commands.items() if target in ("test-hub", "test-postgres")]
    printed = (f"Running test-hub ... test-tooling, two at a time\n{postgres}\n"
               "....\n348 passed, 3 warnings in 42.16s ==\n"
               f"{hub}\n..F\nFAILED tests/hub/test_hub.py::test_x\n1 failed, 21 passed in 211.74s (0:03:31)\n")
    assert reliability.suites(printed, commands) == [{"command": "make test-postgres", "pytest seconds": 42.16},
                                                     {"command": "make test-hub", "pytest seconds": 211.74}]
    assert sorted(commands.values()) == sorted(c.removeprefix("make ") for c in checks())
    assert reliability.suites("12 passed in 3.2s\n", commands) == []
