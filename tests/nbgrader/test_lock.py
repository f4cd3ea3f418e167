"""make test-nbgrader installs the same versions every time: build/nbgrader-venv holds exactly
the course lock, course/requirements.txt, and two fresh installs from empty caches hold the same.
(tests/project/test_locks.py, in make test, keeps the lock in step with requirements.txt.)"""
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
from locks import pins


def installed(venv):
    """name -> version of every distribution in the venv, as the lock names them."""
    script = ("import importlib.metadata as m, json; print(json.dumps({d.metadata['Name']: d.version "
              "for d in m.distributions()}))")
    # -I: not the current folder on sys.path (a workbook.egg-info there would be listed too)
    done = subprocess.run([str(Path(venv) / "bin" / "python"), "-I", "-c", script], capture_output=True, text=True,
                          check=True)
    import json
    return {re.sub(r"[-_.]+", "-", name).lower(): version for name, version in json.loads(done.stdout).items()
            if name.lower() not in ("pip",)}


def fresh(tmp_path, name):
    venv, cache = tmp_path / name, tmp_path / f"cache-{name}"
    cache.mkdir(exist_ok=True)
    environment = dict(os.environ, NBGRADER_VENV=str(venv), UV_CACHE_DIR=str(cache),
                       PIP_CACHE_DIR=str(cache), PIP_NO_CACHE_DIR="1")
    done = subprocess.run([str(ROOT / "tools" / "nbgrader-venv")], env=environment, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return installed(venv)


def test_the_nbgrader_venv_holds_exactly_the_lock():
    subprocess.run([str(ROOT / "tools" / "nbgrader-venv")], check=True)
    assert installed(ROOT / "build" / "nbgrader-venv") == pins(ROOT / "course" / "requirements.txt")


def test_two_installs_from_empty_caches_give_the_same_versions(tmp_path):
    # at once: each mostly waits on its downloads. A third asks for the first's venv at the same
    # moment, as make checks' suites may: it waits for that one and finds it built
    with ThreadPoolExecutor(3) as each:
        first, second, again = each.map(lambda name: fresh(tmp_path, name), ["first", "second", "first"])
    assert first == second == again == pins(ROOT / "course" / "requirements.txt")
