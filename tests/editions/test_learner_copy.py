"""The learner's copy (my-workbook/): made once, never overwritten, updated only on request.

(That make test never reads it is shown by make test-browser, on the copy its learner filled.)"""
import json
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
from course import notebook as notebook_model
from course.editions import learner

CHAPTER_1 = "01-purpose-and-validation.ipynb"
MY_ANSWER = 'wide_fact = {"schema": 1, "text": "mine", "source": "me", "reviewed": False}'


@pytest.fixture
def source(tmp_path):
    """A copy of the source chapters that a test may change, as an author would."""
    folder = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return folder


def answer_cell(notebook, grade_id="exercise-1-1"):
    return next(c for c in notebook.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def work_in(copy):
    """The learner answers 1.1 and adds a note of their own; the file is saved."""
    path = copy / CHAPTER_1
    notebook = nbformat.read(path, as_version=4)
    answer_cell(notebook).source = MY_ANSWER
    notebook.cells.append(nbformat.v4.new_markdown_cell("my own note"))
    nbformat.write(notebook, path)
    return path.read_bytes()


def change_chapter(source, text="An author's new sentence."):
    path = source / CHAPTER_1
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[1].source += f"\n\n{text}"
    nbformat.write(notebook, path)


def test_the_first_sync_writes_every_notebook_and_a_welcome(tmp_path, source):
    added, changed = learner.sync(tmp_path / "mine", source)
    names = sorted(p.name for p in source.glob("*.ipynb"))
    assert sorted(added) == names and changed == []
    assert sorted(p.name for p in (tmp_path / "mine").glob("*.ipynb")) == names
    assert "nothing\nyou type can change the chapters" in (tmp_path / "mine" / learner.START).read_text()
    assert "### BEGIN SOLUTION" not in (tmp_path / "mine" / CHAPTER_1).read_text()


def test_a_second_sync_never_touches_the_learners_work(tmp_path, source):
    copy = tmp_path / "mine"
    learner.sync(copy, source)
    mine = work_in(copy)
    assert learner.sync(copy, source) == ([], [])
    assert (copy / CHAPTER_1).read_bytes() == mine


def test_a_changed_chapter_is_offered_and_kept_until_the_learner_updates(tmp_path, source):
    copy = tmp_path / "mine"
    learner.sync(copy, source)
    mine = work_in(copy)
    change_chapter(source)
    assert learner.sync(copy, source) == ([], [CHAPTER_1])
    assert (copy / CHAPTER_1).read_bytes() == mine          # offered, not applied
    assert learner.update(copy, source) == [CHAPTER_1]
    updated = nbformat.read(copy / CHAPTER_1, as_version=4)
    changed = nbformat.read(source / CHAPTER_1, as_version=4).cells[1].id
    assert "An author's new sentence." in next(c for c in updated.cells if c.id == changed).source
    assert answer_cell(updated).source == MY_ANSWER          # the answer came along, by cell id
    assert answer_cell(updated, "exercise-1-2").source.startswith("full_checkpoint = ____")
    earlier = copy / "earlier-versions" / "01-purpose-and-validation.1.ipynb"
    assert earlier.read_bytes() == mine                      # everything else is kept there
    assert learner.sync(copy, source) == ([], [])            # and the offer is gone
    change_chapter(source, "Another one.")
    learner.update(copy, source)
    assert (copy / "earlier-versions" / "01-purpose-and-validation.2.ipynb").exists()


def test_a_chapter_open_in_a_running_lab_is_left_for_later(tmp_path, source):
    copy = tmp_path / "mine"
    learner.sync(copy, source)
    mine = work_in(copy)
    change_chapter(source)
    assert learner.update(copy, source, keep={CHAPTER_1}) == []
    assert (copy / CHAPTER_1).read_bytes() == mine           # untouched while its tab is open
    assert CHAPTER_1 in (copy / learner.UPDATES).read_text()  # and still offered
    assert learner.update(copy, source) == [CHAPTER_1]       # once it is closed
    assert not (copy / learner.UPDATES).exists()


def test_no_running_lab_holds_a_folder_open(tmp_path):
    assert learner.open_in_lab(tmp_path) == set()


def test_a_new_chapter_is_added_and_the_others_left_alone(tmp_path, source):
    copy = tmp_path / "mine"
    learner.sync(copy, source)
    mine = work_in(copy)
    shutil.copy(source / "appendix-costs.ipynb", source / "appendix-later.ipynb")
    assert learner.sync(copy, source) == (["appendix-later.ipynb"], [])
    assert (copy / CHAPTER_1).read_bytes() == mine


def test_a_deleted_chapter_in_the_copy_is_brought_back(tmp_path, source):
    copy = tmp_path / "mine"
    learner.sync(copy, source)
    (copy / CHAPTER_1).unlink()
    assert learner.sync(copy, source)[0] == [CHAPTER_1]


def test_the_command_line_says_what_it_did(tmp_path, capsys):
    copy = tmp_path / "mine"
    assert learner.run("sync", str(copy)) == 0
    assert f"added {len(list((ROOT / 'notebooks').glob('*.ipynb')))} notebooks (answers hidden" \
        in capsys.readouterr().out
    assert learner.run("sync", str(copy)) == 0
    assert capsys.readouterr().out.endswith("(your work stays there).\n")
    assert learner.run("update", str(copy)) == 0
    assert "is up to date" in capsys.readouterr().out


def test_a_waiting_update_is_written_where_the_file_browser_shows_it_first(tmp_path, source):
    copy = tmp_path / "mine"
    learner.sync(copy, source)
    assert not (copy / learner.UPDATES).exists()
    change_chapter(source)
    learner.sync(copy, source)
    note = (copy / learner.UPDATES).read_text()
    assert f"- [{CHAPTER_1}]({CHAPTER_1})" in note  # a link JupyterLab opens the chapter from
    assert "make lab-update" in note and "close their tabs" in note
    assert sorted(p.name for p in copy.iterdir() if not p.name.startswith("."))[:2] == \
        [learner.START, learner.UPDATES]
    learner.update(copy, source)
    assert not (copy / learner.UPDATES).exists()


def test_chapter_one_points_to_the_how_to_file_in_the_copy_only():
    chapter_1 = sorted((ROOT / "notebooks").glob("01-*.ipynb"))[0]
    edition = learner.learner_notebook(chapter_1)
    heading = next(c for c in edition.cells if c.cell_type == "markdown")
    assert heading.source.startswith("# Chapter 1")
    assert heading.source.split("\n\n")[1] == learner.POINTER  # right under the title
    assert f"]({learner.START})" in learner.POINTER
    source = nbformat.read(chapter_1, as_version=4)
    assert not any(learner.POINTER in c.source for c in source.cells)
    later = learner.learner_notebook(sorted((ROOT / "notebooks").glob("02-*.ipynb"))[0])
    assert not any(learner.POINTER in c.source for c in later.cells)


@pytest.mark.parametrize("chapters, start", [(["01-first.ipynb", "02-second.ipynb"],
                                              "/lab/tree/01-first.ipynb"),
                                             (["notes.ipynb"], "/lab"),
                                             (["01-first.ipynb", learner.UPDATES],
                                              f"/lab/tree/{learner.UPDATES}")])
def test_the_lab_opens_chapter_one_or_else_the_folder(tmp_path, chapters, start):
    # tools/lab in a stand-in tree whose jupyter only prints what it was asked to do
    tree = tmp_path / "tree"
    (tree / "tools").mkdir(parents=True)
    shutil.copy(ROOT / "tools" / "lab", tree / "tools" / "lab")
    shutil.copytree(ROOT / "jupyterlab", tree / "jupyterlab")
    jupyter = tree / ".venv" / "bin" / "jupyter"
    jupyter.parent.mkdir(parents=True)
    jupyter.write_text('#!/bin/sh\necho "jupyter $*"\n')
    jupyter.chmod(0o755)
    served = tmp_path / "served"
    served.mkdir()
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "cookie_secret").write_text("last run's")
    for name in chapters:
        (served / name).write_text("{}")
    done = subprocess.run(["bash", str(tree / "tools" / "lab")], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "WORKBOOK_NOTEBOOKS": str(served),
                               "WORKBOOK_LAB_STATE": str(tmp_path / "state")})
    assert done.returncode == 0, done.stderr
    lab = done.stdout.splitlines()[-1]
    assert lab.startswith("jupyter lab --allow-root") and f"--LabApp.default_url={start}" in lab
    assert f"--ServerApp.root_dir={served}" in lab
    assert ("No chapter 1" in done.stderr) == (start == "/lab")
    # the kernel websocket's legacy protocol and the pre-save hook (jupyterlab/workbook_lab.py)
    assert "--ZMQChannelsWebsocketConnection.kernel_ws_protocol= " in lab
    assert "--FileContentsManager.pre_save_hook=workbook_lab.drop_widget_views" in lab
    # a new cookie secret each start: a tab left open from the last run is logged out
    assert f"--ServerApp.cookie_secret_file={tmp_path / 'state' / 'cookie_secret'}" in lab
    assert not (tmp_path / "state" / "cookie_secret").exists()


