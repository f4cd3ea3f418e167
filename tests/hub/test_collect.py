"""nbgrader's own collect, as make hub configures it, against a forged submission (make test-hub;
seconds, no browser; root, to make folders owned by other accounts).

One student (daemon, here) submits; another (bin) makes a later folder in inbound/ in daemon's
name, and a third (nobody) submits a link to a file only the instructor can read. nbgrader 0.9.6
alone warns "cheating attempt?" and collects the forgery in place of daemon's own submission, and
copies what the link points to. With make hub's settings (environment.configure: the course
environment's nbgrader_config.py and coursehub_collect.py), `nbgrader collect` collects daemon's
own submission, names both refusals in its log, and collects nothing for nobody.
"""
import os
import pwd
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
from course.hub import environment


NBGRADER = ROOT / "build" / "nbgrader-venv"
COURSE_ID = "agent-memory-workbook"
CHAPTER = "01-purpose-and-validation"
OWN, FORGER, LINKER = "daemon", "bin", "nobody"  # accounts every Debian has


def inbound_folder(inbound, student, stamp, owner, text):
    folder = inbound / f"{student}+{CHAPTER}+{stamp}+{os.urandom(4).hex()}"
    folder.mkdir()
    (folder / "timestamp.txt").write_text(stamp)
    (folder / f"{CHAPTER}.ipynb").write_text(text)
    uid = pwd.getpwnam(owner).pw_uid
    for path in (folder, folder / "timestamp.txt", folder / f"{CHAPTER}.ipynb"):
        os.chown(path, uid, uid, follow_symlinks=False)
    return folder


@pytest.fixture(scope="module")
def nbgrader():
    if os.geteuid() != 0:
        pytest.skip("needs root: the submissions are folders owned by other accounts")
    subprocess.run([str(ROOT / "tools" / "nbgrader-venv")], check=True, cwd=ROOT)
    return NBGRADER / "bin" / "nbgrader"


def collect(nbgrader, tmp_path, configured):
    """A course and an exchange in tmp_path with the three submissions; `nbgrader collect` in the
    course folder, with make hub's settings or nbgrader's alone. Returns (course, its log)."""
    scratch = tmp_path / ("hub" if configured else "plain")
    exchange, course, env = scratch / "exchange", scratch / "course", scratch / "env"
    inbound = exchange / COURSE_ID / "inbound"
    inbound.mkdir(parents=True)
    os.chmod(exchange, 0o1777)
    course.mkdir()
    secret = course / "source" / CHAPTER / f"{CHAPTER}.ipynb"
    secret.parent.mkdir(parents=True)
    secret.write_text("the worked answers")
    (env / "etc" / "jupyter" / "jupyter_server_config.d").mkdir(parents=True)  # as the venv has it
    environment.configure(env, exchange, COURSE_ID)
    inbound_folder(inbound, OWN, "2026-12-01 10:00:00.000000 UTC", OWN, "daemon's own")
    inbound_folder(inbound, OWN, "2026-12-01 23:59:59.000000 UTC", FORGER, "forged by bin")
    linked = inbound_folder(inbound, LINKER, "2026-12-01 11:00:00.000000 UTC", LINKER, "")
    (linked / f"{CHAPTER}.ipynb").unlink()
    (linked / f"{CHAPTER}.ipynb").symlink_to(secret)
    os.chown(linked / f"{CHAPTER}.ipynb", pwd.getpwnam(LINKER).pw_uid, 0, follow_symlinks=False)
    run = dict(os.environ, JUPYTER_CONFIG_DIR=str(scratch / "no-user-config"),
               PATH=os.pathsep.join([str(nbgrader.parent), os.environ["PATH"]]))  # its alembic
    if configured:  # what the course environment has: its config, and the module beside nbgrader
        run["JUPYTER_CONFIG_PATH"] = str(env / "etc" / "jupyter")
        run["PYTHONPATH"] = str(environment.site_packages(env))
    else:
        (course / "nbgrader_config.py").write_text(
            f"c = get_config()\nc.CourseDirectory.course_id = {COURSE_ID!r}\nc.Exchange.root = {str(exchange)!r}\n")
    done = subprocess.run([str(nbgrader), "collect", CHAPTER, "--update"], cwd=course, env=run,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return course, done.stdout + done.stderr


def handed_in(course, student):
    path = course / "submitted" / student / CHAPTER / f"{CHAPTER}.ipynb"
    return path.read_text() if path.exists() else None


def test_nbgrader_alone_collects_the_forgery_and_what_a_link_points_to(nbgrader, tmp_path):
    # what make hub had before: the reason the course environment's collect is a different one
    course, log = collect(nbgrader, tmp_path, configured=False)
    assert "cheating attempt?" in log
    assert handed_in(course, OWN) == "forged by bin"
    assert handed_in(course, LINKER) == "the worked answers"


def test_the_hubs_collect_takes_each_students_own_submission_and_names_the_forgery(nbgrader, tmp_path):
    course, log = collect(nbgrader, tmp_path, configured=True)
    assert handed_in(course, OWN) == "daemon's own"
    assert handed_in(course, LINKER) is None
    assert f"Skipped: {FORGER} made a submission in {OWN}'s name, so it is not collected" in log
    assert f"Skipped: {LINKER}'s submission holds {CHAPTER}.ipynb, a link or a special file" in log
    assert log.count("Skipped: ") == 2
