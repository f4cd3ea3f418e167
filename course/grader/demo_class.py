"""A generated class, made from the hand-out edition the way students would fill it in.

    python course/grader/demo_class.py OUT [--chapters 1,2] [--tricks]

Every student starts from the hand-out (or from nbgrader's release, when given) and edits only
what a student would. The kinds of the class:

    right              every answer the worked one
    blank              the hand-out as it was handed out
    partly-wrong       the second answer of each chapter wrong, the others right
    error-cell         the first answer of each chapter raises NameError, the others right
    endless-loop       the first answer of chapter 1 never ends, every other answer right
    ignores-interrupt  the same, but the loop ignores the interrupt (SIGINT), as a loop that
                       swallows KeyboardInterrupt does
    floods-output      the same, but the loop prints without end
    tamperer      wrong answers, and every trick of the issue: a printed verdict in place of a
                  check, duplicated checks, a patched Exercise.verdict and check, exec(q1.answer),
                  the captured output of solution(); plus an honest commented check and a
                  deleted check cell under right answers

--tricks adds one student per trick on chapter 1, for the tests (first_chapter_tricks below).
"""
import argparse
import copy
import json
import sys
from pathlib import Path

import nbformat

from course.grader.chapters import graded_chapters
from course.notebook import without_markers
from course.editions.release import release_notebook

# A wrong answer to every exercise: each runs and gets "not yet" from its check.
WRONG = {
    "1.1": 'wide_fact = {"schema": 1, "text": "short", "source": "s", "reviewed": False}',
    "1.2": 'full_checkpoint = {"schema": 1, "step": 2, "items": ["x"] * 8}',
    "1.3": "def to_key(title):\n    return title",
    "2.1": ("def last_visible(db, tenant, kind, key, start):\n"
            "    record = get(db, tenant, kind, key, start)\n"
            "    return None if record is None else record[\"expires\"]"),
    "2.2": "def read_state(db, tenant, kind, key, now):\n    return \"visible\"",
    "2.3": "predicted = [500, 500, 105, None, None]",
    "3.1": ("def increment(db, now):\n"
            "    record = get(db, \"orchard\", \"fact\", \"visits\", now)\n"
            "    value = record[\"value\"]\n"
            "    value[\"text\"] = str(int(value[\"text\"]) + 1)\n"
            "    return put(db, \"orchard\", \"fact\", \"visits\", value, None, now, 60)"),
    "3.2": "predictions = [1, 2, 3, 4, 5, 6, 7, 8, 9]",
    "3.3": ("def create_fresh(db, tenant, kind, key, value, now, ttl):\n"
            "    return put(db, tenant, kind, key, value, None, now, ttl)"),
    "4.1": "def purge_job(db, tenants, now):\n    return []",
    "4.2": "def forget_current(db, tenant, kind, key, now):\n    return False",
    "4.3": "remaining = set()",
    "5.1": "visible = [(100, 110)]",
    "5.2": "gap_scenario = []",
    "5.3": "def send_once(db, mailer, now):\n    mailer.send(\"weekly-summary\")\n    return 0",
    "6.1": "def test_purge_includes_the_deadline(store):\n    pass",
    "6.2": "def test_forget_needs_the_current_revision(store):\n    pass",
    "6.3": "def test_recreated_record_gets_a_new_revision(store):\n    pass",
}

PATCH_VERDICT = '''\
import workbook.teaching.exercises as _exercises
_exercises.Exercise.verdict = lambda self, answer=None: _exercises.Verdict(self.number, "correct", "trust me.")
_exercises.Exercise.check = lambda self, answer=None: print(f"Exercise {self.number}: correct: trust me.")
'''
HELPER = '''\
def slug(title):
    key = "-".join(re.findall(r"[a-z0-9]+", title.lower()))
    if not key[:1].isalpha():
        key = "n--" + key
    return key[:32]
'''
CAPTURE_SOLUTION = '''\
import contextlib, io
_printed = io.StringIO()
with contextlib.redirect_stdout(_printed):
    {q}.solution()
exec(_printed.getvalue().split("\\n\\n", 1)[-1])
'''


