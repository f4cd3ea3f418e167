"""The end of a term (make hub-teardown): every account the course made, their homes, HUB_DIR.

It says exactly what it will remove, then asks; only `yes` goes on. KEEP=DIR first copies the
instructor's nbgrader course folder (gradebook.db, submitted/, feedback/, release/; source/ with
the worked answers too) into DIR, closed to other accounts, before anything is removed. Accounts
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


def describe(people, paths, keep):
    lines = [f"make hub-teardown removes, for good:",
             f"  {len(people)} account{'' if len(people) == 1 else 's'} and {'its' if len(people) == 1 else 'their'} home{'' if len(people) == 1 else 's'} (every file in them): "
             + ", ".join(f"{name} ({home})" for name, home in people)]
    lines += [f"  {path}" for path in paths]
    lines.append(f"  The gradebook is kept: the instructor's course folder is copied to {keep} first."
                 if keep else "  The gradebook goes too (the instructor's course folder is in their home): "
                              "KEEP=DIR keeps a copy.")
    return "\n".join(lines)


def keep_course(settings, keep):
    keep = Path(keep).absolute()
    if keep.exists():
        raise ValueError(f"KEEP {keep} already exists; name a new folder, so that nothing in it is replaced.")
    course = Path(settings["course"])
    keep.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(course, keep, symlinks=True)
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
