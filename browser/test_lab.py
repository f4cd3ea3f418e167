"""JupyterLab as a learner meets it, driven in headless Chromium (make test-browser).

The server is `make lab`'s own command (scripts/lab) with --no-browser, a free loopback port
and a token of ours, serving the chapters of a temporary copy of the working tree (chapters
may read ../tests) and keeping its layout and settings in temporary folders, so autosave and
checkpoints can never touch the repository.

For each chapter present: open it, clear its outputs, run Run > Restart Kernel and Run All
Cells…, wait until every cell has run and the kernel is idle, save it (into the copy) and
check that every code cell ran in order with no error output, that the chapters whose stored
outputs hold plots show them as loaded images, and that every time explorer on the page
steps through its run showing what the store itself answers. A scratch notebook with two
explorers makes sure the explorer is covered even in chapters that do not use it yet.
Screenshots go to build/browser/.
"""

import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import sync_playwright

from workbook.store import Conflict, connect, forget, get, purge, put
from workbook.timeline import checkpoint, fact

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb")) + ["appendix-postgres.ipynb"]
SCRATCH = "explorer-check.ipynb"
SHOTS = ROOT / "build" / "browser"
CHROMIUM = os.environ.get("WORKBOOK_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-default-apps"]
RUN_TIMEOUT = 180  # seconds for one chapter's Restart Kernel and Run All Cells
WAIT = 60_000  # milliseconds for the page to show something
# Uncaught page errors fail a test, except a restart cancelling the kernel's pending requests.
BENIGN = re.compile(r"Canceled future for \w+ message before replies were done")


def test_chapter_one_is_present():
    assert CHAPTERS and CHAPTERS[0].startswith("01-"), CHAPTERS


# ---------------------------------------------------------------- the server

def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def digest(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file()}