class Edition:
    """One student's copy of a chapter, edited cell by cell."""

    def __init__(self, chapter, handout):
        self.chapter = chapter
        self.notebook = copy.deepcopy(handout)
        self.exercises = {e.number: e for e in chapter.exercises}

    def cell(self, cell_id):
        return next(c for c in self.notebook.cells if c.get("id") == cell_id)

    def answer(self, number, source):
        self.cell(self.exercises[number].answer_id).source = source
        return self

    def right(self, number):
        original = next(c for c in self.chapter.notebook.cells if c.get("id") == self.exercises[number].answer_id)
        return self.answer(number, without_markers(original.source))

    def check(self, number, source):
        return self.check_cell(self.exercises[number].check_id, source)

    def check_cell(self, cell_id, source):
        self.cell(cell_id).source = source
        return self

    def delete_check(self, number):
        self.notebook.cells.remove(self.cell(self.exercises[number].check_id))
        return self

    def add_cell(self, after_id, source):
        index = self.notebook.cells.index(self.cell(after_id))
        self.notebook.cells.insert(index + 1, nbformat.v4.new_code_cell(source))
        return self

    def all_right(self):
        for number in self.exercises:
            self.right(number)
        return self


def numbers(chapter):
    return [e.number for e in chapter.exercises]


def right(edition):
    return edition.all_right()


def blank(edition):
    return edition


def partly_wrong(edition):
    first, second, third = numbers(edition.chapter)
    return edition.right(first).answer(second, WRONG[second]).right(third)


def error_cell(edition):
    first = numbers(edition.chapter)[0]
    edition.all_right()
    return edition.answer(first, "prepared = undefined_helper()\n" + edition.cell(
        edition.exercises[first].answer_id).source)


def endless_loop(edition, loop="while True:\n    pass\n"):
    """Chapter 1's first answer never ends (it burns a core until the limit); the rest are right."""
    first = numbers(edition.chapter)[0]
    edition.all_right()
    if edition.chapter.number != 1:
        return edition
    return edition.answer(first, loop + edition.cell(edition.exercises[first].answer_id).source)


def tamperer(edition):
    """Wrong answers dressed up with every trick; two right answers whose checks were deleted or
    commented, which must still count."""
    first, second, third = numbers(edition.chapter)
    e, q = edition, lambda n: "q" + n.split(".")[1]
    chapter = edition.chapter.number
    if chapter == 1:
        e.answer(first, WRONG[first]).check(first, f'print("Exercise {first}: correct: trust me.")')
        e.answer(second, WRONG[second]).check(second, f"{q(second)}.check({e.exercises[second].expression})\n" * 2)
        e.answer(third, WRONG[third] + "\n" + PATCH_VERDICT)
    elif chapter == 2:
        e.answer(first, f"exec({q(first)}.answer)")
        e.answer(second, CAPTURE_SOLUTION.format(q=q(second)))
        e.right(third).check(third, f"{q(third)}.check({e.exercises[third].expression})  # done!")
    elif chapter == 3:
        e.right(first).delete_check(first)
        e.answer(second, WRONG[second])
        e.add_cell(e.exercises[second].check_id, PATCH_VERDICT + f"{q(second)}.check(predictions)")
        e.answer(third, WRONG[third])
    else:
        for number in numbers(edition.chapter):
            e.answer(number, WRONG[number]).check(number, f'print("Exercise {number}: correct: trust me.")')
    return e


DEAF = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.05)\n"
FLOOD = "while True:\n    print(\"x\" * 10000)\n"


def ignores_interrupt(edition):
    return endless_loop(edition, DEAF)


def floods_output(edition):
    return endless_loop(edition, FLOOD)


KINDS = {"right": right, "blank": blank, "partly-wrong": partly_wrong, "error-cell": error_cell,
         "endless-loop": endless_loop, "ignores-interrupt": ignores_interrupt,
         "floods-output": floods_output, "tamperer": tamperer}

