"""make bench WHAT=<benchmark>: one benchmark, its figures in build/bench/.
make bench-record WHAT=<benchmark>: the same, then kept as the record the docs and appendices read.

    python -m bench store [--record]      the store against raw SQL and the spec's reference code:
                                          overhead, growth to 100,000 rows, contention, chapters
    python -m bench postgres [--record]   the same compare-and-swap workloads on SQLite and on a
                                          temporary PostgreSQL server, as ratios
    python -m bench grade [--record]      make grade (isolated) against nbgrader's autograde
    python -m bench hub [--record]        students logging in to the course hub at once
    python -m bench setup                 what a new user waits for, from fresh clones

Anything after the name goes to that benchmark (--quick, --students 8, ...). A record is the
benchmark's report in docs/bench/; figures a notebook reads go to workbook/benchmarks/ too.
"""
import importlib
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILT = ROOT / "build" / "bench"
DOCS = ROOT / "docs" / "bench"
PACKAGE = ROOT / "workbook" / "benchmarks"

# name -> (module, arguments a record adds, {file written in build/bench: where the record keeps it})
BENCHMARKS = {
    "store": ("bench.run", ["--setup"], {"report.md": DOCS, "bench.png": DOCS, "results.json": PACKAGE}),
    "postgres": ("bench.postgres", [], {"postgres.md": DOCS, "postgres.json": PACKAGE}),
    "grade": ("bench.grade", [], {"grade.md": DOCS, "grade.json": DOCS}),
    "hub": ("bench.hub", [], {"hub.md": DOCS, "hub.json": DOCS}),
    "setup": ("bench.setup", [], {}),
}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] not in BENCHMARKS:
        print(__doc__, file=sys.stderr)
        print(f"WHAT: one of {', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    name, options = argv[0], argv[1:]
    record = "--record" in options
    options = [option for option in options if option != "--record"]
    module, for_record, kept = BENCHMARKS[name]
    if record and not kept:
        print(f"bench {name} keeps no record: run it without --record", file=sys.stderr)
        return 2
    status = importlib.import_module(module).main([*options, *(for_record if record else [])])
    if isinstance(status, int) and status:   # some return their figures, some an exit status
        return status
    if record:
        for file, folder in kept.items():
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copy(BUILT / file, folder / file)
            print(f"recorded {(folder / file).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