def scratch_notebook(path):
    """Two explorers: the spec demo (reopen, conflict, purge, forget) and a clock moving back."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
                    "from workbook.explorer import explore\n"
                    "from workbook.timeline import clock_backwards_scenario, demo_scenario"),
                nbformat.v4.new_code_cell("explore(demo_scenario(), order=5)"),
                nbformat.v4.new_code_cell("explore(clock_backwards_scenario())")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nbformat.write(nb, path)


class Lab:
    def __init__(self, url, token, notebooks, log):
        self.url, self.token, self.notebooks, self.log = url, token, notebooks, log

    def api(self, path, method="GET"):
        request = urllib.request.Request(f"{self.url}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def page_url(self, path):
        return f"{self.url}{path}{'&' if '?' in path else '?'}token={self.token}"

    def shut_down_kernels(self):
        for session in self.api("/api/sessions"):
            self.api(f"/api/sessions/{session['id']}", method="DELETE")


@pytest.fixture(scope="session")
def lab():
    before = digest(ROOT / "notebooks")
    folder = Path(tempfile.mkdtemp(prefix="workbook-browser-"))
    # a copy of the working tree, not only of notebooks/: a chapter may read ../tests
    shutil.copytree(ROOT, folder / "repo", symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", ".hypothesis", "mutants", "__pycache__", ".pytest_cache",
        "*.egg-info", ".ipynb_checkpoints"))
    notebooks, state = folder / "repo" / "notebooks", folder / "state"
    scratch_notebook(notebooks / SCRATCH)
    env = dict(os.environ,
               WORKBOOK_NOTEBOOKS=str(notebooks), WORKBOOK_LAB_STATE=str(state),
               # nothing from this user's ~/.jupyter or ~/.ipython, nothing written there
               JUPYTER_CONFIG_DIR=str(state / "config"), JUPYTER_DATA_DIR=str(state / "data"),
               JUPYTER_RUNTIME_DIR=str(state / "runtime"), IPYTHONDIR=str(state / "ipython"),
               JUPYTERLAB_SETTINGS_DIR=str(state / "user-settings"),
               JUPYTER_PLATFORM_DIRS="1")
    port, token = free_port(), secrets.token_hex(16)
    log = state / "server.log"
    state.mkdir()
    with open(log, "w") as out:
        server = subprocess.Popen(
            [str(ROOT / "scripts" / "lab"), "--no-browser", f"--port={port}",
             "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
             f"--IdentityProvider.token={token}"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    running = Lab(f"http://127.0.0.1:{port}", token, notebooks, log)
    saved = {}
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                running.api("/api/status")
                break
            except (urllib.error.URLError, ConnectionError):
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
        assert f"Serving notebooks from local directory: {notebooks}" in log.read_text()
        yield running
        saved = digest(notebooks)
        assert (notebooks / ".ipynb_checkpoints").is_dir()  # the saves' checkpoints went here
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # our own session: the server and its kernels
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        shutil.rmtree(folder, ignore_errors=True)
    # Nothing of this run reached notebooks/. (Compared with what this run saved rather than
    # with the files as they were, so that an author saving a chapter meanwhile is no failure.)
    now = digest(ROOT / "notebooks")
    written = [name for name, value in now.items()
               if value != before.get(name) and value == saved.get(name)]
    assert written == [], f"the browser test wrote {written} into notebooks/"


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/install-browser")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                              headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, lab):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())  # "leave this page?" on a dirty notebook
    problems = []
    page.on("pageerror", lambda error: None if BENIGN.search(str(error))
            else problems.append(str(error)))
    page.problems = problems
    yield page
    context.close()
    lab.shut_down_kernels()


# ---------------------------------------------------------------- JupyterLab, by its UI

def menu(page, title, command):
    """Click a main-menu item: the menu by its title, the item by its command id."""
    page.locator(".lm-MenuBar-item", has_text=re.compile(f"^{title}$")).click()
    page.locator(f".lm-Menu-item[data-command='{command}']").click()


def open_notebook(page, lab, name, reset=True):
    page.goto(lab.page_url(f"/lab/tree/{name}" + ("?reset" if reset else "")))
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=WAIT)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=WAIT)


def prompts(page):
    return page.eval_on_selector_all(".jp-NotebookPanel .jp-CodeCell .jp-InputPrompt",
                                     "cells => cells.map(c => c.textContent.trim())")


def run_all(page):
    """Edit > Clear Outputs of All Cells, then Run > Restart Kernel and Run All Cells…"""
    menu(page, "Edit", "editmenu:clear-all")
    assert all(p in ("[ ]:", "") for p in prompts(page))
    for attempt in range(2):  # a click while the page is still settling can be lost: retry once
        menu(page, "Run", "runmenu:restart-and-run-all")
        dialog = page.locator(".jp-Dialog")
        dialog.wait_for(timeout=WAIT)
        assert "Restart Kernel?" in dialog.inner_text()
        dialog.locator(".jp-mod-accept").click()
        started = time.monotonic() + 30
        while time.monotonic() < started and all(p in ("[ ]:", "") for p in prompts(page)):
            time.sleep(0.2)
        if not all(p in ("[ ]:", "") for p in prompts(page)):
            break
    deadline, quiet = time.monotonic() + RUN_TIMEOUT, 0
    while quiet < 3:  # idle with nothing queued, three looks in a row
        status = page.get_attribute(".jp-Notebook-ExecutionIndicator", "data-status")
        shown = prompts(page)
        busy = status != "idle" or any("*" in p for p in shown)
        quiet = 0 if busy else quiet + 1
        assert time.monotonic() < deadline, f"still running after {RUN_TIMEOUT}s: {shown}"
        time.sleep(0.4)
    return shown


def save(page):
    menu(page, "File", "docmanager:save")
    page.wait_for_function(
        "() => !document.querySelector('.lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-dirty')",
        timeout=WAIT)


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


def shot(page, name, target=None):
    SHOTS.mkdir(parents=True, exist_ok=True)
    if target is not None and target.count():
        target.first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / f"{Path(name).stem}.png"))


# ---------------------------------------------------------------- what a stored notebook says

def code_cells(path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def expects_error(cell):
    return "raises-exception" in cell.metadata.get("tags", [])


def with_images(cells):
    return [i for i, c in enumerate(cells)
            if any("image/png" in o.get("data", {}) for o in c.outputs)]


def with_stderr(cells):
    return [i for i, c in enumerate(cells)
            if any(o.get("name") == "stderr" for o in c.outputs)]


def check_run(stored, ran):
    """The saved run: every code cell ran once, in order, with no error and no new stderr."""
    stored, ran = code_cells(stored), code_cells(ran)
    assert len(ran) == len(stored)
    errors = [(f"code cell {i + 1}", o.get("ename"), o.get("evalue")) for i, c in enumerate(ran)
              if not expects_error(c) for o in c.outputs if o.output_type == "error"]
    assert errors == []
    counts = [c.execution_count for c in ran]
    assert counts == list(range(1, len(ran) + 1)), counts
    assert set(with_stderr(ran)) <= set(with_stderr(stored)), "a cell wrote to stderr"
    assert with_images(ran) == with_images(stored)  # the same cells draw pictures
    return with_images(ran)


# ---------------------------------------------------------------- the explorer against the store

HEADER = re.compile(r"order (\d+) of (\d+) · now = (\d+)(?: \(clock pass \d+\))? · (.+) → (.+)")
IDENTITY = r"([a-z][a-z0-9-]*) / ([a-z]+) / ([a-z][a-z0-9-]*)"


def read_explorer(explorer):
    return explorer.evaluate("""root => {
        const html = root.querySelector('.widget-html-content');
        const rows = table => [...table.querySelectorAll('tbody tr')]
            .map(tr => [...tr.cells].map(td => td.textContent));
        const tables = [...html.querySelectorAll('table')].map(rows);
        return {header: html.querySelector('b').textContent, gets: tables[0],
                rows: tables[1], image: root.querySelector('img').src};
    }""")


def value_for(kind):
    return checkpoint(0) if kind == "checkpoint" else fact()


def answer(db, path, now, operation):
    """Do what the header says with the store's own functions; return the connection and outcome."""
    try:
        if m := re.fullmatch(f"put {IDENTITY} expected (\\w+) ttl (\\d+)", operation):
            tenant, kind, key, expected, ttl = m.groups()
            expected = None if expected == "None" else int(expected)
            return db, f"revision {put(db, tenant, kind, key, value_for(kind), expected, now, int(ttl))}"
        if m := re.fullmatch(f"get {IDENTITY}", operation):
            record = get(db, *m.groups(), now)
            return db, "None" if record is None else f"revision {record['revision']}"
        if m := re.fullmatch(f"forget {IDENTITY} revision (\\w+)", operation):
            *name, revision = m.groups()
            return db, str(forget(db, *name, None if revision == "None" else int(revision)))
        if m := re.fullmatch(r"purge ([a-z][a-z0-9-]*)", operation):
            return db, f"{purge(db, m[1], now)} removed"
        if operation == "reopen":
            db.close()
            return connect(path), "reopened"
        if operation == "clock":
            return db, "clock set"
    except (Conflict, ValueError) as error:
        return db, type(error).__name__
    raise AssertionError(f"the explorer shows an operation the test cannot replay: {operation}")


