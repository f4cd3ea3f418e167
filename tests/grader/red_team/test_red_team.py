"""The red team (tests/grader/red_team/cheaters.py) and an honest class, graded in one run of make
grade's own command (the tricks against a chapter's processes together in a second run, with a
smaller bound): every cheater scores 0, every honest student exactly what they earned, and
nothing a cheater did outlives the run, changes a file or reaches the network.

Isolation needs root and Linux namespaces (as on the machines the workbook is built and tested
on, and in CI). Without them this module fails, saying so: the promise it tests is not kept there.
"""
import csv
import hashlib
import json
import os
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

LIMIT = 5  # seconds per cell: the chapters' cells take milliseconds, a check a second or two with both cores
           # busy; each loop costs this much
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
            digest.update(os.fsencode(path.relative_to(folder)) + b"\0" + content)
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


def sandboxed_processes(graded):
    """The live processes of any user the run's sandboxes ran as (grades.json names the range;
    other grading runs on the machine use other users)."""
    from course.grader.sandbox.jail import processes_of
    first, last = graded["json"]["run"]["used"]["sandbox_uids"]
    assert FIRST_UID <= first <= last
    return processes_of(range(first, last + 1))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    isolation = isolation_here()
    assert isolation.complete, f"the grader cannot isolate student code here: {isolation.reason}"
    listener = Listener()
    folder = tmp_path_factory.mktemp("class")
    chapters = {c.number: c for c in graded_chapters()}
    given = handouts(chapters.values())
    cheaters, honest = {**red_team.cheaters(listener.port), **red_team.issue_28()}, red_team.honest()
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
    for name, build in {**red_team.LAYOUTS, **red_team.ATTACK_28}.items():
        build(folder, chapters, given)
    before = {"repository": fingerprint(ROOT, WATCHED), "class": fingerprint(folder)}
    out = tmp_path_factory.mktemp("grades")
    started = time.monotonic()
    printed = grade(folder, out, "--due", f"01={red_team.DUE_01}")
    seconds = time.monotonic() - started
    written = fingerprint(out)
    time.sleep(5)  # longer than any cheater's process waits before it tries to rewrite the grades
    return {"folder": folder, "out": out, "json": printed, "before": before, "written": written,
            "cheaters": cheaters, "honest": honest, "listener": listener, "seconds": seconds,
            "students": {s["student"]: s for s in printed["students"]}}


def grade(folder, out, *options):
    """make grade's own command on `folder`, two chapters at once: what it printed as JSON."""
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "workbook-grade"), str(folder), "--out", str(out),
                           "--timeout", str(LIMIT), "--jobs", "2", "--json", *options],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def graded_together(tmp_path_factory):
    """The tricks against a chapter's processes together (red_team.together()), graded in a run
    whose bound on them is red_team.TOGETHER_MEMORY_MIB."""
    folder = tmp_path_factory.mktemp("together")
    chapters = {c.number: c for c in graded_chapters()}
    given = handouts(chapters.values())
    for name, (numbers, build) in red_team.together().items():
        for number in numbers:
            chapter = chapters[number]
            save(folder, name, chapter, build(Edition(chapter, given[chapter.stem])).notebook, False)
    printed = grade(folder, tmp_path_factory.mktemp("grades-together"),
                    "--memory", str(red_team.TOGETHER_MEMORY_MIB))
    return {"json": printed, "students": {s["student"]: s for s in printed["students"]}}


def test_there_are_at_least_twenty_distinct_tricks(graded):
    assert len(graded["cheaters"]) >= 20


def test_every_cheater_scores_nothing(graded):
    names = [*graded["cheaters"], *red_team.FILES, *red_team.LAYOUTS]
    earned = {name: [f"{m['exercise']} ({m['sentence'][:90]})" for m in graded["students"][name]["exercises"]
                     if m["points"]] for name in names}
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
    assert sandboxed_processes(graded) == []
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


# ------------------------------------------------- issue 28: the trusted side, one trick per kind

def row_of(graded, student):
    with open(graded["out"] / "gradebook.csv", newline="") as handle:
        return next(row for row in csv.DictReader(handle) if row["student"].lstrip("'") == student)


def used(graded, student, chapter):
    """What grading one of the student's chapters used (grades.json), by chapter number."""
    chapters = graded["students"][student]["chapters"]
    return next(value for stem, value in chapters.items() if stem.startswith(f"{chapter:02d}-"))


def test_a_chapter_is_graded_from_its_own_hand_in_and_the_others_are_named_in_the_gradebook(graded):
    # nbgrader's layout: the right copy of chapter 1, inside the chapter 2 assignment's folder, is
    # refused; the wrong one, in its own folder, is graded
    row = row_of(graded, "late-copy-in-another-folder")
    assert ("02-visibility/01-purpose-and-validation.ipynb (chapter 1 handed in inside the folder of "
            "the 02-visibility assignment (chapter 2))") in row["refused"]
    assert sentence(graded, "late-copy-in-another-folder", "1.1")[0] == "not yet"
    # two copies of chapter 1 and no assignment folders: neither is graded, and both are named
    row = row_of(graded, "copies-of-one-chapter")
    assert row["refused"].count("one of 2 notebooks of chapter 1") == 2
    assert "later/01-purpose-and-validation.ipynb" in row["refused"]
    status, said = sentence(graded, "copies-of-one-chapter", "1.1")
    assert status == "ungradable" and "2 notebooks are chapter 1" in said and "hand in one" in said


