"""The files of a run, written whole and together: all the new run's, or all the previous run's.

    OUT/gradebook.csv          student, one column per exercise (points earned), total, maximum,
                               late, refused, isolation, bounds
    OUT/feedback/<student>.txt every exercise with its points and one-sentence verdict (its
                               name: feedback_names, within the folder's NAME_MAX, one per student)
    OUT/grades.json            the same, for programs, with the run's budgets and what they held

A run writes its files into a folder of its own, OUT/runs/<run>/, and only when every file is
written and flushed does OUT/current, a link, move to it in one rename(2). The three names above
are links through OUT/current, made once, so a reader, a crash or a failed write sees one run's
files or the other's, never a mix. The previous run's folder is removed after the move.

Every text that came from a student passes through course.grader.text: no file holds a lone
surrogate, a control character or an escape code, and no CSV cell is a spreadsheet formula.
"""
import csv
import hashlib
import io
import json
import os
import secrets
import shutil
import time
from dataclasses import asdict
from pathlib import Path

from course.grader.submissions import late_text
from course.grader.text import cell, clean, safe, without_surrogates

NAMES = ("gradebook.csv", "grades.json", "feedback")


def isolated(book):
    """The gradebook's isolation column: whether the grades were computed with isolation."""
    return "isolated" if book.isolation.complete else "NOT ISOLATED: not tamper-proof"


def bounded(book):
    """The gradebook's bounds column: whether a student's processes were bounded together."""
    return "per student" if book.bounds.grouped else "per process only"


def late_cell(grades, book):
    return "; ".join(f"{int(stem[:2])}: {late_text(seconds)}" for stem, seconds in grades.late.items())


def refused_cell(grades):
    return "; ".join(f"{path} ({why})" for path, why in grades.refused)


def name_max(folder):
    """The most bytes a file name may have in `folder` (NAME_MAX; 255 where it cannot be asked)."""
    try:
        return min(255, os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError):
        return 255


def within(text, most_bytes):
    """The longest start of `text` of at most `most_bytes` bytes of UTF-8, never half a character."""
    return text.encode("utf-8")[:most_bytes].decode("utf-8", "ignore")


def feedback_names(students, most_bytes=255):
    """A feedback file's name for each student, in order: the name as shown, with ".txt"; one
    that would be over `most_bytes` bytes cut and told apart by a digest of the whole, and one
    that another student's already has told apart by its place. Whatever a name holds, each is at
    most `most_bytes` bytes and no two are the same: no student's name can fail the run's files."""
    names, used = [], set()
    for place, student in enumerate(students):
        stem = without_surrogates(student).replace("/", "\\x2f")
        if len(f"{stem}.txt".encode("utf-8")) > most_bytes:
            digest = hashlib.sha256(stem.encode("utf-8")).hexdigest()[:16]
            stem = within(stem, most_bytes - len(f"~{digest}.txt")) + f"~{digest}"
        name, other = f"{stem}.txt", place
        while name in used or name.startswith("."):
            other += 1
            suffix = f"~{other}.txt"
            name = within(stem, most_bytes - len(suffix)) + suffix
        names.append(name)
        used.add(name)
    return names


def csv_text(book):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student"] + [e.number for e in book.exercises]
                    + ["total", "maximum", "late", "refused", "isolation", "bounds"])
    for grades in book.grades:
        writer.writerow([cell(grades.student)] + [m.points for m in grades.marks]
                        + [grades.points, grades.maximum, cell(late_cell(grades, book)),
                           cell(refused_cell(grades)), isolated(book), bounded(book)])
    return buffer.getvalue()


def feedback_text(grades, book):
    numbers = ", ".join(str(chapter.number) for chapter in book.chapters)
    lines = [f"{safe(grades.student)}: {grades.points} of {grades.maximum} points",
             f"Chapters graded: {numbers}. Graded with the instructor's own set-up and checks; from "
             "your notebooks only the answer cells were taken.", book.isolation.sentence(),
             book.bounds.sentence(), ""]
    for m in grades.marks:
        lines.append(f"{m.exercise:>5}  {m.points:>2} of {m.maximum:<2}  {clean(m.verdict(), 800)}")
    if grades.late:
        lines += [""] + [f"Chapter {int(stem[:2])} was handed in {late_text(seconds)} after its due "
                         f"date{late_policy_words(book)}." if seconds is not None else
                         f"Chapter {int(stem[:2])}'s timestamp.txt could not be read, so it counts as "
                         f"handed in after its due date{late_policy_words(book)}."
                         for stem, seconds in grades.late.items()]
    if grades.refused:
        lines += ["", "Not graded:"] + [f"- {clean(path, 200)}: {clean(why, 200)}"
                                        for path, why in grades.refused]
    if grades.notes:
        lines += ["", "Notes:"] + [f"- {clean(note, 400)}" for note in grades.notes]
    return "\n".join(lines) + "\n"


