"""The learner's edition as a learner meets it, driven in headless Chromium (make test-browser).

Everything happens in a temporary copy of the working tree (its .venv a link to ours), so the
learner's copy, my-workbook/, is made there by `make lab` itself, never in the repository, and
nothing run or saved can touch notebooks/. The server is `make lab` run in that copy, unchanged;
only a Jupyter config file of ours (no browser, loopback, a token, no port retries) and the
JUPYTER_* folders in a temporary directory keep it from this user's settings.

The tests follow one learner, in order:

1. The first `make lab` makes my-workbook/ from the learner's edition and opens chapter 1 with
   the workbook's settings; the file browser shows the notebooks and the welcome README.
2. Chapter 5 runs Restart Kernel and Run All several times in a row (WORKBOOK_REPEATS,
   3 by default), each within REPEAT_TIMEOUT, on the legacy kernel websocket protocol; saved, it
   stays saved when its explorer steps and reopens with the explorers as stills. At the
   websocket, a frame on a connection the server has just replaced is read as sent.
3. In chapter 1 the learner types a right answer, a wrong one and an endless loop into three
   answer cells (CodeMirror, by keyboard), runs each with its check and reads the verdicts.
4. The typed answers survive a second `make lab`, an author's change to the chapter (only
   reported by the next `make lab`, which opens on the notice) and `make lab-update`: refused
   while the chapter's tab is open, then, once it is closed, keeping the answers, showing the
   change and keeping the learner's previous file in earlier-versions/. A reopened lab starts
   one kernel (chapter 1's), and closing a tab shuts its kernel down.

Every notebook's Restart Kernel and Run All Cells is test_every_notebook.py's, which make
test-browser runs beside this file, in a lab and a Chromium of its own.

Every wait reads what it waits for, and each kind of wait is shown failing once.

Screenshots go to build/browser/.
"""

import base64
import json
import os
import re
import secrets
import shlex
import shutil
import socket
import subprocess
import time
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from workbook.teaching.exercises.ch1 import q1, q2
from workbook.teaching.explorer import STATIC_NOTE

from course import notebook as notebook_model
from course.editions import learner
from explorer_replay import step_to
from labpage import (COPY, NOTEBOOKS, ROOT, WAIT, close_and_shut_down, digest, dirty, menu,
                     open_notebook, prompts, save, settle, shot)
from workbook_lab import WIDGET_VIEW  # what the lab's pre-save hook drops (jupyterlab/, installed by tools/venv)


RAN = """() => {
    const status = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) '
                                          + '.jp-Notebook-ExecutionIndicator')?.dataset.status;
    const shown = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) '
                                                + '.jp-CodeCell .jp-InputPrompt')]
        .map(prompt => prompt.textContent.trim());
    return status === 'idle' && shown.length > 0 && shown.every(p => /^\\[\\d+\\]:$/.test(p));
}"""


def wait_until_ran(page, timeout):
    """Wait (in the page) until the kernel is idle and every code cell shows its count."""
    page.wait_for_function(RAN, timeout=timeout * 1000, polling=200)


def show_files(page):
    """Open the file browser panel (a click on its tab when it is open would close it)."""
    tab = page.locator(".jp-SideBar .lm-TabBar-tab[data-id='filebrowser']")
    if "lm-mod-current" not in tab.get_attribute("class"):
        tab.click()
    listing = page.locator(".jp-DirListing-content .jp-DirListing-itemText")
    listing.first.wait_for(timeout=WAIT)
    return listing


# ---------------------------------------------------------------- a cell, as a learner edits it

def cell_in_page(page, path, cell_id, after=0):
    """The page's cell for the stored cell with this id, or the one ``after`` cells below it
    (every cell is in the page's DOM)."""
    ids = [cell.get("id") for cell in nbformat.read(path, as_version=4).cells]
    return page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").nth(ids.index(cell_id) + after)


def editor_text(cell):
    """What the cell's editor shows; the editor is made when the cell first comes into view."""
    cell.scroll_into_view_if_needed()
    cell.locator(".cm-content .cm-line").first.wait_for(timeout=WAIT)
    lines = cell.locator(".cm-content .cm-line").evaluate_all("ls => ls.map(l => l.textContent)")
    return "\n".join(lines).replace("\u00a0", " ")


