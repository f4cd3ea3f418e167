"""`make bench WHAT=grade`: make grade against nbgrader's autograde, and beside a hostile class.

    python -m bench.grade                      # 8 then 32 students x 6 chapters, and a hostile class
    python -m bench.grade --students 8         # one size (32 takes about 35 minutes on 2 cores,
                                               # most of it nbgrader)
    python -m bench.grade --students 8 --no-hostile

Each size is a class of course/grader/demo_class.py's kinds (right, blank, partly wrong, an error
cell, an endless loop, a loop that ignores the interrupt, a loop that floods its output, a
tamperer), each handed in by --students / 8 students, made from nbgrader's own release in
nbgrader's submitted/ layout. The same folder is graded twice:

- make grade's command, isolation required, with every bound on (a judge per student's chapter
  under its budget, each chapter's sandboxes in control groups of their own), as many chapters at
  once as there are cores; its peak memory is sampled every 50 ms over the grader and every
  process under it: the sum of their proportional set sizes (shared pages counted once) and the
  largest resident set of any one process; grades.json adds what the grader's own process, the
  largest judge and the largest chapter's sandboxes used, and each job's budgets;
- nbgrader 0.9.6's `autograde "*"` on the same course folder, with the release's
  nbgrader_config.py, as an instructor runs it (one course, one notebook at a time).

Both must award every student the same points, exercise by exercise, before a time is kept.

The hostile class: eight honest students (right, partly wrong, an error cell, blank; two of
each) graded alone, then again beside the red team's determined students (tests/grader/red_team/
cheaters.py: the tricks of issue 28, CPU hogs, a fork bomb, a memory bomb, a deaf loop, a flood).
An honest student's grading time is the sum of their chapters' times as grades.json gives them
(a chapter's judge, from start to verdict, its sandboxes included); beside cheaters it must stay
within 1.5x of alone.

Every run records the machine's load average (/proc/loadavg) before and after it: other work on
the machine slows both graders, and a long run more. Writes build/bench/grade.json and grade.md;
`make bench-record WHAT=grade` keeps them in docs/bench/, which docs/instructors.md links to.
"""
import argparse
import datetime
import importlib.util
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


def loadavg():
    """The load averages over 1, 5 and 15 minutes, as /proc/loadavg gives them."""
    return [float(value) for value in Path("/proc/loadavg").read_text().split()[:3]]


