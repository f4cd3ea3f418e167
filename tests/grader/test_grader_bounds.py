"""The grader's trusted side, part by part, without a sandbox or root: what it reads costs time and
memory in proportion to its size, within stated caps; the files of a run are written whole and
together; and a student's processes are put in control groups of their job (on a made-up tree of
them). tests/grader/red_team/ tries each of these through make grade, against determined
students."""
import csv
import io
import json
import os
from pathlib import Path

import pytest

from course.grader import cgroups, output, reading, text, wire
from course.grader.cgroups import Bounds
from course.grader.chapters import SOURCE, read_chapter
from course.grader.gradebook import Gradebook, Grades, Mark
from course.grader.judge import lending
from course.grader.judge.sandboxes import Isolation

P = 2**61 - 1  # ints that differ by a multiple of it hash alike


# ------------------------------------------------------------------ decoding what a sandbox sends

def test_a_set_or_dict_whose_items_hashes_collide_is_refused_before_it_is_built():
    for value in ({"$": "set", "v": [P * k for k in range(1, 100)]},
                  {"$": "frozenset", "v": [{"$": "tuple", "v": [P * k]} for k in range(1, 100)]},
                  {"$": "dict", "v": [[P * k, 1] for k in range(1, 100)]}):
        with pytest.raises(wire.WireError, match="hashes collide"):
            wire.Decoder()(value)
    # a few collisions are plain data (0 and P hash alike)
    assert wire.Decoder()({"$": "set", "v": [0, P, 2 * P, 1]}) == {0, P, 2 * P, 1}
    assert wire.Decoder()({"$": "dict", "v": [["a", 1], ["b", 2]]}) == {"a": 1, "b": 2}


def test_unhashable_items_are_refused_as_before():
    with pytest.raises(wire.WireError, match="cannot be in one"):
        wire.Decoder()({"$": "set", "v": [{"$": "list", "v": []}]})


def test_stand_ins_for_objects_share_a_few_classes_whatever_the_names_sent():
    decode = lending.JudgeDecoder(None, None)
    values = decode({"$": "list", "v": [{"$": "object", "type": f"m.T{n}"} for n in range(2000)]})
    assert len({type(value) for value in values}) <= lending.MOST_TYPES + 1
    assert type(values[0]).__qualname__ == "T0" and type(values[-1]).__qualname__ == "object"


# ------------------------------------------------------------------ reading a notebook

def notebook_bytes(cells):
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def code(source, **metadata):
    return {"cell_type": "code", "metadata": metadata, "outputs": [], "execution_count": None,
            "source": source}


def test_a_notebook_is_refused_by_its_size_and_its_count_of_values_before_it_is_parsed():
    with pytest.raises(reading.Unreadable, match="larger than 16 MB"):
        reading.load(b" " * (reading.MOST_BYTES + 1))
    with pytest.raises(reading.Unreadable, match="more than 500,000 JSON values"):
        reading.load(b"[" + b"[]," * reading.MOST_VALUES + b"[]]")
    with pytest.raises(reading.Unreadable, match="not valid JSON"):
        reading.load(b'{"cells": [')
    with pytest.raises(reading.Unreadable, match="not an nbformat 4 notebook"):
        reading.load(b'{"cells": [], "nbformat": 3}')
    assert reading.load(notebook_bytes([code(["a = 1\n", "b = 2"])])).cells[0].source == "a = 1\nb = 2"


def test_a_cell_larger_than_the_cap_is_never_parsed_and_an_answer_that_large_is_refused(monkeypatch):
    chapter = read_chapter(SOURCE / "01-purpose-and-validation.ipynb")
    huge = "a\n" * reading.MOST_CELL
    parsed = []
    real = reading.ast.parse
    monkeypatch.setattr(reading.ast, "parse", lambda source: parsed.append(len(source)) or real(source))
    notebook = reading.load(notebook_bytes([code(huge), code("wide_fact = 1")]))
    found = reading.answers(notebook, chapter)
    assert found["1.1"].source == "wide_fact = 1" and max(parsed) < reading.MOST_CELL
    answer = reading.Answer(huge, "cell id")
    assert reading.too_large(answer) == (f"holds {len(huge):,} characters, more than the "
                                         f"{reading.MOST_CELL:,} the grader reads of an answer cell")


# ------------------------------------------------------------------ the files of a run