def type_into(cell, lines):
    """Click into the cell's editor, select all, type the lines (the editor indents them)."""
    cell.scroll_into_view_if_needed()
    cell.locator(".cm-content").click()
    keyboard = cell.page.keyboard
    keyboard.press("Control+a")
    for number, line in enumerate(lines):
        if number:
            keyboard.press("Enter")
        keyboard.type(line.lstrip())


def run_cells(page, first, last, count):
    """Shift+Enter from ``first`` (the cell runs, the next one is selected) until ``last`` has
    run as the kernel's execution ``count``; return what ``last`` printed. The count tells this
    run's output from one saved earlier."""
    first.locator(".cm-content").click()
    page.keyboard.press("Shift+Enter")
    if last != first:
        page.keyboard.press("Shift+Enter")
    expect(last.locator(".jp-InputPrompt")).to_have_text(f"[{count}]:", timeout=WAIT)
    settle(page, timeout=60)
    return last.locator(".jp-OutputArea").inner_text().strip()


# ---------------------------------------------------------------- 1. the first make lab

def test_the_first_make_lab_makes_the_copy_and_opens_chapter_one(page, lab):
    said = lab.first_output
    assert f"Your copy of the workbook is {COPY}/: added {len(NOTEBOOKS)} notebooks" in said, said
    assert "newer version" not in said.lower()
    assert sorted(p.name for p in lab.copy.glob("*.ipynb")) == sorted(NOTEBOOKS)
    assert (lab.copy / learner.START).read_text() == learner.WELCOME
    page.goto(lab.page_url("/"))  # what `make lab` prints and opens
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=WAIT)
    opened = time.monotonic()
    assert page.url.split("?")[0].endswith(f"/lab/tree/{NOTEBOOKS[0]}")
    heading = page.locator(".jp-NotebookPanel-notebook .jp-RenderedHTMLCommon h1").first
    expect(heading).to_have_text(re.compile(r"^Chapter 1"), timeout=WAIT)
    # the table of contents is the open side panel, listing the chapter's headings
    toc = page.locator(".jp-SideBar .lm-TabBar-tab[data-id='table-of-contents']")
    assert "lm-mod-current" in toc.get_attribute("class")
    contents = page.locator(".jp-TableOfContents-content")
    expect(contents).to_have_text(re.compile(r"^\s*Chapter 1"), timeout=WAIT)
    # settings from jupyterlab/overrides.json: defaults the server reports, and their effects
    notification = lab.api("/lab/api/settings/@jupyterlab/apputils-extension:notification")
    defaults = {k: v["default"] for k, v in notification["schema"]["properties"].items()}
    assert (defaults["fetchNews"], defaults["checkForUpdates"]) == ("false", False)
    widgets = lab.api("/lab/api/settings/@jupyter-widgets/jupyterlab-manager:plugin")
    assert widgets["schema"]["properties"]["saveState"]["default"] is False  # see workbook_lab.py
    tracker = lab.api("/lab/api/settings/@jupyterlab/notebook-extension:tracker")
    assert tracker["schema"]["properties"]["kernelShutdown"]["default"] is True
    assert page.locator(".lm-TabBar-tab[data-id='extensionmanager.main-view']").count() == 0
    # jupyterlab/page_config.json (tools/venv): no build check, which started node at every load
    wanted = json.loads((ROOT / "jupyterlab" / "page_config.json").read_text())
    data = json.loads(page.locator("#jupyter-config-data").text_content())
    assert wanted and {key: data.get(key) for key in wanted} == wanted
    shot(page, "start")
    # the learner's edition: the first exercise is a blank, with no stored verdict below it
    path = lab.copy / NOTEBOOKS[0]
    assert editor_text(cell_in_page(page, path, RIGHT[0])) == "wide_fact = ____"
    assert cell_in_page(page, path, RIGHT[0]).locator(".cm-lineNumbers").count() == 1
    assert cell_in_page(page, path, RIGHT[0], after=1).locator(".jp-OutputArea-output").count() == 0
    # the file browser: the notebooks and the welcome README, nothing of the machinery
    listing = show_files(page)
    expect(listing).to_have_count(len(NOTEBOOKS) + 1, timeout=WAIT)
    assert sorted(listing.all_inner_texts()) == sorted(NOTEBOOKS + [learner.START])
    shot(page, "files")
    page.wait_for_timeout(max(0, 2000 - 1000 * (time.monotonic() - opened)))
    assert page.locator(".jp-toast-message, .Toastify__toast").count() == 0  # no news question
    # chapter 1 of the copy links to the how-to file, which opens rendered beside it
    page.locator(".jp-NotebookPanel-notebook .jp-RenderedHTMLCommon a", has_text=learner.START).first.click()
    page.locator(".jp-RenderedMarkdown", has_text="Your copy of the workbook").first.wait_for(timeout=WAIT)
    page.goto(lab.page_url(f"/lab/tree/{learner.START}?reset"))
    # the welcome file opens rendered (jupyterlab/overrides.json), heading the file browser
    # (after a reload the tab exists before its text does, so wait for the text, not the tab)
    current = page.locator(".jp-MainAreaWidget:not(.lm-mod-hidden) .jp-RenderedMarkdown")
    expect(current.first).to_contain_text("Your copy of the workbook", timeout=WAIT)
    expect(show_files(page).first).to_have_text(learner.START, timeout=WAIT)
    shot(page, "readme")
    assert page.problems == []


