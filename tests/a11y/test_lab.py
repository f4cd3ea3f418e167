"""axe's WCAG 2.0/2.1 A and AA rules on what the learner's JupyterLab shows for chapter 5.

The real `make lab` runs in a temporary copy of the tree (the browser test's `lab` fixture), and
chapter 5 of the learner's copy is checked twice: as it opens, with the outputs it stores, and
after Restart Kernel and Run All Cells, with the live time explorer stepped by the keyboard.
Every element axe flags is sorted by whose it is:

- the workbook's own: in a cell's output (the figures, tables and the explorer) or in the
  chapter's rendered markdown;
- shown by the workbook's settings (jupyterlab/): the table of contents it opens and the line
  numbers it turns on;
- JupyterLab's: everything else (menus, toolbars, prompts, the editor, side panels).

The first two must be none. JupyterLab's are listed in build/a11y/lab.json and printed:
they are upstream's to fix.
"""
import re

import pytest
from playwright.sync_api import expect

from axe import count, run_axe, save, summary
from labpage import WAIT, open_notebook, run_all

CHAPTER = "05-recovery-and-timelines.ipynb"
OWNERS = {"workbook": [".jp-OutputArea-output", ".jp-RenderedMarkdown", ".jp-MarkdownOutput",
                       ".workbook-explorer"],
          "settings": [".jp-TableOfContents", ".cm-gutters", ".cm-lineNumbers"]}
REPORT = {}


def sort_by_owner(page, result):
    """{owner: {rule: [nodes]}} for axe's violations; owner is "workbook", "settings" or
    "jupyterlab"."""
    found = {"workbook": {}, "settings": {}, "jupyterlab": {}}
    for violation in result["violations"]:
        for node in violation["nodes"]:
            owner = page.evaluate("""([target, owners]) => {
                const element = document.querySelector(target[target.length - 1]);
                const mine = Object.entries(owners).find(([_, selectors]) =>
                    element && selectors.some(selector => element.closest(selector)));
                return mine ? mine[0] : "jupyterlab";
            }""", [node["target"], OWNERS])
            entry = {"impact": violation["impact"], "help": violation["help"],
                     "target": node["target"], "html": node["html"], "summary": node["summary"]}
            found[owner].setdefault(violation["id"], []).append(entry)
    return found


def check(page, when):
    result = run_axe(page)
    owners = sort_by_owner(page, result)
    REPORT[when] = {"axe": result["version"], "elements": count(result), "rules": summary(result),
                    **{who: {rule: len(nodes) for rule, nodes in rules.items()}
                       for who, rules in owners.items()},
                    "nodes": owners}
    save("lab", REPORT)
    print(f"\n{when}: {count(result)} elements; the workbook's own: {REPORT[when]['workbook']}; "
          f"its settings': {REPORT[when]['settings']}; JupyterLab's: {REPORT[when]['jupyterlab']}")
    return owners


def figures_shown(page, at_least):
    """Wait until the chapter's figures are in the page, each with its alt."""
    pictures = page.locator(".jp-NotebookPanel .jp-OutputArea-output img[alt]")
    expect(pictures.nth(at_least - 1)).to_be_attached(timeout=WAIT)
    return pictures


def test_chapter_five_as_it_opens(page, lab):
    open_notebook(page, lab, CHAPTER)
    figures_shown(page, 4)  # the teaching section's three timelines and the explorer's still
    expect(page.locator(".jp-NotebookPanel details.workbook-description").first) \
        .to_be_attached(timeout=WAIT)
    owners = check(page, "as opened")
    assert owners["workbook"] == owners["settings"] == {}, owners


def test_chapter_five_run_with_the_live_explorer(page, lab):
    open_notebook(page, lab, CHAPTER)
    run_all(page)
    explorer = page.locator(".jp-NotebookPanel .workbook-explorer").first
    header = explorer.locator(".workbook-explorer-status b")
    status = explorer.locator("[role=status]")
    expect(header).to_have_text(re.compile(r"^step 11 of 13 · now = 108 · "), timeout=WAIT)
    slider = explorer.get_by_role("slider", name="step")
    slider.focus()
    slider.press("ArrowRight")
    expect(header).to_have_text(re.compile(r"^step 12 of 13 · now = 108 · purge orchard returns"),
                                timeout=WAIT)
    # the live region leads with what changed; the step is the slider's value text, not its own
    expect(status).to_have_text(re.compile(r"^orchard / fact / preference: row removed from "
                                           r"records \(purge orchard returns 1 removed, now 108\)"),
                                timeout=WAIT)
    assert "step 12" not in status.text_content() and "→" not in status.text_content()
    expect(slider).to_have_attribute("aria-valuetext", "step 12 of 13", timeout=WAIT)
    expect(explorer.locator("img")).to_have_attribute(
        "alt", re.compile(r"“The demonstration” with the cursor at step 12 of 13"), timeout=WAIT)
    # pressed faster than the kernel answers, the slider's last step is the one announced
    for _ in range(3):
        slider.press("ArrowLeft")
    expect(header).to_have_text(re.compile(r"^step 9 of 13 · "), timeout=WAIT)
    expect(status).to_have_text(re.compile(r"get harbour / fact / preference returns None, now 104"),
                                timeout=WAIT)
    figures_shown(page, 4)  # the exercise 5.1 picture waits for a prediction
    owners = check(page, "after Run All, explorer at step 12")
    assert owners["workbook"] == owners["settings"] == {}, owners
