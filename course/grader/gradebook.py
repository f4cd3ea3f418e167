"""From a class folder to a gradebook: which notebook is each chapter's hand-in, a judge per
student's chapter, verdicts into points, and the files (course.grader.output).

This is the grader's own process, and it does little with what students send: it lists the class
folder (names and file metadata), opens the notebooks it hands to judges, and collects their
plain, size-capped verdicts. Everything that reads, decodes or checks a student's work runs in a
judge of its own (course.grader.judge.judges), within that job's budget, and every student's
code in a sandbox (course.grader.sandbox), within its job's control groups (course.grader.cgroups).

Every row lists every exercise of the graded chapters; one that is missing or cannot be graded
earns 0 points and says why. No text in any file holds a terminal escape code.
"""
import queue
import resource
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from course.grader import cgroups
from course.grader.judge.judges import Budget, Grading, Judges, describe
from course.grader.judge.sandboxes import Sandboxes, isolation_here
from course.grader.output import csv_text, write  # noqa: F401 - the files, for the command line
from course.grader.sandbox.jail import Limits
from course.grader.submissions import by_name, hand_ins, open_notebook, students
from course.grader.text import clean
from course.grader.verdicts import ONLY_ANSWER_CELLS, STATUSES, items_in, mark, plan  # noqa: F401

LATE_POLICIES = ("none", "zero")  # as nbgrader's LateSubmissionPlugin.penalty_method


@dataclass
class Mark:
    exercise: str
    chapter: str
    points: int
    maximum: int
    status: str
    sentence: str
    found_by: str | None = None   # how the answer cell was found: "cell id", "grade_id", "name"
    late: bool = False            # handed in after the chapter's due date

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
    refused: list = field(default_factory=list)    # (path, why it was not graded)
    submitted: dict = field(default_factory=dict)  # chapter stem -> when, from nbgrader
    late: dict = field(default_factory=dict)       # chapter stem -> seconds after the due date
    chapters: dict = field(default_factory=dict)   # chapter stem -> what grading it used

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
    bounds: object = None      # cgroups.Bounds
    budgets: dict = field(default_factory=dict)
    used: dict = field(default_factory=dict)   # the largest any judge, sandbox group and the grader used
    due: dict = field(default_factory=dict)    # chapter stem -> due date
    late_policy: str = "none"

    @property
    def exercises(self):
        return [e for chapter in self.chapters for e in chapter.exercises]


def scored(exercise, verdict, late=False, late_policy="none"):
    """The Mark of a verdict: the exercise's own points when correct (none when late under the
    policy "zero", as nbgrader's LateSubmissionPlugin gives)."""
    earned = verdict["status"] == "correct" and not (late and late_policy == "zero")
    return Mark(exercise.number, exercise.chapter, exercise.points if earned else 0, exercise.points,
                verdict["status"], verdict["sentence"], verdict.get("found_by"), late)


# ------------------------------------------------------------------------------ the class

def grade_class(folder, chapters, limit=10, parallel=2, known=None, isolation=None,
                limits=Limits(), seed=None, due=None, late_policy="none", budget=Budget()):
    """Grade every student of the class folder on `chapters`; returns a Gradebook. `known`: every
    chapter a notebook may be, when `chapters` is only some of them (their notebooks are skipped).
    `isolation` (judge.sandboxes.Isolation): how the sandboxes are made. `seed`: the cases the
    checks add to the chapters' own (a fresh secret one when None). `due`: {stem: due date};
    `late_policy`: "none" (late work is marked, and keeps its points) or "zero"."""
    if limit <= 0:
        raise ValueError("timeout: the per-cell limit must be a positive number of seconds")
    if late_policy not in LATE_POLICIES:
        raise ValueError(f"late_policy: {late_policy!r} is none of {', '.join(LATE_POLICIES)}")
    started = time.monotonic()
    known, due = list(known or chapters), dict(due or {})
    isolation = isolation or isolation_here()
    seed = seed or secrets.token_hex(16)
    grace = max(1.0, limit / 2)
    cgroups.sweep()
    groups = cgroups.Groups(limits.memory, limits.tasks)
    # The zygotes start before any submission is read, so no judge or sandbox can find one in memory.
    judges = Judges(budget)
    sandboxes = None
    results, left = {}, 0
    try:
        sandboxes = Sandboxes(isolation, limits)
        judges.wait()
        sandboxes.wait()
        roster = students(folder, known)
        with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
            readable = [n for s in roster for n in s.notebooks if n.problem is None]
            for notebook, said in zip(readable, pool.map(lambda n: identify(judges, n), readable)):
                notebook.chapter = said.get("chapter")
                notebook.unreadable = said.get("why") or said.get("failed")
            for student in roster:
                for notebook in student.notebooks:
                    if notebook.problem is not None:
                        notebook.chapter = by_name(notebook, known)
                hand_ins(student, chapters, known, due)
            jobs = [(student, chapter) for student in roster for chapter in chapters
                    if chapter.stem in student.graded]
            slots = queue.Queue()
            for slot in range(max(1, parallel)):
                slots.put(slot)
            items = {chapter.stem: items_in(chapter) for chapter in chapters}

            def run(job):
                student, chapter = job
                notebook = student.graded[chapter.stem]
                grading = Grading(judges, sandboxes, groups, chapter, notebook.shown, limit, grace,
                                  seed, items[chapter.stem])
                slot = slots.get()
                try:
                    return grading.run(slot, lambda: open_notebook(notebook.path))
                except Exception as error:  # noqa: BLE001 - one chapter's failure is never the class's
                    sentence = f"the grader failed on this chapter ({type(error).__name__})."
                    from course.grader.judge.judges import Chapter
                    return Chapter([mark(e, "ungradable", sentence) for e in chapter.exercises])
                finally:
                    slots.put(slot)
            for job, result in zip(jobs, pool.map(run, jobs)):
                results[(job[0].name, job[1].stem)] = result
    finally:
        if sandboxes is not None:
            left = sandboxes.finish()
        judges.finish()
        groups.close()
    if left:
        raise RuntimeError(f"{left} sandboxed processes outlived their chapters and could not be "
                           "killed; no gradebook was written")
    grades = [grades_of(student, chapters, results, late_policy) for student in roster]
    used = largest(results)
    used["sandbox_uids"] = [sandboxes.first_uid, sandboxes.last_uid]
    used["grader_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    return Gradebook(chapters, grades, limit, parallel, isolation, seed, time.monotonic() - started,
                     len(results), min(parallel, len(results)), groups.bounds,
                     describe(budget, limits, groups.bounds), used, due, late_policy)