def step_to(explorer, key, order, image=None):
    """Press a key on the slider; wait until the state and the picture show ``order``."""
    explorer.locator(".noUi-handle").press(key)
    explorer.page.wait_for_function(
        "([root, order, image]) => root.querySelector('.widget-html-content b')"
        ".textContent.startsWith(`order ${order} of`) && root.querySelector('img').src != image",
        arg=[explorer.element_handle(), order, image], timeout=WAIT)
    return read_explorer(explorer)


def check_explorer(explorer, folder):
    """Step from the first operation to the last; each state must be what the store answers."""
    path = Path(folder) / "replay.db"
    db = connect(path)
    images = set()
    try:
        explorer.locator(".noUi-handle").focus()
        shown = step_to(explorer, "Home", 0)
        last = int(HEADER.fullmatch(shown["header"])[2])
        for order in range(last + 1):
            if order:
                shown = step_to(explorer, "ArrowRight", order, shown["image"])
            at, _, now, operation, outcome = HEADER.fullmatch(shown["header"]).groups()
            now = int(now)
            db, said = answer(db, path, now, operation)
            assert (int(at), said) == (order, outcome), shown["header"]
            gets = {}
            for identity, returns, expires in shown["gets"]:
                record = get(db, *identity.split(" / "), now)
                expected = ("None", "") if record is None else (
                    f"revision {record['revision']}", str(record["expires"]))
                assert (returns, expires) == expected, (shown["header"], identity)
                gets[identity] = record
            raw = sorted(db.execute("SELECT tenant, kind, key, revision, expires FROM records"))
            assert shown["rows"] in ([], [["no rows"]]) or all(len(r) == 4 for r in shown["rows"])
            listed = sorted((*identity.split(" / "), int(revision), int(expires))
                            for identity, revision, expires, _ in
                            [r for r in shown["rows"] if len(r) == 4])
            assert listed == [tuple(r) for r in raw], shown["header"]
            for identity, _, _, visible in [r for r in shown["rows"] if len(r) == 4]:
                assert visible == ("hidden" if gets[identity] is None else "visible")
            images.add(shown["image"])
        assert len(images) == last + 1, "the picture did not change at every step"
        return last + 1
    finally:
        db.close()


