"""A class folder: its students, their notebooks, and which notebook is each chapter's hand-in.

The grader reads only names and file metadata here; no notebook is parsed in its own process
(course.grader.reading does that, in a judge). Layouts (they may be mixed):

    class/alice/01-purpose-and-validation.ipynb    a sub-folder per student, notebooks anywhere
    class/alice/01-purpose-and-validation/01-purpose-and-validation.ipynb   nbgrader's submitted
                                                   layout: a folder per assignment (chapter)
    class/bob.ipynb                                a single notebook named by its student
    alice/01-purpose-and-validation.ipynb ...      one student's own folder (chapter-named notebooks
                                                   directly inside): the folder's name is the student

Hidden folders and files (.ipynb_checkpoints, .git) are ignored.

A chapter is graded from its own hand-in only (hand_ins):
- where the student's folder has the chapter's assignment folder (nbgrader's layout), from
  <chapter>/<chapter>.ipynb in it (hand-in-<chapter>.ipynb on the course hub), the one
  notebook nbgrader itself grades there; its
  timestamp.txt says when it was handed in, and with a due date, whether it was late;
- elsewhere, from the one notebook of that chapter outside every assignment folder.
Any other notebook of the chapter (one in another assignment's folder, a second copy) is refused
and named in the gradebook; when two or more could each be the hand-in, none is graded.
"""
import datetime
import os
import stat
import zoneinfo
from dataclasses import dataclass, field
from pathlib import Path

from course.grader.text import safe, shown_path

# The course hub releases each chapter as HAND_IN_PREFIX + its file name (course.hub.exchange), so
# that its tab's title differs from the practice copy's; nbgrader grades that notebook there.
HAND_IN_PREFIX = "hand-in-"

MOST_NAME = 100         # characters of a student's name as the gradebook shows it
MOST_NAME_BYTES = 200   # and its bytes (UTF-8): feedback/<name>.txt stays within NAME_MAX (255)
CUT = "\\~"             # between a cut name and the digest of the whole
MOST_ENTRIES = 20_000   # files and folders looked at in one student's folder
MOST_NOTEBOOKS = 60     # notebooks of one student read (six chapters, with copies, are a dozen)
MOST_BYTES = 16 << 20   # of one notebook (course.grader.reading.MOST_BYTES, checked before reading)
MOST_STAMP = 1024       # bytes of a timestamp.txt read (nbgrader writes 31), stripped as nbgrader strips


@dataclass
class Notebook:
    path: Path
    shown: str                  # its path in the student's folder, safe to show
    assignment: str | None      # the chapter whose assignment folder holds it (nbgrader's layout)
    problem: str | None = None  # why it is not read at all (a link, not a file, too large)
    chapter: str | None = None  # which chapter it is (a judge reads it, or its name says)
    unreadable: str | None = None


@dataclass
class Student:
    name: str
    base: Path                                   # where the notebooks' shown paths start
    notebooks: list = field(default_factory=list)
    assignments: set = field(default_factory=set)  # chapters with an assignment folder
    graded: dict = field(default_factory=dict)   # chapter stem -> the Notebook graded
    unreadable: dict = field(default_factory=dict)  # chapter stem -> why it cannot be graded
    refused: list = field(default_factory=list)  # (shown path, why it was not graded)
    submitted: dict = field(default_factory=dict)  # chapter stem -> when (UTC), from timestamp.txt
    late: dict = field(default_factory=dict)     # chapter stem -> seconds after the due date,
                                                 # None when its timestamp.txt could not be read
    notes: list = field(default_factory=list)


def shown(name):
    """A student's name as the gradebook, the summary and the feedback file show it: every
    character that does not print as itself escaped (text.safe), so two folders whose names
    differ only there stay two students; a name longer than MOST_NAME characters or
    MOST_NAME_BYTES bytes cut (between escapes, never inside one) and told apart by a digest of
    the whole after CUT. No name that was not cut holds CUT there (text.safe writes a backslash
    only at the start of an escape, and none starts "\\~"), so no folder can be named as another
    folder's cut name: two folders are always two names."""
    import hashlib
    units = [safe(character) for character in name]
    text = "".join(units)
    if len(text) <= MOST_NAME and len(text.encode("utf-8")) <= MOST_NAME_BYTES:
        return text
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    room, size, kept = MOST_NAME - len(CUT) - len(digest), MOST_NAME_BYTES - len(CUT) - len(digest), []
    for unit in units:
        room, size = room - len(unit), size - len(unit.encode("utf-8"))
        if room < 0 or size < 0:
            break
        kept.append(unit)
    return "".join(kept) + CUT + digest


def problem_of(path):
    """Why the file at `path` is not read at all, or None: only a regular file is read, never a
    link (to the author's chapters, or to another student's work), a FIFO or a device."""
    try:
        found = os.lstat(path)
    except OSError as error:
        return type(error).__name__
    if stat.S_ISLNK(found.st_mode):
        return "it is a link, and the grader reads only files handed in"
    if not stat.S_ISREG(found.st_mode):
        return "it is not a regular file"
    if found.st_size > MOST_BYTES:
        return f"it is larger than {MOST_BYTES >> 20} MB"
    return None


