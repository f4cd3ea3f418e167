"""make hub checks everything before it changes anything (make test-hub; about a minute, root).

In a temporary copy of the working tree of its own (with a .venv of its own, as test_hub.py's),
so that it runs beside test_hub.py's course under pytest-xdist: its own usernames, HUB_DIR and
clone, none of which that course touches. The search for readable answers, which make hub runs
as nobody over every local file system, is most of its time.
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import hub_reaper
from course.hub import accounts
from hub_tree import ROOT, copy_tree


INSTRUCTOR = f"hc{os.urandom(3).hex()}-teacher"  # this run's own, as test_hub.py's
STUDENT = f"hc{os.urandom(3).hex()}-zed"


@pytest.fixture(scope="module")
def clone():
    if os.geteuid() != 0:
        pytest.skip("make hub's checks run as root (docs/hub.md, 'Without root')")
    scratch = Path(tempfile.mkdtemp(prefix="workbook-hub-checks-"))
    os.chmod(scratch, 0o755)
    reaper = subprocess.Popen([sys.executable, str(ROOT / "tests" / "support" / "hub_reaper.py"),
                               "--watch", str(os.getpid()), "--folder", str(scratch)], start_new_session=True)
    (scratch / "clone").mkdir()
    copy_tree(scratch / "clone", venv="own")
    try:
        yield scratch
    finally:
        left = hub_reaper.leftovers([scratch])
        hub_reaper.reap([scratch], [])
        reaper.kill()
        reaper.wait()
        assert left == {}, f"still running from {scratch}: {left}"


def make_hub(scratch, *variables, timeout=900):
    process = subprocess.Popen(["make", "--no-print-directory", "-C", str(scratch / "clone"), "hub",
                                f"INSTRUCTOR={INSTRUCTOR}", f"HUB_HOMES={scratch / 'home'}", *variables],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    try:
        printed, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        printed, _ = process.communicate()
        raise AssertionError(f"make hub did not end in {timeout} s:\n{printed[-4000:]}") from None
    return process.returncode, printed


def test_make_hub_checks_everything_before_changing_anything(clone):
    """Four problems at once, each named in one sentence, and nothing made: no account, no
    HUB_DIR, the clone left as it was."""
    closed = clone / "closed"
    closed.mkdir(mode=0o700)
    answers_file = clone / "someone-elses-clone" / "workbook" / "teaching" / "exercises" / "answers.json"
    answers_file.parent.mkdir(parents=True)
    answers_file.write_text("{}")
    for folder in answers_file.relative_to(clone).parents:
        os.chmod(clone / folder, 0o755)
    roster = clone / "bad-roster.csv"
    roster.write_text(f"username,display name\n{STUDENT},Zed\nAda Lovelace\n")
    mode = os.stat(clone / "clone").st_mode
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, printed = make_hub(clone, f"HUB_DIR={closed / 'srv'}", f"ROSTER={roster}", f"HUB_PORT={port}")
    said = [line for line in printed.splitlines() if line.startswith("make hub: ")]
    assert status != 0 and "Traceback" not in printed, printed[-4000:]
    expected = [[f"HUB_DIR {closed / 'srv'} is under {closed}, which other accounts cannot enter"],
                ["bad-roster.csv, line 3: username 'Ada Lovelace' is not a portable Unix name"],
                [f"HUB_PORT {port} is taken by another program"],
                ["can read worked answers in ", f"{clone / 'someone-elses-clone'}",
                 "ACCEPT_READABLE="],
                ["nothing was changed."]]
    for parts in expected:
        assert [line for line in said if all(part in line for part in parts)], (parts, printed[-4000:])
    assert len(said) == len(expected), said  # one line each, nothing else
    for name in [INSTRUCTOR, STUDENT]:
        assert accounts.account(name) is None
    assert not (closed / "srv").exists() and not (clone / "home").exists()
    assert os.stat(clone / "clone").st_mode == mode
