"""The instructor's nbgrader course folder, and nbgrader's exchange between it and the students.

    HUB_DIR/exchange/            nbgrader's Exchange.root: world-writable as nbgrader requires,
                                 with the sticky bit, so no one can rename or remove another's folder
    HUB_DIR/exchange/<course>/   the instructor's: outbound/ (releases), inbound/ (submissions, which
                                 students can write but not list) and feedback/ (pages named by a
                                 secret of each submission), all made by nbgrader itself
    ~instructor/course/          make class's nbgrader course folder (the worked answers in source/),
                                 in the instructor's private home; nbgrader writes release/,
                                 submitted/, feedback/ and gradebook.db there. Each chapter in
                                 source/ says at its top that it is the copy a student hands in
"""
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import nbformat

from course.editions.release import COURSE_ID, write_release
from course.grader.submissions import HAND_IN_PREFIX
from course.hub.accounts import as_user

COURSE = "course"
# On the hub a student has two copies of a chapter: the practice copy in ~/workbook/ and the one
# fetched from the Assignments tab. The fetched one is named HAND_IN_PREFIX + the chapter's file
# name, so that the two tabs' titles differ, and says at its top what it is and what the student
# will see in it.
HAND_IN = ("> **This is the copy you hand in.** It is the chapter you fetched from the Assignments "
           "tab: answer here, save, then *Nbgrader > Assignment List* and *Submit* (as often as you "
           "like; the latest counts). Your practice copy, `~/workbook/{filename}`, is never graded. "
           "Here, as on the whole course hub, `check()` does not tell you whether an answer is right "
           "(it says the answer is judged when graded) and `solution()` is hidden: your grade comes "
           "from what you submit. *Fetch Feedback* appears beside your submission at once, but it "
           "finds your feedback only once your instructor has released it.")
# The release's note for nbgrader's own stub (`# YOUR CODE HERE` / `raise NotImplementedError()`);
# on the hub the stubs are the learner's edition's, as in the practice copy.
HUB_GRADING = ("**For grading:** write each answer where its cell says `____`. Only your answer "
               "cells are graded, run after the first cell of these exercises, so keep everything an "
               "answer needs beyond what that cell imports (a helper function, an import, a "
               "constant) inside that answer cell.")

# The chapters' "## Exercises" introduction promises what make lab's copy does: a check() that
# runs the answer, a solution(). In the hand-in copy those sentences give way to this one.
HUB_EXERCISES = ("In this copy, as everywhere on the course hub, each exercise's `check()` says only "
                 "that your answer is judged when graded, and `solution()` is hidden; `hint()` gives a "
                 "hint (`hint(2)` a bigger one). Replace each `____` with your answer and run the cell: "
                 "your grade comes from what you submit.")


def hub_exercises(source):
    """An "## Exercises" cell with its sentences about check() and solution() replaced by
    HUB_EXERCISES; any other cell as it is."""
    if not source.startswith("## Exercises"):
        return source
    heading, _, rest = source.partition("\n\n")
    first, _, after = rest.partition("\n\n")
    kept = [sentence for sentence in re.split(r"(?<=\.)\s+", first.strip())
            if not re.search(r"check|solution\(", sentence)]
    return "\n\n".join(filter(None, [heading, " ".join([HUB_EXERCISES, *kept]), after]))