def book_of(names, sentence="fine"):
    chapter = read_chapter(SOURCE / "01-purpose-and-validation.ipynb")
    grades = [Grades(name, [Mark(e.number, chapter.stem, 0, 1, "not yet", sentence) for e in chapter.exercises],
                     notes=[f"{name} note"], refused=[("a\udcff.ipynb", "a copy")])
              for name in names]
    return Gradebook([chapter], grades, 1.0, 1, Isolation("none", "a test of the files only."),
                     bounds=Bounds("per process", 1 << 30, 64, False, ("no groups here",)))


def test_a_run_replaces_the_previous_one_whole_in_one_rename(tmp_path):
    out = tmp_path / "grades"
    output.write(book_of(["ann", "bob"]), out)
    first = os.readlink(out / "current")
    output.write(book_of(["cat"]), out)
    assert os.readlink(out / "current") != first and not (out / first).exists()
    assert sorted(p.name for p in (out / "feedback").iterdir()) == ["cat.txt"]
    assert [row[0] for row in csv.reader(io.StringIO((out / "gradebook.csv").read_text()))][1:] == ["cat"]
    assert [s["student"] for s in json.loads((out / "grades.json").read_text())["students"]] == ["cat"]
    assert {os.readlink(out / name) for name in output.NAMES} == {f"current/{name}" for name in output.NAMES}


def test_a_run_that_fails_while_writing_leaves_the_previous_run_as_it_was(tmp_path, monkeypatch):
    out = tmp_path / "grades"
    output.write(book_of(["ann", "bob"]), out)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    real = output.feedback_text
    monkeypatch.setattr(output, "feedback_text",
                        lambda grades, book: real(grades, book) if grades.student != "dan" else 1 / 0)
    with pytest.raises(ZeroDivisionError):
        output.write(book_of(["cat", "dan"]), out)
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in (out / "feedback").iterdir()) == ["ann.txt", "bob.txt"]


def test_an_older_graders_files_are_replaced_by_the_links(tmp_path):
    out = tmp_path / "grades"
    (out / "feedback").mkdir(parents=True)
    (out / "feedback" / "old.txt").write_text("old")
    (out / "gradebook.csv").write_text("old")
    output.write(book_of(["ann"]), out)
    assert sorted(p.name for p in (out / "feedback").iterdir()) == ["ann.txt"]
    assert (out / "gradebook.csv").is_symlink() and "ann" in (out / "gradebook.csv").read_text()


def test_no_students_name_can_fail_the_run_every_feedback_file_name_is_bounded_and_unique(tmp_path):
    # attack-28: 63 four-byte characters are a legal folder name (252 bytes), but with ".txt" the
    # feedback file's name was 256 bytes, and the whole class got no files at all
    from course.grader.submissions import shown
    emoji = "\U0001F600"
    names = [shown(emoji * 63), shown(emoji * 62 + "\u00e9"), shown("x" * 300), "ann",
             emoji * 70, emoji * 70, "ann"]          # the last three as no roster would give them
    output.write(book_of(names), tmp_path / "grades")
    files = sorted(os.fsencode(p.name) for p in (tmp_path / "grades" / "feedback").iterdir())
    assert len(files) == len(names) and max(len(name) for name in files) <= 255
    listed = json.loads((tmp_path / "grades" / "grades.json").read_text())["students"]
    assert [s["student"] for s in listed] == names
    assert sorted(os.fsencode(s["feedback"].removeprefix("feedback/")) for s in listed) == files
    for student in listed:
        assert (tmp_path / "grades" / student["feedback"]).read_text().startswith(
            f"{text.safe(student['student'])}: ")
    # the names shown are bounded in bytes too, and a folder named as another's cut name is not it
    assert len(shown(emoji * 63).encode()) <= 200 and shown(emoji * 63) != shown(emoji * 64)
    assert shown(shown(emoji * 63)) != shown(emoji * 63)
    # on a file system of shorter names, the folder's own NAME_MAX is kept
    short = output.feedback_names(names, 143)
    assert len(set(short)) == len(names) and max(len(n.encode()) for n in short) <= 143


