"""What a sandbox can and cannot reach, asked from inside one (course.grader.sandbox).

The grader's promise is structural: student code runs where there is nothing worth reading or
changing, as a user of its own, and ends with its chapter. Each test runs a cell in a real
sandbox and reads back what the cell saw. Without root and Linux namespaces the module fails,
saying so, as the grader's isolated mode is not available there.
"""
import os
import socket
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

from course.grader import wire
from course.grader.judge.sandboxes import Isolation, Sandboxes, isolation_here
from course.grader.sandbox.jail import FIRST_UID, Limits, processes_of

CANARY = "WORKBOOK_GRADER_SECRET_CANARY"


@pytest.fixture(scope="module")
def sandboxes():
    isolation = isolation_here()
    assert isolation.complete, f"the grader cannot isolate student code here: {isolation.reason}"
    os.environ[CANARY] = "the grader's own secret"
    try:
        made = Sandboxes(isolation, Limits(memory=1 << 30)).wait()
    finally:
        del os.environ[CANARY]
    yield made
    assert made.finish() == 0


def ask(sandbox, source, expression):
    """Run `source` in the sandbox, then return the value of `expression` there."""
    wire.send(sandbox.sock, {"op": "run", "source": source, "id": 1})
    ran = wire.receive(sandbox.sock)
    assert ran["error"] is None, ran
    wire.send(sandbox.sock, {"op": "bind", "expression": expression, "id": 2})
    answer = wire.receive(sandbox.sock)
    return wire.Decoder()(answer["value"])


@pytest.fixture
def sandbox(sandboxes):
    made = sandboxes.start()
    yield made
    made.close()


def test_it_runs_as_a_user_of_its_own_as_pid_1_of_its_own_namespace(sandbox):
    uid, pid, visible = ask(sandbox, "import os", "(os.getuid(), os.getpid(), sorted(p for p in os.listdir('/proc') if p.isdigit()))")
    assert uid >= FIRST_UID and uid == sandbox.uid
    assert pid == 1 and visible == ["1"]


def test_it_sees_the_class_edition_of_the_package_and_nothing_of_the_repository(sandbox):
    seen = ask(sandbox, '''
import importlib.util, os
package = os.path.dirname(importlib.util.find_spec("workbook").origin)
root = os.path.dirname(package)
found = {
    "root": sorted(os.listdir(root)),
    "exercises": sorted(os.listdir(os.path.join(package, "teaching", "exercises"))),
    "top": sorted(os.listdir("/")),
    "home": os.path.exists("/home"),
    "checks": importlib.util.find_spec("workbook.teaching.exercises.checks") is not None,
}
''', "found")
    assert seen["root"] == [".venv", "workbook"] and str(ROOT) != "/"
    assert "checks" not in seen["exercises"] and "answers.json" not in seen["exercises"]
    assert "ch1.py" in seen["exercises"]
    assert not seen["checks"] and not seen["home"]
    # the clone's own top folder is shown (its package and interpreter live under it), whatever it is called
    clone_top = ROOT.resolve().parts[1]
    assert set(seen["top"]) <= {".package", "bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "root",
                                "sbin", "tmp", "usr", clone_top}


def test_the_package_is_read_only_and_tmp_is_its_own(sandbox, sandboxes):
    tried = ask(sandbox, '''
import importlib.util, os
target = importlib.util.find_spec("workbook.store").origin
try:
    open(target, "a").write("# edited")
    refused = None
except OSError as error:
    refused = type(error).__name__
open("/tmp/mine", "w").write("x")
''', "(refused, os.listdir('/tmp'))")
    assert tried[0] in ("OSError", "PermissionError") and "mine" in tried[1]
    other = sandboxes.start()
    try:
        assert "mine" not in ask(other, "import os", "os.listdir('/tmp')")
    finally:
        other.close()


def test_it_has_no_network(sandbox):
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        port = listener.getsockname()[1]
        reached = ask(sandbox, f'''
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=1)
    reached = True
except OSError:
    reached = False
names = [name for _, name in socket.if_nameindex()]
''', "(reached, names)")
        assert reached == (False, ["lo"])
    finally:
        listener.close()


def test_its_environment_and_memory_hold_nothing_of_the_graders(sandbox):
    seen = ask(sandbox, f'''
import os, sys
try:
    block = open("/proc/self/environ", "rb").read()
except OSError:
    block = b""
found = (os.environ.get({CANARY!r}), {CANARY!r}.encode() in block,
         sorted(n for n in sys.modules if "checks" in n or "judge" in n or "gradebook" in n),
         sorted(n for n in sys.modules if n.split(".")[0] == "course"))
''', "found")
    # of the instructor's package, only what the sandbox side needs (course/grader/AUDIT.md):
    # the wire, the sandbox's own modules (the zygote runs as __main__), and what wrote the class
    # edition before any fork
    assert seen == (None, False, [], ["course", "course.editions", "course.editions.package", "course.grader",
                                      "course.grader.sandbox", "course.grader.sandbox.jail",
                                      "course.grader.sandbox.worker", "course.grader.wire"])