# ---------------------------------------------------------------- 2b. chapter 5, again and again

CHAPTER_5 = next(name for name in NOTEBOOKS if name.startswith("05-"))
REPEATS = int(os.environ.get("WORKBOOK_REPEATS", "3"))  # Restart Kernel and Run All, in a row
REPEAT_TIMEOUT = 240  # seconds for one run; it takes 10 to 30 s here, the hang seen lasted >300


def kernel_frames(page):
    """What the page sends on its kernels' websockets, appended as it goes."""
    frames = []
    page.on("websocket", lambda ws: "/api/kernels/" in ws.url
            and ws.on("framesent", lambda payload: frames.append(payload)))
    return frames


def test_chapter_five_runs_all_again_and_again_without_a_hang(page, lab):
    """Issue 21, item 2: Restart Kernel and Run All, several times in a row, each must end with
    the kernel idle and every cell run. The wait reads the page: it fails on a hang, as it
    does here at the start, when no cell has run."""
    frames = kernel_frames(page)
    open_notebook(page, lab, CHAPTER_5)
    menu(page, "Edit", "editmenu:clear-all")  # no counts shown (an earlier test saved a run)
    with pytest.raises(PlaywrightTimeout):
        wait_until_ran(page, timeout=2)  # the wait can fail: nothing shows it has run
    explorers = page.locator(".workbook-explorer")
    seen = len(lab.log.read_text())
    for attempt in range(REPEATS):
        menu(page, "Run", "runmenu:restart-and-run-all")
        dialog = page.locator(".jp-Dialog")
        dialog.wait_for(timeout=WAIT)
        dialog.locator(".jp-mod-accept").click()
        # the restart first clears the counts (the page waits for that), then the run fills them
        page.wait_for_function("() => [...document.querySelectorAll("
                               "'.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt')]"
                               ".some(p => !/^\\[\\d+\\]:$/.test(p.textContent.trim()))",
                               timeout=WAIT, polling=100)
        try:
            wait_until_ran(page, timeout=REPEAT_TIMEOUT)
        except PlaywrightTimeout:
            shot(page, f"hang-{attempt + 1}")
            pytest.fail(f"run {attempt + 1} of {REPEATS} still not done after {REPEAT_TIMEOUT}s: "
                        f"{prompts(page)}\n{lab.log.read_text()[seen:][-3000:]}")
        expect(explorers.first).to_be_visible(timeout=WAIT)
    log = lab.log.read_text()[seen:]
    assert "struct.error" not in log and "Uncaught exception" not in log, log[-3000:]
    # the legacy protocol (tools/lab): the page sends JSON text, never a v1 binary frame
    assert frames and all(isinstance(frame, str) for frame in frames)
    # item 6: running marks the notebook unsaved; saved, stepping an explorer does not
    save(page)
    assert not dirty(page)
    slider = explorers.first.get_by_role("slider", name="step")
    slider.focus()
    step_to(explorers.first, "End", int(slider.get_attribute("max")))
    page.wait_for_timeout(1000)  # a change would mark the tab at once; give it a second
    assert not dirty(page)
    # reopened (same layout, kernel kept): not unsaved, every explorer shown as its still
    shown = explorers.count()
    open_notebook(page, lab, CHAPTER_5, reset=False)
    stills = page.locator(".jp-NotebookPanel .jp-OutputArea-output img")
    expect(stills.first).to_be_visible(timeout=WAIT)
    assert page.locator(".jp-OutputArea-output", has_text="Error displaying widget").count() == 0
    page.wait_for_timeout(1000)
    assert not dirty(page)
    saved = nbformat.read(lab.copy / CHAPTER_5, as_version=4)
    assert "widgets" not in saved.metadata
    bundles = [o.get("data", {}) for c in saved.cells if c.cell_type == "code" for o in c.outputs]
    assert not any(WIDGET_VIEW in data for data in bundles)
    assert sum(STATIC_NOTE in data.get("text/html", "") for data in bundles) == shown > 0
    assert page.problems == []


