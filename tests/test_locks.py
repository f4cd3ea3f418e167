"""The course environment's lock, hub/requirements.txt, stays in step with the one pin file:
every package the two share has requirements.txt's version, every lab and postgres pin of the
workbook is in it, and every line is an exact pin. make pins writes both (scripts/pins); a change
to requirements.txt alone is caught here until the lock is regenerated (scripts/pins --course).
hub/package-lock.json pins configurable-http-proxy exactly, as hub/package.json names it."""
import json
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINE = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)(\s*;.*)?")


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path):
    """name -> version of every pin in a requirements file; ValueError for a line that is no pin."""
    found = {}
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = LINE.fullmatch(line.strip())
        if not match:
            raise ValueError(f"{Path(path).name}, line {number}: not an exact pin: {line!r}")
        found[canonical(match[1])] = match[2]
    return found


def declared(extra):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [canonical(re.match(r"[A-Za-z0-9_.-]+", r)[0]) for r in project["optional-dependencies"][extra]]


def test_every_line_of_both_pin_files_is_an_exact_pin():
    assert pins(ROOT / "requirements.txt") and pins(ROOT / "hub" / "requirements.txt")


def test_the_course_lock_has_the_workbooks_versions():
    workbook, course = pins(ROOT / "requirements.txt"), pins(ROOT / "hub" / "requirements.txt")
    differ = {name: (workbook[name], course[name]) for name in set(workbook) & set(course)
              if workbook[name] != course[name]}
    assert not differ, f"hub/requirements.txt is behind requirements.txt (run scripts/pins --course): {differ}"


def test_the_course_lock_holds_what_the_course_extras_name():
    course = pins(ROOT / "hub" / "requirements.txt")
    wanted = declared("lab") + declared("postgres") + declared("course")
    assert [name for name in wanted if name not in course] == []
    assert course["nbgrader"] == "0.9.6" and course["jupyterhub"].startswith("6.")
    assert "setuptools" in course  # nbgrader declares it, and --no-deps installs nothing unlisted


def test_the_proxy_is_pinned_exactly_and_locked():
    wanted = json.loads((ROOT / "hub" / "package.json").read_text())["dependencies"]
    lock = json.loads((ROOT / "hub" / "package-lock.json").read_text())
    assert re.fullmatch(r"\d+\.\d+\.\d+", wanted["configurable-http-proxy"])
    locked = lock["packages"]["node_modules/configurable-http-proxy"]["version"]
    assert locked == wanted["configurable-http-proxy"]
    assert lock["packages"][""]["dependencies"] == wanted
    assert all("version" in entry and "integrity" in entry for key, entry in lock["packages"].items() if key)