def ours(folder, out, jobs, sample=True):
    """make grade's command on `folder`: (seconds, Memory, {(student, exercise): points}, grades.json).
    `sample`: whether to sample its memory every 50 ms (reading every process's page tables, which
    costs CPU time the more, the more and the larger the processes: the hostile class is not)."""
    command = [str(ROOT / ".venv" / "bin" / "workbook-grade"), str(folder), "--out", str(out),
               "--timeout", str(TIMEOUT), "--jobs", str(jobs), "--isolation", "required",
               "--memory", str(MEMORY_MIB), "--json"]
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    memory = Memory(process.pid) if sample else None
    output, errors = process.communicate()
    seconds = time.monotonic() - started
    if memory:
        memory.stop()
    if process.returncode != 0:
        raise RuntimeError(f"make grade failed:\n{errors[-2000:]}")
    graded = json.loads(output)
    points = {(s["student"], m["exercise"]): m["points"] for s in graded["students"] for m in s["exercises"]}
    return seconds, memory, points, graded


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
    """One size: make grade and nbgrader on the same class."""
    per_kind = max(1, students // 8)
    binaries = nbgrader_bin()
    with tempfile.TemporaryDirectory(prefix="workbook-bench-grade-") as folder:
        course = Path(folder) / "course"
        kernels = kernel_spec(Path(folder))
        chapters, kinds = the_class(course, binaries, kernels, per_kind)
        before = loadavg()
        our_seconds, memory, our_points, graded = ours(course / "submitted", course / "make-grade", cores())
        between = loadavg()
        their_seconds, their_points = theirs(course, binaries, kernels)
        after = loadavg()
    if our_points != their_points:
        differ = sorted(k for k in set(our_points) | set(their_points) if our_points.get(k) != their_points.get(k))
        raise RuntimeError(f"make grade and nbgrader disagree on {len(differ)} exercises: {differ[:8]}")
    used = graded["run"]["used"]
    return {
        "students": len(kinds), "chapters": len(chapters), "notebooks": len(kinds) * len(chapters),
        "make_grade_seconds": round(our_seconds, 1), "nbgrader_seconds": round(their_seconds, 1),
        "ratio": round(their_seconds / our_seconds, 2),
        "peak_memory_mib": round(memory.total / 2**20), "largest_process_mib": round(memory.largest / 2**20),
        "grader_mib": used["grader_mib"], "largest_judge_mib": used["judge_mib"],
        "largest_judge_cpu_seconds": used["judge_cpu_seconds"], "largest_sandboxes_mib": used["sandboxes_mib"],
        "loadavg": {"before": before, "after make grade": between, "after nbgrader": after},
        "points_agree": True, "bounds": graded["bounds"]["sentence"], "budgets": graded["run"]["budgets"],
    }


def red_team():
    """tests/grader/red_team/cheaters.py, loaded from its file (the tests' own module)."""
    path = ROOT / "tests" / "grader" / "red_team" / "cheaters.py"
    spec = importlib.util.spec_from_file_location("cheaters", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HONEST = ("right", "partly-wrong", "error-cell", "blank")
ROUNDS = 2   # of the honest class alone and beside the cheaters, in turn
CHEATERS = ("cpu-hogs", "fork-bomb", "memory-bomb", "ignores-interrupts", "floods-output", "scans-memory")


def honest_times(graded, names):
    """{student: seconds} for the honest students: the sum of their chapters' times."""
    return {s["student"]: round(sum(c["seconds"] for c in s["chapters"].values()), 2)
            for s in graded["students"] if s["student"] in names}


def hostile():
    """Honest students graded alone, then beside determined ones: their times, and the ratio."""
    from course.grader.chapters import graded_chapters
    from course.grader.demo_class import DESERVED, KINDS, Edition, handouts, save
    cheaters = red_team()
    chapters = {c.number: c for c in graded_chapters()}
    given = handouts(chapters.values())
    honest = {f"{kind}-{n}": KINDS[kind] for kind in HONEST for n in (1, 2)}
    tricks = {name: entry for name, entry in cheaters.cheaters(9).items() if name in CHEATERS}
    tricks.update(cheaters.issue_28())
    with tempfile.TemporaryDirectory(prefix="workbook-bench-hostile-") as folder:
        alone, beside = Path(folder) / "alone", Path(folder) / "beside"
        for place in (alone, beside):
            for name, build in honest.items():
                for chapter in chapters.values():
                    save(place, name, chapter, build(Edition(chapter, given[chapter.stem])).notebook, False)
        for name, (numbers, build) in tricks.items():
            for number in numbers:
                chapter = chapters[number]
                save(beside, name, chapter, build(Edition(chapter, given[chapter.stem])).notebook, False)
        for name, build in cheaters.LAYOUTS.items():
            build(beside, chapters, given)
        # Twice each, in turn (alone, beside, alone, beside), so that a change in the machine's
        # other load during the runs weighs on both sides alike.
        runs = {"alone": [], "beside": []}
        load = [loadavg()]
        for turn in range(ROUNDS):
            for side, place in (("alone", alone), ("beside", beside)):
                runs[side].append(ours(place, Path(folder) / f"{side}-{turn}", cores(), sample=False))
                load.append(loadavg())
    cheats = {name for name in [*tricks, *cheaters.LAYOUTS]}
    for side, found in runs.items():
        for _, _, _, graded in found:
            wrong = [(s["student"], m["exercise"], m["points"], m["sentence"], s["chapters"])
                     for s in graded["students"] if s["student"] in honest
                     for m, deserved in zip(s["exercises"], DESERVED[s["student"].rsplit("-", 1)[0]])
                     if m["points"] != deserved]
            if wrong:
                raise RuntimeError(f"an honest student did not get what they earned ({side}): {wrong[:3]}")
        earned = {s["student"]: s["points"] for s in graded["students"]
                  if s["student"].lstrip("'") in cheats and s["points"]}
        if earned:
            raise RuntimeError(f"cheaters earned points: {earned}")
    times = {side: [honest_times(graded, honest) for _, _, _, graded in found] for side, found in runs.items()}
    total = {side: sum(sum(one.values()) for one in found) for side, found in times.items()}
    ratios = {name: round(sum(t[name] for t in times["beside"]) / sum(t[name] for t in times["alone"]), 2)
              for name in honest}
    beside_graded = runs["beside"][-1][3]
    return {
        "honest": len(honest), "cheaters": len(cheats), "rounds": ROUNDS,
        "honest_seconds_alone": round(total["alone"] / ROUNDS, 1),
        "honest_seconds_beside": round(total["beside"] / ROUNDS, 1),
        "ratio": round(total["beside"] / total["alone"], 2),
        "largest_student_ratio": max(ratios.values()), "per_student": ratios,
        "run_seconds_alone": [round(found[0], 1) for found in runs["alone"]],
        "run_seconds_beside": [round(found[0], 1) for found in runs["beside"]],
        "grader_mib_beside": beside_graded["run"]["used"]["grader_mib"],
        "largest_judge_mib_beside": beside_graded["run"]["used"]["judge_mib"],
        "largest_sandboxes_mib_beside": beside_graded["run"]["used"]["sandboxes_mib"],
        "loadavg": load,   # before the first run, then after each, in turn
        "points_unmoved": True, "cheaters_earned": 0,
        "bounds": beside_graded["bounds"]["sentence"], "budgets": beside_graded["run"]["budgets"],
    }


def bench(sizes, with_hostile):
    result = {"when": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
              "machine": f"{platform.machine()}, {cores()} cores, Python {platform.python_version()}",
              "timeout_seconds": TIMEOUT, "jobs": cores(), "memory_limit_mib": MEMORY_MIB,
              "sizes": [run(students) for students in sizes]}
    if with_hostile:
        result["hostile"] = hostile()
    graded = result["sizes"][0] if result["sizes"] else result["hostile"]
    result["bounds"], result["budgets"] = graded.pop("bounds"), graded.pop("budgets")
    return result


def markdown(result):
    lines = [f"# make grade against nbgrader's autograde ({result['when']}, {result['machine']})", "",
             f"{result['timeout_seconds']} s per cell, {result['jobs']} chapters at once, every bound "
             f"on: {result['bounds']} Both graders awarded every student the same points, exercise "
             "by exercise.", "",
             "| students | notebooks | make grade | nbgrader autograde | faster | peak memory, all | "
             "grader's own | largest judge | load average before, after |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for size in result["sizes"]:
        load = size["loadavg"]
        lines.append(f"| {size['students']} | {size['notebooks']} | {size['make_grade_seconds']} s | "
                     f"{size['nbgrader_seconds']} s | **{size['ratio']}x** | {size['peak_memory_mib']} MiB | "
                     f"{size['grader_mib']} MiB | {size['largest_judge_mib']} MiB | "
                     f"{load['before'][0]:g}, {load['after nbgrader'][0]:g} |")
    lines += ["", "Peak memory, all: the grader, its judges and every sandbox together (proportional set "
              "size, sampled every 50 ms). Grader's own: the resident set of the process that reads "
              "the class and writes the files. Largest judge: the most any one student's chapter's "
              "judge held.", ""]
    budgets = result["budgets"]
    judge, process, together = budgets["judge"], budgets["sandbox_process"], budgets["sandboxes_together"]
    lines += [f"Each job's budget: its judge {judge['memory_mib']} MiB of address space and "
              f"{judge['cpu_seconds']} s of CPU time, {judge['wall_seconds']} s of wall-clock time; "
              f"its sandboxes {together['memory_mib']} MiB and {together['tasks']} tasks together "
              f"({together['kind']}), each process {process['memory_mib']} MiB of address space and "
              f"{process['cpu_seconds']} s of CPU time; a lent statement "
              f"{budgets['lent_statement_seconds']:g} s.", ""]
    if "hostile" in result:
        h = result["hostile"]
        load = ", ".join(f"{values[0]:g}" for values in h["loadavg"])
        lines += ["## A hostile class", "",
                  f"{h['honest']} honest students graded alone, then beside {h['cheaters']} determined "
                  "ones (the red team's tricks of issue 28, CPU hogs, a fork bomb, a memory bomb, a deaf "
                  f"loop, a flood), {h['rounds']} times each, in turn. Their points did not move, and "
                  "no cheater earned one.", "",
                  "| | honest students' grading time, a run | whole runs |", "|---|---:|---|",
                  f"| alone | {h['honest_seconds_alone']} s | "
                  f"{', '.join(f'{s:g} s' for s in h['run_seconds_alone'])} |",
                  f"| beside the cheaters | {h['honest_seconds_beside']} s | "
                  f"{', '.join(f'{s:g} s' for s in h['run_seconds_beside'])} |", "",
                  f"Beside the cheaters the honest students took **{h['ratio']}x** their time alone "
                  f"(the most for one student: {h['largest_student_ratio']}x). An honest student's time "
                  "is the sum of their chapters' times, each from its judge's start to its verdict. "
                  f"The load average before the first run and after each: {load}.", ""]
    return "\n".join(lines)


def main(argv=None):
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--students", default="8,32",
                         help="class sizes, separated by commas (default 8,32)")
    options.add_argument("--no-hostile", action="store_true", help="leave out the hostile class")
    arguments = options.parse_args(argv)
    sizes = [int(n) for n in arguments.students.split(",") if n.strip()]
    result = bench(sizes, not arguments.no_hostile)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "grade.json").write_text(json.dumps(result, indent=1) + "\n")
    (OUT / "grade.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