def test_text_from_a_student_is_written_escaped_and_no_csv_cell_is_a_formula(tmp_path):
    out = tmp_path / "grades"
    names = ["=1+1", "+cmd", "-2", "@SUM(A1)", "tab\there"]
    output.write(book_of([text.safe(name) for name in names], sentence="half \udcff a \x1b[31mred"), out)
    for path in out.rglob("*"):
        if path.is_file():
            path.read_bytes().decode("utf-8")
    rows = list(csv.reader(io.StringIO((out / "gradebook.csv").read_text())))
    assert [row[0] for row in rows[1:]] == ["'=1+1", "'+cmd", "'-2", "'@SUM(A1)", "tab\\there"]
    assert all(row[-3] == "a\\udcff.ipynb (a copy)" for row in rows[1:])
    assert "not yet: half \\udcff a red" in (out / "feedback" / "tab\\there.txt").read_text()
    assert text.cell(3) == 3 and text.cell("a\x00b") == "a\\x00b"


# ------------------------------------------------------------------ control groups

def fake_v1(root, own="/session"):
    for controller in ("memory", "pids", "cpuset"):
        folder = root / controller / own.lstrip("/")
        folder.mkdir(parents=True)
    (root / "cpuset" / "session" / "cpuset.cpus").write_text("0-1\n")
    (root / "cpuset" / "session" / "cpuset.mems").write_text("0\n")
    return f"3:cpuset:{own}\n4:memory:{own}\n8:pids:{own}\n0::/\n"


def test_cgroup_v1_gives_each_job_memory_tasks_and_a_core_of_its_own(tmp_path, monkeypatch):
    text_ = fake_v1(tmp_path)
    # the kernel makes a group's files when it is made: here mkdir makes the few the grader writes
    real_mkdir = Path.mkdir

    def mkdir(self, *args, **kwargs):
        real_mkdir(self, *args, **kwargs)
        for name in ("memory.limit_in_bytes", "pids.max", "cpuset.cpus", "cpuset.mems", "cgroup.procs"):
            (self / name).touch()
    monkeypatch.setattr(Path, "mkdir", mkdir)
    groups = cgroups.Groups(1 << 30, 64, cpus=[0, 1], root=tmp_path, proc_cgroup=text_, name="g")
    assert groups.kind == "cgroup v1" and groups.bounds.grouped and groups.bounds.cores
    job = groups.job(slot=3)
    memory = tmp_path / "memory" / "session" / "g" / "job-1"
    assert (memory / "memory.limit_in_bytes").read_text() == str(1 << 30)
    assert (tmp_path / "pids" / "session" / "g" / "job-1" / "pids.max").read_text() == "64"
    assert (tmp_path / "cpuset" / "session" / "g" / "job-1" / "cpuset.cpus").read_text() == "1"
    assert job.judge == [tmp_path / "cpuset" / "session" / "g" / "job-1" / "cgroup.procs"]
    assert len(job.sandbox) == 3
    assert "a core of its own" in groups.bounds.sentence() and "1024 MiB and 64 tasks" in groups.bounds.sentence()


def test_cgroup_v2_gives_each_job_a_group_with_a_leaf_for_its_sandboxes(tmp_path, monkeypatch):
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("memory pids\n")
    real_mkdir = Path.mkdir

    def mkdir(self, *args, **kwargs):
        real_mkdir(self, *args, **kwargs)
        for name in ("cgroup.subtree_control", "cpuset.cpus", "memory.max", "memory.swap.max", "pids.max",
                     "cgroup.procs"):
            (self / name).touch()
    monkeypatch.setattr(Path, "mkdir", mkdir)
    groups = cgroups.Groups(512 << 20, 32, cpus=[0, 1], root=tmp_path, proc_cgroup="0::/user.slice\n", name="g")
    assert groups.kind == "cgroup v2"
    job = groups.job(slot=0)
    top = tmp_path / "g" / "job-1"
    assert (top / "cpuset.cpus").read_text() == "0"
    assert (top / "sandbox" / "memory.max").read_text() == str(512 << 20)
    assert (top / "sandbox" / "memory.swap.max").read_text() == "0"
    assert (top / "sandbox" / "pids.max").read_text() == "32"
    assert job.judge == [top / "judge" / "cgroup.procs"] and job.sandbox == [top / "sandbox" / "cgroup.procs"]


def test_without_groups_the_bound_is_stated_per_process_and_for_all_of_a_students_processes(tmp_path):
    groups = cgroups.Groups(1 << 30, 64, root=tmp_path / "none", proc_cgroup="0::/\n", name="g")
    assert groups.kind == "per process" and not groups.bounds.grouped
    said = groups.bounds.sentence()
    assert said.startswith("Bounded per process only (")
    assert "up to 65536 MiB" in said
    assert groups.job(0).sandbox == []
