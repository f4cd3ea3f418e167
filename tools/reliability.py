"""make reliability-record RUN=...: run one check, and keep what it measured as the record in
docs/reliability/ (RUN.json, and figures.md, rendered from every record there).

    python tools/reliability.py test             make test once: the reliability figures its end
                                                 prints, how many tests passed, its time
    python tools/reliability.py postgres         make test-postgres once: the same, on PostgreSQL
    python tools/reliability.py soak             make soak once: both halves, bigger counts
    python tools/reliability.py mutate           make mutate: mutmut's score over the store's modules
    python tools/reliability.py loaded [TIMES]   make test from TIMES fresh clones (default 10), one
                                                 after another, while two busy loops keep the cores busy
    python tools/reliability.py ci               .ci/run's commands from a fresh clone, one after
                                                 another: each one's time, and its CPU time counted
                                                 over every process it started (a control group)
    python tools/reliability.py render           figures.md again from the records

Each record names the commit that ran (loaded clones it), the date, the machine and the load
average before and after. test, soak and mutate keep nothing when their command fails; loaded
keeps every run, failed ones with the tests that failed (their logs stay in build/reliability/).
Prose quotes or links these records; tests/project/test_reliability_record.py holds figures.md
to the records and each record to what this command writes.
"""
import json
import os
import platform
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "docs" / "reliability"
LOGS = ROOT / "build" / "reliability"
PAGE = RECORDS / "figures.md"
RUNS = {"test": "make test", "postgres": "make test-postgres", "soak": "make soak",
        "mutate": "make mutate", "loaded": "make test from a fresh clone, both cores kept busy",
        "ci": ".ci/run's commands from a fresh clone, each in a control group of its own"}
TARGETS = {"test": "test", "postgres": "test-postgres", "soak": "soak"}    # the make targets
# Figures whose count make soak scales up (tests/support/soak.py): its record must show more.
SIZED = ["model cross-check: operations", "stateful steps checked against the model",
         "crash trials survived", "hostile inputs: tried", "tampered rows read",
         "concurrent increments (4 processes), none lost"]
BUSY = "while :; do :; done"


def git(*arguments, cwd=ROOT):
    return subprocess.run(["git", *arguments], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout.strip()


def where(cwd=ROOT):
    """The commit that runs, whether tracked files differ from it, the date and the machine."""
    return {"commit": git("rev-parse", "HEAD", cwd=cwd),
            "clean": git("status", "--porcelain", "--untracked-files=no", cwd=cwd) == "",
            "date": time.strftime("%Y-%m-%d %H:%M %Z"),
            "machine": {"cores": os.cpu_count(), "system": f"{platform.system()} {platform.machine()}",
                        "python": platform.python_version(), "sqlite": sqlite3.sqlite_version}}


def load():
    return [round(value, 2) for value in os.getloadavg()]


def run(command, cwd, log, env=None, preexec_fn=None):
    """Run `command` (a list) in `cwd`, its output into `log`; its exit status, wall and CPU
    seconds (everything it waited for) and the load average before and after."""
    log.parent.mkdir(parents=True, exist_ok=True)
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    load_before = load()
    with open(log, "w") as output:
        status = subprocess.run(command, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT,
                                preexec_fn=preexec_fn).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"exit status": status, "seconds": round(time.monotonic() - started, 1),
            "cpu seconds": round(cpu, 1), "load before": load_before, "load after": load()}


def pytest_seconds(text):
    """pytest's own time, from its last line ("... 1234 passed in 74.21s (0:01:14) ...", between
    rules of = unless -q)."""
    found = re.findall(r" in ([\d.]+)s(?: \([\d:]+\))?(?: =+)?\s*$", text, re.M)
    return float(found[-1]) if found else None


def suite_commands(tree):
    """The pytest command each suite make checks runs (the Makefile's CHECKS) prints, by target,
    from `make -n`: how its output tells the suites apart."""
    found = re.search(r"^CHECKS = (.+)$", (tree / "Makefile").read_text(), re.M)
    commands = {}
    for target in found.group(1).split() if found else []:
        dry = subprocess.run(["make", "--no-print-directory", "-n", target], cwd=tree, capture_output=True,
                             text=True).stdout
        commands.update({line.strip(): target for line in dry.splitlines() if " -m pytest " in line})
    return commands


def suites(text, commands):
    """Each suite in a command's output, as {"command": its make command, "pytest seconds": ...},
    in the order they ended: make checks runs several, and make prints each one's output whole,
    starting with its pytest command (`commands`, from suite_commands)."""
    found, current, lines = [], None, []
    for line in [*text.splitlines(), None]:
        if line is None or line.strip() in commands:
            if current:
                found.append({"command": f"make {current}", "pytest seconds": pytest_seconds("\n".join(lines))})
            current, lines = (commands[line.strip()] if line is not None else None), []
        else:
            lines.append(line)
    return found


