"""`make bench WHAT=grade`: make grade against nbgrader's autograde on one generated class.

    python -m bench.grade                 # 32 students x 6 chapters (about 35 minutes on 2 cores, most of it nbgrader)
    python -m bench.grade --students 8    # fewer students

The class is course/grader/demo_class.py's kinds (right, blank, partly wrong, an error cell, an
endless loop, a loop that ignores the interrupt, a loop that floods its output, a tamperer),
each handed in by --students / 8 students, made from nbgrader's own release in nbgrader's
submitted/ layout. The same folder is graded twice:

- make grade's command, isolation required (each chapter in a sandbox of its own), as many
  chapters at once as there are cores; its peak memory is sampled every 50 ms over the grader
  and every process under it: the sum of their proportional set sizes (shared pages counted
  once) and the largest resident set of any one sandbox, against the per-process limit;
- nbgrader 0.9.6's `autograde "*"` on the same course folder, with the release's
  nbgrader_config.py, as an instructor runs it (one course, one notebook at a time).

Both must award every student the same points, exercise by exercise, before a time is kept.
Writes build/bench/grade.json and grade.md; `make bench-record WHAT=grade` keeps them in
docs/bench/, which the README and docs/instructors.md quote.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "bench"
TIMEOUT = 10
MEMORY_MIB = 1024   # make grade's default per-process limit (--memory)


def nbgrader_bin():
    """nbgrader's own environment, as make test-nbgrader sets it up."""
    venv = ROOT / "build" / "nbgrader-venv"
    if not (venv / "bin" / "nbgrader").exists():
        subprocess.run([str(ROOT / "tools" / "nbgrader-venv")], check=True)
    return venv / "bin"


def kernel_spec(folder):
    spec = folder / "kernels" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(ROOT / ".venv" / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (the workbook's .venv)", "language": "python",
        "env": {"WORKBOOK_HIDE_SOLUTIONS": "1"}}))
    return folder / "kernels"


def nbgrader(binaries, kernels, course, *args):
    environment = dict(os.environ, PATH=f"{binaries}{os.pathsep}{os.environ['PATH']}",
                       JUPYTER_PATH=str(kernels))
    done = subprocess.run([str(binaries / "nbgrader"), *args], cwd=course, env=environment,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"nbgrader {args[0]} failed:\n{(done.stdout + done.stderr)[-2000:]}")
    return done.stdout + done.stderr


def the_class(course, binaries, kernels, per_kind):
    from course.grader.chapters import graded_chapters
    from course.editions.release import write_release
    from course.grader.demo_class import KINDS, write_class
    chapters = graded_chapters()
    write_release(course, timeout=TIMEOUT)
    nbgrader(binaries, kernels, course, "generate_assignment", "*", "--force")
    kinds = {f"{name}-{n}": build for name, build in KINDS.items() for n in range(1, per_kind + 1)}
    write_class(course / "submitted", chapters, kinds, release=course / "release", nested=True)
    return chapters, kinds


class Memory:
    """Samples a process and everything under it: the largest sum of proportional set sizes,
    and the largest resident set of any one process, both in bytes."""

    def __init__(self, pid):
        self.pid, self.total, self.largest, self.running = pid, 0, 0, True
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()

    def tree(self):
        children = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                children.setdefault(int(fields[1]), []).append(int(entry))
        found, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo += children.get(pid, [])
        return found

    @staticmethod
    def sizes(pid):
        pss = rss = 0
        try:
            for line in open(f"/proc/{pid}/smaps_rollup"):
                if line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
                elif line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
        except OSError:
            pass
        return pss, rss

    def sample(self):
        while self.running:
            sizes = [self.sizes(pid) for pid in self.tree()]
            self.total = max(self.total, sum(pss for pss, _ in sizes))
            self.largest = max([self.largest] + [rss for _, rss in sizes])
            time.sleep(0.05)

    def stop(self):
        self.running = False
        self.thread.join()


