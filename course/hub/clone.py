"""The clone make hub runs from holds the worked answers (workbook/teaching/exercises/answers.json, the
checks, the source chapters, and all of them again in its git objects): no student account may
read it, nor any other copy of it on the machine that a student can reach.

make hub closes its own clone (chmod go-rwx) itself. Another copy it refuses to start beside,
with the exact chmod command, since it is not make hub's to change: the repository that holds
this clone's git objects when this clone is a worktree of it (`git worktree add`), and every
clone of the workbook in the folder holding either. A student account is neither a file's owner
nor in its group (make hub gives each account a group of its own), so what decides is the mode
bits for others: a path is open to students when every folder from / down to it lets others in
(o+x); a known file name inside is then readable wherever the file is o+r, even when its folder
cannot be listed.
"""
import os
import stat
from pathlib import Path

from course import ROOT
ANSWERS = Path("workbook") / "teaching" / "exercises" / "answers.json"


def open_to_others(path):
    """Whether an account that is neither the owner nor in the group can reach `path`."""
    path = Path(path).resolve()
    for folder in [*reversed(path.parents), path]:
        try:
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


def close(root=ROOT):
    """Close this clone to other accounts; return whether it had to be closed."""
    mode = stat.S_IMODE(os.stat(root).st_mode)
    if mode & 0o077:
        os.chmod(root, mode & 0o700)
        return True
    return False


def repository(root=ROOT):
    """The folder whose git objects this clone uses, when it is not the clone itself (a worktree:
    .git is a file naming a folder in the main clone's .git); None otherwise. Read without git."""
    dot_git = Path(root) / ".git"
    if not dot_git.is_file():
        return None
    text = dot_git.read_text().strip()
    if not text.startswith("gitdir:"):
        return None
    gitdir = (Path(root) / text.split(":", 1)[1].strip()).resolve()
    common = gitdir
    if (gitdir / "commondir").is_file():
        common = (gitdir / (gitdir / "commondir").read_text().strip()).resolve()
    top = common.parent if common.name == ".git" else common
    return None if top == Path(root).resolve() else top


def open_copies(root=ROOT):
    """Every copy of the answers but this clone that students could reach: this clone's
    repository when it is elsewhere, and every clone of the workbook beside either, sorted."""
    root = Path(root).resolve()
    main = repository(root)
    found = {main} if main and open_to_others(main) else set()
    for holder in {root.parent, *([main.parent] if main else [])}:
        try:
            children = list(holder.iterdir())
        except OSError:
            continue
        for child in children:
            try:
                if child.resolve() != root and (child / ANSWERS).is_file() and open_to_others(child):
                    found.add(child.resolve())
            except OSError:
                continue
    return sorted(found)


def refusal(copies):
    """The error make hub stops with when `copies` is not empty, with the command that fixes it."""
    if not copies:
        return None
    names = " ".join(str(c) for c in copies)
    return (f"every account on this machine, the students' too, can read the worked answers in "
            f"{', '.join(str(c) for c in copies)} ({ANSWERS}, the checks, the source chapters and "
            f"the git history). Close {'it' if len(copies) == 1 else 'them'} first, then run make hub "
            f"again:\n    chmod go-rwx {names}")
