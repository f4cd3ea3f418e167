"""JupyterLab in headless Chromium, as the browser and accessibility tests drive it.

`make lab` runs unchanged in a temporary copy of the working tree (its .venv a link to ours), so
nothing run or saved reaches notebooks/ or a learner's my-workbook/ here; only a Jupyter config of
ours (no browser, loopback, a token, no port retries) and JUPYTER_* folders in a temporary
directory keep it from this user's settings. The fixtures `lab`, `browser` and `page`, and the
helpers that drive JupyterLab by its interface, are shared by tests/browser/ and tests/a11y/.
"""
import contextlib
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

from course.editions import learner

ROOT = Path(__file__).resolve().parents[2]
SCRATCH = "explorer-check.ipynb"
NOTEBOOKS = [p.name for p in learner.chapters(ROOT / "notebooks")] + [SCRATCH]
COPY = "my-workbook"
SHOTS = ROOT / "build" / "browser"
CHROMIUM = os.environ.get("WORKBOOK_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-default-apps"]
RUN_TIMEOUT = 180  # seconds for one notebook's Restart Kernel and Run All Cells
WAIT = 60_000  # milliseconds for the page to show something
# Uncaught page errors fail a test, except a restart cancelling the kernel's pending requests.
BENIGN = re.compile(r"Canceled future for \w+ message before replies were done")
# Variables the server must not inherit: they would serve another folder or change make's output.
INHERITED = ("WORKBOOK_COPY", "WORKBOOK_NOTEBOOKS", "WORKBOOK_LAB_STATE", "WORKBOOK_CHECK_SECONDS",
             "WORKBOOK_HIDE_SOLUTIONS", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")




# ---------------------------------------------------------------- the server

def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def digest(folder):
    """Name -> hash of every file under folder (empty when there is no folder)."""
    folder = Path(folder)
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()} if folder.is_dir() else {}


