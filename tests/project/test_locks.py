"""The course environment's lock, course/requirements.txt, stays in step with the one pin file:
every package the two share has requirements.txt's version, every lab and postgres pin of the
workbook is in it, and every line is an exact pin. make pins writes both (tools/pins); a change
to requirements.txt alone is caught here until the lock is regenerated (tools/pins --course).
course/hub/files/package-lock.json pins configurable-http-proxy exactly, as course/hub/files/package.json names it."""
import json
import re
import tomllib
from pathlib import Path

from locks import canonical, pins

ROOT = Path(__file__).resolve().parents[2]
def declared(extra):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [canonical(re.match(r"[A-Za-z0-9_.-]+", r)[0]) for r in project["optional-dependencies"][extra]]


def test_every_line_of_both_pin_files_is_an_exact_pin():
    assert pins(ROOT / "requirements.txt") and pins(ROOT / "course" / "requirements.txt")


def test_the_course_lock_has_the_workbooks_versions():
    workbook, course = pins(ROOT / "requirements.txt"), pins(ROOT / "course" / "requirements.txt")
    differ = {name: (workbook[name], course[name]) for name in set(workbook) & set(course)
              if workbook[name] != course[name]}
    assert not differ, f"course/requirements.txt is behind requirements.txt (run tools/pins --course): {differ}"


def test_the_course_lock_holds_what_the_course_extras_name():
    course = pins(ROOT / "course" / "requirements.txt")
    wanted = declared("lab") + declared("postgres") + declared("course")
    assert [name for name in wanted if name not in course] == []
    assert course["nbgrader"] == "0.9.6" and course["jupyterhub"].startswith("6.")
    assert "setuptools" in course  # nbgrader declares it, and --no-deps installs nothing unlisted


def test_the_proxy_is_pinned_exactly_and_locked():
    wanted = json.loads((ROOT / "course" / "hub" / "files" / "package.json").read_text())["dependencies"]
    lock = json.loads((ROOT / "course" / "hub" / "files" / "package-lock.json").read_text())
    assert re.fullmatch(r"\d+\.\d+\.\d+", wanted["configurable-http-proxy"])
    locked = lock["packages"]["node_modules/configurable-http-proxy"]["version"]
    assert locked == wanted["configurable-http-proxy"]
    assert lock["packages"][""]["dependencies"] == wanted
    assert all("version" in entry and "integrity" in entry for key, entry in lock["packages"].items() if key)