def test_a_frame_on_a_replaced_connection_is_read_as_sent(lab):
    """The sequence behind item 2's error, at the websocket: a second connection with the same
    session replaces the first ("Replacing stale connection"), and a frame the client had sent
    on the first arrives after that. On the v1 protocol jupyter_server read it with the legacy
    decoder and failed (struct.error ... 402653184 bytes); the lab speaks legacy, so it reads
    what was sent."""
    kernel = lab.api("/api/kernels", method="POST")["id"]
    session = secrets.token_hex(16)
    path = f"/api/kernels/{kernel}/channels?session_id={session}"
    seen = len(lab.log.read_text())
    first, protocol = raw_websocket(lab, path, "v1.kernel.websocket.jupyter.org")
    assert protocol is None  # the server chose the legacy protocol over the v1 asked for
    second, _ = raw_websocket(lab, path, "v1.kernel.websocket.jupyter.org")
    message = {"header": {"msg_id": secrets.token_hex(8), "msg_type": "kernel_info_request",
                          "username": "", "session": session, "date": "", "version": "5.3"},
               "parent_header": {}, "metadata": {}, "content": {}, "channel": "shell"}
    send_frame(first, json.dumps(message))
    with pytest.raises(AssertionError):
        wait_for_log(lab, "a line no server writes", seen, timeout=0.5)  # the wait can fail
    wait_for_log(lab, "Replacing stale connection", seen)
    first.close()
    second.close()
    # both closed, the server keeps the kernel's messages for the session: it has read the
    # first socket to its end (on v1 the error comes before this line)
    wait_for_log(lab, "Starting buffering", seen)
    log = lab.log.read_text()[seen:]
    assert "struct.error" not in log and "Uncaught exception" not in log, log[-3000:]
    lab.api(f"/api/kernels/{kernel}", method="DELETE")


def wait_for_log(lab, text, seen, timeout=10):
    """Wait until the server's log, past its first ``seen`` characters, has ``text``."""
    deadline = time.monotonic() + timeout
    while text not in lab.log.read_text()[seen:]:
        assert time.monotonic() < deadline, f"no {text!r} in:\n{lab.log.read_text()[seen:][-3000:]}"
        time.sleep(0.1)


def raw_websocket(lab, path, protocol):
    """A websocket opened by hand, which reads nothing: what it sends is sent whatever the
    server says meanwhile (as a browser's frames already on their way are)."""
    host, port = lab.url.removeprefix("http://").split(":")
    connection = socket.create_connection((host, int(port)), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    connection.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                        f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {protocol}\r\n"
                        f"Authorization: token {lab.token}\r\n\r\n").encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += connection.recv(1)
    head = answer.decode()
    assert head.startswith("HTTP/1.1 101"), head
    chosen = re.search(r"^Sec-WebSocket-Protocol: *(\S+)", head, re.M | re.I)
    return connection, chosen and chosen[1]