def test_memory_is_limited_and_a_big_allocation_fails_alone(sandbox):
    assert ask(sandbox, '''
try:
    hoard = bytearray(6 << 30)
    outcome = "allocated"
except MemoryError:
    outcome = "MemoryError"
''', "outcome") == "MemoryError"
    assert ask(sandbox, "small = bytearray(50 << 20)", "len(small)") == 50 << 20


def test_nothing_it_starts_outlives_it(sandboxes):
    sandbox = sandboxes.start()
    started = ask(sandbox, '''
import os, subprocess
child = subprocess.Popen(["sleep", "60"], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        import time
        time.sleep(60)
    os._exit(0)
''', "child.pid")
    assert started > 1
    deadline = time.monotonic() + 60  # until the grandchild has started, however loaded the machine
    while len(processes_of({sandbox.uid})) < 3:
        assert time.monotonic() < deadline, processes_of({sandbox.uid})
        time.sleep(0.02)
    sandbox.close()
    deadline = time.monotonic() + 60
    while processes_of({sandbox.uid}):
        assert time.monotonic() < deadline, processes_of({sandbox.uid})
        time.sleep(0.02)


def test_without_isolation_every_output_says_the_grades_are_not_tamper_proof(tmp_path):
    """ISOLATION=off (or a machine without root or namespaces): the grader still grades, and its
    summary, gradebook, feedback and JSON each say that the grades are not tamper-proof."""
    import subprocess
    from course.grader.chapters import SOURCE, read_chapter
    from course.grader.demo_class import KINDS, write_class
    write_class(tmp_path / "class", [read_chapter(SOURCE / "01-purpose-and-validation.ipynb")],
                kinds={"right": KINDS["right"]})
    before = set(Path(tempfile.gettempdir()).glob("workbook-sandbox-*"))
    grading = subprocess.Popen([str(ROOT / ".venv" / "bin" / "workbook-grade"), str(tmp_path / "class"),
                                "--out", str(tmp_path / "grades"), "--chapters", "1", "--isolation", "off"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = grading.communicate(timeout=300)
    done = subprocess.CompletedProcess(grading.args, grading.returncode, stdout, stderr)
    assert done.returncode == 0, done.stderr
    # each sandbox's folder (its HOME and TMPDIR) went with the grader; they were left behind
    assert not set(Path(tempfile.gettempdir()).glob("workbook-sandbox-*")) - before
    assert "NOT ISOLATED, so these grades are not tamper-proof" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("NOT ISOLATED")
    assert "right,1,1,1,3,3,,,NOT ISOLATED: not tamper-proof," in (tmp_path / "grades" / "gradebook.csv").read_text()
    assert "NOT ISOLATED" in (tmp_path / "grades" / "feedback" / "right.txt").read_text()
    assert '"complete": false' in (tmp_path / "grades" / "grades.json").read_text()


def test_isolation_required_refuses_where_it_cannot_be_had(tmp_path, monkeypatch):
    from course.grader import cli as grade
    from course.grader.judge import sandboxes as module
    monkeypatch.setattr(grade, "isolation_here", lambda wanted: Isolation("partial", "no namespaces here."))
    (tmp_path / "class").mkdir()
    assert grade.main([str(tmp_path / "class"), "--isolation", "required"]) == 3
    assert module.isolation_here("off").mode == "none"


def test_two_grading_runs_at_once_hand_out_users_of_their_own(sandboxes):
    """Each run holds a block of uids: another run's end kills none of this run's sandboxes."""
    other = Sandboxes(Isolation("none", "a second run, for the test."), Limits()).wait()
    try:
        assert abs(other.first_uid - sandboxes.first_uid) >= 100_000
    finally:
        other.finish()


def test_what_a_killed_grader_left_is_swept_by_the_next(tmp_path, monkeypatch):
    import subprocess
    import tempfile
    from course.grader.judge import sandboxes as module
    gone = subprocess.Popen(["true"])
    gone.wait()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    left = tmp_path / f"workbook-grader-{gone.pid}-abc"
    (left / "jail").mkdir(parents=True)
    alive = tmp_path / f"workbook-grader-{os.getpid()}-def"
    alive.mkdir()
    module.sweep()
    assert not left.exists() and alive.exists()
