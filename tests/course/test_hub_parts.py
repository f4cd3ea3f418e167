"""The course hub's parts that need no root and no browser (make test-hub runs the whole hub):
the roster's checks, the class edition of the package, the feedback pages, the learner's copy
made from a ready edition, the settings every server gets, and the check that refuses a
submission made in another student's name, and the one that refuses to start a hub beside an
open copy of the answers."""
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
from course.editions import learner
from course.hub import accounts, checks, clone, collect, environment, exchange, exposure, feedback, teardown
from course.editions.package import write_package
from course.editions.release import write_release
from course.hub.roster import Member, read_roster


def roster(tmp_path, text):
    path = tmp_path / "roster.csv"
    path.write_text(text)
    return path


def test_a_roster_with_a_header_comments_and_blank_lines(tmp_path):
    path = roster(tmp_path, "username,display name\n# week 1\n\nada,Ada Lovelace\ngrace\n")
    assert read_roster(path) == [Member("ada", "Ada Lovelace"), Member("grace", "")]


def test_a_display_name_with_a_comma_is_kept_and_written_apart_in_the_accounts_comment(tmp_path):
    # a registrar's roster: `zoe_o-1,"O'Neil, Zoë"` was refused ("without : , ="), though valid CSV
    path = roster(tmp_path, 'username,display name\nzoe_o-1,"O\'Neil, Zoë"\nbo,a = b\n')
    assert read_roster(path) == [Member("zoe_o-1", "O'Neil, Zoë"), Member("bo", "a = b")]
    # the comment field's parts are separated by commas: the name is its first part, the mark its last
    written = accounts.comment("O'Neil, Zoë", "zoe_o-1")
    assert written == f"O'Neil Zoë,,,{accounts.MARK}"
    assert written.split(",")[0] == "O'Neil Zoë" and written.split(",")[-1] == accounts.MARK
    assert accounts.comment(" , ", "bo") == f"bo,,,{accounts.MARK}"


@pytest.mark.parametrize("text, fault", [
    ("ada\nAda\n", "line 2: username 'Ada' is not a portable Unix name"),
    ("ada\n../etc\n", "line 2: username '../etc'"),
    ("ada\n1ada\n", "line 2: username '1ada'"),
    ("ada,Ada\nada,Again\n", "line 2: username 'ada' is already on line 1"),
    ("ada,Ada,extra\n", "line 1: expected username and an optional display name, found 3 fields"),
    ("ada,Ada: the first\n", "line 1: display name must be at most 64 characters, without : or control"),
    ("ada,\"Ada\tLovelace\"\n", "line 1: display name must be at most 64 characters, without : or control"),
    ("ada," + "A" * 65 + "\n", "line 1: display name must be at most 64 characters"),
    ("# nobody yet\n", "names no student"),
    ("x" * 33 + "\n", "line 1: username"),
])
def test_a_bad_roster_line_is_named(tmp_path, text, fault):
    with pytest.raises(ValueError) as raised:
        read_roster(roster(tmp_path, text))
    assert fault in str(raised.value)


def test_the_class_edition_on_the_hub_holds_no_answer_and_what_its_chapters_read(tmp_path):
    write_package(tmp_path)
    written = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert not [name for name in written if name.startswith(("workbook/teaching/exercises/checks", "workbook/teaching/exercises/answers"))]
    # what the chapters read is package data, inside the package: nothing beside it
    assert {"workbook/specification/store.py", "workbook/specification/test_store.py",
            "workbook/benchmarks/results.json", "workbook/benchmarks/postgres.json"} <= written
    assert {name.split("/")[0] for name in written} == {"workbook", "pyproject.toml", "requirements.txt"}


def test_a_feedback_page_escapes_what_it_quotes():
    marks = [{"exercise": "1.1", "chapter": "01-x", "points": 0, "maximum": 1, "status": "not yet",
              "sentence": "payload rejects <b>it</b> & more."}]
    page = feedback.page("ada", "01-x", marks)
    assert "&lt;b&gt;it&lt;/b&gt; &amp; more." in page and "<b>it" not in page
    assert "Score: 0 of 1" in page and "feedback for ada" in page


def test_feedback_skips_a_submission_nbgrader_did_not_make_and_says_so(tmp_path):
    # a folder in submitted/ without submission_secret.txt (a forgery collected by nbgrader's own
    # collect) stopped make hub-feedback with a traceback, and nobody got feedback
    chapter = "01-purpose-and-validation"
    mark = {"exercise": "1.1", "chapter": chapter, "points": 1, "maximum": 1, "status": "correct",
            "sentence": "right."}
    grades = tmp_path / "grades"
    grades.mkdir()
    (grades / "grades.json").write_text(json.dumps({"chapters": [chapter], "students": [
        {"student": name, "exercises": [mark]} for name in ("ada", "walkana", "zoe")]}))
    course = tmp_path / "course"
    for name in ("ada", "walkana"):
        folder = course / "submitted" / name / chapter
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
        if name == "ada":
            (folder / "submission_secret.txt").write_text("s3cret")
    stale = course / "feedback" / "walkana" / chapter
    stale.mkdir(parents=True)
    (stale / f"{chapter}.html").write_text("an old page without its secret")
    written, skipped = feedback.write_pages(grades, course)
    assert written == [("ada", chapter)]  # zoe submitted nothing: no page, nothing to say
    assert skipped == [("walkana", chapter, ["submission_secret.txt"])]
    assert (course / "feedback" / "ada" / chapter / "submission_secret.txt").read_text() == "s3cret"
    assert not stale.exists()  # nbgrader release_feedback would stop on it
    assert feedback.skipped_sentence("walkana", chapter, ["submission_secret.txt"], course) == (
        f"Skipped walkana's {chapter}: its folder in {course / 'submitted'} has no "
        "submission_secret.txt, so nbgrader submit did not make it (ask walkana to submit again "
        "from the Assignments tab, then collect, grade and release feedback again).")


