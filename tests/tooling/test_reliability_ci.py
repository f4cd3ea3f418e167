"""make reliability-record RUN=ci (tools/reliability.py) counts each .ci/run command's CPU time in
a control group of its own. Making one needs root, as .ci/run has (the grader's and the hub's
suites need it too); elsewhere the record says it fell back to getrusage."""
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("reliability", ROOT / "tools" / "reliability.py")
reliability = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reliability)


@pytest.mark.skipif(os.geteuid() != 0, reason="a control group is made as root (.ci/run runs as root)")
def test_a_control_group_counts_the_cpu_of_a_process_nobody_waited_for(tmp_path):
    """What the ci record counts: a browser or a server that a command started and left to
    its tests is in its CPU time, although getrusage would never see it."""
    group = reliability.control_group(f"workbook-test-{tmp_path.name}")
    assert group is not None, "no control group could be made here: the ci record says so"
    folder, read = group
    try:
        marker = tmp_path / "done"
        child = tmp_path / "child.py"   # half a second of CPU, then a note that it is done
        child.write_text("import sys, time\nend = time.process_time() + 0.5\n"
                         "while time.process_time() < end:\n    pass\nopen(sys.argv[1], 'w').close()\n")
        parent = ("import subprocess, sys\n"   # starts the child and ends at once, waiting for nothing
                  "subprocess.Popen([sys.executable, sys.argv[1], sys.argv[2]], start_new_session=True)\n")
        subprocess.run([sys.executable, "-c", parent, str(child), str(marker)], check=True,
                       preexec_fn=lambda: (folder / "cgroup.procs").write_text(str(os.getpid())))
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert time.monotonic() < deadline, "the detached child did not finish in 60 s"
            time.sleep(0.05)
        time.sleep(0.2)
        assert read(folder) >= 0.5
    finally:
        for _ in range(100):
            try:
                folder.rmdir()
                break
            except OSError:
                time.sleep(0.05)


def test_a_run_that_failed_keeps_no_record(tmp_path, monkeypatch):
    monkeypatch.setattr(reliability, "make_test",
                        lambda target, cwd, log: {"exit status": 2, "tests": {}})
    monkeypatch.setattr(reliability, "where", lambda cwd=ROOT: {})
    assert reliability.record_test("test") is None


def test_each_run_names_the_make_target_it_runs(monkeypatch):
    ran = []
    monkeypatch.setattr(reliability, "make_test",
                        lambda target, cwd, log: ran.append(target) or {"exit status": 1})
    monkeypatch.setattr(reliability, "where", lambda cwd=ROOT: {})
    for name in reliability.TARGETS:
        reliability.record_test(name)
    assert ran == ["test", "test-postgres", "soak"]
