"""A student's processes bounded together: one control group per job, as far as the machine allows.

A job (one student's chapter) gets a group of its own for the processes of its sandboxes: their
memory together (resident, no swap), their number together, and one core, the job's own, shared
with the job's judge and with no other job's processes while there are no more jobs than cores.
The limits of one process each (jail.Limits: address space, CPU time, file size) still apply
inside it.

    cgroup v2  one hierarchy: GROUPS/job-N (cpuset) holding judge/ and sandbox/ (memory, pids)
    cgroup v1  a hierarchy per controller: memory/, pids/ and cpuset/ each hold job-N
    none       no group the grader may make: each process is bounded on its own, and the bound on
               a student's processes together is their number times the per-process limit

Bounds.sentence() says which held, in every file the grader writes. The grader makes its groups
under its own (or, in cgroup v2, under the root, where a process's own group may not have
children), removes them when it ends, and sweep() removes what a killed grader left.
"""
import errno
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
PREFIX = "workbook-grader-"


@dataclass(frozen=True)
class Bounds:
    kind: str              # "cgroup v2", "cgroup v1" or "per process"
    memory: int            # bytes: of a job's sandboxes together (per process, without groups)
    tasks: int             # processes and threads: of a job's sandboxes together (per user, without)
    cores: bool            # whether each job had a core of its own
    missing: tuple = ()    # the controllers that could not be had, and why

    @property
    def grouped(self):
        return self.kind != "per process"

    def sentence(self):
        mib = self.memory >> 20
        if self.grouped:
            core = ("a core of its own" if self.cores else
                    "no core of its own (" + "; ".join(self.missing) + ")")
            return (f"Bounded per student's chapter ({self.kind}): its sandboxes' processes "
                    f"together held at most {mib} MiB and {self.tasks} tasks, on {core}.")
        why = "; ".join(self.missing) or "this machine gave the grader no control groups"
        return (f"Bounded per process only ({why}): each sandboxed process at most {mib} MiB "
                f"of address space and the sandbox's user at most {self.tasks} tasks, so a "
                f"student's processes together could hold up to {self.tasks * mib} MiB.")


def own_path(controller, text=None):
    """This process's group in `controller`'s v1 hierarchy ("" for cgroup v2's), from
    /proc/self/cgroup, or None."""
    text = text if text is not None else Path("/proc/self/cgroup").read_text()
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path
    return None


def writable(folder):
    return folder.is_dir() and os.access(folder, os.W_OK)


def write(path, value):
    with open(path, "w") as handle:
        handle.write(str(value))


def read(path, default=""):
    try:
        return Path(path).read_text().strip()
    except OSError:
        return default


def counter(text, name):
    """The value of `name` in a flat-keyed file ("oom_kill 3"), or 0."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == name and value.strip().isdigit():
            return int(value)
    return 0


class Job:
    """One job's groups: where its judge and its sandboxes are put, and what they used."""

    def __init__(self, groups, folders, judge, sandbox):
        self.groups, self.folders = groups, folders   # every folder made, innermost last
        self.judge, self.sandbox = judge, sandbox     # the cgroup.procs files each joins

    def usage(self):
        """{"memory": peak bytes, "oom_kills": n, "tasks": peak} of the job's sandboxes, as far
        as the kernel tells."""
        return self.groups.usage(self)

    def remove(self, wait=2.0):
        """Remove the job's folders (every process in them is gone or about to be)."""
        give_up = time.monotonic() + wait
        for folder in reversed(self.folders):
            while True:
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError as error:
                    if error.errno != errno.EBUSY or time.monotonic() > give_up:
                        break  # left for Groups.close, which the grader's end runs
                    time.sleep(0.01)