# What each kind earns, exercise 1.1 to 6.3, when it hands in all six chapters: the oracle that
# make test-nbgrader holds make grade and nbgrader to, and that docs/instructors.md shows.
DESERVED = {
    "blank": [0] * 18,
    "endless-loop": [0] + [1] * 17,
    "ignores-interrupt": [0] + [1] * 17,
    "floods-output": [0] + [1] * 17,
    "error-cell": [0, 1, 1] * 6,
    "partly-wrong": [1, 0, 1] * 6,
    "right": [1] * 18,
    # 2.3 and 3.1 are right answers whose check cells it commented out or deleted
    "tamperer": [0, 0, 0, 0, 0, 1, 1] + [0] * 11,
}


def gradebook_csv(points, numbers, isolation="isolated", bounds="per student"):
    """The gradebook make grade should write for `points` ({student: [points per exercise]}), with
    nothing late or refused."""
    header = "student," + ",".join(numbers) + ",total,maximum,late,refused,isolation,bounds"
    rows = [f"{name}," + ",".join(map(str, got)) + f",{sum(got)},{len(got)},,,{isolation},{bounds}"
            for name, got in sorted(points.items())]
    return "\n".join([header] + rows) + "\n"


def first_chapter_tricks():
    """One student per trick, on chapter 1; TRICKS[name] = (build(edition), expected points)."""
    sleeping = "import time\nwhile True:\n    time.sleep(0.05)\n"
    deaf = DEAF
    return {
        # wrong 1.1 behind a printed verdict where its check was
        "fake-printed-verdict": (lambda e: e.all_right().answer("1.1", WRONG["1.1"])
                                 .check("1.1", 'print("Exercise 1.1: correct: trust me.")'), [0, 1, 1]),
        # wrong 1.1 whose check cell now asks for 1.2's check, twice, and 1.3's again in a new cell
        "duplicated-check": (lambda e: e.all_right().answer("1.1", WRONG["1.1"])
                             .check("1.1", "q2.check(full_checkpoint)\nq2.check(full_checkpoint)")
                             .add_cell("c01-039", "q3.check(to_key)\nq3.check(to_key)"), [0, 1, 1]),
        # Exercise.verdict and check patched in an answer cell; all three answers wrong
        "patched-verdict": (lambda e: e.answer("1.1", WRONG["1.1"] + "\n" + PATCH_VERDICT)
                            .answer("1.2", WRONG["1.2"]).answer("1.3", WRONG["1.3"]), [0, 0, 0]),
        # the worked answer read from the exercise object (solutions are hidden when grading)
        "exec-answer": (lambda e: e.all_right().answer("1.1", "exec(q1.answer)"), [0, 1, 1]),
        # the worked answer captured from solution()'s printout
        "captured-solution": (lambda e: e.all_right().answer("1.1", CAPTURE_SOLUTION.format(q="q1")),
                              [0, 1, 1]),
        # honest: right answers, 1.3's check commented
        "commented-check": (lambda e: e.all_right().check("1.3", "q3.check(to_key)  # done!"), [1, 1, 1]),
        # right answers, 1.2's check cell deleted
        "deleted-check": (lambda e: e.all_right().delete_check("1.2"), [1, 1, 1]),
        # right answers; the chapter's own set-up cell replaced (only answer cells are taken)
        "edited-setup-cell": (lambda e: e.all_right().check_cell("c01-030", "raise SystemExit"), [1, 1, 1]),
        # wrong 1.1; a new cell of the student's own patches the check (only answer cells are taken)
        "extra-cell": (lambda e: e.all_right().answer("1.1", WRONG["1.1"])
                       .add_cell("c01-030", PATCH_VERDICT), [0, 1, 1]),
        # time and errors
        "sleeping-loop": (lambda e: endless_loop(e, sleeping), [0, 1, 1]),
        "loop-in-function": (lambda e: e.all_right().answer(
            "1.3", "def to_key(title):\n    import time\n    while True:\n        time.sleep(0.05)"), [1, 1, 0]),
        "ignores-interrupt": (lambda e: endless_loop(e, deaf), [0, 1, 1]),
        "exits-python": (lambda e: e.all_right().answer("1.2", "import os\nos._exit(3)"), [1, 0, 1]),
        # a right answer above the stub's raise NotImplementedError(), left in: the cell raises
        "kept-the-raise": (lambda e: e.all_right().answer("1.1", e.cell("c01-032").source +
                           "\n# YOUR CODE HERE\nraise NotImplementedError()"), [0, 1, 1]),
        # a right to_key whose helper sits in a cell of its own, which grading never runs
        "helper-in-own-cell": (lambda e: e.all_right().add_cell("c01-033", HELPER)
                               .answer("1.3", "def to_key(title):\n    return slug(title)"), [1, 1, 0]),
        # a process forked in an answer keeps the grader's pipe open for ten minutes
        "forks-a-sleeper": (lambda e: e.all_right().answer("1.1", e.cell("c01-032").source +
                            "\nimport os, time\nif os.fork() == 0:\n    time.sleep(600)"), [1, 1, 1]),
        "escape-codes": (lambda e: e.all_right().answer(
            "1.1", 'raise ValueError("\\x1b[31mred alert\\x1b[0m")'), [0, 1, 1]),
        # answer cells found without their cell ids: by nbgrader's grade_id, then by name
        "by-grade-id": (lambda e: new_ids(e.all_right()), [1, 1, 1]),
        "by-name": (lambda e: no_metadata(new_ids(e.all_right())), [1, 1, 1]),
    }


