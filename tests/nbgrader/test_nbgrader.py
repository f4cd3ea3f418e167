"""nbgrader 0.9.6 end to end on the class release (make test-nbgrader; a few minutes).

1. `make class` writes the course folder; `nbgrader generate_assignment "*"` turns its source/
   into release/, which must equal our hand-out cell for cell (nbgrader adds checksums).
2. The generated class (right, blank, partly wrong, an error cell, an endless loop, a loop that
   ignores the interrupt, a loop that floods its output, a tamperer) is made from nbgrader's
   release, in nbgrader's submitted/ layout. A student hands in only the chapters where their
   notebook is not the right answers' (the three loops differ in chapter 1 alone), so each
   distinct notebook is graded once by each grader; the others are missing, worth nothing.
3. `nbgrader autograde "*"` and `nbgrader export` grade it with the release's
   nbgrader_config.py; make grade grades the same folder. Every student's points must be equal,
   exercise by exercise and chapter by chapter: a cell that ignores the interrupt or floods its
   output fails alone under nbgrader too, instead of losing the whole chapter.

nbgrader runs in build/nbgrader-venv (tools/nbgrader-venv); the kernel it starts for the
chapters is this repository's .venv, with solutions hidden, as a course would set it up.
nbgrader grades several course folders at once (nbgrader's gradebook is one SQLite file), each
taking its steps in order: chapter 1, whose loops mostly wait out their limit, in one of its
own, the other chapters dealt over one per core; make grade grades its copy of the class
meanwhile.
"""
import csv
import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from shlex import quote

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
from course.grader.chapters import graded_chapters
from course.editions import release
from course.grader.demo_class import DESERVED, KINDS, gradebook_csv, write_class

NBGRADER = ROOT / "build" / "nbgrader-venv"
RUN = ROOT / "build" / "nbgrader-run"
TIMEOUT = 10
CORES = max(1, len(os.sched_getaffinity(0)))

# Per-cell grades out of nbgrader's gradebook, printed as JSON by nbgrader's own Python.
GRADES = """
import json, sys
from nbgrader.api import Gradebook
found = []
with Gradebook("sqlite:///" + sys.argv[1]) as gradebook:
    for assignment in gradebook.assignments:
        for submission in assignment.submissions:
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    found.append([submission.student.id, grade.cell.name, grade.score, grade.max_score])
print(json.dumps(found))
"""