def test_a_saved_notebook_keeps_an_explorers_still_not_its_view():
    import workbook_lab  # jupyterlab/workbook_lab.py, which tools/venv installs
    from workbook.teaching.explorer import explore
    from workbook.teaching.timeline import clock_backwards_scenario
    data, _ = explore(clock_backwards_scenario())._repr_mimebundle_()
    assert workbook_lab.WIDGET_VIEW in data
    alone = {workbook_lab.WIDGET_VIEW: {"model_id": "m"}}
    notebook = nbformat.v4.new_notebook(metadata={"widgets": {"state": {}}}, cells=[
        nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output(
            "execute_result", data=dict(data), execution_count=1)]),
        nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output("display_data", data=alone)]),
        nbformat.v4.new_markdown_cell("text")])
    model = {"type": "notebook", "content": json.loads(nbformat.writes(notebook))}
    workbook_lab.drop_widget_views(model=model, path="x.ipynb", contents_manager=None)
    kept, view_alone = (cell["outputs"][0]["data"] for cell in model["content"]["cells"][:2])
    assert set(kept) == set(data) - {workbook_lab.WIDGET_VIEW}  # the still: text, HTML, picture
    assert view_alone == alone  # a view with no fallback stays (it has nothing else to show)
    assert "widgets" not in model["content"]["metadata"]
    other = {"type": "file", "content": "text"}
    workbook_lab.drop_widget_views(model=other, path="x.md", contents_manager=None)
    assert other == {"type": "file", "content": "text"}


def test_a_learners_chapter_opens_on_its_title_not_on_a_build_directive():
    for path in learner.chapters(ROOT / "notebooks"):
        source = nbformat.read(path, as_version=4)
        cells = learner.learner_notebook(path).cells
        assert cells[0].cell_type == "markdown" and cells[0].source.startswith("# "), path.name
        assert not any(notebook_model.is_directive_cell(cell) for cell in cells)
        kept = [cell.id for cell in source.cells if not notebook_model.is_directive_cell(cell)]
        assert [cell.id for cell in cells] == kept      # only the directive cells went
        prose = " ".join(c.source for c in cells if c.cell_type == "markdown")
        assert "the first cell" not in prose and "first cell," not in prose, path.name
    assert notebook_model.is_directive_cell(nbformat.v4.new_code_cell("#| default_exp validation"))
    assert not notebook_model.is_directive_cell(nbformat.v4.new_code_cell("#| export\nx = 1"))