def ours(course, jobs):
    grades = course / "make-grade"
    command = [str(ROOT / ".venv" / "bin" / "workbook-grade"), str(course / "submitted"), "--out",
               str(grades), "--timeout", str(TIMEOUT), "--jobs", str(jobs), "--isolation", "required",
               "--memory", str(MEMORY_MIB), "--json"]
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    memory = Memory(process.pid)
    output, errors = process.communicate()
    seconds = time.monotonic() - started
    memory.stop()
    if process.returncode != 0:
        raise RuntimeError(f"make grade failed:\n{errors[-2000:]}")
    graded = json.loads(output)
    points = {(s["student"], m["exercise"]): m["points"] for s in graded["students"] for m in s["exercises"]}
    return seconds, memory, points


GRADES = """
import json, sys
from nbgrader.api import Gradebook
found = []
with Gradebook("sqlite:///" + sys.argv[1]) as gradebook:
    for assignment in gradebook.assignments:
        for submission in assignment.submissions:
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    found.append([submission.student.id, grade.cell.name, grade.score])
print(json.dumps(found))
"""


def theirs(course, binaries, kernels):
    started = time.monotonic()
    nbgrader(binaries, kernels, course, "autograde", "*")
    seconds = time.monotonic() - started
    read = subprocess.run([str(binaries / "python"), "-c", GRADES, str(course / "gradebook.db")],
                          capture_output=True, text=True, check=True)
    points = {(student, cell[len("check-"):].replace("-", ".")): score
              for student, cell, score in json.loads(read.stdout) if cell.startswith("check-")}
    return seconds, points


def cores():
    return len(os.sched_getaffinity(0))


def run(students):
    per_kind = max(1, students // 8)
    binaries = nbgrader_bin()
    with tempfile.TemporaryDirectory(prefix="workbook-bench-grade-") as folder:
        course = Path(folder) / "course"
        kernels = kernel_spec(Path(folder))
        chapters, kinds = the_class(course, binaries, kernels, per_kind)
        our_seconds, memory, our_points = ours(course, cores())
        their_seconds, their_points = theirs(course, binaries, kernels)
    if our_points != their_points:
        differ = sorted(k for k in set(our_points) | set(their_points) if our_points.get(k) != their_points.get(k))
        raise RuntimeError(f"make grade and nbgrader disagree on {len(differ)} exercises: {differ[:8]}")
    notebooks = len(kinds) * len(chapters)
    return {
        "when": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {cores()} cores, Python {platform.python_version()}",
        "students": len(kinds), "chapters": len(chapters), "notebooks": notebooks,
        "timeout_seconds": TIMEOUT, "jobs": cores(),
        "make_grade_seconds": round(our_seconds, 1), "nbgrader_seconds": round(their_seconds, 1),
        "ratio": round(their_seconds / our_seconds, 2),
        "peak_memory_mib": round(memory.total / 2**20), "largest_process_mib": round(memory.largest / 2**20),
        "memory_limit_mib": MEMORY_MIB,
        "points_agree": True,
    }


def markdown(result):
    return "\n".join([
        f"# make grade against nbgrader's autograde ({result['when']}, {result['machine']})", "",
        f"One generated class: {result['students']} students x {result['chapters']} chapters = "
        f"{result['notebooks']} notebooks, {result['timeout_seconds']} s per cell. Both awarded "
        "every student the same points, exercise by exercise.", "",
        "| | make grade (isolated) | nbgrader autograde |", "|---|---:|---:|",
        f"| time | {result['make_grade_seconds']} s | {result['nbgrader_seconds']} s |",
        f"| per notebook | {result['make_grade_seconds'] / result['notebooks']:.2f} s | "
        f"{result['nbgrader_seconds'] / result['notebooks']:.2f} s |",
        f"| chapters at once | {result['jobs']} | 1 |", "",
        f"make grade was **{result['ratio']}x** faster. Its peak memory, the grader and every "
        f"sandbox together (proportional set size), was {result['peak_memory_mib']} MiB; the largest "
        f"resident set of any one process was {result['largest_process_mib']} MiB, under the "
        f"{result['memory_limit_mib']} MiB of address space each sandboxed process may use.", ""])


def main(argv=None):
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--students", type=int, default=32, help="students in the class (default 32)")
    arguments = options.parse_args(argv)
    result = run(arguments.students)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "grade.json").write_text(json.dumps(result, indent=1) + "\n")
    (OUT / "grade.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
