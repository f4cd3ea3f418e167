"""Worked answers that a student could read anywhere on this machine (make hub's start-up check).

Every student gets a terminal on the machine, so a copy of the answers that any account can read
is one `cat` away, wherever it is: another clone, a worktree, a git repository of the workbook, a
copy of the package installed with its answers, an nbgrader course folder left open. make hub
looks the way a student would: as an account with no rights of its own (`nobody`), with `find`
over every local file system, so that exactly what such an account can read is found, whatever
the folders' owners, groups and modes are.

What counts as worked answers, by name (a student finds them by name too):

    */exercises/answers.json          the worked answers the package carries (answers.py writes it)
    */exercises/checks/*.py           the code that decides a verdict
    <a graded chapter>.ipynb          holding "### BEGIN SOLUTION": a source chapter (notebooks/,
                                      or an nbgrader course's source/)
    a git repository                  holding the workbook's first commit, so all of its history

What it skips, and says so: file systems that are not local disks (network ones such as NFS or
SMB, which other machines serve and whose permissions they decide) and the kernel's (/proc,
/sys, /dev, cgroups). The search stops after `seconds`; a search that did not finish is reported
as such, never as "nothing found".
"""
import os
import pwd
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from course import ROOT

FIRST_COMMIT = "9f06f3c6c22f8afee4db8768e4519a18af543652"  # the workbook's; every clone holds it
NETWORK = {"nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "lustre", "afs", "9p",
           "davfs", "gpfs", "beegfs", "ocfs2", "gfs2"}
KERNEL = {"proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "mqueue", "debugfs", "tracefs",
          "securityfs", "pstore", "bpf", "configfs", "fusectl", "hugetlbfs", "autofs", "binfmt_misc",
          "nsfs", "rpc_pipefs", "efivarfs", "selinuxfs", "ramfs"}
SYSTEM = ("/proc", "/sys", "/dev")  # below these only /dev/shm is a place for files
SECONDS = 120
STUDENT = "nobody"  # an account in no group of anyone's, as make hub's students are


@dataclass
class Search:
    found: list = field(default_factory=list)     # (path, what it holds)
    looked: list = field(default_factory=list)    # mount points searched
    skipped: list = field(default_factory=list)   # (mount point, file system type)
    finished: bool = True
    seconds: float = 0.0


def mounts(table="/proc/self/mounts"):
    """(searched mount points, skipped (mount point, type)), each mount point once."""
    looked, skipped, seen = [], [], set()
    for line in Path(table).read_text().splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        point, kind = parts[1].replace("\\040", " "), parts[2]
        if point in seen:
            continue
        seen.add(point)
        system = any(point == top or point.startswith(top + "/") for top in SYSTEM) and point != "/dev/shm"
        if kind in NETWORK or kind.startswith("fuse.") or kind in KERNEL or system:
            skipped.append((point, kind))
        else:
            looked.append(point)
    return looked, skipped


def chapter_names():
    from course.grader.chapters import graded_chapters
    return sorted(chapter.filename for chapter in graded_chapters(ROOT / "notebooks"))


def find_command(points, chapters):
    """find over the mount points, each on its own file system, printing `KIND<TAB>path` for every
    candidate the account can read."""
    names = [term for name in chapters for term in ("-o", "-name", name)][1:]
    return ["find", *points, "-xdev",
            "(", "-path", "*/exercises/answers.json", "-type", "f", "-readable", "-printf", "answers\t%p\n", ")",
            "-o", "(", "-path", "*/exercises/checks/*.py", "-type", "f", "-readable", "-printf", "checks\t%p\n", ")",
            "-o", "(", "(", *names, ")", "-type", "f", "-readable", "-printf", "chapter\t%p\n", ")",
            "-o", "(", "-type", "d", "(", "-name", ".git", "-o", "-name", "*.git", ")", "-readable",
            "-executable", "-printf", "git\t%p\n", "-prune", ")"]


def demote(account):
    entry = pwd.getpwnam(account)

    def drop():
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(entry.pw_gid)
            os.setuid(entry.pw_uid)
    return drop


def holds_answers(kind, path, run):
    """Whether a candidate really holds answers, checked as the same account."""
    if kind in ("answers", "checks"):
        return True
    if kind == "chapter":
        return run(["grep", "-qsF", "### BEGIN SOLUTION", path]).returncode == 0
    return run(["git", "-c", "safe.directory=*", "--git-dir", path, "cat-file", "-e", FIRST_COMMIT]).returncode == 0


