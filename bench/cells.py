"""Where a chapter's time goes: `python -m bench.cells [NAME ...]` (about 30 s for all six).

Runs each chapter (notebooks/0*.ipynb, or the names given) with nbclient's per-cell timing
in a fresh kernel, from a temporary copy of the repository like bench/notebooks.py (nothing
in notebooks/ changes), and prints the whole run and its slowest code cells. A cell's time
is from the kernel starting it to its reply, so the first import of a library counts in the
cell that imports it. The fastest of `--repeats` runs is shown. Not part of `make bench`.
"""

import argparse
import datetime
import shutil
import tempfile
import time
from pathlib import Path

import nbformat

from bench.notebooks import PATTERN, SKIP

ROOT = Path(__file__).resolve().parent.parent


def _seconds(execution):
    start = datetime.datetime.fromisoformat(execution["iopub.execute_input"].replace("Z", "+00:00"))
    end = datetime.datetime.fromisoformat(execution["shell.execute_reply"].replace("Z", "+00:00"))
    return (end - start).total_seconds()


def run(path, folder, timeout=600):
    """(seconds for the whole run, [(cell id, seconds, first line)]) for one notebook."""
    from nbclient import NotebookClient
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=True,
                            resources={"metadata": {"path": str(folder)}})
    start = time.perf_counter()
    client.execute()
    total = time.perf_counter() - start
    cells = [(cell.get("id", ""), _seconds(cell.metadata["execution"]),
              (cell.source.splitlines() or [""])[0][:60])
             for cell in nb.cells if cell.cell_type == "code"]
    return total, cells


def measure(notebooks_dir, names=None, repeats=2, timeout=600):
    """{notebook: {"total_s", "cells_s", "cells": [(id, s, first line)]}}, fastest run each."""
    notebooks_dir = Path(notebooks_dir).resolve()
    names = names or sorted(p.name for p in notebooks_dir.glob(PATTERN))
    out = {}
    with tempfile.TemporaryDirectory(prefix="bench-cells-") as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(notebooks_dir.parent, root, ignore=shutil.ignore_patterns(*SKIP),
                        symlinks=True)
        copy = root / notebooks_dir.name
        for name in names:
            runs = [run(copy / name, copy, timeout) for _ in range(repeats)]
            total, cells = min(runs, key=lambda r: r[0])
            out[name] = {"total_s": total, "cells_s": sum(s for _, s, _ in cells),
                         "cells": cells}
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="notebook file names (default: every chapter)")
    parser.add_argument("--notebooks", default=str(ROOT / "notebooks"))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--top", type=int, default=5, help="slowest cells shown per chapter")
    args = parser.parse_args(argv)
    results = measure(args.notebooks, args.names, args.repeats)
    for name, r in results.items():
        print(f"{name}: {r['total_s']:.2f} s in all, {r['cells_s']:.2f} s in code cells")
        for cell_id, seconds, first in sorted(r["cells"], key=lambda c: -c[1])[:args.top]:
            print(f"  {seconds:6.3f} s  {cell_id}  {first}")
    return results


if __name__ == "__main__":
    main()