def failed_tests(text):
    return sorted(set(re.findall(r"^FAILED (\S+)", text, re.M) + re.findall(r"^ERROR (\S+)", text, re.M)))


def make_test(target, cwd, log):
    """make TARGET (test, test-postgres or soak) in `cwd`, with its figures written where we read them."""
    with tempfile.TemporaryDirectory() as folder:
        sink = Path(folder) / "figures.json"
        env = {**os.environ, "WORKBOOK_FIGURES": str(sink)}
        env.pop("WORKBOOK_SOAK", None)      # make soak sets it; make test must not inherit one
        ran = run(["make", "--no-print-directory", target], cwd, log, env)
        written = json.loads(sink.read_text()) if sink.exists() else {}
    text = log.read_text(errors="replace")
    ran["pytest seconds"] = pytest_seconds(text)
    ran.update({key: written[key] for key in ("soak", "tests", "figures") if key in written})
    ran["failed"] = failed_tests(text)
    return ran


def record_test(name):
    record = {"run": name, "command": RUNS[name], **where()}
    record.update(make_test(TARGETS[name], ROOT, LOGS / f"{name}.log"))
    if record["exit status"] != 0 or "tests" not in record:
        print(f"{RUNS[name]} failed (build/reliability/{name}.log): no record kept", file=sys.stderr)
        return None
    return record


def record_mutate(name):
    record = {"run": name, "command": RUNS[name], **where()}
    record.update(run(["make", "--no-print-directory", "mutate"], ROOT, LOGS / "mutate.log"))
    text = (LOGS / "mutate.log").read_text(errors="replace")
    score = re.search(r"mutmut: (\d+) killed of (\d+) mutants generated \(survived (\d+), timeout (\d+), "
                      r"suspicious (\d+), no tests (\d+)\)", text)
    if record["exit status"] != 0 or score is None:
        print("make mutate failed (build/reliability/mutate.log): no record kept", file=sys.stderr)
        return None
    names = ["killed", "generated", "survived", "timeout", "suspicious", "no tests"]
    record["mutants"] = dict(zip(names, map(int, score.groups())))
    record["not killed"] = re.findall(r"^== (\S+): (.+)$", text, re.M)
    return record


def record_loaded(name, times=10):
    """make test from `times` fresh clones of this commit, one after another, each while two
    busy loops (one per core here) keep the machine busy."""
    record = {"run": name, "command": RUNS[name], **where(), "times": times,
              "busy loops": 2, "runs": []}
    loops = [subprocess.Popen(["sh", "-c", BUSY], start_new_session=True) for _ in range(2)]
    try:
        for number in range(1, times + 1):
            clone = Path(tempfile.mkdtemp(prefix="workbook-loaded-"))
            try:
                git("clone", "-q", str(ROOT), str(clone))
                log = LOGS / f"loaded-{number}.log"
                ran = make_test("test", clone, log)
                ran["passed"] = ran["exit status"] == 0
                if ran["passed"]:
                    log.unlink()
                record["runs"].append(ran)
                print(f"loaded run {number} of {times}: {'passed' if ran['passed'] else 'FAILED'} "
                      f"in {ran['seconds']} s", flush=True)
            finally:
                shutil.rmtree(clone, ignore_errors=True)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    record["passed"] = sum(run["passed"] for run in record["runs"])
    return record


def ci_targets(tree=ROOT):
    """The make targets .ci/run runs, in its order (its `make TARGET` lines)."""
    return [line.split()[1] for line in (tree / ".ci" / "run").read_text().splitlines()
            if line.startswith("make ")]


def control_group(name):
    """A new control group that counts CPU time, as (folder, how to read its seconds), or None
    where none can be made here. A command's servers, browsers and kernels outlive the waits
    that getrusage counts; a control group counts every process started inside it."""
    v1 = Path("/sys/fs/cgroup/cpuacct")
    if (v1 / "cpuacct.usage").exists():
        folder, read = v1 / name, lambda f: int((f / "cpuacct.usage").read_text()) / 1e9
    elif Path("/sys/fs/cgroup/cgroup.controllers").exists():
        mine = Path("/proc/self/cgroup").read_text().strip().split("::", 1)[-1]
        folder = Path("/sys/fs/cgroup") / mine.lstrip("/") / name
        read = lambda f: int(re.search(r"usage_usec (\d+)", (f / "cpu.stat").read_text())[1]) / 1e6
    else:
        return None
    try:
        folder.mkdir()
    except OSError:
        return None
    return folder, read


