"""The course hub's parts that need no root and no browser (make test-hub runs the whole hub):
the roster's checks, the class edition of the package, the feedback pages, the learner's copy
made from a ready edition, the settings every server gets, and the check that refuses a
submission made in another student's name, and the one that refuses to start a hub beside an
open copy of the answers."""
import json
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
from course.editions import learner
from course.hub import clone, collect, environment, exchange, feedback
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


@pytest.mark.parametrize("text, fault", [
    ("ada\nAda\n", "line 2: username 'Ada' is not a portable Unix name"),
    ("ada\n../etc\n", "line 2: username '../etc'"),
    ("ada\n1ada\n", "line 2: username '1ada'"),
    ("ada,Ada\nada,Again\n", "line 2: username 'ada' is already on line 1"),
    ("ada,Ada,extra\n", "line 1: expected username and an optional display name, found 3 fields"),
    ("ada,Ada: the first\n", "line 1: display name must be at most 64 characters without : , ="),
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
    assert page == {"disabledExtensions": {p: True for p in environment.STUDENTS_OFF}}
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


def a_clone(path, mode=0o755):
    (path / clone.ANSWERS).parent.mkdir(parents=True)
    (path / clone.ANSWERS).write_text("{}")
    os.chmod(path, mode)
    return path


def test_make_hub_refuses_to_start_beside_an_open_copy_of_the_answers(machine):
    # make hub ran from a worktree and closed it, but its main clone stayed open to every student
    main = a_clone(machine / "main")
    (main / ".git" / "worktrees" / "hub").mkdir(parents=True)
    (main / ".git" / "worktrees" / "hub" / "commondir").write_text("../..\n")
    (machine / "wt").mkdir(mode=0o755)
    os.chmod(machine / "wt", 0o755)
    tree = a_clone(machine / "wt" / "hub")
    (tree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'hub'}\n")
    beside = a_clone(machine / "wt" / "another-clone")
    a_clone(machine / "wt" / "closed-clone", mode=0o700)
    (machine / "wt" / "not-a-clone").mkdir()
    assert clone.repository(tree) == main
    assert clone.open_copies(tree) == [main, beside]
    why = clone.refusal(clone.open_copies(tree))
    assert why.startswith(f"every account on this machine, the students' too, can read the worked "
                          f"answers in {main}, {beside} (workbook/teaching/exercises/answers.json,")
    assert why.endswith(f"Close them first, then run make hub again:\n    chmod go-rwx {main} {beside}")
    # the command it gives is the fix
    os.chmod(main, 0o700)
    os.chmod(beside, 0o700)
    assert clone.open_copies(tree) == [] and clone.refusal([]) is None
    # a folder every account can enter is open, one of its parents closed closes it
    assert clone.open_to_others(tree / "workbook" / "teaching" / "exercises")
    os.chmod(machine / "wt", 0o750)
    assert not clone.open_to_others(tree / "workbook" / "teaching" / "exercises")
    # make hub closes its own clone itself
    assert clone.close(tree) and os.stat(tree).st_mode & 0o777 == 0o700 and not clone.close(tree)


def test_the_chapter_a_student_fetches_says_it_is_the_copy_they_hand_in(tmp_path):
    # two copies of chapter 1 with one tab title: the practice copy and the fetched one
    written = write_release(tmp_path, stems=["01-purpose-and-validation", "02-visibility"])
    exchange.mark_hand_in(tmp_path)
    for name in written:
        stem = name.removesuffix(".ipynb")
        cells = nbformat.read(tmp_path / "source" / stem / name, as_version=4).cells
        assert cells[0].cell_type == "markdown"  # no directive cell above it any more
        heading, told, _ = cells[0].source.split("\n\n", 2)
        assert heading.startswith("# Chapter ")
        assert told.startswith("> **This is the copy you hand in.**") and "*Submit*" in told
        assert f"`~/workbook/{name}`, is never graded" in told
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
                "nbgrader": "/srv/agent-memory-hub/bin/nbgrader"}
    lines = hub.banner(settings, []).splitlines()
    assert "  Formgrader: http://localhost:8000/user/teacher/formgrader (as teacher, in a browser tab of its own):" in lines
    assert "              make grade SUBMISSION=/home/teacher/course/submitted [CHAPTERS=01,02]" in lines
    assert "  nbgrader:   /srv/agent-memory-hub/bin/nbgrader (the course's, from any shell; from root it runs as teacher)" in lines
    assert lines[-1].lstrip().startswith("Stop:")  # make test-hub waits for it
