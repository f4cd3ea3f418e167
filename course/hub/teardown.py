"""The end of a term (make hub-teardown): every account the course made, their homes, HUB_DIR.

It says exactly what it will remove, then asks; only `yes` goes on (any other answer removes
nothing, and is no error). KEEP=DIR first copies the instructor's nbgrader course folder
(gradebook.db, submitted/, feedback/, release/; source/ with the worked answers too) into DIR,
closed to other accounts, before anything is removed, and make grade's output (GRADES: its
gradebook.csv and grades.json, the real grades) into DIR/grades/ beside gradebook.db: the
formgrader's own gradebook.db holds every submission with a score of zero, since make grade, not
nbgrader's autograde, grades. HUB_HOMES goes too when make hub made it and it is empty by then. Accounts
are those of HUB_DIR/state/accounts.txt (each account this HUB_DIR's make hub made) and of the
last roster, and only those that carry make hub's mark (course.hub.accounts.MARK): an account
make hub did not make is never touched. Everything is stopped first (course.hub.service).
"""
import json
import os
import shutil
from pathlib import Path

from course.hub import accounts, environment, service

MADE = "accounts.txt"  # in HUB_DIR/state: one username a line, every account this hub made


def record_made(state, names):
    path = Path(state) / MADE
    known = path.read_text().split() if path.exists() else []
    path.write_text("".join(f"{name}\n" for name in dict.fromkeys([*known, *names])))


def plan(hub):
    """What teardown would remove: (settings, [(username, home)], [paths])."""
    hub = Path(hub)
    state = hub / "state"
    settings = json.loads((state / "settings.json").read_text())
    made = (state / MADE).read_text().split() if (state / MADE).exists() else []
    names = list(dict.fromkeys([*made, settings["instructor"], *settings["students"]]))
    people = []
    for name in names:
        entry = accounts.account(name)
        if entry is not None and accounts.made_here(entry):
            people.append((name, entry.pw_dir))
    paths = [hub, environment.profile_path(settings["env"])]
    return settings, people, [p for p in paths if p.exists()]


GRADED_BY = ("The formgrader's own scores stay at zero: make grade grades, and its grades are in "
             "GRADES ({grades}), not in gradebook.db.")


def made_homes(settings):
    """HUB_HOMES, when this HUB_DIR's make hub made it (else None)."""
    return Path(settings["homes"]) if settings.get("homes_made") and settings.get("homes") else None


def describe(people, paths, keep, grades=None, homes=None):
    lines = [f"make hub-teardown removes, for good:",
             f"  {len(people)} account{'' if len(people) == 1 else 's'} and {'its' if len(people) == 1 else 'their'} home{'' if len(people) == 1 else 's'} (every file in them): "
             + ", ".join(f"{name} ({home})" for name, home in people)]
    lines += [f"  {path}" for path in paths]
    if homes:
        lines.append(f"  {homes}, which make hub made for the homes, once it is empty (else it is named and left)")
    grades = Path(grades) if grades and Path(grades).is_dir() else None
    if keep:
        lines.append(f"  The gradebook is kept: the instructor's course folder is copied to {keep} first"
                     + (f", and make grade's output, {grades}, to {Path(keep) / 'grades'}." if grades else
                        " (make grade's output, GRADES, was not found, so only gradebook.db is kept)."))
    else:
        lines.append("  The gradebook goes too (the instructor's course folder is in their home): "
                     "KEEP=DIR keeps a copy, with make grade's output (GRADES).")
    lines.append("  " + GRADED_BY.format(grades=grades or "make grade's GRADES folder, build/grades by default"))
    return "\n".join(lines)


def keep_course(settings, keep, grades=None):
    keep = Path(keep).absolute()
    if keep.exists():
        raise ValueError(f"KEEP {keep} already exists; name a new folder, so that nothing in it is replaced.")
    course = Path(settings["course"])
    keep.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(course, keep, symlinks=True)
    if grades and Path(grades).is_dir():
        shutil.copytree(grades, keep / "grades", symlinks=True)
    for folder, dirs, files in os.walk(keep):
        for name in [folder, *[os.path.join(folder, f) for f in dirs + files]]:
            os.chown(name, 0, 0, follow_symlinks=False)
    os.chmod(keep, 0o700)
    return keep


def remove(settings, people, paths):
    state = Path(settings["state"])
    service.stop_everything(state)
    for name, _ in people:
        accounts.remove_account(name)
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    return remove_homes(made_homes(settings))


def remove_homes(homes):
    """HUB_HOMES that make hub made: removed when empty; returns (removed, left) folders."""
    if homes is None or not homes.is_dir():
        return None, None
    try:
        homes.rmdir()
    except OSError:  # not empty: something not the course's is in it
        return None, homes
    return homes, None
