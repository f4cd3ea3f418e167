"""make bench WHAT=<benchmark>: one benchmark, its figures in build/bench/.
make bench-record WHAT=<benchmark>: the same, then kept as the record the docs and appendices read.

    python -m bench store [--record]      the store against raw SQL and the spec's reference code:
                                          overhead, growth to 100,000 rows, contention, chapters
    python -m bench postgres [--record]   the same compare-and-swap workloads on SQLite and on a
                                          temporary PostgreSQL server, as ratios
    python -m bench grade [--record]      make grade (isolated) against nbgrader's autograde
    python -m bench hub [--record]        students logging in to the course hub at once
    python -m bench setup                 what a new user waits for, from fresh clones

make bench WHAT=peers runs bench/peers.py (LangGraph's store beside ours) in a venv of its own,
build/peers-venv, so LangGraph never enters .venv; it keeps no record.

Anything after the name goes to that benchmark (--quick, --students 8, ...). A record is the
benchmark's report in docs/bench/; figures a notebook reads go to workbook/benchmarks/ too.
"""
import importlib
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# name -> (module, arguments a record adds, {file the module writes in build/bench: where the
# record keeps it}): "docs" is docs/bench/, the reports a reader opens; "package" is
# workbook/benchmarks/, the figures a notebook reads as package data.
BENCHMARKS = {
    "store": ("bench.run", ["--setup"], {"report.md": "docs", "bench.png": "docs",
                                         "results.json": "package"}),
    "postgres": ("bench.postgres", [], {"postgres.md": "docs", "postgres.json": "package"}),
    "grade": ("bench.grade", [], {"grade.md": "docs", "grade.json": "docs"}),
    "hub": ("bench.hub", [], {"hub.md": "docs", "hub.json": "docs"}),
    "setup": ("bench.setup", [], {}),
}


def places(root):
    return {"built": root / "build" / "bench", "docs": root / "docs" / "bench",
            "package": root / "workbook" / "benchmarks"}


def refusal(name, options, record):
    """Why this command cannot run, or None."""
    if name not in BENCHMARKS:
        return f"{__doc__}\nWHAT: one of {', '.join(BENCHMARKS)}"
    if record and not BENCHMARKS[name][2]:
        return f"bench {name} keeps no record: run it without --record"
    if record and {"--quick", "--out"} & set(options):
        return "a record is a full run written to build/bench: drop --quick and --out"
    return None


def main(argv=None, root=ROOT):
    argv = sys.argv[1:] if argv is None else list(argv)
    name, options = (argv[0], argv[1:]) if argv else ("", [])
    record = "--record" in options
    options = [option for option in options if option != "--record"]
    problem = refusal(name, options, record)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    module, for_record, kept = BENCHMARKS[name]
    status = importlib.import_module(module).main([*options, *(for_record if record else [])])
    if isinstance(status, int) and status:   # some return their figures, some an exit status
        return status
    if record:
        folders = places(root)
        for file, place in kept.items():
            folders[place].mkdir(parents=True, exist_ok=True)
            shutil.copy(folders["built"] / file, folders[place] / file)
            print(f"recorded {(folders[place] / file).relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
