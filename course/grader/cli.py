"""Grade a class: a folder with one sub-folder (or one notebook) per student.

    python course/grader/cli.py SUBMISSION [--out DIR] [--timeout SECONDS] [--jobs N] [--chapters 1,2]
                            [--isolation auto|required|off] [--memory MIB] [--due WHEN]
                            [--late none|zero] [--json]
    make grade SUBMISSION=class/ [GRADES=build/grades] [TIMEOUT=10] [JOBS=<cores>] [CHAPTERS=01,02]
                                 [ISOLATION=auto|required|off] [MEMORY=1024] [DUE=...] [LATE=none]

From each student's notebooks only the answer cells are taken (read as JSON, never run here).
Each graded chapter's exercise section then runs from the author's source (notebooks/) with
those answers in place of the worked ones, in a sandbox (course.grader.sandbox): as a user of its
own, in Linux namespaces of its own, with no network and only the package's class edition to
read, when the machine allows (root). The verdicts are decided outside it, by the checks in
workbook/teaching/exercises/checks/ (course.grader.judge), from plain data and from the state of what they
lent the student's functions, each student's chapter in a judge process of its own, within its
own budget (course.grader.judge.judges). A cell that raises or runs past the per-cell limit fails
only its exercise. --chapters grades some of the chapters only (default: all six); a student's notebooks
of the other chapters are then left alone. A chapter is graded from its own hand-in only (course/grader/submissions.py); --due gives
its due date (one for all, or "01=2026-03-02 17:00;02=..."), and a hand-in whose nbgrader
timestamp.txt is later is marked late, as nbgrader marks it; --late zero takes its points, as
nbgrader's LateSubmissionPlugin's penalty_method "zero" does (default none: it keeps them).
Writes DIR/gradebook.csv, DIR/feedback/<student>.txt and DIR/grades.json, all three together
in one rename (course/grader/output.py), once every sandboxed process is gone, and prints a
summary, or the JSON with --json. Each of them says whether the grades were computed with
isolation, and how a student's processes were bounded.
Exits 0 when the gradebook is written, 2 when the arguments are wrong, 3 when --isolation
required was asked for and the machine cannot isolate student code, 4 when the files could not
be written (the previous run's are left as they were).
"""
import argparse
import os
import sys
from pathlib import Path

from course.grader.chapters import GRADED, ROOT, SOURCE, graded_chapters, select
from course.grader.gradebook import LATE_POLICIES, grade_class, summary
from course.grader.judge.sandboxes import isolation_here
from course.grader.output import as_json, json_text, write
from course.grader.sandbox.jail import Limits
from course.grader.submissions import due_dates


def cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def parser():
    options = argparse.ArgumentParser(description="Grade a class folder with the instructor's own checks.")
    options.add_argument("submission", help="the class folder: one sub-folder or notebook per student")
    options.add_argument("--out", default=str(ROOT / "build" / "grades"),
                        help="where to write gradebook.csv, feedback/ and grades.json (default build/grades)")
    options.add_argument("--timeout", type=float, default=10,
                        help="seconds each cell may run before it is interrupted and fails (default 10)")
    options.add_argument("--jobs", type=int, default=cores(),
                        help="chapters graded at once, each in its own process (default: the cores, %(default)s)")
    options.add_argument("--chapters", default=",".join(stem[:2] for stem in GRADED),
                        help="the chapters to grade, by number: 01,02 (default: all, %(default)s)")
    options.add_argument("--isolation", choices=("auto", "required", "off"), default="auto",
                        help="auto: isolate student code as far as the machine allows, and say "
                             "how far; required: refuse to grade without full isolation; off: "
                             "no sandbox namespaces or users (default auto)")
    options.add_argument("--memory", type=int, default=Limits.memory >> 20,
                        help="MiB a student's chapter's sandboxed processes may hold together, and "
                             "each one's address space (default %(default)s)")
    options.add_argument("--due", default="",
                        help="the due date: '2026-03-02 17:00' (UTC unless a zone follows: "
                             "'... Europe/Berlin', '+01:00'), or one per chapter: "
                             "'01=2026-03-02 17:00;02=2026-03-09 17:00'; a hand-in whose nbgrader "
                             "timestamp.txt is later is marked late")
    options.add_argument("--late", choices=LATE_POLICIES, default="none",
                        help="what late work earns, as nbgrader's LateSubmissionPlugin: none (it "
                             "keeps its points, and is marked late) or zero (default none)")
    options.add_argument("--seed", help="the seed of the cases the checks add to the chapters' "
                                         "own (grades.json names the one a run used); default: "
                                         "a fresh secret one")
    options.add_argument("--json", action="store_true", help="print the grades as JSON instead of a summary")
    return options


def main(argv=None):
    options = parser()
    arguments = options.parse_args(argv)
    if arguments.timeout <= 0:
        options.error("--timeout must be a positive number of seconds")
    if arguments.jobs < 1:
        options.error("--jobs must be at least 1")
    if not Path(arguments.submission).is_dir():
        options.error(f"SUBMISSION: {arguments.submission} is not a folder")
    try:
        stems = select(arguments.chapters)
    except ValueError as error:
        options.error(str(error))
    if arguments.memory < 256:
        options.error("--memory must be at least 256 MiB: the chapters' libraries need about 200")
    isolation = isolation_here(arguments.isolation)
    if arguments.isolation == "required" and not isolation.complete:
        print(f"make grade: ISOLATION=required, but this machine cannot isolate student code: "
              f"{isolation.reason}", file=sys.stderr)
        return 3
    known = graded_chapters(SOURCE, GRADED)  # to tell a chapter left out from a stray notebook
    chapters = [chapter for chapter in known if chapter.stem in stems]
    try:
        due = due_dates(arguments.due, chapters)
    except ValueError as error:
        options.error(str(error))
    limits = Limits(memory=arguments.memory << 20, cpu=max(120, int(12 * arguments.timeout)))
    book = grade_class(arguments.submission, chapters, arguments.timeout, arguments.jobs, known=known,
                       isolation=isolation, limits=limits, seed=arguments.seed, due=due,
                       late_policy=arguments.late)
    if not book.grades:
        print(f"no students in {arguments.submission}: expected one sub-folder or notebook per student",
              file=sys.stderr)
        return 1
    try:
        out = write(book, arguments.out)
    except OSError as error:
        print(f"make grade: the files could not be written to {arguments.out} ({error.strerror or error}); "
              "the previous run's, if any, are as they were", file=sys.stderr)
        return 4
    if arguments.json:
        print(json_text(as_json(book)), end="")
    else:
        print(summary(book, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
