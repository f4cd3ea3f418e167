"""The red team (tests/grader/red_team/cheaters.py) and an honest class, graded in one run of make grade's own
command: every cheater scores 0, every honest student exactly what they earned, and nothing a
cheater did outlives the run, changes a file or reaches the network.

Isolation needs root and Linux namespaces (as on the machines the workbook is built and tested
on, and in CI). Without them this module fails, saying so: the promise it tests is not kept there.
"""
import csv
import hashlib
import json
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

import cheaters as red_team
from course.grader.chapters import graded_chapters
from course.grader.judge.sandboxes import isolation_here
from course.grader.sandbox.jail import FIRST_UID
from course.grader.demo_class import Edition, handouts, save

LIMIT = 3  # seconds per cell: the chapters' cells take milliseconds; each loop costs this much
WATCHED = ("workbook", "course", "notebooks", "tools", "tests", "docs", "jupyterlab")


def fingerprint(folder, names=None):
    """A hash of every file under folder (or under its `names`), by path and content (a link by
    where it points)."""
    digest = hashlib.sha256()
    roots = [folder / name for name in names] if names else [folder]
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if (p.is_file() or p.is_symlink())
                           and "__pycache__" not in p.parts):
            content = str(path.readlink()).encode() if path.is_symlink() else path.read_bytes()
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + content)
    return digest.hexdigest()


class Listener:
    """A port on 127.0.0.1 that counts who reached it."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.reached = 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            self.reached += 1
            connection.close()


def sandboxed_processes():
    from course.grader.sandbox.jail import processes_of
    return processes_of(range(FIRST_UID, FIRST_UID + 10**7))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    isolation = isolation_here()
    assert isolation.complete, f"the grader cannot isolate student code here: {isolation.reason}"
    listener = Listener()
    folder = tmp_path_factory.mktemp("class")
    chapters = {c.number: c for c in graded_chapters()}
    given = handouts(chapters.values())
    cheaters, honest = red_team.cheaters(listener.port), red_team.honest()
    for name, (numbers, build) in cheaters.items():
        for number in numbers:
            chapter = chapters[number]
            save(folder, name, chapter, build(Edition(chapter, given[chapter.stem])).notebook, False)
    for name, (numbers, build, _) in honest.items():
        for number in numbers:
            chapter = chapters[number]
            save(folder, name, chapter, build(Edition(chapter, given[chapter.stem])).notebook, False)
    for name, (number, make) in red_team.FILES.items():
        chapter = chapters[number]
        save(folder, name, chapter, red_team.wrong(Edition(chapter, given[chapter.stem])).notebook, False)
        make(folder / name / chapter.filename, ROOT / "notebooks" / chapter.filename)
    before = {"repository": fingerprint(ROOT, WATCHED), "class": fingerprint(folder)}
    out = tmp_path_factory.mktemp("grades")
    started = time.monotonic()
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "workbook-grade"), str(folder), "--out", str(out),
                           "--timeout", str(LIMIT), "--jobs", "2", "--json"],
                          capture_output=True, text=True, timeout=900)
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    written = fingerprint(out)
    time.sleep(5)  # longer than any cheater's process waits before it tries to rewrite the grades
    printed = json.loads(done.stdout)
    return {"folder": folder, "out": out, "json": printed, "before": before, "written": written,
            "cheaters": cheaters, "honest": honest, "listener": listener, "seconds": seconds,
            "students": {s["student"]: s for s in printed["students"]}}


def test_there_are_at_least_twenty_distinct_tricks(graded):
    assert len(graded["cheaters"]) >= 20


def test_every_cheater_scores_nothing(graded):
    earned = {name: [f"{m['exercise']} ({m['sentence'][:90]})" for m in graded["students"][name]["exercises"]
                     if m["points"]] for name in [*graded["cheaters"], *red_team.FILES]}
    assert {name: found for name, found in earned.items() if found} == {}


def test_every_honest_student_gets_exactly_what_they_earned(graded):
    for name, (_, _, points) in graded["honest"].items():
        got = [m["points"] for m in graded["students"][name]["exercises"]]
        assert got == points, (name, [m["sentence"] for m in graded["students"][name]["exercises"]])


def test_the_grades_were_computed_with_isolation_and_say_so(graded):
    assert graded["json"]["isolation"]["complete"] is True
    with open(graded["out"] / "gradebook.csv") as handle:
        assert {row["isolation"] for row in csv.DictReader(handle)} == {"isolated"}
    for feedback in (graded["out"] / "feedback").iterdir():
        assert "Isolated: each student's chapter ran as a user of its own" in feedback.read_text()


def test_nothing_a_cheater_started_outlives_the_grader_or_rewrites_its_files(graded):
    assert sandboxed_processes() == []
    assert fingerprint(graded["out"]) == graded["written"]
    assert "forged" not in (graded["out"] / "gradebook.csv").read_text()


def test_no_file_of_the_repository_or_the_class_changed(graded):
    assert fingerprint(ROOT, WATCHED) == graded["before"]["repository"]
    assert fingerprint(graded["folder"]) == graded["before"]["class"]


def test_no_sandbox_reached_the_network(graded):
    assert graded["listener"].reached == 0


def sentence(graded, student, number):
    mark = next(m for m in graded["students"][student]["exercises"] if m["exercise"] == number)
    return mark["status"], mark["sentence"]


def test_the_tricks_ran_and_each_failed_only_its_own_exercise(graded):
    # They are not refused unread: each trick ran, and hurt nothing but itself.
    assert sentence(graded, "memory-bomb", "1.1") == ("error", "MemoryError in your answer to 1.1.")
    status, said = sentence(graded, "ignores-interrupts", "2.1")
    assert status == "error" and "did not stop when interrupted" in said
    assert sentence(graded, "right-but-a-memory-bomb", "1.2")[0] == "correct"
    status, said = sentence(graded, "source-matching-tests", "6.1")
    assert status == "not yet", said
    status, said = sentence(graded, "hard-codes-the-examples", "1.3")
    assert status == "not yet" and "to_key(" in said
    status, said = sentence(graded, "calls-the-oracles", "2.3")
    assert status == "not yet"
    status, said = sentence(graded, "links-to-the-source", "1.1")
    assert status == "ungradable" and "a link" in said
    assert sentence(graded, "cell-ids-that-are-lists", "1.1")[0] in ("not yet", "ungradable")  # graded
    assert sentence(graded, "raises-what-the-checks-catch", "1.3") == (
        "not yet", "running your answer raised SimulatedCrash: boom.")
    assert "keep it to 50 or fewer" in sentence(graded, "a-long-scenario", "5.2")[1]
    assert "went on after the simulated crash" in sentence(graded, "writes-after-the-crash", "5.3")[1]
    assert "binding the tenant, kind and key" in sentence(graded, "values-in-hex", "2.2")[1]
    # the lent store opens databases of its own, at most four, never a path of the grader's
    assert sentence(graded, "opens-the-graders-files", "6.1")[0] == "not yet"
    assert not any(Path(path).exists() for path in (red_team.PLANTED[0], ROOT / red_team.PLANTED[1]))
    said = sentence(graded, "opens-database-after-database", "6.2")[1]  # the fifth connect raised
    assert "at most 4 databases" in said or "crashed with ValueError" in said, said
    assert "returns at most" in sentence(graded, "rows-too-big-to-send", "2.1")[1]


def test_the_run_took_no_longer_than_its_cells_allow(graded):
    # rows that never end, and SQLite asked to fill the grader, are bounded in the judge
    assert graded["seconds"] < 600