def open_notebook(path):
    """A file descriptor of the notebook at `path` to hand a judge, or OSError: the file itself,
    never what a link points to, and only if it is still a regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError("not a regular file")
    return fd


def walk(student, folder, stems):
    """The student's notebooks under `folder`, at most MOST_ENTRIES entries looked at."""
    seen = 0
    for root, folders, files in os.walk(folder, followlinks=False):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        seen += len(folders) + len(files)
        if seen > MOST_ENTRIES:
            student.notes.append(f"your folder holds more than {MOST_ENTRIES:,} files and folders; "
                                 "the grader looked at the first of them only.")
            return
        for name in sorted(files):
            if not name.endswith(".ipynb") or name.startswith("."):
                continue
            path = Path(root) / name
            if len(student.notebooks) >= MOST_NOTEBOOKS:
                student.notes.append(f"your folder holds more than {MOST_NOTEBOOKS} notebooks; the "
                                     "grader read the first of them only.")
                return
            add(student, path, stems)


def add(student, path, stems):
    parts = path.relative_to(student.base).parts
    assignment = parts[0] if len(parts) > 1 and parts[0] in student.assignments else None
    student.notebooks.append(Notebook(path, shown_path(Path(*parts)), assignment, problem_of(path)))


def students(folder, known):
    """The students of a class folder, sorted by name, with their notebooks (not yet read).
    `known`: every chapter a notebook may be.

    A student is one folder, one notebook named by its student, or the class folder itself (its
    chapter-named notebooks); when two of these map to one student, a folder wins over a
    notebook, and a notebook over the class folder's own, and the others are named in the
    winner's refused column, never graded: a notebook named after a classmate can neither take
    the place of their folder nor have both refused (a folder is the layout nbgrader and an
    instructor make; a notebook is what a student names)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"SUBMISSION: {folder} is not a folder")
    stems = {chapter.stem for chapter in known}
    found, own_folder = {}, []   # name -> [(rank, place)]: 0 a folder, 1 a notebook, 2 the class's own
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir() and not entry.is_symlink():
            found.setdefault(entry.name, []).append((0, entry))
        elif entry.suffix == ".ipynb":
            if entry.stem in stems:
                own_folder.append(entry)              # one student's own folder
            else:
                found.setdefault(entry.stem, []).append((1, entry))   # a notebook named by its student
    if own_folder:
        found.setdefault(folder.resolve().name, []).append((2, own_folder))
    result = []
    for name in sorted(found):
        (rank, place), *others = sorted(found[name], key=lambda pair: pair[0])
        if isinstance(place, list):                   # one student's own folder
            student = Student(shown(name), folder)
            for path in place:
                add(student, path, stems)
        elif place.is_dir():
            student = Student(shown(name), place)
            student.assignments = {stem for stem in stems if (place / stem).is_dir()
                                   and not (place / stem).is_symlink()}
            walk(student, place, stems)
        else:                                         # a notebook named by its student
            student = Student(shown(name), folder)
            add(student, place, stems)
        for _, other in others:
            for path in other if isinstance(other, list) else [other]:
                student.refused.append((f"{shown_path(path.name)} in the class folder",
                                        f"named as this student's {('folder', 'notebook')[rank]}, "
                                        "which is graded instead"))
        result.append(student)
    return result


def by_name(notebook, chapters):
    """The chapter a notebook's file name says it is, or None."""
    stem = notebook.path.name[:-len(".ipynb")]
    for chapter in chapters:
        if stem == chapter.stem or stem.startswith(chapter.stem[:3]):
            return chapter.stem
    return None


def hand_ins(student, chapters, known, due=None):
    """Decide, from each notebook's chapter (read by a judge, or by name for one not read),
    which notebook is each graded chapter's hand-in; refuse the others, naming them; read the
    hand-ins' timestamps and, with `due` ({stem: datetime}), which were late."""
    graded = {chapter.stem for chapter in chapters}
    number = {chapter.stem: int(chapter.stem[:2]) for chapter in known}
    of = {}
    for notebook in student.notebooks:
        if notebook.chapter is None:
            student.notes.append(f"{notebook.shown} is none of the graded chapters and was not graded.")
        elif notebook.chapter in graded:
            of.setdefault(notebook.chapter, []).append(notebook)
    for stem, candidates in of.items():
        if stem in student.assignments:
            own = {student.base / stem / f"{prefix}{stem}.ipynb" for prefix in ("", HAND_IN_PREFIX)}
            chosen = [n for n in candidates if n.path in own]
            why = f"it is not this chapter's hand-in, {stem}/{stem}.ipynb"
        else:
            chosen = [n for n in candidates if n.assignment is None]
            why = None
        for notebook in candidates:
            if notebook in chosen:
                continue
            if notebook.assignment is not None and notebook.assignment != stem:
                reason = (f"chapter {number[stem]} handed in inside the folder of the "
                          f"{notebook.assignment} assignment (chapter {number[notebook.assignment]})")
            else:
                reason = why or "a copy of a chapter handed in elsewhere too"
            student.refused.append((notebook.shown, reason))
        if len(chosen) > 1:
            names = ", ".join(n.shown for n in chosen)
            for notebook in chosen:
                student.refused.append((notebook.shown, f"one of {len(chosen)} notebooks of chapter "
                                                        f"{number[stem]}"))
            student.unreadable[stem] = (f"{len(chosen)} notebooks are chapter {number[stem]} ({names}), "
                                        "so none was graded: hand in one")
            continue
        if not chosen:
            continue
        notebook = chosen[0]
        problem = notebook.problem or notebook.unreadable
        if problem:
            student.unreadable[stem] = f"{notebook.shown} could not be read ({problem})"
        else:
            student.graded[stem] = notebook
        if notebook.assignment == stem:
            stamped(student, stem, due)