def record_ci(name):
    """Each command of .ci/run, from one fresh clone, one after another (as .ci/run runs them),
    until one fails: its exit status, time, and CPU time over every process it started."""
    record = {"run": name, "command": RUNS[name], **where(), "commands": []}
    clone = Path(tempfile.mkdtemp(prefix="workbook-ci-"))
    try:
        git("clone", "-q", str(ROOT), str(clone))
        record["cpu counted by"] = "a control group per command"
        # what .ci/run ran at this commit: the record stays true of it when .ci/run changes later
        record["planned"] = [f"make {target}" for target in ci_targets(clone)]
        suites_by_command = suite_commands(clone)
        for target in ci_targets(clone):
            group = control_group(f"workbook-ci-{os.getpid()}-{target}")
            if group is None:
                record["cpu counted by"] = "getrusage: only the processes each command waited for"
                join = None
            else:
                folder, seconds = group
                join = lambda: (folder / "cgroup.procs").write_text(str(os.getpid()))  # noqa: E731
            log = LOGS / f"ci-{target}.log"
            ran = {"command": f"make {target}",
                   **run(["make", "--no-print-directory", target], clone, log, preexec_fn=join)}
            if group:
                time.sleep(2)   # what the command left behind has ended (its tests wait for that)
                ran["cpu seconds"] = round(seconds(folder), 1)
                try:
                    folder.rmdir()
                except OSError:
                    pass
            text = log.read_text(errors="replace")
            ran.update({"pytest seconds": pytest_seconds(text), "failed": failed_tests(text)})
            ran_suites = suites(text, suites_by_command)
            if len(ran_suites) > 1:
                ran.update({"pytest seconds": None, "suites": ran_suites})
            record["commands"].append(ran)
            print(f"make {target}: {'passed' if ran['exit status'] == 0 else 'FAILED'} in {ran['seconds']} s, "
                  f"{ran['cpu seconds']:.0f} s of CPU", flush=True)
            if ran["exit status"] != 0:
                break
    finally:
        shutil.rmtree(clone, ignore_errors=True)
    record["passed"] = all(ran["exit status"] == 0 for ran in record["commands"]) and \
        len(record["commands"]) == len(record["planned"])
    return record


# ---------------------------------------------------------------- the page

def records():
    """Every record in docs/reliability/, by run."""
    return {name: json.loads((RECORDS / f"{name}.json").read_text())
            for name in RUNS if (RECORDS / f"{name}.json").exists()}


def number(value):
    return f"{value:,}" if isinstance(value, int) else f"{value:,.1f}"


def said(record):
    """The line under a heading: which commit, when, where, and how loaded the machine was."""
    machine = record["machine"]
    tree = "" if record["clean"] else " (with uncommitted changes)"
    return (f"Commit `{record['commit'][:12]}`{tree}, {record['date']}: {machine['cores']} cores, "
            f"{machine['system']}, Python {machine['python']}, SQLite {machine['sqlite']}. ")


def loads(ran):
    return (f"Load average {ran['load before'][0]:g} before and {ran['load after'][0]:g} after "
            "(one minute)")


def tests_line(ran):
    tests = ran["tests"]
    pytest = "" if ran.get("pytest seconds") is None else f"pytest {ran['pytest seconds']:g} s, "
    return (f"{tests['passed']:,} passed, {tests['failed']:,} failed, {tests['error']:,} errors and "
            f"{tests['skipped']:,} skipped of {tests['collected']:,} collected; {pytest}"
            f"the whole command {ran['seconds']:g} s and {ran['cpu seconds']:g} s of CPU")


def figures_table(found):
    runs = [name for name in TARGETS if name in found]
    names = sorted({name for run in runs for name in found[run]["figures"]})
    lines = ["| figure | " + " | ".join(f"`{RUNS[run]}`" for run in runs) + " |",
             "|---|" + "---:|" * len(runs)]
    for name in names:
        counts = [found[run]["figures"].get(name) for run in runs]
        lines.append(f"| {name} | " + " | ".join("" if count is None else number(count)
                                                 for count in counts) + " |")
    return lines


