"""Grade submitted chapters with the same checks learners run.

    python scripts/grade.py SUBMISSION_FOLDER [--json]

Each notebook in the folder (named like the chapters, 01-... to 06-...) is executed top to bottom
in a fresh kernel; cells tagged raises-exception may fail. Then, in the same kernel, every
exercise's check is asked again with the learner's answer expression, using a freshly imported
workbook.exercises module, so editing a check cell's printed output changes nothing. Prints one
line per exercise and a total; exits 0 only when every exercise is correct.
"""
import json
import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

CHECK = re.compile(r"^\s*(q\d+)\.check\((.*)\)\s*$", re.M)


def grade_notebook(path):
    notebook = nbformat.read(path, as_version=4)
    chapter = int(path.name[:2])
    asks = [m.groups() for c in notebook.cells if c.cell_type == "code" for m in CHECK.finditer(c.source)]
    probe = ["import importlib, json",
             f"_grading = importlib.reload(importlib.import_module('workbook.exercises.ch{chapter}'))",
             "_verdicts = []"]
    for name, expression in asks:
        probe += [f"try:\n    _answer = {expression}\nexcept Exception:\n    _answer = None",
                  f"_verdicts.append(_grading.{name}.verdict(_answer).__dict__)"]
    probe.append("print(json.dumps(_verdicts))")
    notebook.cells.append(nbformat.v4.new_code_cell("\n".join(probe)))
    client = NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    except CellExecutionError as error:
        first_line = str(error).strip().splitlines()[-1][:200]
        return [{"exercise": f"{chapter}.?", "status": "not yet",
                 "sentence": f"the notebook stopped with an error before grading: {first_line}"}]
    output = "".join(o.get("text", "") for o in notebook.cells[-1].outputs if o["output_type"] == "stream")
    return json.loads(output)


def main(folder, as_json=False):
    results = []
    for path in sorted(Path(folder).glob("[0-9][0-9]-*.ipynb")):
        results += grade_notebook(path)
    if as_json:
        print(json.dumps(results, indent=1))
    else:
        for verdict in results:
            print(f"{verdict['exercise']:>5}  {verdict['status']:<13}  {verdict['sentence']}")
        correct = sum(v["status"] == "correct" for v in results)
        print(f"{correct} of {len(results)} exercises correct")
    return 0 if results and all(v["status"] == "correct" for v in results) else 1


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--json"]
    sys.exit(main(args[0], "--json" in sys.argv))