def stamped(student, stem, due):
    """Read the hand-in's timestamp.txt: when it was handed in and, with a due date, how late. One
    that is there but cannot be read as a time is named in the refused column and, when the
    chapter has a due date, counts as late (by an unknown time): a student who writes the file
    gains nothing by writing it so the grader cannot read it."""
    when, problem = timestamp(student.base / stem / "timestamp.txt")
    if problem:
        late = due and stem in due
        student.refused.append((f"{stem}/timestamp.txt", f"{problem}, so when it was handed in is "
                                                         f"unknown{' and it counts as late' if late else ''}"))
        if late:
            student.late[stem] = None
    elif when is not None:
        student.submitted[stem] = when
        if due and stem in due and when > due[stem]:
            student.late[stem] = (when - due[stem]).total_seconds()


# ------------------------------------------------------------------------------ time

def parse_time(text, name="DUE"):
    """A moment from nbgrader's timestamp format ("2026-03-02 09:00:00.000000 UTC") or ISO 8601
    ("2026-03-02T17:00+01:00"), as an aware datetime in UTC; without a zone it is UTC, as in
    nbgrader's gradebook. ValueError naming `name` otherwise."""
    parts = text.strip().split()
    zone = datetime.timezone.utc
    if len(parts) == 3 or (len(parts) == 2 and not parts[1][:1].isdigit()):
        *parts, label = parts
        zone = zone_of(label, name)
    try:
        moment = datetime.datetime.fromisoformat("T".join(parts) if len(parts) == 2 else parts[0])
    except (ValueError, IndexError):
        raise ValueError(f"{name}: {text.strip()[:40]!r} is not a date and time such as "
                         "'2026-03-02 17:00' or '2026-03-02 17:00 Europe/Berlin'") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    return moment.astimezone(datetime.timezone.utc)


def zone_of(label, name):
    if label.upper() in ("UTC", "GMT", "Z"):
        return datetime.timezone.utc
    if label[:1] in "+-" and label[1:].replace(":", "").isdigit() and len(label.replace(":", "")) == 5:
        digits = label[1:].replace(":", "")
        offset = datetime.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        return datetime.timezone(offset if label[0] == "+" else -offset)
    try:
        return zoneinfo.ZoneInfo(label)
    except (ValueError, zoneinfo.ZoneInfoNotFoundError):
        raise ValueError(f"{name}: {label[:40]!r} is not a time zone (UTC, +01:00, Europe/Berlin)") from None


def timestamp(path):
    """When nbgrader says the assignment was handed in (its timestamp.txt), and why it cannot be
    read: (None, None) when there is no such file; (moment, None); or (None, why) for a file
    that is there but is not a regular file, is over MOST_STAMP bytes, or is not a time once
    stripped (nbgrader strips it too, and fails on one it cannot parse)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None, "timestamp.txt is not a regular file"
        with open(path, "rb", buffering=0) as handle:
            data = handle.read(MOST_STAMP + 1)
    except FileNotFoundError:
        return None, None
    except OSError as error:
        return None, f"timestamp.txt could not be opened ({type(error).__name__})"
    if len(data) > MOST_STAMP:
        return None, f"timestamp.txt is over {MOST_STAMP:,} bytes"
    try:
        return parse_time(data.decode("ascii"), "timestamp.txt"), None
    except (UnicodeDecodeError, ValueError):
        return None, "timestamp.txt is not a date and time"


def due_dates(text, chapters):
    """{stem: due datetime} from DUE: one date for every chapter, or "01=<date>;02=<date>".
    ValueError naming DUE for anything else."""
    if not text:
        return {}
    if "=" not in text:
        moment = parse_time(text)
        return {chapter.stem: moment for chapter in chapters}
    by_number = {int(chapter.stem[:2]): chapter.stem for chapter in chapters}
    found = {}
    for part in text.split(";"):
        number, _, when = part.partition("=")
        if not number.strip().isdigit() or int(number) not in by_number:
            raise ValueError(f"DUE: {number.strip()[:20]!r} is not a graded chapter's number")
        found[by_number[int(number)]] = parse_time(when)
    return found


def late_text(seconds):
    """How late, in words: "3 days 2 h", "2 h 5 min", "4 min", "12 s"; "by a time unknown" for
    None (its timestamp.txt could not be read)."""
    if seconds is None:
        return "by a time unknown"
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days} day{'s' if days != 1 else ''} {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min" if minutes else f"{seconds} s"