def two_chapters(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for path in sorted((ROOT / "notebooks").glob("0[12]-*.ipynb")):
        (source / path.name).write_text(path.read_text())
    return source


def test_a_copy_made_from_a_ready_edition_equals_one_made_from_the_source(tmp_path):
    source, edition = two_chapters(tmp_path), tmp_path / "edition"
    learner.write_edition(edition, source)
    from_source, from_edition = tmp_path / "a", tmp_path / "b"
    learner.sync(from_source, source)
    learner.sync(from_edition, edition)
    for path in sorted(from_source.glob("*.ipynb")):
        assert (from_edition / path.name).read_text() == path.read_text(), path.name
    assert json.loads((from_edition / learner.MANIFEST).read_text()) == json.loads(
        (from_source / learner.MANIFEST).read_text())
    # and a changed chapter in a new edition is an update that keeps the learner's answers
    first = sorted(edition.glob("01-*.ipynb"))[0]
    notebook = nbformat.read(first, as_version=4)
    notebook.cells[0].source += "\n\nAdded later."
    nbformat.write(notebook, first)
    assert learner.sync(from_edition, edition) == ([], [first.name])
    assert learner.update(from_edition, edition) == [first.name]


def test_the_hub_edition_brings_its_own_how_to_file(tmp_path):
    edition = tmp_path / "edition"
    learner.write_edition(edition, two_chapters(tmp_path))
    (edition / learner.START).write_text((ROOT / "course" / "hub" / "files" / "start-here.md").read_text())
    learner.sync(tmp_path / "copy", edition)
    assert "course hub" in (tmp_path / "copy" / learner.START).read_text()
    assert "make lab" not in (tmp_path / "copy" / learner.START).read_text()


def test_the_students_servers_leave_the_instructors_tools_off(tmp_path):
    env = tmp_path / "env"
    (env / "etc" / "jupyter" / "jupyter_server_config.d").mkdir(parents=True)
    environment.configure(env, tmp_path / "exchange", "agent-memory-workbook")
    page = json.loads((env / "etc" / "jupyter" / "labconfig" / "page_config.json").read_text())
    # the instructor's tools off, and the workbook's page settings, as make lab's (tools/venv)
    assert page == {"disabledExtensions": {p: True for p in environment.STUDENTS_OFF},
                    **json.loads((ROOT / "jupyterlab" / "page_config.json").read_text())}
    assert page["buildCheck"] is False
    assert "@jupyter/nbgrader:assignment-list" not in page["disabledExtensions"]
    for name in environment.SERVER_OFF:
        server = json.loads((env / "etc" / "jupyter" / "jupyter_server_config.d" / f"{name}.json").read_text())
        assert server["ServerApp"]["jpserver_extensions"] == {name: False}
    config = (env / "etc" / "jupyter" / "nbgrader_config.py").read_text()
    assert "c.CourseDirectory.course_id = 'agent-memory-workbook'" in config
    assert f"c.Exchange.root = {str(tmp_path / 'exchange')!r}" in config
    kernels = (env / "etc" / "ipython" / "ipython_kernel_config.py").read_text()
    assert kernels == (ROOT / "jupyterlab" / "ipython_kernel_config.py").read_text()
    # nbgrader's collect is the one that refuses a forged submission, installed beside nbgrader
    assert "c.ExchangeFactory.collect = 'coursehub_collect.OwnerCheckedCollect'" in config
    assert "check_owner" not in config
    installed = environment.site_packages(env) / "coursehub_collect.py"
    assert installed.read_text() == (ROOT / "course" / "hub" / "collect.py").read_text()
    assert os.stat(installed).st_mode & 0o444 == 0o444
    # the workbook's own server settings, as make lab's server has them, and the login cache
    server = json.loads((env / "etc" / "jupyter" / "jupyter_server_config.d" / "workbook.json").read_text())
    assert server["ZMQChannelsWebsocketConnection"] == {"kernel_ws_protocol": ""}
    assert server["FileContentsManager"] == {"pre_save_hook": "workbook_lab.drop_widget_views"}
    assert server["HubOAuth"]["cache_max_age"] >= 3600
    assert (environment.site_packages(env) / "workbook_lab.py").read_text() == \
        (ROOT / "jupyterlab" / "workbook_lab.py").read_text()


def test_the_formgrader_hides_its_feedback_buttons_by_a_stylesheet_replaced_not_written_in_place(tmp_path):
    sheet = environment.site_packages(tmp_path) / "nbgrader/server_extensions/formgrader/static/css/nbgrader.css"
    sheet.parent.mkdir(parents=True)
    sheet.write_text("td { color: black; }\n")
    cached = tmp_path / "uv-cache-copy.css"
    os.link(sheet, cached)  # as uv links an installed file to its cache
    assert environment.formgrader_css(tmp_path) == [sheet]
    environment.formgrader_css(tmp_path)
    text = sheet.read_text()
    assert text.count("td.generate-feedback, td.release-feedback { display: none; }") == 1
    assert text.startswith("td { color: black; }") and "white-space: pre-wrap" in text
    assert cached.read_text() == "td { color: black; }\n"


def test_a_terminals_login_shell_gets_the_course_environment_first_on_path(tmp_path):
    env = tmp_path / "hub dir" / "env"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").write_text("#!/bin/sh\necho course-python\n")
    os.chmod(env / "bin" / "python", 0o755)
    profile = environment.write_profile(env, tmp_path)
    assert profile == environment.profile_path(env, tmp_path) and profile.name.startswith("agent-memory-hub-")
    shell = "PATH=/usr/bin:/bin; . " + str(profile).replace(" ", "\\ ") + "; command -v python"
    inside = subprocess.run(["sh", "-c", shell], env={"WORKBOOK_HUB_ENV": str(env)}, capture_output=True, text=True)
    assert inside.stdout.strip() == str(env / "bin" / "python"), inside.stderr
    outside = subprocess.run(["sh", "-c", shell], env={}, capture_output=True, text=True)
    assert outside.stdout.strip() != str(env / "bin" / "python")  # another shell's PATH is left alone


ME = pwd.getpwuid(os.geteuid()).pw_name


def submission(inbound, student, stamp="2026-12-01 10:00:00.000000 UTC", files=None):
    folder = inbound / f"{student}+01-purpose-and-validation+{stamp}+a1b2c3d4"
    folder.mkdir(parents=True)
    (folder / "timestamp.txt").write_text(stamp)
    (folder / "01-purpose-and-validation.ipynb").write_text("{}")
    for name, target in (files or {}).items():
        (folder / name).symlink_to(target)
    return folder


def test_a_submission_in_another_students_name_is_refused_and_named(tmp_path):
    # walkbo made inbound/walkana+...: nbgrader 0.9.6 only warned "cheating attempt?" and collected it
    inbound = tmp_path / "inbound"
    own = submission(inbound, ME)
    assert collect.refusal(str(own), ME) is None
    forged = submission(inbound, "walkana", "2026-12-01 23:59:59.000000 UTC")
    why = collect.refusal(str(forged), "walkana")
    assert why == (f"{ME} made a submission in walkana's name, so it is not collected (walkana's own "
                   f"latest submission is, if there is one): {forged.name}.")
    # nbgrader's check_owner off (one uid for every account): the owner is not compared
    assert collect.refusal(str(forged), "walkana", check_owner=False) is None


def test_a_submission_holding_a_link_is_refused_even_from_its_owner(tmp_path):
    # collect runs as the instructor and would copy what a link points to: the worked answers
    inbound = tmp_path / "inbound"
    linked = submission(inbound, ME, files={"answers.ipynb": "/home/teacher/course/source/01/01.ipynb"})
    why = collect.refusal(str(linked), ME, check_owner=False)
    assert why == (f"{ME}'s submission holds answers.ipynb, a link or a special file rather than a "
                   f"file, so it is not collected: {linked.name}.")
    top = inbound / f"{ME}+01-purpose-and-validation+2026-12-02 10:00:00.000000 UTC+ffff0000"
    top.symlink_to(linked)
    assert collect.refusal(str(top), ME).startswith(f"a submission in {ME}'s name is not a folder")


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another account needs root")
def test_a_submission_holding_another_accounts_file_is_refused(tmp_path):
    inbound = tmp_path / "inbound"
    own = submission(inbound, ME)
    os.chown(own / "01-purpose-and-validation.ipynb", 65534, 65534)  # nobody's: a hard link, say
    assert "which belongs to" in collect.refusal(str(own), ME)


@pytest.fixture
def machine():
    """A folder every account can enter (as /work was), outside pytest's own, which is closed."""
    top = Path(tempfile.mkdtemp(prefix="workbook-clones-", dir="/tmp"))
    os.chmod(top, 0o755)
    yield top
    shutil.rmtree(top)


ANSWERS = Path("workbook") / "teaching" / "exercises" / "answers.json"


def a_clone(path, mode=0o755):
    (path / ANSWERS).parent.mkdir(parents=True)
    (path / ANSWERS).write_text("{}")
    (path / "notebooks").mkdir()
    (path / "notebooks" / "01-purpose-and-validation.ipynb").write_text('{"source": "### BEGIN SOLUTION"}')
    os.chmod(path, mode)
    return path


STUDENT = "nobody" if os.geteuid() == 0 else ME  # as root the search runs as nobody, as make hub's


def test_make_hub_finds_every_copy_of_the_answers_a_student_could_read(machine):
    # a student found answers.json readable in five other clones; make hub looked beside its own only
    open_clone = a_clone(machine / "wt" / "another-clone")
    a_clone(machine / "wt" / "closed-clone", mode=0o700)
    nested = a_clone(machine / "deep" / "down" / "old-copy")
    installed = machine / "venv" / "site-packages" / "workbook" / "teaching" / "exercises"
    installed.mkdir(parents=True)
    (installed / "answers.json").write_text("{}")
    (machine / "plain" / "notebooks").mkdir(parents=True)  # a chapter without solutions: a learner's
    (machine / "plain" / "notebooks" / "01-purpose-and-validation.ipynb").write_text("{}")
    (machine / "repo.git" / "objects").mkdir(parents=True)  # a repository, not the workbook's
    found = exposure.search([str(machine)], account=STUDENT, chapters=["01-purpose-and-validation.ipynb"],
                            leave_out=[machine / "wt" / "hub"])
    assert found.finished and found.looked == [str(machine)]
    assert exposure.copies(path for path, _ in found.found) == sorted(
        [str(machine / "deep" / "down" / "old-copy"), str(open_clone), str(machine / "venv" / "site-packages")])
    why = exposure.refusal(found)
    assert why.startswith("any account on this machine, the students' too, can read worked answers in ")
    assert f"chmod go-rwx {machine / 'deep' / 'down' / 'old-copy'} " in why and "ACCEPT_READABLE=" in why
    # accepted where the instructor says so, and then only there
    assert exposure.refusal(found, accept=[str(machine)]) is None
    assert str(nested) in exposure.refusal(found, accept=[str(open_clone), str(machine / "venv")])
    assert exposure.refusal(found, accept=["all"]) is None
    # the fix it names is the fix
    for folder in exposure.copies(path for path, _ in found.found):
        os.chmod(folder, 0o700)
    again = exposure.search([str(machine)], account=STUDENT, chapters=["01-purpose-and-validation.ipynb"])
    assert again.found == [] and exposure.refusal(again) is None


def test_the_search_skips_network_and_kernel_file_systems_and_says_when_it_did_not_finish(machine, tmp_path,
                                                                                         monkeypatch):
    table = tmp_path / "mounts"
    table.write_text("/dev/vda / ext4 rw 0 0\nproc /proc proc rw 0 0\nserver:/x /mnt/nfs nfs4 rw 0 0\n"
                     "sshfs#me@h: /mnt/s fuse.sshfs rw 0 0\ntmpfs /dev/shm tmpfs rw 0 0\n"
                     "tmpfs /run/user/0 tmpfs rw 0 0\ncgroup /sys/fs/cgroup/cpu cgroup rw 0 0\n")
    looked, skipped = exposure.mounts(table)
    assert looked == ["/", "/dev/shm", "/run/user/0"]
    assert {point for point, _ in skipped} == {"/proc", "/mnt/nfs", "/mnt/s", "/sys/fs/cgroup/cpu"}
    for n in range(20):
        a_clone(machine / f"clone-{n}")
    # A search that outlasts its limit, whatever the machine's speed: find over 20 small clones
    # could end within a 1 ms limit on an idle machine (or one that ran this test first).
    finding = exposure.find_command
    monkeypatch.setattr(exposure, "find_command",
                        lambda points, chapters: ["sh", "-c", 'sleep 5; exec "$@"', "find",
                                                  *finding(points, chapters)])
    stopped = exposure.search([str(machine)], account=STUDENT, seconds=0.5, chapters=["01-purpose-and-validation.ipynb"])
    assert not stopped.finished
    assert "did not finish" in exposure.refusal(stopped, accept=[str(machine / "clone-0")])
    assert exposure.refusal(stopped, accept=["all"]) is None


def test_make_hub_closes_its_own_clone(machine):
    tree = a_clone(machine / "hub")
    assert clone.open_to_others(tree / "workbook" / "teaching" / "exercises")
    assert clone.close(tree) and os.stat(tree).st_mode & 0o777 == 0o700 and not clone.close(tree)
    assert not clone.open_to_others(tree / "workbook" / "teaching" / "exercises")


def test_make_hub_names_each_problem_before_it_changes_anything(machine):
    closed = machine / "closed"
    closed.mkdir(mode=0o700)
    os.chmod(closed, 0o700)
    assert checks.enterable_by_all(closed / "srv" / "deeper") == closed
    assert checks.enterable_by_all(machine / "open" / "srv") is None
    assert f"HUB_DIR {closed / 'srv'} is under {closed}" in checks.hub_folder(closed / "srv")
    assert "inside this clone" in checks.hub_folder(ROOT / "build" / "hub-dir")
    assert checks.homes_folder(closed / "home").startswith(f"HUB_HOMES {closed / 'home'} is under {closed}")
    roster_file = machine / "roster.csv"
    roster_file.write_text("ada\nroot\n")
    members, why = checks.people(roster_file, "teacher")
    assert members is None and why.startswith("root already belongs to an account on this machine that make hub did not make")
    roster_file.write_text("ada\n")
    assert checks.people(roster_file, "ada")[1].startswith("INSTRUCTOR 'ada' is also a student")
    assert checks.people(roster_file, "Teacher")[1].startswith("INSTRUCTOR: username 'Teacher'")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        ports = {"ip": "127.0.0.1", "port": port, "hub_port": port + 1 if port < 65535 else port - 1,
                 "proxy_api_port": 0}
        assert checks.ports(ports, machine / "state").startswith(f"HUB_PORT {port} is taken by another program")
    assert checks.commands(("sh",)) is None and "no-such-command-here" in checks.commands(("no-such-command-here",))


def test_the_chapter_a_student_fetches_says_it_is_the_copy_they_hand_in(tmp_path):
    # two copies of chapter 1 with one tab title, two stubs for one exercise, an intro promising
    # check() and solution(): the fetched copy is named apart, has the practice copy's stubs, and
    # says what the student will see
    from course.editions.release import FOR_GRADING
    stems = ["01-purpose-and-validation", "02-visibility"]
    written = write_release(tmp_path / "course", stems=stems)
    edition = tmp_path / "edition"
    learner.write_edition(edition)
    exchange.mark_hand_in(tmp_path / "course", edition)
    for name in written:
        stem = name.removesuffix(".ipynb")
        assert [p.name for p in (tmp_path / "course" / "source" / stem).iterdir()] == [exchange.HAND_IN_PREFIX + name]
        cells = nbformat.read(tmp_path / "course" / "source" / stem / (exchange.HAND_IN_PREFIX + name), as_version=4).cells
        assert cells[0].cell_type == "markdown"  # no directive cell above it any more
        heading, told, _ = cells[0].source.split("\n\n", 2)
        assert heading.startswith("# Chapter ")
        assert told.startswith("> **This is the copy you hand in.**") and "*Submit*" in told
        assert f"`~/workbook/{name}`, is never graded" in told
        assert "judged when graded" in told and "*Fetch Feedback* appears" in told
        practice = {c.get("id"): c.source for c in nbformat.read(edition / name, as_version=4).cells}
        text = "".join(cell.source for cell in cells)
        assert "### BEGIN SOLUTION" not in text and "NotImplementedError" not in text and FOR_GRADING not in text
        assert exchange.HUB_GRADING in text
        for cell in cells:
            if cell.cell_type == "code" and "____" in cell.source:
                assert cell.source == practice[cell.get("id")]
    # the learner's copy, which the practice copy is made from, says nothing of the kind
    assert "copy you hand in" not in json.dumps(learner.learner_notebook(ROOT / "notebooks" / written[0]))


def test_the_hubs_nbgrader_runs_from_any_shell_and_from_root_as_the_instructor(machine):
    # env/bin/nbgrader alone fails in a root shell: its Python needs HUB_DIR/python/lib
    env, lib, course = machine / "env", machine / "python" / "lib", machine / "course"
    (env / "bin").mkdir(parents=True)
    lib.mkdir(parents=True)
    course.mkdir()
    (env / "bin" / "nbgrader").write_text('#!/bin/sh\necho "$(id -un) $PWD $LD_LIBRARY_PATH $*"\n')
    os.chmod(env / "bin" / "nbgrader", 0o755)
    teacher = "daemon" if os.geteuid() == 0 else ME
    command = environment.write_commands(machine / "bin", env, lib, teacher, course)
    assert command == machine / "bin" / "nbgrader"
    done = subprocess.run([str(command), "list", "--inbound"], cwd="/", capture_output=True, text=True,
                          env={"PATH": "/usr/sbin:/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    user, where, library, *arguments = done.stdout.split()
    assert (user, library, arguments) == (teacher, str(lib), ["list", "--inbound"])
    if os.geteuid() == 0:
        assert where == str(course)  # nbgrader's course folder, as the instructor


def test_the_banner_names_the_formgrader_the_chapters_option_and_the_hubs_nbgrader():
    from course.hub import cli as hub
    settings = {"ip": "127.0.0.1", "port": 8000, "students": ["ada"], "roster": "/r.csv",
                "instructor": "teacher", "passwords": "/home/teacher/hub-passwords.csv",
                "course": "/home/teacher/course", "state": "/srv/agent-memory-hub/state",
                "nbgrader": "/srv/agent-memory-hub/bin/nbgrader", "idle": 3600}
    lines = hub.banner(settings, ["ada"]).splitlines()
    assert lines[0] == "Course hub ready: 1 student from /r.csv, instructor teacher (1 new account given a first password)."
    assert "  Formgrader: http://localhost:8000/user/teacher/formgrader (as teacher, in a browser tab of its own):" in lines
    assert "              make grade SUBMISSION=/home/teacher/course/submitted [CHAPTERS=01,02]" in lines
    assert "  nbgrader:   /srv/agent-memory-hub/bin/nbgrader (the course's, from any shell; from root it runs as teacher)" in lines
    assert any("make hub-servers HUB_DIR=/srv/agent-memory-hub" in line for line in lines)
    assert lines[-1].lstrip().startswith("Stop:") and "make hub-stop" in lines[-1] and "make hub-teardown" in lines[-1]
    assert hub.plural(2, "new account") == "2 new accounts" and hub.plural(1, "student") == "1 student"


def test_the_end_of_term_says_what_it_removes_and_how_to_keep_the_gradebook(tmp_path):
    teardown.record_made(tmp_path, ["ada", "teacher"])
    teardown.record_made(tmp_path, ["ada", "grace"])
    assert (tmp_path / teardown.MADE).read_text().split() == ["ada", "teacher", "grace"]
    said = teardown.describe([("ada", "/home/ada")], [Path("/srv/hub")], None)
    assert "1 accounts" not in said and "ada (/home/ada)" in said and "/srv/hub" in said and "KEEP=DIR" in said
    assert "copied to /kept first" in teardown.describe([], [], Path("/kept"))


def test_a_proxy_or_hub_that_does_not_come_up_is_said_in_one_sentence(tmp_path):
    # make hub waits for each with a bound, and a process that ends at once ends the wait at once
    from course.hub import service
    (tmp_path / "env" / "bin").mkdir(parents=True)
    (tmp_path / "env" / "bin" / "jupyterhub").write_text("#!/bin/sh\nexit 3\n")
    os.chmod(tmp_path / "env" / "bin" / "jupyterhub", 0o755)
    settings = {"state": str(tmp_path), "ip": "127.0.0.1", "port": 9, "hub_port": 9, "proxy_api_port": 9,
                "proxy": "/bin/false", "env": str(tmp_path / "env")}
    with pytest.raises(RuntimeError) as raised:
        service.ensure_proxy(settings, "token")
    assert str(raised.value) == f"the proxy did not start; its log, {tmp_path / 'proxy.log'}, says why"
    with pytest.raises(RuntimeError) as raised:
        service.start_hub(settings, dict(os.environ), tmp_path / "jupyterhub_config.py")
    assert str(raised.value).startswith("JupyterHub stopped as it started (exit status 3)")
    assert service.proxy_running(tmp_path) == (None, None) and service.hub_pid(tmp_path) is None
    assert service.running_servers(tmp_path) == {}  # no database yet: nothing started


def test_the_proxy_and_the_hub_start_with_interrupts_heard_when_make_hub_ran_in_the_background(tmp_path):
    # A shell's background job starts with SIGINT and SIGQUIT ignored, and the hub's children
    # inherited that: JupyterHub stops what it started with SIGINT first, so make hub-stop waited
    # out its limit for the hub before killing it
    import signal
    from course.hub import service
    (tmp_path / "env" / "bin").mkdir(parents=True)
    for name in ("jupyterhub", "proxy"):
        program = tmp_path / "env" / "bin" / name
        program.write_text(f"#!/bin/sh\ngrep ^SigIgn: /proc/$$/status > {tmp_path / name}.ignored\nexit 3\n")
        os.chmod(program, 0o755)
    settings = {"state": str(tmp_path), "ip": "127.0.0.1", "port": 9, "hub_port": 9, "proxy_api_port": 9,
                "proxy": str(tmp_path / "env" / "bin" / "proxy"), "env": str(tmp_path / "env")}
    heard = (signal.SIGINT, signal.SIGQUIT)
    was = {number: signal.signal(number, signal.SIG_IGN) for number in heard}  # as `make hub &` starts
    try:
        with pytest.raises(RuntimeError):
            service.ensure_proxy(settings, "token")
        with pytest.raises(RuntimeError):
            service.start_hub(settings, dict(os.environ), tmp_path / "jupyterhub_config.py")
    finally:
        for number, handler in was.items():
            signal.signal(number, handler)
    for name in ("jupyterhub", "proxy"):
        ignored = int((tmp_path / f"{name}.ignored").read_text().split()[1], 16)
        assert [number for number in heard if ignored & 1 << (number - 1)] == [], (name, hex(ignored))


def test_the_learners_modules_on_the_hub_import_on_their_own(tmp_path):
    # start-server runs `python -m course.editions.learner` with PYTHONPATH=HUB_DIR/tools, where only
    # LEARNER_MODULES are (none of the grader's): a module it imports and that list lacks fails here
    for name in environment.LEARNER_MODULES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    script = ("import sys, course.editions.learner as l; "
              "print(sorted(m.__file__ for n, m in sys.modules.items() if n.startswith('course')))")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(tmp_path)))
    assert done.returncode == 0, done.stderr[-2000:]
    assert all(path.startswith(str(tmp_path)) for path in eval(done.stdout)), done.stdout


def hub_arguments(*argv):
    from course.hub import cli as hub
    return hub.options().parse_args(["start", "--dir", "/srv/hub", *argv])


def test_a_restart_keeps_what_this_hub_dir_accepted_and_the_refusal_offers_a_folder_above(machine):
    # a restart was refused over a clone accepted at the first start, and again over each new one
    from course.hub import cli as hub
    kept = {"accept_readable": ["/work/main", "/work/wt/a"]}
    assert hub.accepted(hub_arguments(), kept) == ("/work/main", "/work/wt/a")
    assert hub.accepted(hub_arguments("--accept-readable", "/work/wt/b"), kept) == (
        "/work/main", "/work/wt/a", "/work/wt/b")
    assert hub.accepted(hub_arguments("--accept-readable", "none,/work/wt/b"), kept) == ("/work/wt/b",)
    first, second = a_clone(machine / "wt" / "one"), a_clone(machine / "wt" / "two")
    found = exposure.search([str(machine)], account=STUDENT, chapters=["01-purpose-and-validation.ipynb"])
    why = exposure.refusal(found)
    assert f"ACCEPT_READABLE={first},{second}, or a folder above them" in why
    assert f"(ACCEPT_READABLE={machine / 'wt'})" in why
    assert exposure.refusal(found, accept=[str(machine / "wt")]) is None  # a clone made later is accepted too
    assert exposure.parent_folder(["/work"]) is None  # never / : that is ACCEPT_READABLE=all


def test_a_restart_takes_this_hub_dirs_settings_and_refuses_a_conflicting_one_in_a_sentence(tmp_path):
    # a plain make hub ROSTER=... HUB_DIR=... fell back to INSTRUCTOR=instructor and HUB_PORT=8000
    from course.hub import cli as hub
    kept = {"instructor": "teacher", "port": 8123, "ip": "127.0.0.1", "roster": "/r.csv", "idle": 600,
            "timeout": 30, "homes": "/srv/homes"}
    arguments = hub_arguments()
    assert hub.with_kept(arguments, kept, tmp_path / "settings.json") == []
    assert (arguments.instructor, arguments.port, arguments.roster, arguments.idle, arguments.timeout,
            arguments.homes) == ("teacher", 8123, "/r.csv", 600, 30, "/srv/homes")
    fresh = hub_arguments()
    assert hub.with_kept(fresh, {}, tmp_path / "settings.json") == []
    assert (fresh.instructor, fresh.port, fresh.homes) == ("instructor", 8000, "/home")
    changed = hub_arguments("--port", "8200", "--roster", "/longer.csv")  # these may change on a restart
    assert hub.with_kept(changed, kept, tmp_path / "settings.json") == [] and changed.port == 8200
    refused = hub.with_kept(hub_arguments("--instructor", "instructor", "--homes", "/home"), kept,
                            tmp_path / "settings.json")
    assert refused == [
        f"HUB_HOMES=/home conflicts with HUB_HOMES=/srv/homes, which this HUB_DIR's course was set up "
        f"with ({tmp_path / 'settings.json'}); leave HUB_HOMES out to keep it, or end that course first "
        "with make hub-teardown.",
        f"INSTRUCTOR=instructor conflicts with INSTRUCTOR=teacher, which this HUB_DIR's course was set up "
        f"with ({tmp_path / 'settings.json'}); leave INSTRUCTOR out to keep it, or end that course first "
        "with make hub-teardown."]
    # the Makefile passes a variable only when it is given, so the kept one is not overridden
    made = subprocess.run(["make", "-n", "-s", "hub", "HUB_DIR=/srv/hub"], cwd=ROOT, capture_output=True,
                          text=True).stdout.splitlines()[-1]
    assert made.split()[1:] == ["start", "--dir", "/srv/hub", "--scan-seconds", "120"], made


def test_the_banner_prints_the_exact_restart_command_and_counts_the_instructor_apart():
    from course.hub import cli as hub
    settings = {"ip": "127.0.0.1", "port": 8000, "students": ["ada"], "roster": "/r.csv",
                "instructor": "teacher", "passwords": "/p.csv", "course": "/home/teacher/course",
                "state": "/srv/agent-memory-hub/state", "nbgrader": "/n", "idle": 3600}
    restart = next(line for line in hub.banner(settings, []).splitlines() if "Restart:" in line)
    assert "make hub HUB_DIR=/srv/agent-memory-hub " in restart and "make hub again" not in restart
    # "4 student servers kept running" counted the instructor's as a student's
    running = {"ada": 1, "bo": 2, "cy": 3, "teacher": 4}
    assert hub.servers_sentence(running, "teacher") == "3 student servers and the instructor's"
    assert hub.servers_sentence({"ada": 1}, "teacher") == "1 student server"
    assert hub.status_servers(running, "teacher") == "3 student servers and the instructor's running: ada, bo, cy."
    assert hub.status_servers({}, "teacher") == "0 student servers running."


def test_the_end_of_term_keeps_make_grades_output_and_says_why_the_formgrader_shows_zero(tmp_path):
    course, grades, keep = tmp_path / "course", tmp_path / "grades", tmp_path / "kept"
    course.mkdir()
    (course / "gradebook.db").write_text("nbgrader's, all zero")
    grades.mkdir()
    (grades / "gradebook.csv").write_text("student,1.1\nada,1\n")
    said = teardown.describe([], [], keep, grades)
    assert f"make grade's output, {grades}, to {keep / 'grades'}" in said
    assert "The formgrader's own scores stay at zero: make grade grades" in said
    assert "KEEP=DIR keeps a copy, with make grade's output (GRADES)" in teardown.describe([], [], None, grades)
    teardown.keep_course({"course": str(course)}, keep, grades) if os.geteuid() == 0 else \
        shutil.copytree(grades, keep / "grades", dirs_exist_ok=True)  # chown needs root
    assert (keep / "grades" / "gradebook.csv").read_text() == "student,1.1\nada,1\n"


def test_the_end_of_term_removes_the_homes_folder_make_hub_made_once_empty(tmp_path):
    homes = tmp_path / "homes"
    homes.mkdir()
    assert teardown.made_homes({"homes": str(homes), "homes_made": False}) is None
    made = teardown.made_homes({"homes": str(homes), "homes_made": True})
    assert made == homes and str(homes) in teardown.describe([], [], None, None, made)
    (homes / "someone-elses").mkdir()
    assert teardown.remove_homes(made) == (None, homes) and homes.exists()  # named, left
    (homes / "someone-elses").rmdir()
    assert teardown.remove_homes(made) == (homes, None) and not homes.exists()


def test_declining_the_end_of_term_removes_nothing_and_is_no_error(tmp_path, monkeypatch, capsys):
    from course.hub import cli as hub
    state = tmp_path / "srv" / "state"
    state.mkdir(parents=True)
    (state / "settings.json").write_text(json.dumps({
        "instructor": "nobody-here-x", "students": [], "env": str(tmp_path / "srv" / "env"),
        "state": str(state), "course": str(tmp_path / "course")}))
    monkeypatch.setattr(accounts, "require_root", lambda what="": None)
    monkeypatch.setattr("builtins.input", lambda prompt: "no")
    assert hub.main(["teardown", "--dir", str(tmp_path / "srv")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "Nothing removed."
    assert (state / "settings.json").exists()


def test_the_feedback_page_does_not_ask_to_run_a_check_again():
    from workbook.teaching.exercises import BLANK, BLANK_AND_STUB, RAISED
    marks = [{"exercise": "1.1", "chapter": "01-x", "points": 0, "maximum": 1, "status": "not attempted",
              "sentence": BLANK},
             {"exercise": "1.2", "chapter": "01-x", "points": 0, "maximum": 1, "status": "not attempted",
              "sentence": BLANK_AND_STUB},
             {"exercise": "1.3", "chapter": "01-x", "points": 0, "maximum": 1, "status": "error",
              "sentence": RAISED}]
    page = feedback.page("ada", "01-x", marks)
    assert "check again" not in page and "run that cell" not in page and "run it," not in page
    assert "Your answer cell still held the ____ when you handed it in." in page


def test_the_hand_in_copys_exercises_introduction_promises_no_check_or_solution(tmp_path):
    # the hand-in copy said each check() "runs your answer against the real payload" and offered
    # solution(), while its own header said neither works on the hub
    stems = ["01-purpose-and-validation", "05-recovery-and-timelines"]
    write_release(tmp_path / "course", stems=stems)
    learner.write_edition(tmp_path / "edition")
    exchange.mark_hand_in(tmp_path / "course", tmp_path / "edition")
    for stem in stems:
        cells = nbformat.read(tmp_path / "course" / "source" / stem / f"{exchange.HAND_IN_PREFIX}{stem}.ipynb",
                              as_version=4).cells
        intro = next(c.source for c in cells if c.cell_type == "markdown" and c.source.startswith("## Exercises"))
        assert exchange.HUB_EXERCISES in intro
        assert "runs your" not in intro and "a worked answer" not in intro and "work as in" not in intro
    assert "`workbook.teaching.timeline`" in intro  # chapter 5's other sentence stays


def test_the_docs_name_the_files_a_student_sees():
    from course.editions.learner import START
    text = (ROOT / "docs" / "hub.md").read_text()
    assert START == "00-start-here.md" and f"`{START}`" in text
    assert "4 student servers" not in text and "student servers and the instructor's" in text


def lingering(folder):
    """A process whose program is in `folder` (as the idle culler or a kernel is in HUB_DIR/env),
    in a session of its own, as an orphan of a killed hub is."""
    script = folder / "env" / "linger.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text("import time\ntime.sleep(600)\n")
    process = subprocess.Popen([sys.executable, str(script)], start_new_session=True)
    # Popen returns once the child has begun its exec, and /proc shows the new command line a
    # moment later (on a loaded machine, late enough for a search to find nothing): wait for it.
    shows(process, script)
    return process


def shows(process, script, seconds=30):
    """Wait until /proc shows `process` running `script`."""
    cmdline = Path("/proc") / str(process.pid) / "cmdline"
    deadline = time.monotonic() + seconds
    while str(script).encode() not in cmdline.read_bytes().split(b"\0"):
        assert time.monotonic() < deadline, f"/proc never showed {script} running"
        time.sleep(0.01)


def ended_within(process, seconds=60):
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return False
    return True


def test_make_hub_stop_leaves_no_process_run_from_hub_dir(tmp_path):
    # jupyterhub_idle_culler processes from a killed hub were found running hours later
    from course.hub import service
    (tmp_path / "state").mkdir()
    orphan = lingering(tmp_path)
    assert orphan.pid in service.run_from(tmp_path)
    assert service.run_from(tmp_path / "env" / "lin") == {}  # a path's prefix is not its folder
    service.stop_everything(tmp_path / "state")
    assert ended_within(orphan, 30) and service.run_from(tmp_path) == {}


def test_a_killed_hub_test_leaves_no_process_behind(tmp_path):
    # a make test-hub killed mid-run runs no fixture's clean-up: the watchdog it starts first does it
    scratch = Path(tempfile.mkdtemp(prefix="workbook-hub-reaper-"))
    test = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # stands for pytest
    reaper = subprocess.Popen([sys.executable, str(ROOT / "tests" / "support" / "hub_reaper.py"),
                               "--watch", str(test.pid), "--folder", str(scratch)], start_new_session=True)
    try:
        orphan = lingering(scratch)
        test.kill()
        test.wait()
        assert ended_within(orphan), "the hub's process outlived the killed test by 60 s"
        assert ended_within(reaper) and not scratch.exists()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