def test_a_check_takes_no_exception_of_the_answers_for_its_own_event(graded):
    from workbook.teaching.exercises.checks.ch5 import OWN_CRASH
    assert sentence(graded, "a-crash-of-its-own", "5.3") == ("not yet", OWN_CRASH)
    status, said = sentence(graded, "a-conflict-of-its-own", "3.1")
    assert status == "not yet" and "though the store refused none of its writes" in said


def test_a_value_whose_hashes_collide_is_refused_before_it_costs_anything(graded):
    for student, number, chapter in (("colliding-set", "1.1", 1), ("colliding-dict", "4.3", 4)):
        status, said = sentence(graded, student, number)
        assert (status, said) == ("error", f"while being checked, your answer to {number} broke the "
                                           "grader's channel."), said
        assert used(graded, student, chapter)["judge_cpu"] < 10  # the old grader spent minutes


def test_a_statement_on_a_lent_connection_is_bounded_in_wall_clock_time(graded):
    status, said = sentence(graded, "a-long-statement", "2.1")
    assert (status, said) == ("error", "while being checked, your answer to 2.1 sent a statement "
                                       "through the grader's connection that ran past the 2 s limit.")
    assert used(graded, "a-long-statement", 2)["attempts"] == 2  # then the chapter ran again without it


def test_a_huge_cell_is_never_parsed_and_the_grader_stays_within_its_figures(graded):
    assert [m["status"] for m in graded["students"]["a-huge-cell"]["exercises"][:3]] == ["missing"] * 3
    run = graded["json"]["run"]
    assert run["used"]["judge_mib"] <= run["budgets"]["judge"]["memory_mib"]
    assert run["used"]["grader_mib"] < 400   # the old grader held 1.9 GB for this notebook


def test_what_a_file_cannot_hold_is_written_escaped_and_every_file_is_whole(graded):
    status, said = sentence(graded, "a-lone-surrogate", "1.2")
    assert (status, said) == ("error", "ValueError (half a character: \\udcff) in your answer to 1.2.")
    notes = graded["students"]["a-name-that-is-not-utf8"]["notes"]
    assert "notes-\\xff.ipynb is none of the graded chapters and was not graded." in notes, notes
    for path in graded["out"].rglob("*"):
        if path.is_file():
            path.read_bytes().decode("utf-8")  # strict: no lone surrogate reached a file
    listed = {g["student"] for g in json.loads((graded["out"] / "grades.json").read_text())["students"]}
    assert listed == set(graded["students"]) and len(listed) == len(list((graded["out"] / "feedback").iterdir()))


def test_no_cell_of_the_gradebook_is_a_formula(graded):
    with open(graded["out"] / "gradebook.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    assert not [cell for row in rows for cell in row if cell.startswith(("=", "+", "-", "@"))]
    assert {row[0] for row in rows} >= {"'" + name for name in red_team.FORMULAS}


def test_a_students_processes_are_bounded_together(graded_together):
    bounds = graded_together["json"]["bounds"]
    assert bounds["grouped"], bounds["sentence"]   # this machine gives cgroup v1's memory and pids
    assert bounds["memory_mib"] == red_team.TOGETHER_MEMORY_MIB
    chapter = used(graded_together, "many-children", 1)
    # eight children of up to 400 MB each, each capped at MEMORY on its own: 2 GiB if nothing else
    assert chapter["sandbox_memory"] <= bounds["memory_mib"] << 20
    assert chapter["oom_kills"] >= 1
    assert graded_together["students"]["many-children"]["points"] == 0
    assert sandboxed_processes(graded_together) == []   # the children meant to sleep 60 s did not


def test_no_honest_students_chapter_ran_into_a_budget(graded):
    # beside every trick above, each honest chapter was graded by one judge, within its budget,
    # and no process of theirs was killed for the memory of their chapter's processes together
    for name in graded["honest"]:
        for stem, chapter in graded["students"][name]["chapters"].items():
            assert chapter["attempts"] == 1 and chapter["oom_kills"] == 0, (name, stem, chapter)


# ------------------------------------------------- attack-28: a name, a timestamp, a classmate's name

def test_a_name_too_long_for_a_file_name_is_graded_with_the_class_in_a_file_of_its_own(graded):
    (name,) = [n for n in graded["students"] if n.startswith(red_team.LONG_NAME[:10])]
    student = graded["students"][name]
    assert len(name.encode()) <= 200 and student["points"] == 0
    assert [m["status"] for m in student["exercises"][:3]] == ["not yet"] * 3   # graded, not skipped
    path = graded["out"] / student["feedback"]
    assert len(os.fsencode(path.name)) <= 255 and "  1.1   0 of 1   not yet: " in path.read_text()
    assert sorted(os.fsencode(s["feedback"]) for s in graded["students"].values()) == \
        sorted(os.fsencode(f"feedback/{p.name}") for p in (graded["out"] / "feedback").iterdir())


def test_a_timestamp_is_read_as_nbgrader_reads_it_and_one_that_cannot_be_is_late_and_named(graded):
    assert row_of(graded, "padded-stamp")["late"] == "1: 3 days 17 h"
    row = row_of(graded, "garbled-stamp")
    assert row["late"] == "1: by a time unknown"
    assert ("01-purpose-and-validation/timestamp.txt (timestamp.txt is not a date and time, so when "
            "it was handed in is unknown and it counts as late)") in row["refused"]
    # late work keeps its points (LATE=none), as nbgrader's default
    assert graded["students"]["padded-stamp"]["points"] == graded["students"]["garbled-stamp"]["points"] == 3


def test_a_notebook_named_after_a_classmate_is_named_and_their_folder_is_graded(graded):
    row = row_of(graded, "victim")
    assert row["total"] == "3"
    assert row["refused"] == ("victim.ipynb in the class folder (named as this student's folder, "
                              "which is graded instead)")
