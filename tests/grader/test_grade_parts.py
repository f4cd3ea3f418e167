"""The grader's parts without running a chapter: how a class folder is read, which cell is a
student's answer, what runs, what is printed, and the command line."""
import copy
import dataclasses
import json
import os
import subprocess
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
from course.grader import cli as grade
from course.grader.chapters import GRADED, SOURCE, own_cell, read_chapter, select
from course.notebook import without_markers
from course.grader.gradebook import grade_class
from course.editions.release import release_notebook
from course.grader.reading import answers, chapter_of, load
from course.grader.submissions import by_name, due_dates, hand_ins, late_text, parse_time, students
from course.grader.text import clean
from course.grader.verdicts import plan

CHAPTER_1 = SOURCE / "01-purpose-and-validation.ipynb"


@pytest.fixture(scope="module")
def chapter():
    return read_chapter(CHAPTER_1)


@pytest.fixture
def handout(chapter):
    return release_notebook(chapter, solutions=False)


def cell_of(notebook, cell_id):
    return next(c for c in notebook.cells if c.get("id") == cell_id)


def test_an_answer_is_found_by_its_cell_id_first(chapter, handout):
    cell_of(handout, "c01-032").source = "wide_fact = 1"
    cell_of(handout, "c01-032").metadata["nbgrader"]["grade_id"] = "exercise-1-2"  # misleading
    found = answers(handout, chapter)
    assert found["1.1"].source == "wide_fact = 1" and found["1.1"].found_by == "cell id"


def test_without_the_id_the_nbgrader_grade_id_finds_it_and_the_last_duplicate_wins(chapter, handout):
    answer = cell_of(handout, "c01-035")
    answer["id"] = "pasted-1"
    copy = nbformat.from_dict(json.loads(json.dumps(answer)))
    copy["id"], copy.source = "pasted-2", "full_checkpoint = 2"
    handout.cells.insert(handout.cells.index(answer) + 1, copy)
    found = answers(handout, chapter)
    assert (found["1.2"].source, found["1.2"].found_by) == ("full_checkpoint = 2", "grade_id")


def test_without_id_or_metadata_the_cell_defining_the_checked_name_is_the_answer(chapter, handout):
    for cell in handout.cells:
        cell["id"] = "x" + cell.get("id", "")
        cell.metadata.pop("nbgrader", None)
    handout.cells.append(nbformat.v4.new_code_cell("def to_key(title):\n    return 'k'"))
    handout.cells.append(nbformat.v4.new_code_cell("scratch = to_key('x')  # uses it, defines nothing checked"))
    handout.cells.append(nbformat.v4.new_code_cell("def broken(:"))
    found = answers(handout, chapter)
    assert found["1.3"].source == "def to_key(title):\n    return 'k'" and found["1.3"].found_by == "name"
    assert found["1.1"].source.startswith("wide_fact = ____") and found["1.1"].found_by == "name"


def test_a_cell_that_is_the_chapters_own_is_never_taken_for_an_answer(chapter):
    # A chapter cell that happens to define the checked name (here a made-up one for to_key)
    # is the author's code, even when a notebook holds it without ids or metadata.
    source = copy.deepcopy(chapter.notebook)
    source.cells.insert(3, nbformat.v4.new_code_cell("to_key = str.lower", id="c01-900"))
    with_own_cell = dataclasses.replace(chapter, notebook=source)
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("to_key = str.lower")]
    assert answers(notebook, with_own_cell) == {}
    assert answers(notebook, chapter)["1.3"].found_by == "name"


def test_the_plan_runs_the_exercise_sections_own_cells_with_the_answers_and_checks_in_place(chapter, handout):
    cell_of(handout, "c01-032").source = "wide_fact = 'mine'"
    items = plan(chapter, answers(handout, chapter))
    code = chapter.exercise_cells()
    assert code[0].get("id") == "c01-030" and "from workbook.teaching.exercises.ch1 import" in code[0].source
    last_check = max(i for i, c in enumerate(code) if c.get("id") == "c01-039")
    assert [item["cell_id"] for item in items] == [c.get("id") for c in code[:last_check + 1]]
    kinds = {item["cell_id"]: item for item in items}
    assert kinds["c01-032"]["kind"] == "answer" and kinds["c01-032"]["source"] == "wide_fact = 'mine'"
    assert kinds["c01-033"] == {"kind": "check", "exercise": "1.1", "cell_id": "c01-033", "module": "workbook.teaching.exercises.ch1",
                                "attribute": "q1", "expression": "wide_fact"}
    own = [item for item in items if item["kind"] == "cell"]
    assert [item["source"] for item in own] == [c.source for c in code[:last_check + 1]
                                                 if c.get("id") not in kinds or kinds[c.get("id")]["kind"] == "cell"]