def identify(judges, notebook):
    try:
        fd = open_notebook(notebook.path)
    except OSError as error:
        return {"chapter": None, "failed": type(error).__name__}
    return judges.identify(fd, notebook.path.name)


def grades_of(student, chapters, results, late_policy):
    marks, notes = [], [clean(note, 400) for note in student.notes]
    used = {}
    for chapter in chapters:
        key = (student.name, chapter.stem)
        late = chapter.stem in student.late
        if key in results:
            result = results[key]
            verdicts = {v["exercise"]: v for v in result.marks}
            marks += [scored(e, verdicts[e.number], late, late_policy) for e in chapter.exercises]
            notes += result.notes
            used[chapter.stem] = result.used
        elif chapter.stem in student.unreadable:
            marks += [scored(e, mark(e, "ungradable", student.unreadable[chapter.stem] + "."))
                      for e in chapter.exercises]
        else:
            marks += [scored(e, mark(e, "missing", f"no notebook for chapter {chapter.number} "
                                                   f"({chapter.stem}) was submitted."))
                      for e in chapter.exercises]
    return Grades(student.name, marks, notes, list(student.refused), dict(student.submitted),
                  dict(student.late), used)


def largest(results):
    """The most any one judge, and any one job's sandboxes together, used."""
    found = {"judge_mib": 0, "judge_cpu_seconds": 0.0, "sandboxes_mib": 0, "sandbox_tasks": 0}
    for result in results.values():
        used = result.used
        found["judge_mib"] = max(found["judge_mib"], (used.get("judge_memory") or 0) >> 20)
        found["judge_cpu_seconds"] = max(found["judge_cpu_seconds"], used.get("judge_cpu") or 0)
        found["sandboxes_mib"] = max(found["sandboxes_mib"], (used.get("sandbox_memory") or 0) >> 20)
        found["sandbox_tasks"] = max(found["sandbox_tasks"], used.get("sandbox_tasks") or 0)
    return found


# ------------------------------------------------------------------------------ the summary

def counted(number, noun):
    return f"{number} {noun}" + ("" if number == 1 else "s")


def summary(book, out):
    width = max([len(g.student) for g in book.grades] + [7])
    lines = [f"{'student':<{width}}  points"]
    lines += [f"{g.student:<{width}}  {g.points:>3} of {g.maximum}" for g in book.grades]
    lines.append(f"{counted(len(book.grades), 'student')}, {counted(book.chapters_run, 'chapter notebook')} "
                 f"graded in {book.seconds:.1f} s ({book.parallel} at a time, {book.limit:g} s per cell)")
    refused = sum(len(g.refused) for g in book.grades)
    late = sum(len(g.late) for g in book.grades)
    if refused or late:
        lines.append(f"{counted(refused, 'file')} refused, {counted(late, 'chapter')} handed in "
                     "late: see the gradebook's refused and late columns")
    lines.append(f"gradebook: {out / 'gradebook.csv'}  feedback: {out / 'feedback'}/  json: {out / 'grades.json'}")
    lines.append(book.bounds.sentence())
    lines.append(book.isolation.sentence())
    return "\n".join(lines)
