"""The clone make hub runs from holds the worked answers (workbook/teaching/exercises/answers.json,
the checks, the source chapters, and all of them again in its git objects): no student account may
read it. make hub closes it (chmod go-rwx) itself; every other copy on the machine that a student
could read is course.hub.exposure's to find, and the instructor's to close.

A student account is neither a file's owner nor in its group (make hub gives each account a
group of its own), so what decides is the mode bits for others: a path is open to students when
every folder from / down to it lets others in (o+x).
"""
import os
import stat
from pathlib import Path

from course import ROOT


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
