"""The workbook: execute every chapter against notebooks that only import its libraries.

Each chapter runs with nbclient in a fresh kernel, from a temporary copy of the folder
that holds notebooks/ (so the repository is never modified, and a chapter that reads
../tests or ../workbook still finds them). Its floor is a generated notebook holding just
the import statements found in that chapter's code cells, also in a fresh kernel: the
difference is the time the chapter's own cells take, beyond starting Python, a kernel
and the libraries. Chapter and floor runs alternate, so machine drift hits both.
"""

import ast
import shutil
import tempfile
import time
from pathlib import Path

import nbformat

PATTERN = "0*.ipynb"
# Left out of the temporary copy: history, environments, outputs, caches.
SKIP = (".git", ".venv", "build", "mutants", ".hypothesis", "__pycache__", "*.egg-info",
        ".ipynb_checkpoints", "node_modules", ".pytest_cache")


def import_lines(nb):
    """The import statements of every code cell, deduplicated, in first-seen order."""
    seen, lines = set(), []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        # Drop IPython-only lines (magics, shell escapes) so the cell parses as Python.
        source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                           for line in cell.source.splitlines())
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom)
                                                    and node.level == 0):
                line = ast.unparse(node)
                if line not in seen:
                    seen.add(line)
                    lines.append(line)
    return lines


def floor_notebook(nb):
    floor = nbformat.v4.new_notebook(metadata=nb.metadata)
    floor.cells = [nbformat.v4.new_code_cell("\n".join(import_lines(nb)) or "pass")]
    return floor


def execute(nb, folder, timeout):
    """Seconds to run `nb` in a fresh kernel with `folder` as its working directory."""
    from nbclient import NotebookClient
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}})
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def failure(error):
    """One line for a chapter that did not run to the end."""
    name = getattr(error, "ename", None) or type(error).__name__
    value = getattr(error, "evalue", None) or str(error).strip().splitlines()[-1:]
    return f"{name}: {value if isinstance(value, str) else ''.join(value)}"[:200]


def measure(notebooks_dir, timeout=600, repeats=2):
    """Returns {"chapters": [...], "total_s", "floor_s", "ratio"} or {"skipped": reason}.

    Each chapter and its floor run `repeats` times, alternating; the fastest run of each
    counts (a wall-clock time on a busy machine is the work plus interference).
    """
    notebooks_dir = Path(notebooks_dir)
    chapters = sorted(notebooks_dir.glob(PATTERN))
    if not chapters:
        return {"skipped": f"no chapters matching {notebooks_dir}/{PATTERN} yet"}
    rows, failed = [], []
    with tempfile.TemporaryDirectory(prefix="bench-notebooks-") as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(notebooks_dir.resolve().parent, root,
                        ignore=shutil.ignore_patterns(*SKIP), symlinks=True)
        copy = root / notebooks_dir.resolve().name
        for index, path in enumerate(chapters):
            nb = nbformat.read(copy / path.name, as_version=4)
            floor = floor_notebook(nb)
            runs = {"chapter": [], "floor": []}
            try:
                for repeat in range(repeats):
                    order = (("chapter", "floor") if (index + repeat) % 2 == 0
                             else ("floor", "chapter"))
                    for which in order:
                        runs[which].append(execute(nb if which == "chapter" else floor,
                                                   copy, timeout))
            except Exception as error:  # noqa: BLE001 - a broken chapter is reported, not fatal
                failed.append({"notebook": path.name, "error": failure(error)})
                continue
            best = {which: min(times) for which, times in runs.items()}
            rows.append({"notebook": path.name, "chapter_s": best["chapter"],
                         "floor_s": best["floor"], "ratio": best["chapter"] / best["floor"],
                         "repeats": repeats,
                         "imports": import_lines(nb),
                         "code_cells": sum(c.cell_type == "code" for c in nb.cells)})
    total = sum(r["chapter_s"] for r in rows)
    floor_total = sum(r["floor_s"] for r in rows)
    return {"chapters": rows, "failed": failed, "total_s": total, "floor_s": floor_total,
            "ratio": total / floor_total if rows else None}