def test_a_missing_answer_runs_as_the_stub_never_as_the_worked_answer(chapter, handout):
    handout.cells.remove(cell_of(handout, "c01-038"))
    item = next(i for i in plan(chapter, answers(handout, chapter)) if i["cell_id"] == "c01-038")
    assert item["source"] == "def to_key(title):\n    # YOUR CODE HERE\n    raise NotImplementedError()"
    assert "re.findall" not in item["source"] and "re.findall" in without_markers(cell_of(chapter.notebook, "c01-038").source)


def write(path, notebook):
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)


def read_class(folder, chapters, known=None, due=None):
    """The class as the grader reads it, each notebook read here (a judge reads it in make grade)."""
    known = known or chapters
    roster = students(folder, known)
    for student in roster:
        for notebook in student.notebooks:
            if notebook.problem is None:
                notebook.chapter = chapter_of(load(notebook.path.read_bytes()), notebook.path.name, known)
            else:
                notebook.chapter = by_name(notebook, known)
        hand_ins(student, chapters, known, due)
    return {s.name: s for s in roster}


def test_every_layout_of_a_class_folder_is_read(tmp_path, chapter, handout):
    name = chapter.filename
    write(tmp_path / "alice" / name, handout)                                   # a folder per student
    write(tmp_path / "bob" / chapter.stem / name, handout)                      # nbgrader's submitted/
    write(tmp_path / "bob" / ".ipynb_checkpoints" / name, handout)              # ignored: hidden
    write(tmp_path / "carol.ipynb", handout)                                    # a notebook named by student
    write(tmp_path / "dave" / "notes.ipynb", nbformat.v4.new_notebook())        # not a chapter
    write(tmp_path / "erin" / name, handout)
    write(tmp_path / "erin" / "copy of chapter 1.ipynb", handout)               # two copies of chapter 1
    found = read_class(tmp_path, [chapter])
    assert sorted(found) == ["alice", "bob", "carol", "dave", "erin"]
    assert {n: [nb.path.relative_to(tmp_path).as_posix() for nb in s.graded.values()] for n, s in found.items()} == {
        "alice": [f"alice/{name}"], "bob": [f"bob/{chapter.stem}/{name}"], "carol": ["carol.ipynb"],
        "dave": [], "erin": []}
    assert found["dave"].notes == ["notes.ipynb is none of the graded chapters and was not graded."]
    # neither copy is the hand-in: both are refused, named, and the chapter is not graded
    assert sorted(found["erin"].refused) == [(name, "one of 2 notebooks of chapter 1"),
                                             ("copy of chapter 1.ipynb", "one of 2 notebooks of chapter 1")]
    assert found["erin"].unreadable[chapter.stem] == (
        f"2 notebooks are chapter 1 ({name}, copy of chapter 1.ipynb), so none was graded: hand in one")


def test_one_students_own_folder_is_a_class_of_one(tmp_path, chapter, handout):
    write(tmp_path / "frank" / chapter.filename, handout)
    found = read_class(tmp_path / "frank", [chapter])
    assert [(name, list(s.graded)) for name, s in found.items()] == [("frank", [chapter.stem])]


def test_in_nbgrader_layout_a_chapter_is_graded_from_its_own_assignment_folder_only(tmp_path, chapter, handout):
    chapter_2 = read_chapter(SOURCE / f"{GRADED[1]}.ipynb")
    one, two = chapter.stem, chapter_2.stem
    write(tmp_path / "ann" / one / chapter.filename, handout)                      # the hand-in
    (tmp_path / "ann" / one / "timestamp.txt").write_text("2026-03-02 09:30:00.000000 UTC\n")
    write(tmp_path / "ann" / one / "01-copy.ipynb", handout)                       # not nbgrader's name
    write(tmp_path / "ann" / two / chapter.filename, handout)                      # in chapter 2's folder
    write(tmp_path / "ann" / chapter.filename, handout)                            # beside the folders
    due = due_dates("2026-03-02 09:00", [chapter, chapter_2])
    (ann,) = read_class(tmp_path, [chapter, chapter_2], due=due).values()
    assert [nb.shown for nb in ann.graded.values()] == [f"{one}/{chapter.filename}"]
    assert sorted(ann.refused) == sorted([
        (f"{one}/01-copy.ipynb", f"it is not this chapter's hand-in, {one}/{one}.ipynb"),
        (f"{two}/{chapter.filename}", f"chapter 1 handed in inside the folder of the {two} assignment (chapter 2)"),
        (chapter.filename, f"it is not this chapter's hand-in, {one}/{one}.ipynb")])
    assert ann.late == {one: 1800.0} and late_text(1800) == "30 min"
    assert ann.submitted[one].isoformat() == "2026-03-02T09:30:00+00:00"


