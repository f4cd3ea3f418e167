"""What makes a forked process a sandbox, as far as the machine allows.

Isolated (root, with Linux namespaces): each student's chapter runs as a user of its own, as
PID 1 of a PID namespace of its own (when it ends, the kernel ends everything it started), with
no network (a network namespace with nothing in it), its own IPC namespace, and a root
directory that holds only the system's programs and libraries, the Python installation and the
class edition of the package, all read-only, and a private /tmp. No file of the repository, the
class, the grades or another student is there to read or write.

Partial (root, no namespaces, as in many containers): a user of its own and the limits, but the
machine's files stay readable as they are to any user. None (not root): only the limits and a
process group. The grader says which, in every file it writes.

Limits in every mode: address space, CPU seconds, file size, tasks of the user, open files.
"""
import ctypes
import os
import resource
import signal
import tempfile
from dataclasses import dataclass

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 36, 38
NAMESPACES = os.CLONE_NEWPID | os.CLONE_NEWNS | os.CLONE_NEWNET | os.CLONE_NEWIPC | os.CLONE_NEWUTS
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
DEVICES = ("null", "zero", "full", "random", "urandom")
# The first uid the sandboxes run as; each sandbox gets the next one. Far above the ranges
# systems give people and services, and below 2**31 for the tools that read uids as signed.
FIRST_UID = 1_900_000_000

libc = ctypes.CDLL(None, use_errno=True)


def mount(source, target, fstype=None, flags=0, data=None):
    encode = (lambda text: None if text is None else os.fsencode(text))
    if libc.mount(encode(source), encode(target), encode(fstype), ctypes.c_ulong(flags),
                  encode(data)) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mount {target}: {os.strerror(error)}")


def prctl(option, value):
    if libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))


@dataclass(frozen=True)
class Limits:
    memory: int = 1 << 30       # bytes of address space, per process
    cpu: int = 120              # CPU seconds, per process
    file_size: int = 64 << 20   # bytes, per file written
    tasks: int = 64             # processes and threads of the sandbox's user
    open_files: int = 256
    tmp: int = 64 << 20         # bytes in the private /tmp (isolated mode)

    def apply(self):
        for which, value in ((resource.RLIMIT_AS, self.memory), (resource.RLIMIT_CPU, self.cpu),
                             (resource.RLIMIT_FSIZE, self.file_size),
                             (resource.RLIMIT_NPROC, self.tasks),
                             (resource.RLIMIT_NOFILE, self.open_files), (resource.RLIMIT_CORE, 0)):
            hard = value + 5 if which == resource.RLIMIT_CPU else value
            resource.setrlimit(which, (value, hard))


WORKER_ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp", "TMPDIR": "/tmp",
    "MPLBACKEND": "agg", "MPLCONFIGDIR": "/tmp/.matplotlib", "IPYTHONDIR": "/tmp/.ipython",
    "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "WORKBOOK_HIDE_SOLUTIONS": "1",
}


def namespaces_work():
    """Whether this process may make the namespaces a sandbox needs: tried in a throwaway child."""
    if os.geteuid() != 0:
        return False
    pid = os.fork()
    if pid == 0:
        try:
            os.unshare(NAMESPACES)
            inner = os.fork()
            if inner == 0:
                os._exit(0)
            _, status = os.waitpid(inner, 0)
            os._exit(0 if os.waitstatus_to_exitcode(status) == 0 else 1)
        except BaseException:  # noqa: BLE001 - any failure means no
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