def mark_hand_in(course, edition):
    """For every assignment in course/source/: the learner's edition's stub in each answer cell (in
    place of nbgrader's solution region, so that the copy a student fetches has the stubs their
    practice copy has, and no worked answer is left in the course folder), HAND_IN under the title,
    HUB_GRADING for the release's note on nbgrader's stub, and the file renamed HAND_IN_PREFIX +
    its name. Answer cells keep their ids, by which make grade finds them."""
    from course.editions.release import FOR_GRADING
    for path in sorted(Path(course).glob("source/*/*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        stubs = {cell.get("id"): cell.source for cell in nbformat.read(Path(edition) / path.name, as_version=4).cells}
        for cell in notebook.cells:
            if cell.cell_type == "code" and "### BEGIN SOLUTION" in cell.source:
                if cell.get("id") not in stubs:
                    raise ValueError(f"{path.name}: answer cell {cell.get('id')} is not in the learner's edition")
                cell.source = stubs[cell.get("id")]
                # not an nbgrader solution cell any more: nbgrader would replace a solution cell
                # without a solution region by its own stub (make grade finds it by its id)
                cell.metadata.pop("nbgrader", None)
            elif cell.cell_type == "markdown":
                cell.source = hub_exercises(cell.source.replace(FOR_GRADING, HUB_GRADING))
        first = next(cell for cell in notebook.cells if cell.cell_type == "markdown")
        heading, _, rest = first.source.partition("\n\n")
        first.source = "\n\n".join(filter(None, [heading, HAND_IN.format(filename=path.name), rest]))
        nbformat.write(notebook, path.with_name(HAND_IN_PREFIX + path.name))
        path.unlink()


def ensure_exchange(exchange, teacher, course_id=COURSE_ID):
    exchange = Path(exchange)
    exchange.mkdir(parents=True, exist_ok=True)
    os.chown(exchange, 0, 0)
    os.chmod(exchange, 0o1777)
    mine = exchange / course_id
    if mine.is_symlink():
        raise ValueError(f"{mine} is a symbolic link; remove it")
    mine.mkdir(exist_ok=True)
    os.chown(mine, teacher.pw_uid, teacher.pw_gid)
    os.chmod(mine, 0o755)
    return mine


def write_course(teacher, timeout, edition):
    """make class's course folder in the instructor's home: written by root into a new folder,
    handed to the instructor, then put in place of the old source/, handout/ and config only, so
    what nbgrader wrote there stays."""
    course = Path(teacher.pw_dir) / COURSE
    if course.is_symlink():
        raise ValueError(f"{course} is a symbolic link; make hub writes the course folder itself")
    with tempfile.TemporaryDirectory(dir=teacher.pw_dir) as scratch:
        fresh = Path(scratch) / COURSE
        written = write_release(fresh, timeout=timeout)
        mark_hand_in(fresh, edition)
        for folder, dirs, files in os.walk(fresh):
            for name in [folder, *[os.path.join(folder, f) for f in dirs + files]]:
                os.chown(name, teacher.pw_uid, teacher.pw_gid, follow_symlinks=False)
        if not course.exists():
            course.mkdir()
            os.chown(course, teacher.pw_uid, teacher.pw_gid)
        os.chmod(course, 0o700)
        for name in ("source", "handout"):
            shutil.rmtree(course / name, ignore_errors=True)
            os.replace(fresh / name, course / name)
        os.replace(fresh / "nbgrader_config.py", course / "nbgrader_config.py")
    return course, written


def instructor_settings(teacher, env, course):
    """The instructor's own Jupyter settings: nbgrader's course folder, and the instructor's tools
    (formgrader, create assignment, course list) back on. Written as the instructor."""
    script = (
        "import pathlib\n"
        "home = pathlib.Path.home() / '.jupyter'\n"
        "(home / 'labconfig').mkdir(parents=True, exist_ok=True)\n"
        f"(home / 'nbgrader_config.py').write_text({course_config(course)!r})\n"
        f"(home / 'jupyter_server_config.json').write_text({json.dumps(server_on(), indent=1)!r})\n"
        f"(home / 'labconfig' / 'page_config.json').write_text({json.dumps(lab_on(), indent=1)!r})\n")
    as_user(teacher, [str(Path(env) / "bin" / "python"), "-c", script], check=True,
            environment=dict(os.environ, **python_environment(env)))


def course_config(course):
    return ("# The instructor's nbgrader settings (written by make hub): the course folder.\n"
            "c = get_config()  # noqa: F821\n"
            f"c.CourseDirectory.root = {str(course)!r}\n")


def server_on():
    from course.hub.environment import SERVER_OFF
    return {"ServerApp": {"jpserver_extensions": {name: True for name in SERVER_OFF}}}


def lab_on():
    from course.hub.environment import STUDENTS_OFF
    return {"disabledExtensions": {name: False for name in STUDENTS_OFF}}


def python_environment(env):
    """LD_LIBRARY_PATH for the copied interpreter beside env/ (HUB_DIR/python/lib)."""
    return {"LD_LIBRARY_PATH": str(Path(env).parent / "python" / "lib")}