def late_policy_words(book):
    return "; late work earns no points" if book.late_policy == "zero" else \
        " (late work keeps its points)"


def as_json(book, names=None):
    return {
        "chapters": [chapter.stem for chapter in book.chapters],
        "run": {"jobs": book.parallel, "peak": book.peak, "chapters": book.chapters_run,
                "timeout_seconds": book.limit, "seed": book.seed, "seconds": round(book.seconds, 1),
                "due": {stem: moment.isoformat() for stem, moment in book.due.items()},
                "late_policy": book.late_policy, "budgets": book.budgets, "used": book.used},
        "isolation": {"mode": book.isolation.mode, "complete": book.isolation.complete,
                      "reason": book.isolation.reason, "sentence": book.isolation.sentence()},
        "bounds": {"kind": book.bounds.kind, "grouped": book.bounds.grouped,
                   "memory_mib": book.bounds.memory >> 20, "tasks": book.bounds.tasks,
                   "own_core": book.bounds.cores, "missing": list(book.bounds.missing),
                   "sentence": book.bounds.sentence()},
        "students": [{"student": g.student, "feedback": f"feedback/{name}", "points": g.points,
                      "maximum": g.maximum,
                      "exercises": [asdict(m) for m in g.marks], "notes": g.notes,
                      "refused": [{"path": path, "why": why} for path, why in g.refused],
                      "submitted": {stem: moment.isoformat() for stem, moment in g.submitted.items()},
                      "late_seconds": {stem: None if seconds is None else round(seconds)
                                       for stem, seconds in g.late.items()},
                      "chapters": g.chapters}
                     for g, name in zip(book.grades, names or feedback_names([g.student for g in book.grades]))],
    }


def json_text(value):
    """JSON of a value whose strings may hold lone surrogates: written as \\udcff escapes."""
    return json.dumps(value, indent=1, ensure_ascii=True) + "\n"


def write(book, out):
    """Write the run's files into OUT/runs/<run>/, then make them OUT's in one rename."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = out / "runs"
    runs.mkdir(exist_ok=True)
    run = runs / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    run.mkdir()
    try:
        (run / "feedback").mkdir()
        names = feedback_names([g.student for g in book.grades], name_max(run / "feedback"))
        write_file(run / "gradebook.csv", csv_text(book))
        write_file(run / "grades.json", json_text(as_json(book, names)))
        for grades, name in zip(book.grades, names):
            write_file(run / "feedback" / name, feedback_text(grades, book))
        fsync_folder(run / "feedback")
        fsync_folder(run)
    except BaseException:
        shutil.rmtree(run, ignore_errors=True)
        raise
    previous = current_run(out)
    swap(out / "current", Path("runs") / run.name)
    fsync_folder(out)
    links(out)
    for old in runs.iterdir():
        if old.name != run.name:
            shutil.rmtree(old, ignore_errors=True)
    del previous
    return out


def write_file(path, text):
    data = text.encode("utf-8")   # every text is ASCII-safe or valid UTF-8 by now
    with open(path, "xb") as handle:  # a new run's folder: a file already there is a bug, never overwritten
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def fsync_folder(folder):
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def swap(link, target):
    """Point `link` at `target` in one rename(2) of a new link over it."""
    temporary = link.with_name(f".{link.name}-{secrets.token_hex(4)}")
    os.symlink(target, temporary)
    try:
        os.replace(temporary, link)
    except BaseException:
        os.unlink(temporary)
        raise


def current_run(out):
    try:
        return os.readlink(out / "current")
    except OSError:
        return None


def links(out):
    """OUT/gradebook.csv, grades.json and feedback as links through OUT/current (made once; a
    real file or folder of an older grader's, or of a run before this layout, is replaced)."""
    for name in NAMES:
        path, target = out / name, Path("current") / name
        if path.is_symlink() and os.readlink(path) == str(target):
            continue
        if path.is_dir() and not path.is_symlink():
            aside = out / f".old-{name}-{secrets.token_hex(4)}"
            os.rename(path, aside)
            swap(path, target)
            shutil.rmtree(aside, ignore_errors=True)
        else:
            swap(path, target)
