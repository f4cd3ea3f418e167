"""The package stands alone: installed (not editable) into a fresh venv outside the clone, it runs
the demonstration and chapters 1 and 6 from a copy of notebooks/ placed elsewhere, with nothing of
the repository on the path.

The fresh venv gets the package itself by a real install from a copy of its sources (no
tests/, notebooks/, docs/ or course/ beside it). The libraries the chapters use (pandas,
ipykernel, nbval...) come from this project's pinned .venv through a path file, so the test
installs nothing from the network but the build backend; .venv's own editable link to the
clone is not seen there (a path file's folder is added as it is: the .pth files in it are not
read)."""
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ["01-purpose-and-validation.ipynb", "06-failure-cases-and-limits.ipynb"]


def uv():
    for candidate in (shutil.which("uv"), ROOT / "build" / "uv" / "bin" / "uv"):
        if candidate and Path(candidate).exists():
            return str(candidate)
    pytest.fail("uv is missing: tools/venv installs it into build/uv (run make test)")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    place = tmp_path_factory.mktemp("elsewhere")
    source = place / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "workbook", source / "workbook", ignore=shutil.ignore_patterns("__pycache__"))
    venv = place / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    done = subprocess.run([uv(), "pip", "install", "--quiet", "--no-deps", "--python", str(python), str(source)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    packages = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
    (Path(packages) / "workbook-libraries.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    shutil.rmtree(source)  # what runs is the install, not the sources it was built from
    return place, python


def run(python, *arguments, cwd):
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith(("PYTHON", "JUPYTER", "PYTEST", "WORKBOOK_"))}
    return subprocess.run([str(python), *arguments], cwd=cwd, env=environment, capture_output=True,
                          text=True, timeout=600)


def test_the_install_is_the_package_and_nothing_of_the_clone(installed):
    place, python = installed
    done = run(python, "-c", "import json, sys, workbook, workbook.store, workbook.specification.test_store;"
               "from importlib import resources;"
               "print(json.dumps([workbook.__file__, sys.path,"
               " (resources.files('workbook') / 'benchmarks' / 'results.json').is_file()]))", cwd=place)
    assert done.returncode == 0, done.stderr
    where, path, records = json.loads(done.stdout)
    assert Path(where).is_relative_to(place / "venv"), where
    assert not any(Path(entry).resolve().is_relative_to(ROOT) and Path(entry).resolve() != ROOT / ".venv"
                   and not Path(entry).resolve().is_relative_to(ROOT / ".venv") for entry in path if entry), path
    assert records
    assert run(python, "-c", "import course", cwd=place).returncode != 0  # the instructor's package is not there


def test_the_demonstration_runs_from_the_install(installed):
    place, python = installed
    done = run(python, "-m", "workbook.demo", cwd=place)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 7, done.stdout


def test_chapters_one_and_six_run_from_the_install_as_stored(installed):
    place, python = installed
    chapters = place / "chapters"
    chapters.mkdir()
    for name in CHAPTERS:
        shutil.copy(ROOT / "notebooks" / name, chapters / name)
    shutil.copy(ROOT / "tests" / "nbval_sanitize.cfg", place / "sanitize.cfg")
    done = run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "--nbval",
               "--nbval-current-env", "--nbval-sanitize-with", str(place / "sanitize.cfg"), *CHAPTERS,
               cwd=chapters)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
