"""From a class folder to a gradebook: the plan for each chapter, verdicts, points and the files.

    OUT/gradebook.csv          student, one column per exercise (points earned), total, maximum
    OUT/feedback/<student>.txt every exercise with its points and one-sentence verdict
    OUT/grades.json            the same, for programs

Every row lists every exercise of the graded chapters; one that is missing or cannot be graded
earns 0 points and says why. No text in any of them holds a terminal escape code.
"""
import csv
import io
import json
import re
import secrets
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from course.grader.chapters import own_cell
from course.notebook import nbgrader_stubbed
from course.grader.judge.sandboxes import Sandboxes, isolation_here
from course.grader.judge.session import Job, run_all
from course.grader.sandbox.jail import Limits
from course.grader.submissions import answers, students

STATUSES = ("correct", "not yet", "not attempted", "error", "missing", "ungradable")
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?|\x1b[@-_]?")
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# A NameError in a graded answer is most often a helper the student wrote in a cell of its own.
NAME_ERROR = re.compile(r"\bNameError\b")
ONLY_ANSWER_CELLS = ("Grading runs only your answer cells, so a helper, import or value you "
                     "defined in another cell is missing there; put it inside the answer cell.")


def clean(text, limit=300):
    """One line of plain text: escape codes removed, control characters and runs of whitespace
    made single spaces, cut to `limit` characters."""
    text = CONTROL.sub(" ", ANSI.sub("", str(text)))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


@dataclass
class Mark:
    exercise: str
    chapter: str
    points: int
    maximum: int
    status: str
    sentence: str
    found_by: str | None = None   # how the answer cell was found: "cell id", "grade_id", "name"

    def verdict(self):
        """As a notebook prints a verdict (str(Verdict)): "not attempted. Your ...", else
        "<status>: <sentence>"."""
        if self.status == "not attempted":
            return f"{self.status}. {self.sentence}"
        return f"{self.status}: {self.sentence}"


@dataclass
class Grades:
    student: str
    marks: list
    notes: list = field(default_factory=list)

    @property
    def points(self):
        return sum(mark.points for mark in self.marks)

    @property
    def maximum(self):
        return sum(mark.maximum for mark in self.marks)


@dataclass
class Gradebook:
    chapters: list
    grades: list
    limit: float
    parallel: int
    isolation: object = None   # judge.sandboxes.Isolation
    seed: str = ""             # of the cases the checks added to the chapters' own
    seconds: float = 0.0
    chapters_run: int = 0
    peak: int = 0

    @property
    def exercises(self):
        return [e for chapter in self.chapters for e in chapter.exercises]


# ------------------------------------------------------------------------------ the plan

def plan(chapter, found):
    """The chapter's exercise section (its code cells from the heading "## Exercises" up to its
    last check), with the student's answers in place of the author's and the instructor's check
    in place of each check cell. The section's first cell imports what its exercises use."""
    answer_of = {e.answer_id: e for e in chapter.exercises}
    check_of = {e.check_id: e for e in chapter.exercises}
    cells = chapter.exercise_cells()
    last = max(i for i, cell in enumerate(cells) if cell.get("id") in check_of)
    items = []
    for cell in cells[:last + 1]:
        cell_id = cell.get("id")
        if cell_id in answer_of:
            exercise = answer_of[cell_id]
            stub = nbgrader_stubbed(cell.source)
            answer = found.get(exercise.number)
            items.append({"kind": "answer", "exercise": exercise.number, "cell_id": cell_id,
                          "source": answer.source if answer else stub, "stub": stub})
        elif cell_id in check_of:
            exercise = check_of[cell_id]
            items.append({"kind": "check", "exercise": exercise.number, "cell_id": cell_id,
                          "module": exercise.module, "attribute": exercise.attribute,
                          "expression": exercise.expression})
        else:
            items.append({"kind": "cell", "cell_id": cell_id, "source": cell.source,
                          "tolerated": "raises-exception" in cell.metadata.get("tags", [])})
    return items


# --------------------------------------------------------------------------- the verdicts

def error_text(error):
    value = clean(error.get("evalue", ""), 160)
    return error["ename"] + (f" ({value})" if value else "")