class Groups:
    """The grader's own groups: detected once, one Job per job."""

    def __init__(self, memory, tasks, cpus=None, root=ROOT, proc_cgroup=None, name=None):
        self.memory, self.tasks, self.root = memory, tasks, Path(root)
        self.cpus = cpus if cpus is not None else sorted(os.sched_getaffinity(0))
        self.name = name or f"{PREFIX}{os.getpid()}"
        self.bases, self.missing, self.numbers, self.lock = {}, [], 0, threading.Lock()
        text = proc_cgroup if proc_cgroup is not None else read("/proc/self/cgroup")
        self.kind = self.v2(text) or self.v1(text) or "per process"
        if self.kind == "per process":
            self.close()

    # ------------------------------------------------------------------------ detection

    def v2(self, text):
        """cgroup v2 with memory and pids (cpuset if it can be had), under the root."""
        if read(self.root / "cgroup.controllers", None) is None or not writable(self.root):
            return None
        available = set(read(self.root / "cgroup.controllers").split())
        if not {"memory", "pids"} <= available:
            self.missing.append("cgroup v2 has no memory and pids controllers here"
                                if (self.root / "unified").exists() or available else
                                "cgroup v2 offers no controllers here")
            return None
        wanted = ["memory", "pids"] + (["cpuset"] if "cpuset" in available else [])
        try:
            enabled = set(read(self.root / "cgroup.subtree_control").split())
            for controller in wanted:
                if controller not in enabled:
                    write(self.root / "cgroup.subtree_control", f"+{controller}")
            base = self.root / self.name
            base.mkdir()
            write(base / "cgroup.subtree_control", " ".join(f"+{c}" for c in wanted))
        except OSError as error:
            self.missing.append(f"cgroup v2 refused a group of the grader's own ({error.strerror})")
            shutil.rmtree(self.root / self.name, ignore_errors=True)
            return None
        self.bases = {"v2": base}
        if "cpuset" not in wanted:
            self.missing.append("cgroup v2 has no cpuset controller here")
        return "cgroup v2"

    def v1(self, text):
        """cgroup v1's memory and pids hierarchies (and cpuset's), each under this process's own."""
        bases = {}
        for controller in ("memory", "pids", "cpuset"):
            mount, own = self.root / controller, own_path(controller, text)
            if own is None or not writable(mount / own.lstrip("/")):
                if controller != "cpuset":
                    self.missing.append(f"cgroup v1's {controller} hierarchy is not writable here")
                    break
                self.missing.append("cgroup v1's cpuset hierarchy is not writable here")
                continue
            base = mount / own.lstrip("/") / self.name
            try:
                base.mkdir()
                if controller == "cpuset":
                    for name in ("cpuset.cpus", "cpuset.mems"):
                        write(base / name, read(base.parent / name))
            except OSError as error:
                if error.errno == errno.EEXIST or controller != "cpuset":
                    self.missing.append(f"cgroup v1 refused a {controller} group ({error.strerror})")
                    for made in [*bases.values(), base]:
                        shutil.rmtree(made, ignore_errors=True)
                    return None
                self.missing.append(f"cgroup v1 refused a cpuset group ({error.strerror})")
                shutil.rmtree(base, ignore_errors=True)
                continue
            bases[controller] = base
        if not {"memory", "pids"} <= set(bases):
            for made in bases.values():
                shutil.rmtree(made, ignore_errors=True)
            return None
        self.bases = bases
        return "cgroup v1"

    @property
    def bounds(self):
        cores = "cpuset" in self.bases or (self.kind == "cgroup v2" and not any(
            "cpuset" in why for why in self.missing))
        return Bounds(self.kind, self.memory, self.tasks, cores and self.kind != "per process",
                      tuple(self.missing))

    # ------------------------------------------------------------------------ the jobs

    def job(self, slot):
        """The groups of a new job that runs on slot `slot` (its core: the slot-th of ours)."""
        if self.kind == "per process":
            return Job(self, [], [], [])
        with self.lock:   # jobs start in threads of their own
            self.numbers += 1
            name = f"job-{self.numbers}"
        cpu = self.cpus[slot % len(self.cpus)]
        if self.kind == "cgroup v2":
            top = self.bases["v2"] / name
            top.mkdir()
            if (top / "cpuset.cpus").exists():
                write(top / "cpuset.cpus", cpu)
            write(top / "cgroup.subtree_control", "+memory +pids")
            judge, sandbox = top / "judge", top / "sandbox"
            judge.mkdir()
            sandbox.mkdir()
            write(sandbox / "memory.max", self.memory)
            if (sandbox / "memory.swap.max").exists():
                write(sandbox / "memory.swap.max", 0)
            write(sandbox / "pids.max", self.tasks)
            return Job(self, [top, judge, sandbox], [judge / "cgroup.procs"], [sandbox / "cgroup.procs"])
        folders, judge, sandbox = [], [], []
        for controller, base in self.bases.items():
            folder = base / name
            folder.mkdir()
            folders.append(folder)
            if controller == "memory":
                write(folder / "memory.limit_in_bytes", self.memory)
                if (folder / "memory.memsw.limit_in_bytes").exists():
                    write(folder / "memory.memsw.limit_in_bytes", self.memory)
            elif controller == "pids":
                write(folder / "pids.max", self.tasks)
            else:
                write(folder / "cpuset.cpus", cpu)
                write(folder / "cpuset.mems", read(base / "cpuset.mems"))
                judge.append(folder / "cgroup.procs")
            sandbox.append(folder / "cgroup.procs")
        return Job(self, folders, judge, sandbox)

    def usage(self, job):
        if not job.folders:
            return {}
        if self.kind == "cgroup v2":
            sandbox = job.folders[-1]
            peak = read(sandbox / "memory.peak")
            return {"memory": int(peak) if peak.isdigit() else None,
                    "oom_kills": counter(read(sandbox / "memory.events"), "oom_kill"),
                    "tasks": int(read(sandbox / "pids.peak", "0") or 0) or None}
        by = {folder.parent: folder for folder in job.folders}
        memory, pids = by[self.bases["memory"]], by[self.bases["pids"]]
        peak = read(memory / "memory.max_usage_in_bytes")
        tasks = read(pids / "pids.peak")
        return {"memory": int(peak) if peak.isdigit() else None,
                "oom_kills": counter(read(memory / "memory.oom_control"), "oom_kill"),
                "tasks": int(tasks) if tasks.isdigit() else None}

    def close(self):
        """Remove the grader's groups (their processes are gone by now)."""
        for base in self.bases.values():
            remove_tree(base)


def remove_tree(base):
    """rmdir a group and every group under it, innermost first (a group is removed with rmdir,
    never by deleting its files)."""
    for folder, _, _ in sorted(os.walk(base), key=lambda entry: -entry[0].count(os.sep)):
        try:
            os.rmdir(folder)
        except OSError:
            pass


def sweep(root=ROOT, proc_cgroup=None):
    """Remove the groups of graders that were killed (their pid is no longer running)."""
    text = proc_cgroup if proc_cgroup is not None else read("/proc/self/cgroup")
    places = [Path(root)]
    for controller in ("memory", "pids", "cpuset"):
        own = own_path(controller, text)
        if own is not None:
            places.append(Path(root) / controller / own.lstrip("/"))
    for place in places:
        try:
            entries = list(place.glob(PREFIX + "*"))
        except OSError:
            continue
        for base in entries:
            pid = base.name[len(PREFIX):]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                remove_tree(base)