def nbgrader(course, *args):
    environment = dict(os.environ,
                       # nbgrader starts `alembic` by name to create gradebook.db: it must be on PATH
                       PATH=f"{NBGRADER / 'bin'}{os.pathsep}{os.environ['PATH']}",
                       JUPYTER_PATH=str(RUN / "kernels"))
    return subprocess.Popen([str(NBGRADER / "bin" / "nbgrader"), *args], cwd=course, env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finished(process, what):
    output, _ = process.communicate(timeout=1800)
    # nbgrader logs the traceback of a failed notebook long before it says which one failed
    first = output.find("Traceback")
    why = output[first:first + 3000] + "\n...\n" if first >= 0 else ""
    assert process.returncode == 0, f"{what} failed:\n{why}{output[-3000:]}"
    return output


def nbgrader_venv():
    if not (NBGRADER / "bin" / "nbgrader").exists():
        subprocess.run([str(ROOT / "tools" / "nbgrader-venv")], check=True)


def kernel_spec():
    """nbgrader's python3 kernel: this repository's .venv, solutions hidden."""
    folder = RUN / "kernels" / "kernels" / "python3"
    folder.mkdir(parents=True)
    (folder / "kernel.json").write_text(json.dumps({
        "argv": [str(ROOT / ".venv" / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (the workbook's .venv)", "language": "python",
        "env": {"WORKBOOK_HIDE_SOLUTIONS": "1"}}))


def graded_by_nbgrader(folder):
    """nbgrader autograde, export and generate_feedback in one course folder, then a second
    autograde; what they printed, and the gradebook's cells and export."""
    autograded = finished(nbgrader(folder, "autograde", "*"), "nbgrader autograde")
    finished(nbgrader(folder, "export"), "nbgrader export")
    finished(nbgrader(folder, "generate_feedback", "*"), "nbgrader generate_feedback")
    # a second autograde without --force leaves what it graded alone (docs/instructors.md)
    again = finished(nbgrader(folder, "autograde", "*"), "nbgrader autograde, again")
    read = subprocess.run([str(NBGRADER / "bin" / "python"), "-c", GRADES, str(folder / "gradebook.db")],
                          capture_output=True, text=True, check=True)
    with open(folder / "grades.csv") as exported:
        rows = list(csv.DictReader(exported))
    return {"autograded": autograded, "again": again, "cells": json.loads(read.stdout), "exported": rows}


@pytest.fixture(scope="module")
def course():
    nbgrader_venv()
    shutil.rmtree(RUN, ignore_errors=True)
    RUN.mkdir(parents=True)
    kernel_spec()
    chapters = graded_chapters()
    # chapter 1, where the loops wait out their time limit, in a course folder of its own; the
    # others dealt over one folder per core
    rest = [c for c in chapters if c.number != 1]
    groups = [[c for c in chapters if c.number == 1]] + [rest[k::CORES] for k in range(CORES) if rest[k::CORES]]
    folders = [RUN / f"course-{k + 1}" for k in range(len(groups))]
    for folder, group in zip(folders, groups):
        release.write_release(folder, stems=[c.stem for c in group], timeout=TIMEOUT)
    for process in [nbgrader(folder, "generate_assignment", "*", "--force") for folder in folders]:
        finished(process, "nbgrader generate_assignment")
    everyone = RUN / "class"  # the same students' notebooks, for make grade, all chapters together
    handed = {name: set() for name in KINDS}
    for folder, group in zip(folders, groups):
        written = write_class(folder / "submitted", group, KINDS, release=folder / "release", nested=True,
                              copies=False)
        for name, stems in written.items():
            handed[name].update(stems)
        shutil.copytree(folder / "submitted", everyone, dirs_exist_ok=True)
    # make grade grades its copy of the class while nbgrader grades its own
    ours = subprocess.Popen([str(ROOT / ".venv" / "bin" / "workbook-grade"), str(everyone), "--out",
                             str(RUN / "grades"), "--timeout", str(TIMEOUT), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with ThreadPoolExecutor(len(folders)) as each:  # each folder's steps in order, the folders at once
            results = list(each.map(graded_by_nbgrader, folders))
    except BaseException:
        ours.kill()  # nbgrader failed: make grade's run is not left behind
        ours.wait()
        raise
    autograded, again = [r["autograded"] for r in results], [r["again"] for r in results]
    cells = [cell for r in results for cell in r["cells"]]
    exported = [row for r in results for row in r["exported"]]
    printed, complaints = ours.communicate(timeout=600)
    assert ours.returncode == 0, complaints
    return {"folders": folders, "groups": groups, "again": again, "chapters": chapters, "cells": cells,
            "handed": handed,
            "autograded": autograded,
            "exported": exported,
            "ours": json.loads(printed), "csv": (RUN / "grades" / "gradebook.csv").read_text()}


def test_generate_assignment_gives_our_hand_out(course):
    def comparable(cell):
        meta = {k: v for k, v in cell.metadata.items()}
        if "nbgrader" in meta:
            meta["nbgrader"] = {k: v for k, v in meta["nbgrader"].items() if k not in ("checksum", "cell_type")}
        return cell.get("id"), cell.cell_type, cell.source, meta
    for folder in course["folders"]:
        for released in sorted((folder / "release").glob("*/*.ipynb")):
            theirs = nbformat.read(released, as_version=4)
            ours = nbformat.read(folder / "handout" / released.name, as_version=4)
            assert [comparable(c) for c in theirs.cells] == [comparable(c) for c in ours.cells], released.name


def test_nbgrader_gives_every_exercise_its_points(course):
    assert {tuple(row[1:]) for row in course["cells"] if row[0] == "right" and row[1].startswith("check-")} == {
        (e.check_grade_id, float(e.points), float(e.points)) for c in course["chapters"] for e in c.exercises}


def test_the_class_hands_in_each_distinct_notebook_once(course):
    handed = course["handed"]
    chapters = {c.stem for c in course["chapters"]}
    first = next(c.stem for c in course["chapters"] if c.number == 1)
    assert handed["right"] == handed["blank"] == handed["tamperer"] == chapters
    assert handed["endless-loop"] == handed["ignores-interrupt"] == handed["floods-output"] == {first}


def test_nbgrader_and_make_grade_award_the_same_points_exercise_by_exercise(course):
    theirs = {(student, cell[len("check-"):].replace("-", ".")): score
              for student, cell, score, _ in course["cells"] if cell.startswith("check-")}
    marks = {(s["student"], m["exercise"]): m for s in course["ours"]["students"] for m in s["exercises"]}
    assert len(marks) == len(KINDS) * 18
    ours = {key: mark["points"] for key, mark in marks.items() if mark["chapter"] in course["handed"][key[0]]}
    assert set(theirs) == set(ours)
    assert {key: theirs[key] for key in ours} == ours
    # a chapter not handed in is missing in make grade's gradebook, and worth nothing
    missing = {key: mark for key, mark in marks.items() if key not in ours}
    assert missing and all(m["points"] == 0 and m["status"] == "missing" for m in missing.values())


def test_nbgrader_export_and_the_gradebook_agree_chapter_by_chapter(course):
    totals = {(row["student_id"], row["assignment"]): float(row["score"]) for row in course["exported"]}
    ours = {}
    for student in course["ours"]["students"]:
        for mark in student["exercises"]:
            key = (student["student"], mark["chapter"])
            ours[key] = ours.get(key, 0) + mark["points"]
    # nbgrader exports a row for each student its course folder knows, 0 where nothing was handed in
    handed = {(student, stem) for student, stems in course["handed"].items() for stem in stems}
    assert handed <= set(totals) <= set(ours)
    assert {key: ours[key] for key in totals} == totals
    assert all(points == 0 for key, points in ours.items() if key not in handed)


def test_the_class_gets_the_expected_gradebook(course):
    exercises = [e for c in course["chapters"] for e in c.exercises]
    stems = {e.number: c.stem for c in course["chapters"] for e in c.exercises}
    deserved = {student: [got if stems[e.number] in course["handed"][student] else 0
                          for e, got in zip(exercises, points)]
                for student, points in DESERVED.items()}
    assert course["csv"] == gradebook_csv(deserved, [e.number for e in exercises])


def test_generate_feedback_writes_a_page_per_student_and_chapter(course):
    for folder, group in zip(course["folders"], course["groups"]):
        for student in KINDS:
            for chapter in group:
                page = folder / "feedback" / student / chapter.stem / f"{chapter.stem}.html"
                assert page.is_file() == (chapter.stem in course["handed"][student]), page
                assert not page.is_file() or "Score:" in page.read_text()


def test_no_chapter_is_dropped_and_no_untouched_check_cell_is_called_changed(course):
    """nbgrader drops a notebook whose cell ignores the interrupt or floods its output ("Removing
    failed assignment"); the release's config makes that cell fail alone. It also warns that the
    checksum of every check cell has changed, for copies handed back as released
    (jupyter/nbgrader#1961); the config warns only for a check cell a student changed."""
    warned, student = set(), None
    for output in course["autograded"]:
        assert "Removing failed assignment" not in output
        for line in output.splitlines():
            if "Sanitizing" in line and "/submitted/" in line:
                student = line.split("/submitted/")[1].split("/")[0]
            if "Attribute 'checksum' for cell" in line:
                warned.add(student)
    assert warned == {"tamperer"}  # it replaced check cells with printed verdicts


def test_autograde_again_skips_the_graded_submissions_unless_forced(course):
    for output in course["again"]:
        assert "Skipping existing assignment" in output


# The class release's Execute, from its nbgrader_config.py, at a notebook whose kernel dies at its
# first start (as one that cannot bind a port another kernel was given at the same moment does)
FIRST_START_DIES = """
import json, sys
import nbformat
from traitlets.config import Config
config = Config()
settings = {"get_config": lambda: config}
exec(compile(open(sys.argv[1]).read(), "nbgrader_config.py", "exec"), settings)
execute = settings["ExecuteWithoutStuckCells"](kernel_name="dies-once", timeout=60)
notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
done, _ = execute.preprocess(notebook, {"metadata": {"path": sys.argv[2]}})
print(json.dumps(done.cells[0].outputs))
"""


def test_a_kernel_that_dies_before_its_first_cell_is_started_again(tmp_path):
    nbgrader_venv()
    (tmp_path / "nbgrader_config.py").write_text(release.CONFIG.format(course=release.COURSE_ID, timeout=TIMEOUT))
    spec = tmp_path / "kernels" / "kernels" / "dies-once"
    spec.mkdir(parents=True)
    started = tmp_path / "started"
    (spec / "kernel.json").write_text(json.dumps({
        "argv": ["/bin/sh", "-c", f'[ -e {quote(str(started))} ] || {{ touch {quote(str(started))}; exit 1; }}; '
                 f'exec {quote(str(ROOT / ".venv" / "bin" / "python"))} -m ipykernel_launcher -f "$0"',
                 "{connection_file}"],
        "display_name": "dies at its first start", "language": "python"}))
    ran = subprocess.run([str(NBGRADER / "bin" / "python"), "-c", FIRST_START_DIES,
                          str(tmp_path / "nbgrader_config.py"), str(tmp_path)],
                         env=dict(os.environ, JUPYTER_PATH=str(tmp_path / "kernels")),
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert started.exists() and json.loads(ran.stdout.splitlines()[-1])[0]["text"] == "42\n"
