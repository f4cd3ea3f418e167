"""A course on the real make hub, driven in headless Chromium (make test-hub; a few minutes).

The hub is `make hub` itself, run in a temporary copy of the working tree (with a .venv of its
own, so that the course package make hub runs is the copy's, closed to other accounts as make hub
closes its clone) with HUB_DIR and the homes in a temporary folder, on a free port, for a roster
of three students and an instructor. Everyone logs in through the login page with their own first
password. The tests follow the course, and a term, in order:

0. (test_hub_checks.py, in a clone of its own, beside this one under pytest-xdist) make hub checks
   everything first: a HUB_DIR no student could enter, a bad roster line, a taken port and a copy
   of the answers others can read are all named, one sentence each, and nothing is made;
1. nobody logs in with a wrong password or as someone else;
2. each student's first login opens their own learner's copy, chapter 1, with the workbook's
   settings (the table of contents open, the server's own settings on);
3. the instructor generates and releases chapter 1 from the formgrader, whose feedback buttons
   are hidden;
4. the students fetch it from the Assignments tab (a hand-in copy named apart from the practice
   copy, with the same stubs), answer in the page (one right on all three exercises, one right
   on one, one wrong on one and right on another) and submit; then, from their accounts, one
   submits later in another's name and one a link to the worked answers;
5. the instructor collects (the formgrader names both forgeries and collects neither), grades
   as root with make grade straight from nbgrader's submitted/, and releases the feedback with
   make hub-feedback; the gradebook holds what each one earned;
6. each student fetches their own feedback in the Assignments tab and reads their own score;
7. a student cannot open another's files, the course folder, the source chapters or any worked
   answer, by URL or from a terminal in their JupyterLab, where the course's python runs in a
   login shell; the instructor's terminal runs nbgrader;
8. the hub crashes and is started again mid-session: a student's kernel keeps its variables and
   an edit saved while the hub was down is on disk;
9. a student's learner's copy survives a server restart, and a changed chapter reaches it with
   the student's answer kept;
10. every chapter and appendix runs in a student's kernel, as that student;
11. make hub-teardown says what it removes, removes nothing when the answer is not yes, and
    then removes every account, home and HUB_DIR, keeping the gradebook where KEEP says.

Screenshots of each step go to build/hub/. The accounts made are removed at the end.
"""
import concurrent.futures
import csv
import datetime
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout, expect, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
from course.editions import answers
from course.grader.chapters import graded_chapters
from course.hub import accounts, environment, service
import hub_reaper
from hub_tree import copy_tree, free_port


# one course, in order: conftest.py fails a test that would run without the ones before it
IN_ORDER = True
SHOTS = ROOT / "build" / "hub"
CHROMIUM = os.environ.get("WORKBOOK_CHROMIUM", "/usr/bin/chromium")
# every page renders, although only one is in front: JupyterLab lays out on animation frames
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--no-first-run",
                 "--disable-renderer-backgrounding", "--disable-background-timer-throttling",
                 "--disable-backgrounding-occluded-windows"]
# usernames of this run's own: two make test-hub runs on one machine (other clones') would
# otherwise remove each other's accounts; the watchdog removes a killed run's
RUN = os.urandom(3).hex()
INSTRUCTOR = f"ht{RUN}-teacher"
STUDENTS = {f"ht{RUN}-ada": "Ada Lovelace", f"ht{RUN}-grace": "Grace Hopper", f"ht{RUN}-alan": "Alan Turing"}
ADA, GRACE, ALAN = STUDENTS
CHAPTER = "01-purpose-and-validation"
HAND_IN = f"hand-in-{CHAPTER}.ipynb"  # the copy a student fetches (course.hub.exchange.HAND_IN_PREFIX)
READY_SECONDS = 900   # make hub from nothing: the course venv (compiled), the proxy, the accounts
SPAWN = 240_000       # milliseconds for a server to start and JupyterLab to show a notebook
WAIT = 60_000         # milliseconds for the page to show something
WRONG_1_1 = 'wide_fact = {"schema": 1, "text": "short", "source": "s", "reviewed": False}\n'