def test_on_the_course_hub_the_assignments_hand_in_copy_is_graded(tmp_path, chapter, handout):
    # the hub releases each chapter as hand-in-<chapter>.ipynb (its tab's title differs from the
    # practice copy's) and nbgrader collects it under that name: make grade on the hub gave every
    # student 0 when only <chapter>.ipynb counted as the assignment's notebook
    from course.hub.exchange import HAND_IN_PREFIX
    one = chapter.stem
    write(tmp_path / "ann" / one / f"{HAND_IN_PREFIX}{chapter.filename}", handout)
    write(tmp_path / "bo" / one / f"{HAND_IN_PREFIX}{chapter.filename}", handout)
    write(tmp_path / "bo" / one / chapter.filename, handout)                      # two: hand in one
    found = read_class(tmp_path, [chapter])
    assert [nb.shown for nb in found["ann"].graded.values()] == [f"{one}/{HAND_IN_PREFIX}{chapter.filename}"]
    assert found["ann"].refused == [] and found["bo"].graded == {}
    assert found["bo"].unreadable[one].startswith("2 notebooks are chapter 1")


def test_a_notebook_named_after_a_classmate_never_replaces_their_folder(tmp_path, chapter, handout):
    # attack-28: victim.ipynb beside victim/ was graded in place of the folder, silently
    write(tmp_path / "victim" / chapter.filename, handout)
    write(tmp_path / "victim.ipynb", handout)
    write(tmp_path / "zoe.ipynb", handout)
    found = read_class(tmp_path, [chapter])
    assert sorted(found) == ["victim", "zoe"]
    assert [nb.path for nb in found["victim"].graded.values()] == [tmp_path / "victim" / chapter.filename]
    assert found["victim"].refused == [("victim.ipynb in the class folder",
                                        "named as this student's folder, which is graded instead")]
    assert [nb.path for nb in found["zoe"].graded.values()] == [tmp_path / "zoe.ipynb"]


@pytest.mark.parametrize("stamp, late, refused", [
    ("2026-03-09 10:00:00.000000 UTC" + " " * 100 + "\n", 7 * 86400 + 3600, None),  # stripped, as nbgrader
    ("\n\t 2026-03-09 10:00:00.000000 UTC \n\n", 7 * 86400 + 3600, None),
    ("2026-03-09 10:00:00.000000 UTC" + " " * 2000, None, "timestamp.txt is over 1,024 bytes"),
    ("next tuesday\n", None, "timestamp.txt is not a date and time"),
    (b"\xff\xfe", None, "timestamp.txt is not a date and time"),
])
def test_a_timestamp_is_stripped_as_nbgrader_strips_it_and_one_that_cannot_be_read_is_named_and_late(
        tmp_path, chapter, handout, stamp, late, refused):
    # attack-28: a late timestamp.txt padded past 100 bytes was taken for no timestamp at all
    write(tmp_path / "ann" / chapter.stem / chapter.filename, handout)
    path = tmp_path / "ann" / chapter.stem / "timestamp.txt"
    path.write_bytes(stamp if isinstance(stamp, bytes) else stamp.encode())
    due = due_dates("2026-03-02 09:00", [chapter])
    (ann,) = read_class(tmp_path, [chapter], due=due).values()
    assert ann.late == {chapter.stem: late} and list(ann.graded) == [chapter.stem]
    why = f"{refused}, so when it was handed in is unknown and it counts as late"
    assert ann.refused == ([] if refused is None else [(f"{chapter.stem}/timestamp.txt", why)])
    assert late_text(late) == ("7 days 1 h" if late else "by a time unknown")
    # with no due date it is named all the same, and nothing is late
    (ann,) = read_class(tmp_path, [chapter]).values()
    assert ann.late == {} and bool(ann.refused) == (refused is not None)


def test_a_due_date_is_read_as_nbgrader_reads_a_timestamp():
    utc = parse_time("2026-03-02 09:00:00.000000 UTC")
    assert utc.isoformat() == "2026-03-02T09:00:00+00:00"
    assert parse_time("2026-03-02 10:00 Europe/Berlin") == utc == parse_time("2026-03-02T10:00+01:00")
    assert parse_time("2026-03-02 10:00 +0100") == utc == parse_time("2026-03-02 09:00")
    chapters = [read_chapter(SOURCE / f"{stem}.ipynb") for stem in GRADED[:2]]
    assert due_dates("01=2026-03-02 09:00;2=2026-03-09 09:00", chapters) == {
        GRADED[0]: utc, GRADED[1]: parse_time("2026-03-09 09:00")}
    for wrong in ("next tuesday", "2026-03-02 09:00 Mars/Olympus", "7=2026-03-02"):
        with pytest.raises(ValueError, match="^DUE: "):
            due_dates(wrong, chapters)