def new_ids(edition):
    for index, cell in enumerate(edition.notebook.cells):
        cell["id"] = f"student-{index:03d}"
    return edition


def no_metadata(edition):
    for cell in edition.notebook.cells:
        cell.metadata.pop("nbgrader", None)
    return edition


def handouts(chapters, release=None):
    """The hand-out of each chapter: from nbgrader's release folder when given, else our own."""
    found = {}
    for chapter in chapters:
        if release is not None:
            found[chapter.stem] = nbformat.read(Path(release) / chapter.stem / chapter.filename, as_version=4)
        else:
            found[chapter.stem] = release_notebook(chapter, solutions=False)
    return found


def write_class(out, chapters, kinds=KINDS, tricks=None, release=None, nested=False, copies=True):
    """Write one folder per student (nested: <student>/<chapter>/<chapter>.ipynb, nbgrader's
    submitted layout). Returns {student: [chapter stems]}. With copies=False a student hands in
    only the chapters where their notebook differs from the right answers' (the loops differ in
    chapter 1 alone), so that a grader is not timed on the same notebook several times."""
    out = Path(out)
    given = handouts(chapters, release)
    rights = {} if copies else {c.stem: right(Edition(c, given[c.stem])).notebook for c in chapters}
    written = {}
    for name, build in kinds.items():
        written[name] = []
        for chapter in chapters:
            notebook = build(Edition(chapter, given[chapter.stem])).notebook
            if name != "right" and notebook == rights.get(chapter.stem):
                continue
            save(out, name, chapter, notebook, nested)
            written[name].append(chapter.stem)
    if tricks:
        first = next(c for c in chapters if c.number == 1)
        for name, (build, _) in tricks.items():
            save(out, name, first, build(Edition(first, given[first.stem])).notebook, nested)
            written[name] = [first.stem]
    return written


def save(out, student, chapter, notebook, nested):
    folder = out / student / chapter.stem if nested else out / student
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / chapter.filename)


def main(argv=None):
    """workbook-demo-class OUT: a generated class to try the grader on."""
    parser = argparse.ArgumentParser(prog="workbook-demo-class", description="Write a generated class to try the grader on.")
    parser.add_argument("out")
    parser.add_argument("--chapters", default="1,2,3,4,5,6", help="chapter numbers, e.g. 1,2")
    parser.add_argument("--tricks", action="store_true", help="add one chapter-1 student per trick")
    parser.add_argument("--release", help="nbgrader's release/ folder to start from instead of the hand-out")
    parser.add_argument("--nested", action="store_true", help="nbgrader's layout: <student>/<chapter>/")
    arguments = parser.parse_args(argv)
    wanted = {int(n) for n in arguments.chapters.split(",")}
    chapters = [c for c in graded_chapters() if c.number in wanted]
    written = write_class(arguments.out, chapters, tricks=first_chapter_tricks() if arguments.tricks else None,
                          release=arguments.release, nested=arguments.nested)
    print(json.dumps({"students": len(written), "chapters": [c.stem for c in chapters]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