class Jail:
    """The sandboxes' root directory, built once in the zygote's own mount namespace (so no one
    else sees its mounts, and they vanish with the zygote)."""

    def __init__(self, root, package_parent, readable):
        self.root = root
        os.unshare(os.CLONE_NEWNS)
        mount(None, "/", None, MS_REC | MS_PRIVATE)
        mount("tmpfs", root, "tmpfs", MS_NOSUID, "size=256m,mode=0755")
        # A path under /tmp (a clone made with mktemp, its .venv) would be hidden by each
        # sandbox's private /tmp: those are shown again inside it, when a sandbox starts.
        self.under_tmp = [path for path in readable if under("/tmp", path)]
        for path in [*SYSTEM, *readable]:
            if path not in self.under_tmp:
                self.show(path)
        os.makedirs(self.inside("/dev"))
        for device in DEVICES:
            node = self.inside(f"/dev/{device}")
            open(node, "w").close()
            mount(f"/dev/{device}", node, None, MS_BIND)
        for folder in ("/tmp", "/proc"):
            os.makedirs(self.inside(folder), exist_ok=True)
        # The package's class edition is kept at /.package and shown where the venv's editable
        # install looks for it (package_parent/workbook) when a sandbox starts.
        self.stash = self.inside("/.package")
        self.package = os.path.join(package_parent, "workbook")
        if not under("/tmp", self.package):
            os.makedirs(self.inside(self.package))

    def inside(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def show(self, path):
        """Make the host's `path` visible, read-only, at the same place inside."""
        if not os.path.lexists(path) or os.path.lexists(self.inside(path)):
            return
        os.makedirs(os.path.dirname(self.inside(path)), exist_ok=True)
        if os.path.islink(path):
            os.symlink(os.readlink(path), self.inside(path))
            return
        os.makedirs(self.inside(path))
        mount(path, self.inside(path), None, MS_BIND | MS_REC)
        mount(None, self.inside(path), None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID)

    def bind(self, source, path):
        """Show `source` (a host path, or one of the jail's own) read-only at `path` in the
        jail, making the folders on the way as root (so a sandbox cannot change them)."""
        target = self.inside(path)
        os.makedirs(target, exist_ok=True)
        mount(source, target, None, MS_BIND | MS_REC)
        mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID)

    def seal(self):
        """No more changes: the root itself becomes read-only."""
        mount(None, self.root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID)

    def enter(self, uid, limits):
        """In the sandbox, the first process of its PID and mount namespaces: its own /tmp and
        /proc, the jail as its root, the limits, then its user. Never returns to root."""
        mount("tmpfs", self.inside("/tmp"), "tmpfs", MS_NOSUID | MS_NODEV,
              f"size={limits.tmp},mode=1777")
        for path in self.under_tmp:
            self.bind(path, path)
        self.bind(os.path.join(self.stash, "workbook"), self.package)
        mount("proc", self.inside("/proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        os.chroot(self.root)
        os.chdir("/tmp")
        become(uid, limits)


def under(folder, path):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def become(uid, limits, switch=True):
    """The limits, then the sandbox's own user (`switch`), then the worker's environment."""
    limits.apply()
    if switch:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # cleared by the change of user: set it again
    os.environ.clear()
    os.environ.update(WORKER_ENVIRONMENT)


def enter_without_namespaces(uid, limits, switch, owner=0):
    """Partial or no isolation: a process group, a private temporary folder, the limits, and
    the sandbox's own user (`switch`, in the partial mode). The folder's name carries the
    grader's pid (`owner`), so the grader removes it when it ends, and sweep() when it was killed."""
    folder = tempfile.mkdtemp(prefix=f"workbook-sandbox-{owner}-")
    if switch:
        os.chown(folder, uid, uid)
    os.chdir(folder)
    become(uid, limits, switch)
    os.environ.update(HOME=folder, TMPDIR=folder, MPLCONFIGDIR=os.path.join(folder, ".matplotlib"),
                      IPYTHONDIR=os.path.join(folder, ".ipython"))
    return folder


def readable_by_anyone(path):
    """Whether any user may read `path`: every folder on the way to it searchable, it readable."""
    path = os.path.realpath(path)
    parts = path.split(os.sep)
    for index in range(2, len(parts) + 1):
        step = os.sep.join(parts[:index]) or os.sep
        mode = os.stat(step).st_mode
        if not mode & 0o001 or not mode & 0o004:
            return False
    return True


def processes_of(uids):
    """The pids of every live process on the machine whose real user is one of `uids` (a zombie
    runs nothing and holds nothing open, so it does not count)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except OSError:
            continue
        if int(fields.get("Uid", "-1 ").split()[0]) in uids and not fields.get("State", "").strip().startswith("Z"):
            found.append(int(entry))
    return found


def kill_user(uid):
    """SIGKILL every process of `uid`: a child becomes that user and signals all it can."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