def marks_for(chapter, job, found, limit):
    """One Mark per exercise of the chapter from what its run reported, and notes."""
    results, items = job.results, job.items
    where = {(item["kind"], item.get("exercise")): index for index, item in enumerate(items)
             if item["kind"] != "cell"}
    first_answer = min(where[("answer", e.number)] for e in chapter.exercises)
    limit_text = f"the {limit:g} s limit"

    def outcome(index):
        return results.get(index)

    # A chapter's own cell that fails before any answer runs: nothing in the chapter can be graded.
    for index, item in enumerate(items[:first_answer]):
        result = outcome(index)
        if result is None:
            return [mark(e, "ungradable", f"the chapter stopped before any answer ran: {job.halted}.")
                    for e in chapter.exercises], []
        if result["timed_out"] or (result.get("error") and not item["tolerated"]):
            what = (f"did not finish within {limit_text}" if result["timed_out"]
                    else f"raised {error_text(result['error'])}")
            return [mark(e, "ungradable", f"{own_cell(item['source'])} {what} "
                                          "before any answer ran; tell your instructor.")
                    for e in chapter.exercises], []

    marks = []
    for exercise in chapter.exercises:
        n = exercise.number
        answer, check = outcome(where[("answer", n)]), outcome(where[("check", n)])
        if n not in found:
            marks.append(mark(exercise, "missing",
                              f"your notebook for chapter {chapter.number} has no answer cell for {n}."))
        elif n in job.stopped:
            kind, why = job.stopped[n]
            if kind == "answer":
                marks.append(mark(exercise, "error", f"your answer to {n} {why}."))
            else:
                marks.append(mark(exercise, "error", f"while being checked, your answer to {n} {why}."))
        elif answer is None:
            marks.append(mark(exercise, "ungradable", f"the chapter stopped before your answer to {n} "
                                                      f"ran: {job.halted}."))
        elif answer["timed_out"]:
            marks.append(mark(exercise, "error", f"your answer to {n} did not finish within {limit_text}."))
        elif answer.get("error") and answer["error"]["ename"] == "NotImplementedError":
            if untouched(items[where[("answer", n)]]):
                marks.append(mark(exercise, "not attempted", "Your answer cell still holds the stub; "
                                  "put your answer in place of it."))
            else:
                marks.append(mark(exercise, "error", f"your answer to {n} never ran to its end: the "
                                  "stub's raise NotImplementedError() is still in the cell; delete it "
                                  "(and # YOUR CODE HERE) so your answer counts."))
        elif answer.get("error"):
            marks.append(mark(exercise, "error", f"{error_text(answer['error'])} in your answer to {n}.",
                              helper_hint(answer["error"]["ename"])))
        elif check is None:
            marks.append(mark(exercise, "ungradable", f"the chapter stopped before your answer to {n} "
                                                      f"was checked: {job.halted}."))
        elif check["timed_out"]:
            marks.append(mark(exercise, "error", f"checking your answer to {n} did not finish within "
                                                 f"{limit_text}."))
        elif check.get("error"):
            marks.append(mark(exercise, "error", f"{error_text(check['error'])} while checking your "
                                                 f"answer to {n}.", helper_hint(check["error"]["ename"])))
        else:
            verdict = check["verdict"]
            if verdict["exercise"] != n or verdict["status"] not in ("correct", "not yet", "not attempted"):
                marks.append(mark(exercise, "error", f"the check of {n} gave no verdict."))
            else:
                hint = helper_hint(verdict["sentence"]) if verdict["status"] == "not yet" else None
                marks.append(mark(exercise, verdict["status"], verdict["sentence"], hint))
        marks[-1].found_by = found[n].found_by if n in found else None
    notes = []
    for index, item in enumerate(items[first_answer:], start=first_answer):
        result = outcome(index)
        if item["kind"] == "cell" and result and not item["tolerated"] and (result["timed_out"] or result.get("error")):
            what = (f"did not finish within {limit_text}" if result["timed_out"]
                    else f"raised {error_text(result['error'])}")
            notes.append(f"chapter {chapter.number}: {own_cell(item['source'])} {what} after "
                         "your answers ran; it uses what an answer cell defines or changes.")
    return marks, notes


def untouched(item):
    """Whether an answer cell holds nothing but its stub: every line of code it has is a line of
    the stub (the ____ placeholder line and nbgrader's two lines)."""
    def lines(source):
        return {line.strip() for line in source.splitlines() if line.strip()}
    return lines(item["source"]) <= lines(item["stub"])


def helper_hint(text):
    """ONLY_ANSWER_CELLS when the failure (an exception's name, or a check's sentence) is a
    NameError, else None."""
    return ONLY_ANSWER_CELLS if NAME_ERROR.search(text) else None


def mark(exercise, status, sentence, hint=None):
    """The Mark; `hint`, a sentence of the grader's own, follows the (cut) sentence in full."""
    points = exercise.points if status == "correct" else 0
    sentence = clean(sentence)
    if hint:
        sentence = sentence + ("" if sentence.endswith((".", "!", "?", "...")) else ".") + f" {hint}"
    return Mark(exercise.number, exercise.chapter, points, exercise.points, status, sentence)


# ------------------------------------------------------------------------------ the class