def markdown(found):
    """figures.md from the records (a dict run -> record)."""
    lines = ["# Reliability figures", "",
             "Written by `make reliability-record RUN=test|postgres|soak|mutate|loaded|ci` (tools/reliability.py)",
             "from the records beside this page; run it again rather than edit this. What each figure",
             "checks is in [docs/reliability.md](../reliability.md).", ""]
    for run in TARGETS:
        if run in found:
            record = found[run]
            lines += [f"## `{record['command']}`", "", said(record) + loads(record) + ".", "",
                      tests_line(record) + ".", ""]
    if any(run in found for run in TARGETS):
        lines += ["The counts each run's end prints (the runs that involve several processes vary",
                  "from run to run; the others are fixed by seeds, sizes and derandomized examples,",
                  "except under `make soak`, which draws new ones):", "",
                  *figures_table(found), ""]
    if "mutate" in found:
        record, mutants = found["mutate"], found["mutate"]["mutants"]
        share = 100 * mutants["killed"] / mutants["generated"]
        lines += ["## `make mutate`", "", said(record) + loads(record) + ".", "",
                  f"{mutants['killed']:,} of {mutants['generated']:,} mutants killed ({share:.1f} %); "
                  f"{mutants['survived']:,} survived, {mutants['timeout']:,} timed out, "
                  f"{mutants['suspicious']:,} suspicious, {mutants['no tests']:,} reached by no test. "
                  f"The whole command took {record['seconds']:g} s.", ""]
        if record["not killed"]:
            lines += ["| mutant | result |", "|---|---|",
                      *[f"| `{name}` | {result} |" for name, result in record["not killed"]], ""]
    if "loaded" in found:
        record = found["loaded"]
        lines += [f"## `make test` from {record['times']} fresh clones, both cores kept busy", "",
                  said(record) + f"Each run cloned the commit afresh and ran `make test` (its "
                  f".venv set up first) while {record['busy loops']} busy loops "
                  f"(`sh -c '{BUSY}'`) kept the cores busy.", "",
                  f"**{record['passed']} of {record['times']} passed.**", "",
                  "| run | result | pytest s | make test s | CPU s | load before, after | failed |",
                  "|---:|---|---:|---:|---:|---|---|"]
        for place, ran in enumerate(record["runs"], start=1):
            pytest = "" if ran.get("pytest seconds") is None else f"{ran['pytest seconds']:g}"
            lines.append(f"| {place} | {'passed' if ran['passed'] else 'failed'} | {pytest} | "
                         f"{ran['seconds']:g} | {ran['cpu seconds']:g} | "
                         f"{ran['load before'][0]:g}, {ran['load after'][0]:g} | "
                         f"{', '.join(f'`{name}`' for name in ran['failed'])} |")
        lines.append("")
    if "ci" in found:
        record = found["ci"]
        commands = record["commands"]
        total = sum(ran["seconds"] for ran in commands)
        cpu = sum(ran["cpu seconds"] for ran in commands)
        cores = record["machine"]["cores"]
        lines += ["## `.ci/run`, command by command", "",
                  said(record) + f"Each command ran from one fresh clone, one after another as "
                  f"`.ci/run` runs them; its CPU time was counted by {record['cpu counted by']}.", "",
                  f"**{'All passed' if record['passed'] else 'Not all passed'}, in {total / 60:.1f} minutes "
                  f"({total:g} s), with {cpu:g} s of CPU time.** On {cores} cores no order of these "
                  f"commands could take less than {cpu / cores:.0f} s ({cpu / cores / 60:.1f} minutes) "
                  f"without less work.", "",
                  "| command | result | seconds | CPU s | cores busy | pytest s | load before, after |",
                  "|---|---|---:|---:|---:|---:|---|"]
        for ran in commands:
            pytest = "" if ran.get("pytest seconds") is None else f"{ran['pytest seconds']:g}"
            lines.append(f"| `{ran['command']}` | {'passed' if ran['exit status'] == 0 else 'failed'} | "
                         f"{ran['seconds']:g} | {ran['cpu seconds']:g} | "
                         f"{ran['cpu seconds'] / ran['seconds']:.2f} | {pytest} | "
                         f"{ran['load before'][0]:g}, {ran['load after'][0]:g} |")
            for suite in ran.get("suites", []):
                seconds = "" if suite["pytest seconds"] is None else f"{suite['pytest seconds']:g}"
                lines.append(f"| &nbsp;&nbsp;its `{suite['command']}` |  |  |  |  | {seconds} |  |")
        if any("suites" in ran for ran in commands):
            lines += ["", "The rows under a command are the test suites it ran, in the order they ended, "
                      "with pytest's own time: `make checks` runs two at a time, so their times overlap."]
        lines.append("")
    return "\n".join(lines)


def write(record):
    RECORDS.mkdir(parents=True, exist_ok=True)
    (RECORDS / f"{record['run']}.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"recorded {(RECORDS / (record['run'] + '.json')).relative_to(ROOT)}")


def render():
    PAGE.write_text(markdown(records()))
    print(f"rendered {PAGE.relative_to(ROOT)}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] not in (*RUNS, "render"):
        print(__doc__, file=sys.stderr)
        return 2
    name = argv[0]
    if name != "render":
        if name == "loaded":
            record = record_loaded(name, int(argv[1]) if len(argv) > 1 else 10)
        elif name == "ci":
            record = record_ci(name)
        elif name == "mutate":
            record = record_mutate(name)
        else:
            record = record_test(name)
        if record is None:
            return 1
        write(record)
    render()
    return 0


if __name__ == "__main__":
    sys.exit(main())