WHAT = {"answers": "the worked answers", "checks": "the checks' verdict code",
        "chapter": "a source chapter with its solutions", "git": "the workbook's git history"}


def search(points=None, account=STUDENT, seconds=SECONDS, chapters=None, leave_out=(ROOT,)):
    """Search the local file systems as `account`; what is under `leave_out` (this clone, which
    make hub closes) is not reported."""
    started = time.monotonic()
    skipped = []
    if points is None:
        points, skipped = mounts()
    result = Search(looked=list(points), skipped=skipped)
    environment = {"PATH": "/usr/bin:/bin", "HOME": "/", "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1"}

    def run(argv, **options):
        return subprocess.run(argv, preexec_fn=demote(account), env=environment, cwd="/",
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, **options)
    try:
        listed = run(find_command(points, chapters or chapter_names()), timeout=seconds).stdout
    except subprocess.TimeoutExpired as stopped:
        listed = stopped.stdout or ""
        listed = listed.decode(errors="replace") if isinstance(listed, bytes) else listed
        result.finished = False
    left_out = [Path(p).resolve() for p in leave_out]
    for line in listed.splitlines():
        kind, _, path = line.partition("\t")
        if not path or any(Path(path).resolve().is_relative_to(top) for top in left_out):
            continue
        if kind in WHAT and holds_answers(kind, path, run):
            result.found.append((path, WHAT[kind]))
    result.seconds = time.monotonic() - started
    return result


def copy_of(path):
    """The folder to close for a found path: the clone or course folder holding it (the folder
    above workbook/, notebooks/ or source/, or above .git), a bare repository itself, else the
    file's own folder."""
    path = Path(path)
    if path.name == ".git":
        return path.parent
    if path.name.endswith(".git"):
        return path
    for marker in ("workbook", "notebooks", "source"):
        if marker in path.parts[1:-1]:
            return Path(*path.parts[:path.parts.index(marker, 1)])
    return path.parent


def copies(paths):
    """The folders to close, none inside another."""
    folders = sorted({copy_of(path) for path in paths})
    return [str(f) for f in folders if not any(f != other and f.is_relative_to(other) for other in folders)]


def accepted(path, accept):
    return "all" in accept or any(Path(path).is_relative_to(Path(a)) for a in accept if a != "all")


def parent_folder(folders):
    """The folder holding every one of `folders` (for one, the folder above it), or None when that
    would be / (accepting the whole machine is ACCEPT_READABLE=all's to say)."""
    above = Path(os.path.commonpath([str(Path(folder).parent) for folder in folders]))
    return None if above == Path(above.anchor) else str(above)


def refusal(result, accept=()):
    """The sentence make hub stops with, or None when nothing unaccepted was found and the search
    finished (or the instructor accepts that it did not)."""
    open_copies = copies(path for path, _ in result.found if not accepted(path, accept))
    if open_copies:
        above = parent_folder(open_copies)
        wider = (f", or a folder above {'it' if len(open_copies) == 1 else 'them'}, which also accepts any copy "
                 f"made there later (ACCEPT_READABLE={above})" if above else "")
        return (f"any account on this machine, the students' too, can read worked answers in "
                f"{', '.join(open_copies)}; close {'it' if len(open_copies) == 1 else 'them'} "
                f"(chmod go-rwx {' '.join(open_copies)}) or accept {'it' if len(open_copies) == 1 else 'them'} "
                f"with ACCEPT_READABLE={','.join(open_copies)}{wider}, then run make hub again "
                "(this HUB_DIR remembers what it accepts).")
    if not result.finished and not accepted("/", accept):
        return (f"the search for worked answers that students could read did not finish in "
                f"{result.seconds:.0f} s (it looks through {', '.join(result.looked)}); run make hub "
                f"again with SCAN_SECONDS=600, or accept what it did not reach with ACCEPT_READABLE=all.")
    return None


def summary(result, accept=()):
    """What make hub prints about the search, in one line or two."""
    kinds = sorted({kind for _, kind in result.skipped})
    line = (f"Looked for worked answers a student could read (as {STUDENT}, {result.seconds:.0f} s) in "
            f"{', '.join(result.looked)}; skipped {len(result.skipped)} file systems that are not local "
            f"disks ({', '.join(kinds) or 'none'}).")
    kept = copies(path for path, _ in result.found if accepted(path, accept))
    if kept:
        line += f"\n  Accepted (ACCEPT_READABLE): students can read worked answers in {', '.join(kept)}."
    return line
