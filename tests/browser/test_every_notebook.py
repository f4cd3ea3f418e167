"""Every notebook of the learner's copy, run in headless Chromium (make test-browser).

The chapters and appendices of notebooks/, plus a scratch notebook with an explorer of a clock
moving back, each run with Restart Kernel and Run All Cells in the `make lab` of a temporary copy
of the tree (tests/support/labpage.py): no error output, every qN.check says "not attempted",
every qN.compare asks for a prediction first, plots load as images, and every time explorer steps
(by keyboard) through what the store answers. As a learner keeps one JupyterLab open, one page
serves them all: the first notebook opens by its address, each later one from File > Open from
Path…, and each is closed with File > Close and Shut Down Notebook (its kernel with it) before
the next. (Loading JupyterLab costs Chromium more CPU than most notebooks' runs.)

test_lab.py follows one learner through the same lab; make test-browser runs the two files side
by side, each with a lab and a Chromium of its own.

Screenshots go to build/browser/.
"""
import re

import nbformat
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from course import notebook as notebook_model
from explorer_replay import check_explorer
from labpage import (NOTEBOOKS, SCRATCH, WAIT, close_and_shut_down, lab_page, menu, open_notebook,
                     run_all, save, shot, wait_until_open)


def test_chapters_and_appendices_are_found():
    assert NOTEBOOKS[0].startswith("01-"), NOTEBOOKS
    assert any(name.startswith("appendix-") for name in NOTEBOOKS), NOTEBOOKS


def loaded_images(page):
    """Every image in an output area, scrolled into view, with whether it decoded."""
    return page.eval_on_selector_all(".jp-NotebookPanel .jp-OutputArea-output img", """
        async images => {
            const found = [];
            for (const img of images) {
                img.scrollIntoView({block: "center"});
                if (!img.complete) await new Promise(done => {
                    img.onload = img.onerror = done; setTimeout(done, 5000); });
                found.push({width: img.naturalWidth, ok: img.complete && img.naturalWidth > 0});
            }
            return found;
        }""")


def outputs_in_page(page):
    """The text of every output area on the page, one string per code cell."""
    return page.eval_on_selector_all(".jp-NotebookPanel .jp-CodeCell",
                                     "cells => cells.map(c => c.querySelector("
                                     "'.jp-OutputArea')?.textContent.trim() ?? '')")


# ---------------------------------------------------------------- what a stored notebook says

def with_images(cells):
    return {i for i, c in enumerate(cells) if c.cell_type == "code"
            and any("image/png" in o.get("data", {}) for o in c.outputs)}


def with_stderr(cells):
    return {i for i, c in enumerate(cells) if c.cell_type == "code"
            and any(o.get("name") == "stderr" for o in c.outputs)}


def text_of(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def check_run(source, ran):
    """The saved run of the learner's notebook ``ran``, against its source chapter.

    Every code cell ran once, in order, with no error and no stderr the source lacks; before
    the exercises, the same cells draw pictures as in the source. Returns the cells with images.
    """
    stored = [c for c in nbformat.read(source, as_version=4).cells if not notebook_model.is_directive_cell(c)]
    cells = nbformat.read(ran, as_version=4).cells
    assert [c.get("id") for c in cells] == [c.get("id") for c in stored]
    errors = [(f"cell {c.get('id')}", o.get("ename"), o.get("evalue"))
              for c in cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert errors == []
    counts = [c.execution_count for c in cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1)), counts
    assert with_stderr(cells) <= with_stderr(stored), "a cell wrote to stderr"
    teaching = set(range(notebook_model.exercises_start(stored)))
    assert with_images(cells) & teaching == with_images(stored) & teaching
    return with_images(cells)


def check_exercises_not_attempted(ran, shown):
    """Every exercise's check says "not attempted", and every compare asks for a prediction,
    both in the saved notebook and in the page (``shown``: the page's output texts)."""
    cells = nbformat.read(ran, as_version=4).cells
    numbers = [c.metadata["nbgrader"]["grade_id"].removeprefix("exercise-").replace("-", ".")
               .upper() for c in cells if notebook_model.is_answer_cell(c)]  # exercise-a-1 is A.1
    checks = [c for c in cells if c.cell_type == "code" and re.search(r"\bq\d+\.check\(", c.source)]
    compares = [c for c in cells if c.cell_type == "code"
                and re.search(r"\bq\d+\.compare\(", c.source)]
    verdicts = [text_of(c).strip() for c in checks]
    assert len(checks) == len(numbers), (len(checks), numbers)
    assert all(re.fullmatch(r"Exercise \w+\.\d+: not attempted\. [^\n]+", v) for v in verdicts), \
        verdicts
    assert [v.split(":")[0] for v in verdicts] == [f"Exercise {n}" for n in numbers]
    assert all("make your prediction first" in text_of(c) and not c.outputs[1:]
               for c in compares), [c.outputs for c in compares]
    in_page = [line for text in shown for line in text.splitlines()]
    assert [line for line in in_page if "not attempted" in line] == verdicts
    assert sum("make your prediction first" in line for line in in_page) == len(compares)
    return numbers


# ---------------------------------------------------------------- one page, every notebook

@pytest.fixture(scope="module")
def one_page(browser, lab):
    with lab_page(browser, lab) as page:
        yield page


@pytest.fixture
def page(one_page, lab):
    """The shared page with the notebook closed after the test; reloaded by the next test if
    closing failed, so that one failure does not carry into the next notebook."""
    one_page.problems.clear()
    yield one_page
    notebook = one_page.locator(".jp-NotebookPanel").first
    try:
        with pytest.raises(PlaywrightTimeout):
            notebook.wait_for(state="detached", timeout=100)  # the wait can fail: it is open
        close_and_shut_down(one_page)
        notebook.wait_for(state="detached", timeout=WAIT)
    except Exception:
        one_page.goto("about:blank")
        raise
    finally:
        lab.shut_down_kernels()


def open_in_lab(page, lab, name):
    """The first notebook by its address; each later one from File > Open from Path…"""
    if page.url == "about:blank":
        return open_notebook(page, lab, name)
    menu(page, "File", "filebrowser:open-path")
    dialog = page.locator(".jp-Dialog")
    dialog.locator("input").fill(name)
    dialog.locator(".jp-mod-accept").click()
    wait_until_open(page)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_in_the_browser(page, lab, name, tmp_path):
    open_in_lab(page, lab, name)
    explorers = page.locator(".workbook-explorer")
    try:
        shown = run_all(page)
        save(page)
        source = lab.source / name if name != SCRATCH else lab.copy / name  # itself: no outputs
        plotted = check_run(source, lab.copy / name)  # names the error if one failed
        assert all(re.fullmatch(r"\[\d+\]:", p) for p in shown), shown
        check_exercises_not_attempted(lab.copy / name, outputs_in_page(page))
        images = loaded_images(page)
        assert len(images) >= len(plotted), (len(images), plotted)
        assert all(image["ok"] for image in images), images
        for index in range(explorers.count()):
            (tmp_path / str(index)).mkdir()
            check_explorer(explorers.nth(index), tmp_path / str(index))
        if name == SCRATCH:
            assert explorers.count() == 1
        assert page.problems == []
    finally:
        target = explorers if explorers.count() else page.locator(".jp-OutputArea-output img")
        shot(page, name, target)
