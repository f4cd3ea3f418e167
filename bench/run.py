"""`make bench`: measure, then write build/bench/report.md, results.json and bench.png.

    python -m bench.run            # the full run (about two minutes on 2 cores)
    python -m bench.run --quick    # checks the code, figures meaningless (the chapters run once)
    python -m bench.run --quick --skip notebooks    # the same in seconds
    python -m bench.run --setup    # also a fresh clone to the lab and to a green make test (make bench-record)
"""

import argparse
import datetime
import json
import os
import platform
import sqlite3
import sys
import time
from pathlib import Path

from bench import contention, growth, impls, machine, notebooks, overhead, report, setup

ROOT = Path(__file__).resolve().parent.parent

FULL = {
    "overhead": {
        "memory": {"put": (201, 150), "get": (201, 500), "forget": (61, 200),
                   "purge": (61, 200)},
        "file": {"put": (11, 40), "get": (15, 500), "forget": (11, 40), "purge": (11, 40)},
    },
    "growth": {"sizes": [100, 1_000, 10_000, 100_000],
               "plan": {"get": (41, 1000), "put": (41, 300), "get_hot": (21, 1000),
                        "put_hot": (21, 300)},
               "purge_plan": {"purge_small": (9, 100), "purge_shared": (7, 20)}},
    "contention": {"writers": (1, 2, 4), "seconds": 5.0},
}
QUICK = {
    "overhead": {
        "memory": {"put": (3, 20), "get": (3, 20), "forget": (3, 20), "purge": (3, 20)},
        "file": {"put": (3, 5), "get": (3, 5), "forget": (3, 5), "purge": (3, 5)},
    },
    "growth": {"sizes": [100, 300],
               "plan": {"get": (3, 20), "put": (3, 20), "get_hot": (3, 20),
                        "put_hot": (3, 20)},
               "purge_plan": {"purge_small": (3, 5), "purge_shared": (3, 5)}},
    "contention": {"writers": (1, 2), "seconds": 0.3},
}
PARTS = ("overhead", "growth", "contention", "notebooks")


def run(out, quick=False, notebooks_dir=ROOT / "notebooks", skip=(), log=print,
        with_setup=False, setup_from=None):
    plan = QUICK if quick else FULL
    started, load_before = time.perf_counter(), machine.load()
    contenders = impls.load()
    results = {"quick": quick}
    parts = {}

    def timed_part(name, since):
        parts[name] = round(time.perf_counter() - since, 1)

    if "overhead" not in skip:
        results["overhead"] = []
        for backend in ("memory", "file"):
            log(f"overhead, {backend} ...")
            since = time.perf_counter()
            results["overhead"] += overhead.measure(contenders, backend,
                                                    plan["overhead"][backend])
            timed_part(f"overhead ({backend})", since)
    if "growth" not in skip:
        log("growth ...")
        since = time.perf_counter()
        g = plan["growth"]
        by_name = {c.name: c for c in contenders}
        chosen = [by_name[n] for n in ("store", "floor")]
        curves, plans = growth.measure(chosen, g["sizes"], g["plan"], g["purge_plan"])
        results["growth"] = {"sizes": g["sizes"], "tenants": growth.TENANTS,
                             "hot": growth.HOT, "curves": curves, "plans": plans}
        timed_part("growth", since)
    if "contention" not in skip:
        log("contention ...")
        c = plan["contention"]
        since = time.perf_counter()
        results["contention"] = contention.measure(c["writers"], c["seconds"])
        timed_part("contention", since)
    if "notebooks" not in skip:
        log("notebooks ...")
        since = time.perf_counter()
        results["notebooks"] = notebooks.measure(notebooks_dir,
                                                 repeats=1 if quick else 2)
        timed_part("notebooks", since)
    if setup_from:
        results["setup"] = json.loads(Path(setup_from).read_text())
    elif with_setup:
        since = time.perf_counter()
        results["setup"] = setup.measure(log=log)
        timed_part("setup", since)
    results["environment"] = {
        "command": "python -m bench.run" + (" --quick" if quick else "")
                   + (" --setup" if with_setup else ""),
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
        "cpus": os.cpu_count(), "platform": platform.platform(terse=True),
        "seconds": time.perf_counter() - started, "parts": parts,
        "source": machine.commit(), "load": {"before": load_before, "after": machine.load()}}
    return results, report.write(results, Path(out))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(ROOT / "build" / "bench"))
    parser.add_argument("--quick", action="store_true",
                        help="tiny repetition counts: checks the code in seconds")
    parser.add_argument("--notebooks", default=str(ROOT / "notebooks"))
    parser.add_argument("--skip", action="append", default=[], choices=PARTS)
    parser.add_argument("--setup", action="store_true",
                        help="also time a fresh clone to the lab and to a green make test "
                             "(bench/setup.py, about two minutes more)")
    parser.add_argument("--setup-from", help="take the set-up figures from this setup.json "
                                             "(written by python -m bench.setup) instead")
    args = parser.parse_args(argv)
    results, text = run(args.out, args.quick, args.notebooks, args.skip,
                        log=lambda m: print(m, file=sys.stderr, flush=True),
                        with_setup=args.setup, setup_from=args.setup_from)
    print(text)
    print(f"written: {Path(args.out) / 'report.md'}, results.json, bench.png")
    return results


if __name__ == "__main__":
    main()
