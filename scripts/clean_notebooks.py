"""Remove what a run leaves in notebooks besides outputs: per-cell clock readings.

    python scripts/clean_notebooks.py notebooks/0*.ipynb

nbclient records when each cell started and finished in cell metadata ("execution"); those
are wall-clock times, different on every run, so `make notebooks` strips them.
"""
import sys

import nbformat


def clean(path):
    notebook = nbformat.read(path, as_version=4)
    changed = False
    for cell in notebook.cells:
        for key in ("execution", "ExecuteTime"):
            if key in cell.metadata:
                del cell.metadata[key]
                changed = True
    if changed:
        nbformat.write(notebook, path)
    return changed


if __name__ == "__main__":
    for path in sys.argv[1:]:
        clean(path)
