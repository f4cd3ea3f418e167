"""The installers the suites call (tools/apt-install, under install-browser, install-node and
install-axe) may run at once, when suites are started together: a second one waits for the
first and finds the program installed, instead of running apt-get against a held lock."""
import fcntl
import os
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def fake_apt_get(folder):
    """An apt-get on PATH that only notes that it was called."""
    called = folder / "apt-get-called"
    script = folder / "bin" / "apt-get"
    script.parent.mkdir()
    script.write_text(f"#!/bin/sh\necho \"$@\" >> {called}\n")
    script.chmod(0o755)
    return script.parent, called


def waiting_on(lock, process, timeout=60):
    """Wait until /proc/locks shows `process` blocked on `lock`'s flock (a line with '->')."""
    inode = os.stat(lock).st_ino
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        for line in Path("/proc/locks").read_text().splitlines():
            if "->" in line and "FLOCK" in line and line.split()[-3].endswith(f":{inode}"):
                return
        time.sleep(0.05)
    raise AssertionError(f"tools/apt-install did not wait on {lock} within {timeout} s")


def test_a_second_installer_waits_for_the_first_and_finds_the_program_installed(tmp_path):
    bin_folder, called = fake_apt_get(tmp_path)
    program = tmp_path / "installed-by-the-first"  # a path, as tools/install-browser passes
    lock = tmp_path / "workbook-apt-install.lock"
    environment = dict(os.environ, TMPDIR=str(tmp_path), PATH=f"{bin_folder}:{os.environ['PATH']}")
    with open(lock, "w") as held:  # the first installer, in the middle of apt-get
        fcntl.flock(held, fcntl.LOCK_EX)
        second = subprocess.Popen([str(ROOT / "tools" / "apt-install"), str(program), "some-package"],
                                  env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            waiting_on(lock, second)
            program.write_text("#!/bin/sh\n")
            program.chmod(0o755)
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
    printed, _ = second.communicate(timeout=60)
    assert second.returncode == 0, printed
    assert not called.exists(), called.read_text()
    assert printed == ""


def test_alone_it_runs_apt_get_for_every_package_named(tmp_path):
    bin_folder, called = fake_apt_get(tmp_path)
    environment = dict(os.environ, TMPDIR=str(tmp_path), PATH=f"{bin_folder}:{os.environ['PATH']}")
    done = subprocess.run([str(ROOT / "tools" / "apt-install"), str(tmp_path / "missing"), "nodejs", "npm"],
                          env=environment, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0  # the program is still missing after the fake apt-get
    update, install = called.read_text().splitlines()
    assert update.split()[-2:] == ["update", "-qq"] and install.split()[-2:] == ["nodejs", "npm"]