def grade_class(folder, chapters, limit=10, parallel=2, known=None, isolation=None,
                limits=Limits(), seed=None):
    """Grade every student of the class folder on `chapters`; returns a Gradebook. `known`: every
    chapter a notebook may be, when `chapters` is only some of them (their notebooks are skipped).
    `isolation` (judge.sandboxes.Isolation): how the sandboxes are made. `seed`: the cases the
    checks add to the chapters' own (a fresh secret one when None)."""
    if limit <= 0:
        raise ValueError("timeout: the per-cell limit must be a positive number of seconds")
    started = time.monotonic()
    isolation = isolation or isolation_here()
    # The zygote starts before any submission is read, so no sandbox can find one in memory.
    sandboxes = Sandboxes(isolation, limits)
    try:
        roster = students(folder, chapters, known)
        jobs, found_by_key = [], {}
        for student in roster:
            for chapter in chapters:
                if chapter.stem in student.notebooks:
                    try:
                        found = answers(student.notebooks[chapter.stem][1], chapter)
                    except Exception as error:  # noqa: BLE001 - a notebook of a shape no chapter has
                        student.unreadable[chapter.stem] = (f"{student.notebooks[chapter.stem][0].name} "
                                                            f"could not be read ({type(error).__name__})")
                        continue
                    job = Job((student.name, chapter.stem), plan(chapter, found))
                    found_by_key[job.key] = found
                    jobs.append(job)
        seed = seed or secrets.token_hex(16)
        peak = run_all(sandboxes, jobs, limit, parallel, seed)
    finally:
        left = sandboxes.finish()
    if left:
        raise RuntimeError(f"{left} sandboxed processes outlived their chapters and could not be "
                           "killed; no gradebook was written")
    finished = {job.key: job for job in jobs}
    grades = []
    for student in roster:
        marks, notes = [], [clean(note) for note in student.notes]
        for chapter in chapters:
            key = (student.name, chapter.stem)
            if key in finished and chapter.stem not in student.unreadable:
                chapter_marks, chapter_notes = marks_for(chapter, finished[key], found_by_key[key], limit)
                marks += chapter_marks
                notes += [clean(note) for note in chapter_notes]
            elif chapter.stem in student.unreadable:
                marks += [mark(e, "ungradable", student.unreadable[chapter.stem] + ".")
                          for e in chapter.exercises]
            else:
                marks += [mark(e, "missing", f"no notebook for chapter {chapter.number} "
                                             f"({chapter.stem}) was submitted.")
                          for e in chapter.exercises]
        grades.append(Grades(student.name, marks, notes))
    return Gradebook(chapters, grades, limit, parallel, isolation, seed, time.monotonic() - started,
                     len(jobs), peak)


# ------------------------------------------------------------------------------ the files

def isolated(book):
    """The gradebook's last column: whether the grades were computed with isolation."""
    return "isolated" if book.isolation.complete else "NOT ISOLATED: not tamper-proof"


def csv_text(book):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student"] + [e.number for e in book.exercises] + ["total", "maximum", "isolation"])
    for grades in book.grades:
        writer.writerow([grades.student] + [m.points for m in grades.marks]
                        + [grades.points, grades.maximum, isolated(book)])
    return buffer.getvalue()


def feedback_text(grades, chapters, isolation):
    numbers = ", ".join(str(chapter.number) for chapter in chapters)
    lines = [f"{grades.student}: {grades.points} of {grades.maximum} points",
             f"Chapters graded: {numbers}. Graded with the instructor's own set-up and checks; from "
             "your notebooks only the answer cells were taken.", isolation.sentence(), ""]
    for m in grades.marks:
        lines.append(f"{m.exercise:>5}  {m.points:>2} of {m.maximum:<2}  {m.verdict()}")
    if grades.notes:
        lines += ["", "Notes:"] + [f"- {note}" for note in grades.notes]
    return "\n".join(lines) + "\n"


def as_json(book):
    return {
        "chapters": [chapter.stem for chapter in book.chapters],
        "run": {"jobs": book.parallel, "peak": book.peak, "chapters": book.chapters_run,
                "timeout_seconds": book.limit, "seed": book.seed},
        "isolation": {"mode": book.isolation.mode, "complete": book.isolation.complete,
                      "reason": book.isolation.reason, "sentence": book.isolation.sentence()},
        "students": [{"student": g.student, "points": g.points, "maximum": g.maximum,
                      "exercises": [asdict(m) for m in g.marks], "notes": g.notes}
                     for g in book.grades],
    }


def write(book, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gradebook.csv").write_text(csv_text(book))
    (out / "grades.json").write_text(json.dumps(as_json(book), indent=1, ensure_ascii=False) + "\n")
    feedback = out / "feedback"
    shutil.rmtree(feedback, ignore_errors=True)
    feedback.mkdir()
    for grades in book.grades:
        (feedback / f"{grades.student}.txt").write_text(feedback_text(grades, book.chapters,
                                                                      book.isolation))
    return out


def counted(number, noun):
    return f"{number} {noun}" + ("" if number == 1 else "s")


def summary(book, out):
    width = max([len(g.student) for g in book.grades] + [7])
    lines = [f"{'student':<{width}}  points"]
    lines += [f"{g.student:<{width}}  {g.points:>3} of {g.maximum}" for g in book.grades]
    lines.append(f"{counted(len(book.grades), 'student')}, {counted(book.chapters_run, 'chapter notebook')} "
                 f"graded in {book.seconds:.1f} s ({book.parallel} at a time, {book.limit:g} s per cell)")
    lines.append(f"gradebook: {out / 'gradebook.csv'}  feedback: {out / 'feedback'}/  json: {out / 'grades.json'}")
    lines.append(book.isolation.sentence())
    return "\n".join(lines)