def send_frame(connection, text):
    """One masked text frame, as a browser sends it."""
    payload, mask = text.encode(), os.urandom(4)
    size = len(payload)
    length = bytes([0x80 | size]) if size < 126 else bytes([0x80 | 126]) + size.to_bytes(2, "big")
    connection.sendall(bytes([0x81]) + length + mask
                       + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


# ---------------------------------------------------------------- 3. answers, typed and judged

CHAPTER = NOTEBOOKS[0]
IMPORTS = "c01-030"  # the exercise section's own import cell
RIGHT = ("c01-032", ['wide_fact = {"schema": 1, "text": "\\U0001F600" * 165, "source": "\\U0001F600", '
                     '"reviewed": False}'])
WRONG = ("c01-035", ['full_checkpoint = {"schema": 1, "step": 2, "items": ["x" * 100] * 8}'])
ENDLESS = ("c01-038", ["def to_key(title):", "    while True:", "        pass"])


def value_of(answer, name):
    """What the typed answer cell assigns to ``name``, worked out here as the kernel would."""
    namespace = {}
    exec("\n".join(answer[1]), namespace)
    return namespace[name]


def test_typed_answers_get_their_verdicts_in_the_page(page, lab):
    path = lab.copy / CHAPTER
    open_notebook(page, lab, CHAPTER)
    imports = cell_in_page(page, path, IMPORTS)  # a learner opening the chapter at its exercises
    run_cells(page, imports, imports, 1)
    verdicts, seconds = {}, {}
    for number, (cell_id, lines) in enumerate((RIGHT, WRONG, ENDLESS)):
        answer_cell = cell_in_page(page, path, cell_id)
        type_into(answer_cell, lines)
        assert editor_text(answer_cell) == "\n".join(lines)  # as typed, indented by the editor
        started = time.monotonic()
        verdicts[cell_id] = run_cells(page, answer_cell, cell_in_page(page, path, cell_id, after=1),
                                      3 + 2 * number)
        seconds[cell_id] = time.monotonic() - started
        lab.typed[cell_id] = "\n".join(lines)
    shot(page, "answers", cell_in_page(page, path, WRONG[0]))
    # the page says what the checker says of the same answers
    assert verdicts[RIGHT[0]] == str(q1.verdict(value_of(RIGHT, "wide_fact")))
    assert verdicts[RIGHT[0]].startswith("Exercise 1.1: correct: ")
    assert verdicts[WRONG[0]] == str(q2.verdict(value_of(WRONG, "full_checkpoint")))
    assert verdicts[WRONG[0]].startswith("Exercise 1.2: not yet: ")
    assert verdicts[ENDLESS[0]].startswith(
        "Exercise 1.3: not yet: your answer was still running after 5 seconds"), verdicts
    # the real kernel's alarm stopped the loop at the limit, not before and not much later
    assert 5 <= seconds[ENDLESS[0]] < 30, seconds
    save(page)
    cells = nbformat.read(path, as_version=4).cells
    assert {c.get("id"): c.source for c in cells if c.get("id") in lab.typed} == lab.typed
    ran = [c for c in cells[notebook_model.exercises_start(cells):]
           if c.cell_type == "code" and c.execution_count]
    assert len(ran) == 7  # the import cell, three answers, three checks
    assert [o for c in ran for o in c.outputs if o.output_type == "error"
            or o.get("name") == "stderr"] == []  # a verdict, never a traceback
    assert page.problems == []


# ---------------------------------------------------------------- 4. the copy survives

CHANGED_CELL = "c01-029"  # the "## Exercises" cell
SENTENCE = "An author added this sentence after the learner's copy was made."


def test_the_copy_survives_make_lab_again_and_a_changed_chapter(page, lab):
    if len(lab.typed) != 3:
        pytest.fail("needs the answers typed by test_typed_answers_get_their_verdicts_in_the_page")
    path = lab.copy / CHAPTER
    mine = digest(lab.copy)
    # a second make lab: nothing added, nothing overwritten
    lab.stop()
    said = lab.start()
    assert f"Your copy of the workbook is {COPY}/ (your work stays there)." in said, said
    assert "added" not in said and "newer version" not in said.lower(), said
    assert digest(lab.copy) == mine
    # an author adds a sentence to the chapter: the next make lab offers it and changes nothing
    source = nbformat.read(lab.source / CHAPTER, as_version=4)
    changed = next(cell for cell in source.cells if cell.get("id") == CHANGED_CELL)
    changed.source += f"\n\n{SENTENCE}"
    nbformat.write(source, lab.source / CHAPTER)
    lab.stop()
    said = lab.start()
    assert re.search(f"A newer version of {re.escape(CHAPTER)} is available.*make lab-update",
                     said), said
    offered = digest(lab.copy)
    notice = offered.pop(learner.UPDATES, None)  # the offer, where the file browser shows it first
    assert notice and CHAPTER in (lab.copy / learner.UPDATES).read_text()
    assert offered == mine
    # ... and where the lab opens: the notice, rendered, linking to the chapter
    page.goto(lab.page_url("/"))
    shown = page.locator(".jp-MainAreaWidget:not(.lm-mod-hidden) .jp-RenderedMarkdown")
    expect(shown.first).to_contain_text("Newer chapters are available", timeout=WAIT)
    assert page.url.split("?")[0].endswith(f"/lab/tree/{learner.UPDATES}")
    shot(page, "update-notice")
    # make lab-update while the chapter's tab is open: refused, the chapter untouched (saving
    # that tab would have written the old version back over the new one)
    shown.first.get_by_role("link", name=CHAPTER).click()
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell", timeout=WAIT)
    # open as make lab-update sees it: its kernel's session (cells show before the kernel starts)
    wait_for_kernels(lab, lambda paths: CHAPTER in paths)
    said = lab.update(refused=True)
    assert f"Not updated, open in JupyterLab: {CHAPTER}" in said, said
    assert own(digest(lab.copy)) == own(offered | {learner.UPDATES: notice})
    # closed (File > Close and Shut Down Notebook), its kernel goes and the update goes ahead
    with pytest.raises(AssertionError):
        wait_until_closed(lab, CHAPTER, timeout=0.5)  # the wait can fail: it is still open
    close_and_shut_down(page)
    wait_until_closed(lab, CHAPTER)
    # make lab-update: the new sentence in, the typed answers kept, the old file set aside
    earlier = path.read_bytes()
    said = lab.update()
    assert f"your answers kept: {CHAPTER}" in said, said
    kept = lab.copy / learner.EARLIER / f"{Path(CHAPTER).stem}.1.ipynb"
    assert kept.read_bytes() == earlier
    now = digest(lab.copy)
    # the offer is taken: its notice now says every chapter is up to date (a tab left open on it
    # would otherwise go on offering the update)
    assert "All chapters are up to date" in (lab.copy / learner.UPDATES).read_text()
    assert {name for name in own(now) if now[name] != mine.get(name)} == {
        CHAPTER, learner.MANIFEST, learner.UPDATES, str(kept.relative_to(lab.copy))}
    # what the learner sees in the lab that is still running
    open_notebook(page, lab, CHAPTER)
    text = cell_in_page(page, path, CHANGED_CELL)
    text.scroll_into_view_if_needed()
    expect(text).to_contain_text(SENTENCE, timeout=WAIT)  # a markdown cell renders in view
    shown = {cell_id: editor_text(cell_in_page(page, path, cell_id)) for cell_id in lab.typed}
    assert shown == lab.typed
    shot(page, "updated", text)
    # the folder was made outside the lab, so it appears at the file browser's next refresh
    expect(show_files(page).get_by_text(learner.EARLIER, exact=True)).to_be_visible(timeout=WAIT)
    shot(page, "after-update")
    assert page.problems == []


def own(files):
    """The files of a digest that are the learner's, not JupyterLab's checkpoints of them (made
    when a file opens)."""
    return {name: value for name, value in files.items()
            if not name.startswith(".ipynb_checkpoints/")}


def wait_until_closed(lab, name, timeout=120):
    """Wait until the server holds no kernel session for ``name`` and its saved layout no tab."""
    deadline = time.monotonic() + timeout
    while True:
        sessions = {session["path"] for session in lab.api("/api/sessions")}
        layout = lab.api("/lab/api/workspaces/default").get("data", {})
        tabs = {entry.get("data", {}).get("path") for key, entry in layout.items()
                if key.split(":")[0] in ("notebook", "editor", "markdownviewer")}
        if name not in sessions | tabs:
            return
        assert time.monotonic() < deadline, f"{name} still open: {sessions}, {tabs}"
        time.sleep(0.2)


def test_reopened_lab_starts_one_kernel_and_a_closed_tab_stops_its_own(page, lab):
    """Issue 21, item 7: closing a chapter's tab shuts its kernel down, and the next make lab
    opens chapter 1 alone rather than every tab of last time, each with a kernel."""
    for name in NOTEBOOKS[:3]:
        page.goto(lab.page_url(f"/lab/tree/{name}"))
        page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell", timeout=WAIT)
        wait_for_kernels(lab, lambda paths: name in paths)
    with pytest.raises(AssertionError):
        wait_for_kernels(lab, lambda paths: not paths, timeout=0.5)  # the wait can fail
    close_and_shut_down(page)  # the last one opened
    wait_for_kernels(lab, lambda paths: NOTEBOOKS[2] not in paths and NOTEBOOKS[1] in paths)
    page.close()
    lab.stop()
    lab.start()
    opened = lab.api("/lab/api/workspaces/default")["data"]["layout-restorer:data"]["main"]
    assert opened["dock"] is None  # no tab of last time comes back
    browser_page = page.context.new_page()
    browser_page.goto(lab.page_url("/"))
    browser_page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=WAIT)
    wait_for_kernels(lab, lambda paths: paths == [NOTEBOOKS[0]])
    browser_page.wait_for_timeout(2000)  # a restored tab would have asked for its kernel by now
    assert [s["path"] for s in lab.api("/api/sessions")] == [NOTEBOOKS[0]]


