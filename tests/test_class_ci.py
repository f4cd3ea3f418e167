"""The CI workflow a course inherits: valid for actionlint, run on every push and pull request,
with a dependency cache, and running exactly the README's test commands."""
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "test.yml"
README = (ROOT / "README.md").read_text()
sys.path.insert(0, str(ROOT / "scripts"))
import nbval_cell  # noqa: E402


def readme_commands():
    """Every make command the README's sh blocks show, in order."""
    blocks = re.findall(r"```sh\n(.*?)```", README, re.S)
    return [line.split("#")[0].strip() for block in blocks for line in block.splitlines()
            if line.startswith("make ")]


def workflow():
    data = yaml.safe_load(WORKFLOW.read_text())
    data["on"] = data.pop("on", None) or data.pop(True)  # YAML 1.1 reads a bare `on` as true
    return data


def test_actionlint_accepts_every_workflow():
    actionlint = Path(sys.executable).parent / "actionlint"
    files = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    done = subprocess.run([str(actionlint), "-no-color", *map(str, files)], capture_output=True, text=True)
    assert files and done.returncode == 0, done.stdout + done.stderr


def test_the_guides_grading_workflow_passes_actionlint_too(tmp_path):
    guide = (ROOT / "docs" / "instructors.md").read_text()
    block = re.search(r"## CI for courses.*?```yaml\n(.*?)```", guide, re.S).group(1)
    assert "make grade SUBMISSION=" in block
    path = tmp_path / ".github" / "workflows" / "grade.yml"
    path.parent.mkdir(parents=True)
    path.write_text(block)
    done = subprocess.run([str(Path(sys.executable).parent / "actionlint"), "-no-color", str(path)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    # students' code runs in that job: a read-only token, and none left behind in .git/config
    data = yaml.safe_load(block)
    assert data["permissions"] == {"contents": "read"}
    checkouts = [step for job in data["jobs"].values() for step in job["steps"]
                 if step.get("uses", "").startswith("actions/checkout@")]
    assert checkouts and all(step["with"]["persist-credentials"] is False for step in checkouts)


def test_the_workflow_runs_the_readmes_test_commands_on_every_push_and_pull_request():
    data = workflow()
    assert set(data["on"]) == {"push", "pull_request"}
    from quoted import ci_commands
    commands = readme_commands()
    assert re.search(r"\| anyone checking the workbook, or a course's CI \| `make test` \|", README)
    runs = [step["run"].removeprefix("sudo --preserve-env=UV_CACHE_DIR ")
            for job in data["jobs"].values() for step in job["steps"] if "run" in step and
            "make " in step["run"]]
    # .ci/run also runs make test-hub (the course on JupyterHub, docs/hub.md); the workflow does
    # not run it yet
    assert runs == [c for c in ci_commands() if c != "make test-hub"]
    assert all(command in commands for command in runs)
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("make ")]
    assert [c for c in ci if c != "make test-hub"] == runs


def test_every_job_keeps_a_dependency_cache_keyed_on_the_pin_file():
    for name, job in workflow()["jobs"].items():
        caches = [step for step in job["steps"] if step.get("uses", "").startswith("actions/cache@")]
        assert caches, name
        assert "hashFiles('requirements.txt')" in caches[0]["with"]["key"]
        assert job["env"]["UV_CACHE_DIR"] in caches[0]["with"]["path"].split()


def test_the_instructors_guide_maps_nbvals_cell_11_as_the_chapter_now_has_it():
    index, cell_id, first = nbval_cell.locate(ROOT / "notebooks" / "01-purpose-and-validation.ipynb", 11)
    expected = f"nbval's Cell 11 is cell index {index}, id {cell_id}: {first}"
    assert expected in (ROOT / "docs" / "instructors.md").read_text(), (
        f"chapter 1 changed: docs/instructors.md should quote `{expected}`")


def test_the_guides_gradebook_is_what_the_generated_class_deserves():
    # make test-nbgrader grades that class and holds make grade and nbgrader to DESERVED
    from classroom.students import DESERVED, gradebook_csv
    numbers = [f"{c}.{n}" for c in range(1, 7) for n in (1, 2, 3)]
    guide = (ROOT / "docs" / "instructors.md").read_text()
    shown = re.search(r"writes this `gradebook.csv`:\n\n```\n(.*?)```", guide, re.S).group(1)
    assert shown == gradebook_csv(DESERVED, numbers)