def scratch_notebook(path):
    """An explorer over a clock that moves back, which no chapter steps through (chapter 5's
    explorer is the spec's demonstration, chapter 4's a purge)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
                    "from workbook.teaching.explorer import explore\n"
                    "from workbook.teaching.timeline import clock_backwards_scenario"),
                nbformat.v4.new_code_cell("explore(clock_backwards_scenario(), order=2)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nbformat.write(nb, path)


class Lab:
    """`make lab` (and `make lab-update`) in the temporary tree; start and stop it at will."""

    def __init__(self, tree, state):
        self.tree, self.state = tree, state
        self.source, self.copy = tree / "notebooks", tree / COPY
        self.token = secrets.token_hex(16)
        self.env = {k: v for k, v in os.environ.items() if k not in INHERITED} | dict(
            # nothing from this user's ~/.jupyter or ~/.ipython, nothing written there
            JUPYTER_CONFIG_DIR=str(state / "config"), JUPYTER_DATA_DIR=str(state / "data"),
            JUPYTER_RUNTIME_DIR=str(state / "runtime"), IPYTHONDIR=str(state / "ipython"),
            JUPYTERLAB_SETTINGS_DIR=str(state / "user-settings"), JUPYTER_PLATFORM_DIRS="1")
        # what a learner types on the command line is `make lab`; these only make it testable
        (state / "config").mkdir(parents=True)
        (state / "config" / "jupyter_server_config.json").write_text(json.dumps({
            "ServerApp": {"open_browser": False, "ip": "127.0.0.1", "port_retries": 0},
            "IdentityProvider": {"token": self.token}}))
        self.server, self.starts, self.typed = None, 0, {}

    def make(self, target, **variables):
        return ["make", "--no-print-directory", "-s", target,
                *(f"{name}={value}" for name, value in variables.items())]

    def start(self):
        """Run `make lab`; return what it printed before JupyterLab's own log."""
        self.starts += 1
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log = self.state / f"make-lab-{self.starts}.log"
        with open(self.log, "w") as out:
            self.server = subprocess.Popen(
                self.make("lab", LAB_PORT=port), cwd=self.tree, env=self.env, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 90
        while True:
            try:
                self.api("/api/status")
                break
            except (urllib.error.URLError, ConnectionError):
                if self.server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"make lab did not start:\n{self.log.read_text()[-3000:]}")
                time.sleep(0.3)
        text = self.log.read_text()
        assert f"Serving notebooks from local directory: {self.copy}" in text, text[-3000:]
        return text.split("[I ")[0]  # course/editions/learner.py's lines come before Jupyter's

    def stop(self):
        if self.server is None:
            return
        try:
            self.shut_down_kernels()
        except (urllib.error.URLError, ConnectionError):
            pass
        server, self.server = self.server, None
        os.killpg(server.pid, signal.SIGTERM)  # make and JupyterLab (kernels are stopped above)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            server.poll()  # make, reaped, so that only live processes keep the group
            try:
                os.killpg(server.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()

    def update(self, refused=False):
        """`make lab-update`; return its output (with refused, it must fail: a chapter is open)."""
        done = subprocess.run(self.make("lab-update"), cwd=self.tree, env=self.env,
                              capture_output=True, text=True, timeout=120)
        assert (done.returncode != 0) == refused, done.stdout + done.stderr
        return done.stdout + done.stderr

    def api(self, path, method="GET"):
        request = urllib.request.Request(f"{self.url}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        # a DELETE of a session waits for its kernel to shut down: slow on a loaded machine
        with urllib.request.urlopen(request, timeout=60) as response:
            body = response.read()
        return json.loads(body) if body else None

    def page_url(self, path):
        return f"{self.url}{path}{'&' if '?' in path else '?'}token={self.token}"

    def shut_down_kernels(self):
        for session in self.api("/api/sessions"):
            self.api(f"/api/sessions/{session['id']}", method="DELETE")


@pytest.fixture(scope="session")
def lab():
    before = {where: ((ROOT / where).exists(), digest(ROOT / where)) for where in ("notebooks", COPY)}
    folder = Path(tempfile.mkdtemp(prefix="workbook-browser-"))
    tree = folder / "repo"
    # the whole working tree (a chapter may read ../tests), but never a learner's own copy
    shutil.copytree(ROOT, tree, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", COPY, ".hypothesis", "mutants", "__pycache__",
        ".pytest_cache", "*.egg-info", ".ipynb_checkpoints"))
    (tree / ".venv").symlink_to(ROOT / ".venv")  # `make lab` finds it up to date
    scratch_notebook(tree / "notebooks" / SCRATCH)  # copied into my-workbook/ like a chapter
    running = Lab(tree, folder / "state")
    saved = set()
    try:
        running.first_output = running.start()
        yield running
        saved = {value for where in ("notebooks", COPY) for value in digest(tree / where).values()}
    finally:
        running.stop()
        shutil.rmtree(folder, ignore_errors=True)
    # Nothing of this run reached notebooks/ or a learner's my-workbook/ in the repository.
    # (Compared with what this run saved rather than with the files as they were, so that an
    # author or a learner saving meanwhile is no failure.)
    for where, (existed, was) in before.items():
        now = digest(ROOT / where)
        written = [name for name, value in now.items()
                   if value != was.get(name) and value in saved]
        assert written == [], f"the browser test wrote {written} into {where}/"
        assert existed or not (ROOT / where).exists(), f"the browser test made {where}/ here"


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run tools/install-browser")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                              headless=True)
        yield chromium
        chromium.close()


@contextlib.contextmanager
def lab_page(browser, lab):
    """A page in a context of its own (page.problems collects its uncaught errors); once done,
    the context closes and the lab's kernels are shut down."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())  # "leave this page?" on a dirty notebook
    problems = []
    page.on("pageerror", lambda error: None if BENIGN.search(str(error))
            else problems.append(str(error)))
    page.problems = problems
    try:
        yield page
    finally:
        context.close()
        if lab.server is not None:
            lab.shut_down_kernels()


@pytest.fixture
def page(browser, lab):
    with lab_page(browser, lab) as page:
        yield page


# ---------------------------------------------------------------- JupyterLab, by its UI

def menu(page, title, command):
    """Click a main-menu item: the menu by its title, the item by its command id."""
    page.locator(".lm-MenuBar-item", has_text=re.compile(f"^{title}$")).click()
    page.locator(f".lm-Menu-item[data-command='{command}']").click()


def open_notebook(page, lab, name, reset=True):
    page.goto(lab.page_url(f"/lab/tree/{name}" + ("?reset" if reset else "")))
    wait_until_open(page)


def wait_until_open(page):
    """Wait until the notebook shows its cells and its kernel is ready."""
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=WAIT)
    # the kernel started and idle (on a fresh server the indicator says idle before a kernel
    # exists, and a restart then asks which kernel to start)
    page.wait_for_function(
        "() => document.querySelector('.jp-NotebookPanel .jp-Toolbar-kernelName')"
        "?.textContent.includes('Python')", timeout=WAIT)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=WAIT)


def prompts(page):
    return page.eval_on_selector_all(".jp-NotebookPanel .jp-CodeCell .jp-InputPrompt",
                                     "cells => cells.map(c => c.textContent.trim())")


def settle(page, timeout=RUN_TIMEOUT):
    """Wait until the kernel is idle with nothing queued, three looks in a row."""
    deadline, quiet = time.monotonic() + timeout, 0
    while quiet < 3:
        status = page.get_attribute(".jp-Notebook-ExecutionIndicator", "data-status")
        shown = prompts(page)
        busy = status != "idle" or any("*" in p for p in shown)
        quiet = 0 if busy else quiet + 1
        assert time.monotonic() < deadline, f"still running after {timeout}s: {shown}"
        time.sleep(0.4)
    return shown


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
    return settle(page)


def dirty(page):
    """Whether the current notebook's tab shows JupyterLab's unsaved mark."""
    return page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current.jp-mod-dirty").count() > 0


def save(page):
    menu(page, "File", "docmanager:save")
    page.wait_for_function(
        "() => !document.querySelector('.lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-dirty')",
        timeout=WAIT)


def shot(page, name, target=None):
    SHOTS.mkdir(parents=True, exist_ok=True)
    if target is not None and target.count():
        target.first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / f"{Path(name).stem}.png"))


def close_and_shut_down(page):
    """File > Close and Shut Down Notebook on the current tab, confirmed."""
    menu(page, "File", "filemenu:close-and-cleanup")
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=WAIT)
    dialog.locator(".jp-mod-accept").click()
