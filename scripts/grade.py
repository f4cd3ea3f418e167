"""Grade a class: a folder with one sub-folder (or one notebook) per student.

    python scripts/grade.py SUBMISSION [--out DIR] [--timeout SECONDS] [--jobs N] [--chapters 1,2] [--json]
    make grade SUBMISSION=class/ [GRADES=build/grades] [TIMEOUT=10] [JOBS=<cores>] [CHAPTERS=01,02]

From each student's notebooks only the answer cells are taken. Each graded chapter then runs
from the author's source (notebooks/) with those answers in place of the worked ones, and the
verdicts come from a freshly imported copy of the exercise module: a student's check lines,
printed verdicts or patched checks change nothing. A cell that raises or runs past the per-cell
limit fails only its exercise. --chapters grades some of the chapters only (default: all six);
a student's notebooks of the other chapters are then left alone. Writes DIR/gradebook.csv,
DIR/feedback/<student>.txt and DIR/grades.json (scripts/classroom/gradebook.py) and prints a
summary, or the JSON with --json.
Exits 0 when the gradebook is written, 2 when the arguments are wrong.
"""
import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from classroom import runner  # noqa: E402
from classroom.chapters import GRADED, ROOT, SOURCE, graded_chapters, select  # noqa: E402
from classroom.gradebook import as_json, grade_class, summary, write  # noqa: E402


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
    runner.preload()  # before anything imports numpy or matplotlib
    known = graded_chapters(SOURCE, GRADED)  # to tell a chapter left out from a stray notebook
    chapters = [chapter for chapter in known if chapter.stem in stems]
    book = grade_class(arguments.submission, chapters, arguments.timeout, arguments.jobs, known=known)
    if not book.grades:
        print(f"no students in {arguments.submission}: expected one sub-folder or notebook per student",
              file=sys.stderr)
        return 1
    out = write(book, arguments.out)
    if arguments.json:
        print(json.dumps(as_json(book), indent=1, ensure_ascii=False))
    else:
        print(summary(book, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
