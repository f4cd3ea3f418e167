"""The committed chapters and the appendix are executed, in order, and hold nothing machine-specific."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
APPENDICES = [ROOT / "notebooks" / name for name in (
    "appendix-costs.ipynb", "appendix-postgres.ipynb", "appendix-postgres-operations.ipynb")]
NOTEBOOKS = CHAPTERS + APPENDICES
VOLATILE = re.compile(r"/(tmp|root|home|work|Users)/|0x[0-9a-f]{6,}|\d{4}-\d\d-\d\dT\d\d:\d\d"
                      r"|\d+(\.\d+)? ?(ms|seconds|µs)\b")
PICTURE = re.compile(r"data:image/png;base64,[A-Za-z0-9+/=]+")


def test_six_chapters_and_three_appendices():
    assert [p.name[:3] for p in CHAPTERS] == ["01-", "02-", "03-", "04-", "05-", "06-"]
    assert sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb")) == sorted(
        p.name for p in NOTEBOOKS)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_was_executed_top_to_bottom(notebook):
    # nbval compares only the outputs a notebook stores: an unexecuted notebook would pass it.
    cells = [c for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in cells] == list(range(1, len(cells) + 1))
    assert sum(1 for c in cells if c["outputs"]) >= len(cells) // 3


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_outputs_hold_no_paths_addresses_or_clock_readings(notebook):
    for cell in json.loads(notebook.read_text())["cells"]:
        for output in cell.get("outputs", []):
            shown = json.dumps({k: v for k, v in output.get("data", {}).items()
                                if not k.startswith("image/")}) + "".join(output.get("text", ""))
            shown = PICTURE.sub("data:image/png;base64,", shown)  # a figure's HTML holds its PNG
            assert not VOLATILE.search(shown), (notebook.name, VOLATILE.search(shown)[0])


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_cells_carry_no_run_timestamps(notebook):
    for cell in json.loads(notebook.read_text())["cells"]:
        assert not {"execution", "ExecuteTime"} & set(cell["metadata"]), "run make notebooks"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_opens_with_goals_and_closes_with_limits(notebook):
    markdown = [c for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "markdown"]
    assert re.search(r"By the end of this (chapter|appendix) you can", "".join(markdown[0]["source"]))
    assert any("does not prove" in "".join(c["source"]) for c in markdown[-2:])


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_printed_text_is_stored_in_one_piece(notebook):
    # Where a kernel flushes stdout is timing; make notebooks joins the pieces.
    for cell in json.loads(notebook.read_text())["cells"]:
        kinds = [(o["output_type"], o.get("name")) for o in cell.get("outputs", [])]
        assert all(a != b or a[0] != "stream" for a, b in zip(kinds, kinds[1:])), kinds


def test_clean_joins_split_streams_and_drops_clock_readings(tmp_path):
    import nbformat
    from importlib.util import module_from_spec, spec_from_file_location
    spec = spec_from_file_location("clean_notebooks", ROOT / "tools" / "clean_notebooks.py")
    clean = module_from_spec(spec)
    spec.loader.exec_module(clean)
    cell = nbformat.v4.new_code_cell("print('a'); print('b')", execution_count=1)
    cell.metadata["execution"] = {"iopub.execute_input": "2026-01-01T00:00:00Z"}
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="a\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="b\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="warning\n")]
    path = tmp_path / "x.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    assert clean.clean(path)
    stored = nbformat.read(path, as_version=4).cells[0]
    assert "execution" not in stored.metadata
    assert [(o.name, o.text) for o in stored.outputs] == [("stdout", "a\nb\n"),
                                                           ("stderr", "warning\n")]
    assert not clean.clean(path)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_live_widget_is_stored_only_its_static_fallback(notebook):
    # A stored widget view names a model only the kernel that ran it had: it would open broken.
    stored = json.loads(notebook.read_text())
    assert "widgets" not in stored["metadata"], "run make notebooks"
    for cell in stored["cells"]:
        for output in cell.get("outputs", []):
            assert "application/vnd.jupyter.widget-view+json" not in output.get("data", {})


def test_the_python_that_made_the_outputs_is_recorded_once_and_chapter_1_shows_it():
    # Chapter 1 prints the Python the specification's own run used beside whether the running
    # one is new enough, and (in a cell nbval does not compare) the Python running it. The stored
    # outputs must all come from one Python, the one that stored cell names.
    made_by = {p.name: json.loads(p.read_text())["metadata"]["language_info"]["version"]
               for p in NOTEBOOKS}
    assert len(set(made_by.values())) == 1, (
        f"the notebooks were executed by different Pythons ({made_by}): run make notebooks")
    [version] = set(made_by.values())
    cells = {c["id"]: c for c in json.loads(CHAPTERS[0].read_text())["cells"]}
    recorded = "".join(cells["c01-001a"]["outputs"][0]["text"])
    assert "the specification names Python 3.12.10\n" in recorded
    assert "the Python running this cell is 3.12 or later: True\n" in recorded
    assert "nbval-ignore-output" in cells["c01-001b"]["metadata"]["tags"]
    [running] = cells["c01-001b"]["outputs"]
    assert "".join(running["data"]["text/plain"]) == repr(version), (
        "chapter 1's stored 'running' Python is not the one that made the outputs: run make notebooks")


@pytest.mark.parametrize("path", sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb")),
                         ids=lambda p: p.name)
def test_every_cell_id_is_its_own(path):
    # nbformat renames a repeated id at random on every read, so the learner's edition changed at
    # every make lab and the lab said a chapter had changed when none had
    ids = [cell["id"] for cell in json.loads(path.read_text())["cells"]]
    assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1]
