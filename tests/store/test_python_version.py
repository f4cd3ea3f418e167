"""Importing workbook on a Python older than 3.12 stops at once, naming both versions."""
import glob
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

import workbook

ROOT = Path(__file__).resolve().parents[2]
INIT = (ROOT / "workbook" / "__init__.py").read_text()


def run_init_as(version):
    fake_sys = SimpleNamespace(version_info=version, executable="/fake/python")
    namespace = {"__name__": "workbook", "__fake_sys__": fake_sys}
    code = INIT.replace("import sys as _sys", "_sys = __fake_sys__")
    assert code != INIT
    exec(compile(code, "workbook/__init__.py", "exec"), namespace)
    return namespace


def test_guard_names_the_version_found_and_needed():
    with pytest.raises(ImportError) as caught:
        run_init_as((3, 11, 7, "final", 0))
    message = str(caught.value)
    assert "needs Python 3.12 or later" in message
    assert "this is Python 3.11.7" in message


def test_guard_lets_312_and_later_through():
    for version in [(3, 12, 0, "final", 0), (3, 13, 0, "final", 0), (4, 0, 0, "final", 0)]:
        assert run_init_as(version)["__version__"] == workbook.__version__


def older_pythons():
    found = []
    for pattern in ["/usr/bin/python3.[0-9]", "/usr/bin/python3.1[01]",
                    os.path.expanduser("~/.pyenv/versions/3.1[01]*/bin/python3")]:
        found += glob.glob(pattern)
    return sorted(set(found))


@pytest.mark.skipif(not older_pythons(), reason="no Python older than 3.12 on this machine "
                    "(the guard itself is tested above with a fake version)")
def test_a_real_older_python_gets_the_message():
    python = older_pythons()[-1]
    result = subprocess.run([python, "-c", "import workbook.store"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: workbook needs Python 3.12 or later")