# ---------------------------------------------------------------- the tests

def test_make_lab_opens_chapter_one_with_the_workbook_settings(page, lab):
    page.goto(lab.page_url("/"))  # what `make lab` prints and opens
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=WAIT)
    assert page.url.split("?")[0].endswith(f"/lab/tree/{CHAPTERS[0]}")
    assert page.locator(".jp-NotebookPanel-notebook .jp-RenderedHTMLCommon h1").first \
        .inner_text().startswith("Chapter 1")
    # the table of contents is the open side panel, listing the chapter's headings
    toc = page.locator(".jp-SideBar .lm-TabBar-tab[data-id='table-of-contents']")
    assert "lm-mod-current" in toc.get_attribute("class")
    assert page.locator(".jp-TableOfContents-content").inner_text().startswith("Chapter 1")
    # settings from jupyterlab/overrides.json: defaults the server reports, and their effects
    notification = lab.api("/lab/api/settings/@jupyterlab/apputils-extension:notification")
    defaults = {k: v["default"] for k, v in notification["schema"]["properties"].items()}
    assert (defaults["fetchNews"], defaults["checkForUpdates"]) == ("false", False)
    widgets = lab.api("/lab/api/settings/@jupyter-widgets/jupyterlab-manager:plugin")
    assert widgets["schema"]["properties"]["saveState"]["default"] is True
    assert page.locator(".jp-CodeCell .cm-lineNumbers").count() > 0
    assert page.locator(".lm-TabBar-tab[data-id='extensionmanager.main-view']").count() == 0
    page.wait_for_timeout(2000)  # the news question would pop up by now
    assert page.locator(".jp-toast-message, .Toastify__toast").count() == 0
    shot(page, "start")
    assert page.problems == []


@pytest.mark.parametrize("name", CHAPTERS + [SCRATCH])
def test_chapter_runs_in_the_browser(page, lab, name, tmp_path):
    open_notebook(page, lab, name)
    explorers = page.locator(".workbook-explorer")
    try:
        shown = run_all(page)
        save(page)
        stored = ROOT / "notebooks" / name if name != SCRATCH else lab.notebooks / name
        plotted = check_run(stored, lab.notebooks / name)  # names the error if a cell failed
        assert all(re.fullmatch(r"\[\d+\]:", p) for p in shown), shown
        images = loaded_images(page)
        assert len(images) >= len(plotted), (len(images), plotted)
        assert all(image["ok"] for image in images), images
        for index in range(explorers.count()):
            (tmp_path / str(index)).mkdir()
            check_explorer(explorers.nth(index), tmp_path / str(index))
        if name == SCRATCH:
            assert explorers.count() == 2
        assert page.problems == []
    finally:
        target = explorers if explorers.count() else page.locator(".jp-OutputArea-output img")
        shot(page, name, target)