def test_a_chapters_own_cell_is_named_by_its_first_line_of_code_never_by_its_id():
    assert own_cell("#| export\nfrom workbook.store import put\n") == \
        'the chapter\'s own cell that begins "from workbook.store import put"'
    assert own_cell("x = '" + "y" * 80 + "'").endswith('yyy..."') and len(own_cell("x" * 200)) < 110
    assert own_cell("#| hide\n\n") == "an empty cell of the chapter"


def test_chapters_are_chosen_by_number_or_name_in_course_order():
    assert select("02,1") == (GRADED[0], GRADED[1])
    assert select(" 6 , 06-failure-cases-and-limits") == (GRADED[5],)
    assert select(",".join(stem[:2] for stem in GRADED)) == tuple(GRADED)
    for wrong in ("7", "appendix-costs", "1;2", ""):
        with pytest.raises(ValueError, match="^CHAPTERS: .* is not a graded chapter"):
            select(wrong)


def test_grading_some_chapters_leaves_the_students_other_notebooks_alone(tmp_path, chapter, handout):
    chapter_2 = read_chapter(SOURCE / f"{GRADED[1]}.ipynb")
    write(tmp_path / "alice" / chapter.filename, handout)
    write(tmp_path / "alice" / chapter_2.filename, release_notebook(chapter_2, solutions=False))
    write(tmp_path / "alice" / "notes.ipynb", nbformat.v4.new_notebook())
    book = grade_class(tmp_path, [chapter], limit=5, parallel=1, known=[chapter, chapter_2])
    (alice,) = book.grades
    assert [m.exercise for m in alice.marks] == ["1.1", "1.2", "1.3"]
    assert {m.status for m in alice.marks} == {"not attempted"}
    assert alice.notes == ["notes.ipynb is none of the graded chapters and was not graded."]


def test_clean_leaves_one_line_of_plain_text():
    assert clean("\x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07\nnext\tline\x00") == "red link next line"
    assert clean("x" * 400) == "x" * 297 + "..."


def test_the_command_line_refuses_bad_arguments_with_exit_status_2(tmp_path):
    for arguments in ([str(tmp_path / "nowhere")], [str(tmp_path), "--timeout", "0"], [str(tmp_path), "--jobs", "0"],
                      [str(tmp_path), "--chapters", "7"], [str(tmp_path), "--due", "soon"],
                      [str(tmp_path), "--late", "half"]):
        with pytest.raises(SystemExit) as stopped:
            grade.main(arguments)
        assert stopped.value.code == 2


def dry_run(*arguments):
    """The command `make -n` shows for the arguments, one line, as it is under `make test` too
    (an outer make's MAKELEVEL and MAKEFLAGS would add "Entering directory" lines and flags)."""
    environment = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    shown = subprocess.run(["make", "--no-print-directory", "-n", *arguments], cwd=ROOT, env=environment,
                           capture_output=True, text=True, check=True).stdout
    (line,) = [line for line in shown.splitlines() if "workbook-grade" in line or "workbook-class" in line]
    return " ".join(line.split())


def test_make_passes_the_time_limit_jobs_and_output_folder_through():
    assert dry_run("grade", "SUBMISSION=class", "TIMEOUT=3", "JOBS=1", "GRADES=out").endswith(
        ".venv/bin/workbook-grade class --out out --timeout 3 --jobs 1 --isolation auto")
    assert dry_run("grade", "SUBMISSION=class").endswith(
        "workbook-grade class --out build/grades --timeout 10 --isolation auto")
    assert dry_run("grade", "SUBMISSION=class", "CHAPTERS=01,02").endswith(
        "workbook-grade class --out build/grades --timeout 10 --chapters 01,02 --isolation auto")
    assert dry_run("grade", "SUBMISSION=class", "ISOLATION=required", "MEMORY=512", "SEED=ab12").endswith(
        "workbook-grade class --out build/grades --timeout 10 --isolation required --memory 512 --seed ab12")
    assert dry_run("grade", "SUBMISSION=class", "DUE=2026-03-02 17:00", "LATE=zero").endswith(
        "workbook-grade class --out build/grades --timeout 10 --isolation auto --due '2026-03-02 17:00' --late zero")
    for target in ("class", "student"):
        assert dry_run(target).endswith("workbook-class build/class --timeout 10")
    assert dry_run("class", "CLASS=/srv/course", "TIMEOUT=4").endswith("workbook-class /srv/course --timeout 4")


def test_by_default_as_many_chapters_are_graded_at_once_as_there_are_cores():
    assert grade.parser().parse_args(["class"]).jobs == len(os.sched_getaffinity(0))
    assert grade.parser().parse_args(["class"]).timeout == 10