def wait_for_kernels(lab, ready, timeout=120):
    """Wait until ``ready`` holds for the paths of the server's kernel sessions."""
    deadline = time.monotonic() + timeout
    while not ready(paths := sorted(s["path"] for s in lab.api("/api/sessions"))):
        assert time.monotonic() < deadline, f"kernels for {paths}"
        time.sleep(0.2)


def test_make_test_reads_nothing_of_the_learners_copy(lab):
    """The learner's copy, now holding typed wrong answers and an endless loop, plus the worst a
    learner could leave in it: make test's own command collects exactly what the source holds
    and never imports a file of the copy."""
    if len(lab.typed) != 3:
        pytest.fail("needs the answers typed by test_typed_answers_get_their_verdicts_in_the_page")
    (lab.copy / "02-visibility.ipynb").write_text("{ not json")
    (lab.copy / "conftest.py").write_text("raise SystemExit('the learner copy was imported')\n")
    (lab.copy / "test_mine.py").write_text("def test_mine():\n    assert False\n")
    (lab.copy / "notebooks").mkdir(exist_ok=True)
    shutil.copy(lab.copy / CHAPTER, lab.copy / "notebooks" / CHAPTER)
    environment = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    shown = subprocess.run(["make", "--no-print-directory", "-n", "test"], cwd=lab.tree, env=environment,
                           capture_output=True, text=True, check=True).stdout
    (command,) = [shlex.split(line)[3:] for line in shown.splitlines() if " -m pytest " in line]
    folders = [argument for argument in command if argument.startswith("tests/") and "." not in argument]
    assert folders and "notebooks" in command
    assert all((lab.tree / folder).is_dir() for folder in folders), folders
    assert not any(COPY in argument for argument in command)
    at = command.index("-n")  # make test's workers and how it hands them tests: not for collecting
    del command[at:at + 2]
    command.remove("--dist")
    command.remove("loadscope")
    at = command.index("-k")  # make test's half ("not postgres"): with make test-postgres's, all of it
    del command[at:at + 2]
    result = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "pytest",
                             "--collect-only", "-q", "-p", "no:xdist", *command],
                            cwd=lab.tree, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    items = [line for line in result.stdout.splitlines() if "::" in line]
    assert items and not any(COPY in item for item in items)
    assert {item.split("::")[0] for item in items if item.startswith("notebooks/")} == \
        {f"notebooks/{p.name}" for p in lab.source.glob("*.ipynb")}