class Hub:
    """make hub in a temporary clone; `lines` is what it printed."""

    def __init__(self, scratch):
        self.scratch = scratch
        self.tree = scratch / "clone"
        self.dir = scratch / "srv"
        self.homes = scratch / "home"
        self.roster = scratch / "roster.csv"
        self.port = free_port()
        self.process = None
        self.lines = []

    def make(self, target, *extra, **options):
        variables = [f"HUB_DIR={self.dir}", f"HUB_HOMES={self.homes}", f"ROSTER={self.roster}",
                     f"INSTRUCTOR={INSTRUCTOR}", f"HUB_PORT={self.port}"]
        return ["make", "--no-print-directory", "-C", str(self.tree), target, *variables, *extra]

    def run(self, target, *extra, timeout=READY_SECONDS, answer=None):
        """A make target in the clone, in a session of its own (killed whole if it overruns);
        returns (exit status, what it printed)."""
        process = subprocess.Popen(self.make(target, *extra), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            printed, _ = process.communicate(answer, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            printed, _ = process.communicate()
            raise AssertionError(f"make {target} did not end in {timeout} s:\n{printed[-4000:]}") from None
        return process.returncode, printed

    def start(self):
        """make hub (which returns once the hub answers) with the banner it prints. Students may
        read answers elsewhere on this machine (other clones of the workbook's developers): the
        refusal itself is test_make_hub_checks_everything_before_changing_anything's."""
        status, printed = self.run("hub", "ACCEPT_READABLE=all")
        self.lines = printed.splitlines()
        assert status == 0 and any(line.lstrip().startswith("Stop:") for line in self.lines), printed[-6000:]

    def stop(self):
        if (self.dir / "state" / "settings.json").exists():
            self.run("hub-stop", timeout=300)

    def url(self, path=""):
        return f"http://127.0.0.1:{self.port}{path}"

    def home(self, name):
        return Path(pwd.getpwnam(name).pw_dir)

    def passwords(self):
        path = self.home(INSTRUCTOR) / accounts.PASSWORDS
        return {row["username"]: row["first password"] for row in csv.DictReader(path.open())}


@pytest.fixture(scope="module")
def course():
    """The temporary clone, roster and folders, before any make hub; at the end, whatever was
    made is stopped and removed (make hub-teardown's own test removes it first when it runs)."""
    if os.geteuid() != 0:
        pytest.skip("make test-hub needs root: make hub makes a system account per student and "
                    "JupyterHub starts each server as its account (docs/hub.md, 'Without root')")
    names = [INSTRUCTOR, *STUDENTS]
    scratch = Path(tempfile.mkdtemp(prefix="workbook-hub-"))
    os.chmod(scratch, 0o755)
    # a kill -9 of this test runs no clean-up below: the watchdog then ends what runs from scratch
    reaper = subprocess.Popen([sys.executable, str(ROOT / "tests" / "support" / "hub_reaper.py"),
                               "--watch", str(os.getpid()), "--folder", str(scratch),
                               *[f"--account={name}" for name in names]], start_new_session=True)
    hub = Hub(scratch)
    hub.tree.mkdir()
    copy_tree(hub.tree, venv="own")
    # HUB_HOMES is left for make hub to make, so that make hub-teardown removes it
    hub.roster.write_text("username,display name\n" + "".join(f"{n},{d}\n" for n, d in STUDENTS.items()))
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    hub.chapters = None
    hub.ahead = None
    try:
        yield hub
    finally:
        if hub.chapters and hub.chapters[0].poll() is None:
            os.killpg(hub.chapters[0].pid, signal.SIGKILL)
        hub.stop()
        for name in names:
            accounts.remove_account(name)
        environment.profile_path(hub.dir / "env").unlink(missing_ok=True)
        # make hub-stop (or make hub-teardown) left nothing of the course running
        left = hub_reaper.leftovers([scratch])
        hub_reaper.reap([scratch], [])
        reaper.kill()
        reaper.wait()
        assert left == {}, f"still running from {scratch} after make hub-stop: {left}"


def servers_ahead(hub):
    """make hub-servers, in the background: every student's server starts while the first tests
    (the banner, the refused logins) run; the first login then finds it running."""
    status, printed = hub.run("hub-servers", timeout=600)
    return status, printed


@pytest.fixture(scope="module")
def hub(course):
    course.start()
    course.chapters = every_chapter(course)
    course.ahead = concurrent.futures.ThreadPoolExecutor(max_workers=1).submit(servers_ahead, course)
    return course


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run tools/install-browser")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def people(hub, browser):
    """One browser context (its own cookies) per person, logged in on first use."""
    contexts = {}

    def page_of(name):
        if name not in contexts:
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            context.new_page().on("dialog", lambda dialog: dialog.accept())
            contexts[name] = context
        return contexts[name].pages[0]
    yield page_of
    for context in contexts.values():
        context.close()


def shot(page, name):
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def log_in(page, hub, name, password, wait=True):
    """Fill in the login page and send it; wait=False returns without waiting for the answer, so
    that several people's logins (and the pages they open) load at once."""
    page.goto(hub.url("/hub/login"))
    page.fill("#username_input", name)
    page.fill("#password_input", password)
    page.click("#login_submit", no_wait_after=not wait)


def lab_is_open(page):
    """JupyterLab showed a notebook with its kernel idle."""
    page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell").first.wait_for(timeout=SPAWN)
    expect(page.locator(".jp-NotebookPanel:visible .jp-Toolbar-kernelName")).to_contain_text("Python", timeout=SPAWN)
    # the notebook in front: a tab behind it has an indicator too, hidden, which never shows
    page.locator(".jp-NotebookPanel:visible .jp-Notebook-ExecutionIndicator[data-status='idle']").first \
        .wait_for(timeout=SPAWN)


def menu(page, title, command):
    page.locator(".lm-MenuBar-item", has_text=re.compile(f"^{title}$")).click()
    page.locator(f".lm-Menu-item[data-command='{command}']").click()


def save(page):
    page.keyboard.press("Control+s")
    page.wait_for_function(
        "() => !document.querySelector('.lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-dirty')", timeout=WAIT)


def set_cell(page, path, cell_id, source):
    """Replace a cell's text as a person would: click into its editor, select all, type it in
    (as one insertion, so the editor adds no indentation of its own)."""
    ids = [cell.get("id") for cell in nbformat.read(path, as_version=4).cells]
    cell = page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell").nth(ids.index(cell_id))
    cell.scroll_into_view_if_needed()
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(source)


def open_in_lab(page, path):
    """Open `path` (below the person's home) in the JupyterLab the page shows, with File > Open
    from Path…, as a person would: no page load, which costs Chromium seconds of CPU. Waits until
    a tab of that file's name is the one in front (one already in front is that file: no two
    notebooks a student opens share a name), then as lab_is_open does."""
    menu(page, "File", "filebrowser:open-path")
    dialog = page.locator(".jp-Dialog")
    dialog.locator("input").fill(path)
    dialog.locator(".jp-mod-accept").click()
    name = re.escape(path.rsplit("/", 1)[-1])
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current",
                 has_text=re.compile(f"^{name}$")).wait_for(timeout=WAIT)
    lab_is_open(page)


def assignments_tab(page):
    menu(page, "Nbgrader", "nbgrader:open-assignment-list")
    panel = page.locator("#released_assignments_list").locator("xpath=ancestor::div[contains(@class,'lm-Widget')][1]")
    page.locator("#released_assignments_list").wait_for(timeout=WAIT)
    return panel


def exercises():
    chapter = graded_chapters(stems=[CHAPTER])[0]
    return {e.number: e for e in chapter.exercises}


# ------------------------------------------------------------------------------- the course

def test_make_hub_prints_the_url_and_how_to_log_in(hub):
    printed = "\n".join(hub.lines)
    assert f"URL:        http://localhost:{hub.port}/" in printed
    assert str(hub.home(INSTRUCTOR) / accounts.PASSWORDS) in printed
    assert f"Formgrader: http://localhost:{hub.port}/user/{INSTRUCTOR}/formgrader" in printed
    assert "make grade SUBMISSION=" in printed and "[CHAPTERS=01,02]" in printed
    assert f"nbgrader:   {hub.dir / 'bin' / 'nbgrader'}" in printed
    assert f"make hub-stop HUB_DIR={hub.dir}" in printed and f"make hub-servers HUB_DIR={hub.dir}" in printed
    # ACCEPT_READABLE=all: it did not look for readable answers, and says so
    assert "Did not look for worked answers students could read: ACCEPT_READABLE=all" in printed
    # the course's own settings on every server, and the login shell's PATH for its terminals
    server = json.loads((hub.dir / "env" / "etc" / "jupyter" / "jupyter_server_config.d" / "workbook.json").read_text())
    assert server == environment.SERVER_SETTINGS
    assert f"PATH={hub.dir / 'env'}/bin:$PATH" in environment.profile_path(hub.dir / "env").read_text()
    for name in [INSTRUCTOR, *STUDENTS]:
        entry = pwd.getpwnam(name)
        assert entry.pw_dir.startswith(str(hub.homes)) and os.stat(entry.pw_dir).st_mode & 0o777 == 0o700
    listing = os.stat(hub.home(INSTRUCTOR) / accounts.PASSWORDS)
    assert listing.st_uid == pwd.getpwnam(INSTRUCTOR).pw_uid and listing.st_mode & 0o777 == 0o600
    assert len(set(hub.passwords().values())) == 4


def test_nobody_logs_in_as_someone_else(hub, browser):
    """Five wrong logins, each in a browser context of its own, sent at once: PAM answers each
    only after its failure delay (3 s on Debian), and the hub asks PAM from a pool of threads
    (PAMAuthenticator.executor_threads, 4), so the delays overlap."""
    passwords = hub.passwords()
    tries = [(GRACE, passwords[ADA]), (ADA, "wrong-password"), (INSTRUCTOR, passwords[ADA]),
             ("nobody", passwords[ADA]), (ADA, passwords[GRACE])]
    pages = [browser.new_context(viewport={"width": 1400, "height": 900}).new_page() for _ in tries]
    for page, (name, password) in zip(pages, tries):
        log_in(page, hub, name, password, wait=False)
    for page in pages:
        expect(page.locator(".login_error")).to_contain_text("Invalid username or password", timeout=WAIT)
        assert "/hub/login" in page.url
    shot(pages[-1], "01-login-refused")
    for page in pages:
        assert not [c for c in page.context.cookies() if c["name"].startswith("jupyterhub-session")] or \
            page.request.get(hub.url("/hub/api/user")).status == 403
        page.context.close()


def test_each_student_opens_their_own_learners_copy(hub, people):
    # make hub-servers, started with the hub, had every student's server up before the first login
    status, printed = hub.ahead.result(timeout=900)
    assert status == 0 and "Servers ready for 3 students (3 started now, 0 already running)" in printed, printed
    passwords = hub.passwords()
    for name in STUDENTS:  # the three log in at once; then each one's page is read in turn
        log_in(people(name), hub, name, passwords[name], wait=False)
    for name in STUDENTS:
        page = people(name)
        lab_is_open(page)
        assert page.url.endswith(f"/user/{name}/lab/tree/workbook/{CHAPTER}.ipynb")
        expect(page.locator(".jp-NotebookPanel:visible .jp-RenderedMarkdown h1").first).to_contain_text(
            "Chapter 1", timeout=WAIT)
        # the workbook's first layout: the table of contents is the open side panel
        expect(page.locator(".jp-TableOfContents-tree")).to_be_visible(timeout=WAIT)
        # and its page settings (jupyterlab/page_config.json): no build check, no node per page load
        wanted = json.loads((ROOT / "jupyterlab" / "page_config.json").read_text())
        data = json.loads(page.locator("#jupyter-config-data").text_content())
        assert wanted and {key: data.get(key) for key in wanted} == wanted
        shot(page, f"02-first-login-{name}")
        copy = hub.home(name) / "workbook"
        assert sorted(p.name for p in copy.glob("*.ipynb")) == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
        assert all(p.stat().st_uid == pwd.getpwnam(name).pw_uid for p in copy.iterdir())
        text = (copy / f"{CHAPTER}.ipynb").read_text()
        assert "### BEGIN SOLUTION" not in text and "____" in text


def dismiss(page, text, name):
    """The formgrader's modal says `text`: keep a screenshot of it, then close it with OK."""
    dialog = page.locator(".modal-dialog:visible")
    expect(dialog).to_contain_text(text, timeout=SPAWN)
    shot(page, name)
    dialog.locator(".modal-footer button").last.click()
    expect(page.locator(".modal-dialog:visible")).to_have_count(0, timeout=WAIT)


def formgrader_row(page, hub, assignment):
    page.goto(hub.url(f"/user/{INSTRUCTOR}/formgrader/manage_assignments"))
    row = page.locator("table tbody tr", has_text=assignment)
    row.wait_for(timeout=WAIT)
    return row


def test_the_instructor_releases_chapter_one_from_the_formgrader(hub, people):
    page = people(INSTRUCTOR)
    log_in(page, hub, INSTRUCTOR, hub.passwords()[INSTRUCTOR])
    lab_is_open(page)
    row = formgrader_row(page, hub, CHAPTER)
    # make hub-feedback hands feedback back: the formgrader's own feedback columns are hidden
    expect(page.locator("th", has_text="Generate Feedback")).to_be_hidden(timeout=WAIT)
    expect(page.locator("th", has_text="Release Feedback")).to_be_hidden(timeout=WAIT)
    expect(row.locator("td.generate-feedback")).to_be_hidden(timeout=WAIT)
    expect(row.locator("td.collect")).to_be_visible(timeout=WAIT)
    shot(page, "03-formgrader")
    row.locator("td.assign a").click()  # Generate: nbgrader generate_assignment
    dismiss(page, f"Successfully created the student version of '{CHAPTER}'", "04-generated")
    row.locator("td.release a").click()  # Release: nbgrader release_assignment
    dismiss(page, f"Successfully released '{CHAPTER}'", "04-released")
    assert (hub.dir / "exchange" / "agent-memory-workbook" / "outbound" / CHAPTER / HAND_IN).is_file()


def answer_cells(name):
    """Each student's answers to chapter 1, by exercise: the worked answer, or a wrong one."""
    worked = answers.extract(ROOT / "notebooks")
    return {ADA: {"1.1": worked["1.1"], "1.2": worked["1.2"], "1.3": worked["1.3"]},
            GRACE: {"1.1": worked["1.1"]},
            ALAN: {"1.1": WRONG_1_1, "1.2": worked["1.2"]}}[name]


EARNED = {ADA: [1, 1, 1], GRACE: [1, 0, 0], ALAN: [0, 1, 0]}


def test_students_fetch_answer_and_submit_from_the_assignments_tab(hub, people):
    found = exercises()
    for name in STUDENTS:
        page = people(name)
        assignments_tab(page)
        item = page.locator("#released_assignments_list .list_item", has_text=CHAPTER)
        item.locator("button", has_text="Fetch").click(timeout=WAIT)
        fetched = page.locator("#fetched_assignments_list > .list_item", has_text=CHAPTER)
        fetched.wait_for(timeout=WAIT)
        shot(page, f"05-fetched-{name}")
        notebook = hub.home(name) / CHAPTER / HAND_IN
        assert notebook.is_file()
        # it opens on its title and on which copy it is, not on a stray `#| default_exp` cell
        cells = nbformat.read(notebook, as_version=4).cells
        assert cells[0].cell_type == "markdown" and "This is the copy you hand in" in cells[0].source
        assert "Fetch Feedback" in cells[0].source and "judged when graded" in cells[0].source
        # the same stub as in the practice copy, not nbgrader's `raise NotImplementedError()`
        practice = {c.get("id"): c.source for c in nbformat.read(hub.home(name) / "workbook" / f"{CHAPTER}.ipynb",
                                                                  as_version=4).cells}
        for exercise in found.values():
            stub = next(c.source for c in cells if c.get("id") == exercise.answer_id)
            assert stub == practice[exercise.answer_id] and "NotImplementedError" not in stub
    for name in STUDENTS:
        page, notebook = people(name), hub.home(name) / CHAPTER / HAND_IN
        open_in_lab(page, f"{CHAPTER}/{HAND_IN}")
        for number, source in answer_cells(name).items():
            set_cell(page, notebook, found[number].answer_id, source)
        save(page)
        shot(page, f"06-answered-{name}")
        assignments_tab(page)
        fetched = page.locator("#fetched_assignments_list > .list_item", has_text=CHAPTER)
        fetched.locator("button", has_text="Submit").click()
        submitted = page.locator("#submitted_assignments_list > .list_item", has_text=CHAPTER)
        submitted.first.wait_for(timeout=WAIT)
        shot(page, f"07-submitted-{name}")


def test_a_student_cannot_submit_in_another_students_name(hub):
    """From their own accounts, after everyone submitted: Grace makes a later submission in Ada's
    name (her own answers, 1 of 3), as nbgrader's inbound/ lets every student; Alan makes a later
    one in his own name whose notebook is a link to the instructor's source, with the worked
    answers. The collect in the next test must skip both and say so."""
    inbound = hub.dir / "exchange" / "agent-memory-workbook" / "inbound"
    later = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)).strftime(
        "%Y-%m-%d %H:%M:%S.%f UTC")
    source = hub.home(INSTRUCTOR) / "course" / "source" / CHAPTER / HAND_IN
    forge = {GRACE: f'cp ~/{CHAPTER}/{HAND_IN} "$d/"',
             ALAN: f'ln -s {source} "$d/{HAND_IN}"'}
    for name, victim in ((GRACE, ADA), (ALAN, ALAN)):
        script = (f'd="{inbound}/{victim}+{CHAPTER}+{later}+forged00" && mkdir "$d" && {forge[name]} && '
                  f'echo "{later}" > "$d/timestamp.txt"')
        done = accounts.as_user(pwd.getpwnam(name), ["/bin/sh", "-c", script], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def test_the_instructor_collects_grades_with_make_grade_and_releases_feedback(hub, people):
    page = people(INSTRUCTOR)
    row = formgrader_row(page, hub, CHAPTER)
    row.locator("td.collect a").click()  # Collect: nbgrader collect
    dialog = page.locator(".modal-dialog:visible")
    # the formgrader shows collect's log: each forgery named, neither collected
    expect(dialog).to_contain_text(f"Skipped: {GRACE} made a submission in {ADA}'s name", timeout=SPAWN)
    expect(dialog).to_contain_text(f"Skipped: {ALAN}'s submission holds {HAND_IN}, a link", timeout=WAIT)
    dismiss(page, "Successfully collected", "08-collected")
    expect(formgrader_row(page, hub, CHAPTER).locator("td.num-submissions")).to_have_text("3", timeout=WAIT)
    course = hub.home(INSTRUCTOR) / "course"
    assert sorted(p.name for p in (course / "submitted").iterdir()) == sorted(STUDENTS)
    # the banner's nbgrader works from this root shell, as the instructor
    listed = subprocess.run([str(hub.dir / "bin" / "nbgrader"), "list", "--inbound"], capture_output=True,
                            text=True, timeout=300)
    assert listed.returncode == 0 and f"{ADA} {CHAPTER}" in listed.stdout + listed.stderr, listed.stderr
    grades = hub.scratch / "grades"
    graded = subprocess.run(hub.make("grade", f"SUBMISSION={course}/submitted", f"GRADES={grades}", "CHAPTERS=01"),
                            capture_output=True, text=True, timeout=600)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    rows = {row["student"]: row for row in csv.DictReader((grades / "gradebook.csv").open())}
    assert {name: [int(rows[name][n]) for n in ("1.1", "1.2", "1.3")] for name in STUDENTS} == EARNED
    released = subprocess.run(hub.make("hub-feedback", f"GRADES={grades}"), capture_output=True, text=True,
                              timeout=300)
    assert released.returncode == 0, released.stdout + released.stderr
    assert "3 pages for 3 students" in released.stdout


def test_the_instructors_terminal_runs_the_courses_nbgrader(hub, people):
    page = people(INSTRUCTOR)
    open_terminal(page, hub, INSTRUCTOR)
    shell = typed(page, SHELL.format(command="nbgrader", run="nbgrader list"), hub.home(INSTRUCTOR) / "shell.txt",
                  "shell-done", seconds=180)
    shot(page, "09-instructors-terminal")
    assert shell[:2] == ["login-shell", f"{hub.dir}/env/bin/nbgrader"], shell
    assert [line for line in shell if "agent-memory-workbook" in line and CHAPTER in line], shell


def test_each_student_reads_their_own_feedback_and_nobody_elses(hub, people):
    for name in STUDENTS:
        page = people(name)
        assignments_tab(page)
        submitted = page.locator("#submitted_assignments_list .list_item", has_text=CHAPTER).first
        submitted.locator("button", has_text="Fetch Feedback").click()
        link = page.locator("#submitted_assignments_list a", has_text=re.compile("view feedback", re.I)).first
        link.wait_for(timeout=WAIT)
        shot(page, f"09-feedback-fetched-{name}")
        # the link opens the feedback folder in the file browser; the page opens in JupyterLab.
        # The browser moves there in its own time, and the folder it leaves holds the hand-in
        # notebook of the same name: wait for the page itself, the one .html in either folder
        link.click()
        item = page.locator(".jp-DirListing-item", has_text=re.compile(rf"{CHAPTER}\S*\.html"))
        item.first.wait_for(timeout=WAIT)
        item.first.dblclick()
        feedback = page.frame_locator(".jp-HTMLViewer:visible iframe")
        expect(feedback.locator("h1")).to_contain_text(f"feedback for {name}", timeout=WAIT)
        expect(feedback.locator(".score")).to_contain_text(f"Score: {sum(EARNED[name])} of 3")
        shot(page, f"10-feedback-{name}")
        pages = [p for p in (hub.home(name) / CHAPTER / "feedback").rglob("*.html") if ".ipynb_checkpoints" not in p.parts]
        assert len(pages) == 1 and f"feedback for {name}" in pages[0].read_text()
    # the released pages are named by each submission's secret in a folder nobody can list
    outbound = hub.dir / "exchange" / "agent-memory-workbook" / "feedback"
    assert os.stat(outbound).st_mode & 0o444 == 0o400


def test_a_student_cannot_open_another_students_files_by_url(hub, people):
    page = people(ADA)
    for path in [f"/user/{GRACE}/lab/tree/workbook/{CHAPTER}.ipynb", f"/user/{GRACE}/api/contents/workbook",
                 f"/user/{GRACE}/files/{CHAPTER}/{HAND_IN}", f"/user/{INSTRUCTOR}/formgrader",
                 f"/user/{INSTRUCTOR}/api/contents/course/source"]:
        answer = page.request.get(hub.url(path), max_redirects=0)
        assert answer.status in (302, 403, 404) or "/hub/" in (answer.headers.get("location") or ""), path
        assert answer.status != 200, path
    page.goto(hub.url(f"/user/{GRACE}/lab"))
    # 403 while Grace's server runs, 404 while it is stopped: JupyterHub refuses either way
    expect(page.locator("h1")).to_have_text(re.compile(
        rf"^(403 : You do not have permission to access Server at /user/{GRACE}/"
        r"|404 : No access to resources or resources not found)"), timeout=WAIT)
    shot(page, "11-other-students-url")
    # through the student's own server, the contents API stays inside the student's home
    answer = page.request.get(hub.url(f"/user/{ADA}/api/contents/..%2F{GRACE}"))
    assert answer.status in (400, 403, 404)


PROBE = """for f in {targets}; do if cat "$f" > /dev/null 2>&1; then echo "READ $f"; else echo "DENIED $f"; fi; done > ~/probe.txt; find {hub} -path '*/workbook/teaching/exercises/answers.json' -o -path '*/workbook/teaching/exercises/checks' 2>/dev/null >> ~/probe.txt; echo probe-done >> ~/probe.txt; clear"""


def distinctive_lines(edition):
    """For each worked answer, its longest line that the learner's edition does not hold (a
    function's signature is in the stub too): text that only the answers hold."""
    shown = "".join(path.read_text() for path in Path(edition).glob("*.ipynb"))
    worked = answers.extract(ROOT / "notebooks")
    lines = [max([l.strip() for l in code.splitlines() if l.strip() and l.strip() not in shown] or [""], key=len)
             for code in worked.values()]
    return [line for line in lines if len(line) > 20]


def open_terminal(page, hub, name):
    """File > New > Terminal in the person's JupyterLab: a login shell, as JupyterLab starts it."""
    page.goto(hub.url(f"/user/{name}/lab"))
    page.locator(".lm-MenuBar-item", has_text=re.compile("^File$")).wait_for(timeout=SPAWN)
    page.locator(".lm-MenuBar-item", has_text=re.compile("^File$")).click()
    page.locator(".lm-Menu-item[data-type='submenu']", has_text="New").hover()
    page.locator(".lm-Menu-item[data-command='terminal:create-new']").click()
    terminal = page.locator(".jp-Terminal:visible .xterm")
    terminal.wait_for(timeout=WAIT)
    terminal.click()


def typed(page, command, written, last, seconds=60):
    """Type a command line into the terminal in front, then wait until the file `written` (which
    the command writes) ends with the line `last`; return its lines."""
    page.keyboard.type(command + "\n")
    deadline = time.monotonic() + seconds
    while not (written.exists() and written.read_text().splitlines()[-1:] == [last]):
        assert time.monotonic() < deadline, f"the terminal did not write {written} (ending {last}) in {seconds} s"
        time.sleep(0.3)
    return written.read_text().splitlines()


# what a terminal's login shell finds: the course's commands, first on PATH
SHELL = ('{{ shopt -q login_shell && echo login-shell; command -v {command}; {run}; }} > ~/shell.txt 2>&1; '
         'echo shell-done >> ~/shell.txt')


def test_a_student_cannot_read_other_files_from_a_terminal(hub, people):
    grace, teacher = hub.home(GRACE), hub.home(INSTRUCTOR)
    targets = [grace / "workbook" / f"{CHAPTER}.ipynb", grace / CHAPTER / HAND_IN,
               teacher / "course" / "source" / CHAPTER / HAND_IN, teacher / accounts.PASSWORDS,
               hub.tree / "notebooks" / f"{CHAPTER}.ipynb",
               hub.tree / "workbook" / "teaching" / "exercises" / "answers.json", hub.dir / "state" / "jupyterhub.sqlite"]
    probe = hub.home(ADA) / "probe.txt"
    page = people(ADA)
    open_terminal(page, hub, ADA)
    typed(page, PROBE.format(targets=" ".join(map(str, targets)), hub=hub.dir), probe, "probe-done", seconds=180)
    # the course's python, in the login shell JupyterLab's terminal is, with the class package
    shell = typed(page, SHELL.format(command="python", run='python -c "import workbook; print(workbook.__file__)"'),
                  hub.home(ADA) / "shell.txt", "shell-done", seconds=180)
    assert shell == ["login-shell", f"{hub.dir}/env/bin/python",
                     f"{hub.dir}/class-package/workbook/__init__.py", "shell-done"], shell
    # for the screenshot: the findings and a refused listing, on the terminal's screen
    shown = hub.home(ADA) / "shown.txt"
    typed(page, f"clear; cat ~/probe.txt; ls {grace}; echo shown > ~/shown.txt", shown, "shown")
    shot(page, "12-terminal")
    lines = probe.read_text().splitlines()
    assert lines == [f"DENIED {t}" for t in targets] + ["probe-done"]
    # no file the student can read anywhere in the hub's folder holds a worked answer
    patterns = [argument for line in distinctive_lines(hub.dir / "edition") for argument in ("-e", line)]
    found = accounts.as_user(pwd.getpwnam(ADA), ["grep", "-rlsF", *patterns, str(hub.dir)],
                             capture_output=True, text=True, timeout=300)
    assert found.returncode != 0 and found.stdout == "", found.stdout  # 1: none; 2: some unreadable


def server_of(name):
    """The pids of the person's single-user server processes."""
    uid = pwd.getpwnam(name).pw_uid
    found = subprocess.run(["pgrep", "-u", str(uid), "-f", "jupyterhub-singleuser"], capture_output=True, text=True)
    return found.stdout.split()


def kernels_of(name):
    uid = pwd.getpwnam(name).pw_uid
    found = subprocess.run(["pgrep", "-u", str(uid), "-f", "ipykernel_launcher"], capture_output=True, text=True)
    return sorted(found.stdout.split())


def run_cell(page, path, cell_id, source, shows):
    """Type `source` into the cell and run it (Ctrl+Enter); wait for its output to show `shows`."""
    set_cell(page, path, cell_id, source)
    page.keyboard.press("Control+Enter")
    ids = [cell.get("id") for cell in nbformat.read(path, as_version=4).cells]
    output = page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell").nth(ids.index(cell_id)) \
        .locator(".jp-OutputArea-output")
    expect(output).to_contain_text(shows, timeout=WAIT)


def test_a_hub_restart_keeps_each_students_kernel_and_saves_their_edits(hub, people):
    """The hub process dies (SIGKILL, as a crash) in the middle of a session, and make hub starts it
    again. Meanwhile Ada's tab saves an edit, and afterwards her kernel still holds what she ran."""
    found = exercises()
    page = people(ADA)
    copy = hub.home(ADA) / "workbook" / f"{CHAPTER}.ipynb"
    open_in_lab(page, f"workbook/{CHAPTER}.ipynb")
    run_cell(page, copy, found["1.2"].answer_id, 'held = 4242\nprint("held", held)', "held 4242")
    save(page)
    server, kernels = server_of(ADA), kernels_of(ADA)
    assert server and kernels
    state = hub.dir / "state"
    pid = service.hub_pid(state)
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while service.alive(pid, "jupyterhub") or service.answers(hub.url("/hub/health")) == 200:
        assert time.monotonic() < deadline, "the hub still answered 60 s after it was killed"
        time.sleep(0.3)
    # while the hub is down: an edit, saved from the open tab, reaches the disk
    edit = "edited = 'while the hub was down'"
    set_cell(page, copy, found["1.1"].answer_id, edit)
    save(page)
    cell = next(c for c in nbformat.read(copy, as_version=4).cells if c.get("id") == found["1.1"].answer_id)
    assert cell.source == edit
    shot(page, "13-saved-while-the-hub-was-down")
    hub.start()
    assert server_of(ADA) == server and kernels_of(ADA) == kernels
    # the same kernel, with what it held, in the same tab; no dialog about the server
    run_cell(page, copy, found["1.2"].answer_id, 'print("still", held)', "still 4242")
    expect(page.locator(".jp-Dialog")).to_have_count(0, timeout=WAIT)
    shot(page, "14-kernel-kept-across-the-restart")
    assert "student server kept running" not in "\n".join(hub.lines)  # a crash: there was no hub to replace


def stop_my_server(page, name):
    """Click Stop My Server on the hub's home page until the page asks the hub to stop the
    server. The button does nothing until the page's script binds it, after the page's load
    event: on a loaded machine a click can come first (CI once waited 240 s for a stop it never
    asked for)."""
    def asked(request):
        return request.method == "DELETE" and request.url.split("?")[0].endswith(f"/api/users/{name}/server")
    deadline = time.monotonic() + WAIT / 1000
    while True:
        try:
            with page.expect_request(asked, timeout=3000):
                page.locator("#stop").click()
            return
        except PlaywrightTimeout:
            assert time.monotonic() < deadline, f"Stop My Server never asked the hub to stop {name}'s server"


def test_the_learners_copy_survives_a_restart_and_takes_a_changed_chapter(hub, people):
    found = exercises()
    page = people(ADA)
    copy = hub.home(ADA) / "workbook" / f"{CHAPTER}.ipynb"
    open_in_lab(page, f"workbook/{CHAPTER}.ipynb")
    mine = "wide_fact = {'schema': 1, 'text': 'mine, kept', 'source': 's', 'reviewed': False}\n"
    set_cell(page, copy, found["1.1"].answer_id, mine)
    save(page)
    # the author changes chapter 1; make hub again publishes the new edition
    source = hub.tree / "notebooks" / f"{CHAPTER}.ipynb"
    notebook = nbformat.read(source, as_version=4)
    markdown = next(cell for cell in notebook.cells if cell.cell_type == "markdown")
    markdown.source += "\n\nA sentence the author added after the first release."
    nbformat.write(notebook, source)
    setup = subprocess.run([str(hub.tree / ".venv" / "bin" / "workbook-hub"), "setup",
                            "--dir", str(hub.dir), "--homes", str(hub.homes), "--roster", str(hub.roster),
                            "--instructor", INSTRUCTOR, "--port", str(hub.port), "--accept-readable", "all"],
                           cwd=hub.tree, capture_output=True, text=True, timeout=600)  # the clone it runs in
    assert setup.returncode == 0, setup.stdout + setup.stderr
    page.goto(hub.url("/hub/home"))
    stop_my_server(page, ADA)
    expect(page.locator("#stop")).to_be_hidden(timeout=SPAWN)
    deadline = time.monotonic() + 120
    while server_of(ADA):  # the hub says stopped once the process is gone; wait for the process
        assert time.monotonic() < deadline, "the student's server outlived Stop My Server"
        time.sleep(0.3)
    shot(page, "15-server-stopped")
    page.goto(hub.url("/hub/spawn"))  # what Start My Server links to
    lab_is_open(page)
    page.goto(hub.url(f"/user/{ADA}/lab/tree/workbook/{CHAPTER}.ipynb"))
    lab_is_open(page)
    expect(page.locator(".jp-NotebookPanel:visible")).to_contain_text("A sentence the author added", timeout=WAIT)
    shot(page, "16-after-restart-and-update")
    cell = next(c for c in nbformat.read(copy, as_version=4).cells if c.get("id") == found["1.1"].answer_id)
    assert cell.source == mine.rstrip("\n") or cell.source == mine
    assert list((copy.parent / "earlier-versions").glob(f"{CHAPTER}.*.ipynb"))


def every_chapter(hub):
    """Start running, as a student in the course venv, every chapter and appendix of the
    learner's edition their copy is made from (top to bottom in one nbconvert); the last test
    reads the outcome. Started with the hub, so that it runs while the browser steps wait."""
    entry = pwd.getpwnam(GRACE)
    scratch = Path(entry.pw_dir) / "run-every-chapter"
    env = hub.dir / "env"
    script = (f"rm -rf {scratch} && cp -r {hub.dir / 'edition'} {scratch} && "
              f"{env}/bin/jupyter nbconvert --to notebook --execute --inplace "
              f"--ExecutePreprocessor.timeout=600 {scratch}/*.ipynb")
    environment = {"PATH": f"{env}/bin:/usr/bin:/bin", "LD_LIBRARY_PATH": str(hub.dir / "python" / "lib"),
                   "WORKBOOK_HIDE_SOLUTIONS": "1"}
    def demote():
        os.setgroups(os.getgrouplist(entry.pw_name, entry.pw_gid))
        os.setgid(entry.pw_gid)
        os.setuid(entry.pw_uid)
    process = subprocess.Popen(["/bin/sh", "-c", script], preexec_fn=demote, cwd=entry.pw_dir,
                               env=dict(environment, HOME=entry.pw_dir, USER=entry.pw_name),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    return process, scratch


def test_every_chapter_runs_in_a_students_kernel(hub):
    """As the student, in the course venv: every chapter and appendix of the learner's edition,
    the PostgreSQL appendix's temporary server included, top to bottom without an error."""
    process, scratch = hub.chapters
    output, _ = process.communicate(timeout=1200)
    assert process.returncode == 0, output[-4000:]
    names = sorted(p.name for p in scratch.glob("*.ipynb"))
    assert names == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    for path in scratch.glob("*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            assert not errors, (path.name, cell.get("id"), errors[0].get("ename"))


def test_make_hub_teardown_ends_the_term(hub):
    """After every other test: make hub-teardown lists what it removes and asks; anything but yes
    removes nothing; yes keeps the gradebook in KEEP, then removes every account, home, HUB_DIR and
    the terminals' PATH snippet, and leaves nothing of the course running."""
    kept = hub.scratch / "kept-course"
    homes = {name: hub.home(name) for name in [INSTRUCTOR, *STUDENTS]}
    profile = environment.profile_path(hub.dir / "env")
    grades = hub.scratch / "grades"  # make grade's output, from the collect test
    status, printed = hub.run("hub-teardown", f"KEEP={kept}", f"GRADES={grades}", timeout=300, answer="no\n")
    assert status == 0 and printed.rstrip().endswith("Nothing removed."), printed  # declining is no error
    assert f"make grade's output, {grades}, to {kept / 'grades'}" in printed
    assert "The formgrader's own scores stay at zero: make grade grades" in printed
    for name, home in homes.items():
        assert f"{name} ({home})" in printed and accounts.account(name)
    assert str(hub.dir) in printed and str(profile) in printed and f"copied to {kept}" in printed
    assert hub.dir.exists() and not kept.exists()
    status, printed = hub.run("hub-teardown", f"KEEP={kept}", f"GRADES={grades}", timeout=300, answer="yes\n")
    assert status == 0, printed
    assert (kept / "gradebook.db").is_file() and (kept / "submitted" / ADA).is_dir()
    assert (kept / "grades" / "gradebook.csv").read_text() == (grades / "gradebook.csv").read_text()
    assert not hub.homes.exists() and str(hub.homes) in printed  # make hub made it, empty now
    assert os.stat(kept).st_mode & 0o077 == 0
    for name, home in homes.items():
        assert accounts.account(name) is None and not home.exists()
    assert not hub.dir.exists() and not profile.exists()
    leftover = subprocess.run(["pgrep", "-f", str(hub.dir)], capture_output=True, text=True).stdout.split()
    assert leftover == [] and hub_reaper.leftovers([hub.scratch]) == {}
