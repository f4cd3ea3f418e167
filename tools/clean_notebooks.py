"""Remove what a run leaves in notebooks besides outputs, and tidy the outputs it leaves.

    python tools/clean_notebooks.py notebooks/0*.ipynb

nbclient records when each cell started and finished in cell metadata ("execution"); those
are wall-clock times, different on every run, so `make notebooks` strips them. A cell's
printed text can also arrive in several pieces, split wherever the kernel happened to flush;
consecutive pieces of one stream are joined, so the stored output does not depend on timing.

A live widget's view (the time explorer's) names a model that only the kernel that ran it
holds; stored, it would open as a broken widget. It is dropped, so a stored explorer shows its
static fallback (the state as text, two tables and a picture) until its cell is run again.
"""
import sys

import nbformat

WIDGET = "application/vnd.jupyter.widget-view+json"


def clean(path):
    notebook = nbformat.read(path, as_version=4)
    changed = notebook.metadata.pop("widgets", None) is not None  # the models of those views
    for cell in notebook.cells:
        for key in ("execution", "ExecuteTime"):
            if key in cell.metadata:
                del cell.metadata[key]
                changed = True
        if cell.cell_type == "code":
            outputs = []
            for output in cell.outputs:
                if WIDGET in output.get("data", {}):
                    del output["data"][WIDGET]
                    changed = True
                previous = outputs[-1] if outputs else None
                if (output.output_type == "stream" and previous is not None
                        and previous.output_type == "stream"
                        and previous.name == output.name):
                    previous.text += output.text
                    changed = True
                else:
                    outputs.append(output)
            cell.outputs = outputs
    if changed:
        nbformat.write(notebook, path)
    return changed


if __name__ == "__main__":
    for path in sys.argv[1:]:
        clean(path)
