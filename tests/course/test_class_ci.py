"""The CI workflows a course inherits: test.yml runs exactly the README's test commands once per
commit, and grade.yml.example grades a class through the isolated grader. Both pass actionlint
with shellcheck, pin every action by commit SHA and cache under keys of their own."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
WORKFLOW = WORKFLOWS / "test.yml"
GRADING = WORKFLOWS / "grade.yml.example"
README = (ROOT / "README.md").read_text()
GUIDE = (ROOT / "docs" / "instructors.md").read_text()


def readme_commands():
    """Every make command the README's sh blocks show, in order."""
    blocks = re.findall(r"```sh\n(.*?)```", README, re.S)
    return [line.split("#")[0].strip() for block in blocks for line in block.splitlines()
            if line.startswith("make ")]


def workflow(path=WORKFLOW):
    data = yaml.safe_load(path.read_text())
    data["on"] = data.pop("on", None) or data.pop(True)  # YAML 1.1 reads a bare `on` as true
    return data


def every_workflow():
    files = sorted(WORKFLOWS.glob("*.yml")) + [GRADING]
    assert WORKFLOW in files and GRADING.exists()
    return files


def steps(path):
    return [step for job in workflow(path)["jobs"].values() for step in job["steps"]]


def actionlint(*files, cwd=ROOT):
    """actionlint's verdict, shellcheck checking every `run:` script (make test installs it)."""
    shellcheck = shutil.which("shellcheck")
    assert shellcheck, ("shellcheck is missing, so actionlint cannot check the workflows' shell steps: "
                        "make test installs Debian's shellcheck with apt-get where it can "
                        "(tools/apt-install); elsewhere install shellcheck yourself")
    return subprocess.run([str(Path(sys.executable).parent / "actionlint"), "-no-color",
                           f"-shellcheck={shellcheck}", *map(str, files)], capture_output=True, text=True, cwd=cwd)


def test_actionlint_with_shellcheck_accepts_every_workflow_the_grading_one_included():
    done = actionlint(*every_workflow())
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_really_runs_shellcheck_on_the_run_steps(tmp_path):
    path = tmp_path / "unquoted.yml"
    path.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo $HOME\n")
    done = actionlint(path, cwd=tmp_path)
    assert done.returncode == 1 and "SC2086" in done.stdout, done.stdout + done.stderr


def test_every_action_is_pinned_by_a_full_commit_sha_with_its_tag_in_a_comment():
    # A tag can be moved to other code, a commit cannot; the comment says which release it is.
    pinned = re.compile(r"\s*(- )?uses: ([\w.-]+/[\w.-]+)@([0-9a-f]{40}) # (v\d+(\.\d+)*)")
    for path in every_workflow():
        lines = [line for line in path.read_text().splitlines() if re.match(r"\s*(- )?uses:", line)]
        assert lines and len(lines) == len([step for step in steps(path) if "uses" in step]), path.name
        for line in lines:
            match = pinned.fullmatch(line)
            assert match, f"{path.name}: `{line.strip()}` is not pinned by a full commit SHA # tag"
            action, commit, tag = match.group(2, 3, 4)
            # the guide's table of pins says the same
            assert re.search(rf"^\| `{action}` \| `{tag}` [^|]*\| `{commit}` \|$", GUIDE, re.M), line


def test_the_tests_run_once_per_commit_and_a_newer_push_cancels_the_run_it_supersedes():
    # a push to main, or a pull request: a branch's own pushes run only as its pull request
    data = workflow()
    assert data["on"] == {"push": {"branches": ["main"]}, "pull_request": None}
    assert data["concurrency"] == {
        "group": "${{ github.workflow }}-${{ github.event.pull_request.number || github.ref }}",
        "cancel-in-progress": True}


def test_every_job_of_every_workflow_caches_the_pinned_downloads_under_a_key_of_its_own():
    # two jobs saving one key race, and only one of them saves
    keys = []
    for path in every_workflow():
        for name, job in workflow(path)["jobs"].items():
            (cache,) = [step for step in job["steps"] if step.get("uses", "").startswith("actions/cache@")]
            key = cache["with"]["key"]
            assert "hashFiles('requirements.txt')" in key and job["env"]["UV_CACHE_DIR"] in cache["with"]["path"].split()
            assert cache["with"]["restore-keys"] == key.split("${{ hashFiles")[0]
            keys.append(key.replace("${{ github.job }}", name))
    assert len(keys) == len(set(keys)) == 5, keys  # test, grader, browser, a11y; grading


def test_the_workflow_runs_exactly_the_readmes_test_commands():
    from quoted import checks, ci_commands
    commands = readme_commands()
    assert re.search(r"\| anyone checking the workbook, or a course's CI \| `make test` \|", README)
    runs = [step["run"].removeprefix("sudo --preserve-env=UV_CACHE_DIR ")
            for step in steps(WORKFLOW) if "run" in step and "make " in step["run"]]
    # .ci/run runs make checks: make test and every slow suite, two at a time. The workflow runs
    # each too, grouped into jobs, but for make test-hub (the course on JupyterHub, docs/hub.md):
    # it makes system users and a hub on the runner, which is not tried on GitHub
    assert ci_commands() == ["make checks"]
    assert sorted(runs) == sorted(c for c in checks() if c != "make test-hub")
    assert all(command in commands for command in runs)


def test_make_checks_runs_make_test_and_every_suite_the_readme_lists():
    from quoted import checks
    suites = checks()
    assert len(suites) == len(set(suites)) and suites[0] == "make test"
    assert sorted(suites) == sorted(c for c in readme_commands() if c == "make test" or c.startswith("make test-"))


def test_the_grading_workflow_grades_isolated_on_the_runners_vm_and_uploads_only_what_the_grader_wrote():
    data = workflow(GRADING)
    (job,) = data["jobs"].values()
    # students' code runs in that job: a read-only token, and none left behind in .git/config
    assert data["permissions"] == {"contents": "read"}
    checkouts = [step for step in job["steps"] if step.get("uses", "").startswith("actions/checkout@")]
    assert checkouts and all(step["with"]["persist-credentials"] is False for step in checkouts)
    assert data["concurrency"] == {"group": "${{ github.workflow }}-${{ github.ref }}", "cancel-in-progress": True}
    # the sandbox needs root and namespaces: the VM through sudo, since a container's seccomp refuses unshare
    assert "container" not in job and job["runs-on"].startswith("ubuntu-")
    runs = [step.get("run") for step in job["steps"]]
    grading = runs.index("sudo make grade SUBMISSION=submissions GRADES=grades ISOLATION=required")
    # ...which reaches the grader as --isolation required: it refuses to grade where it cannot isolate
    environment = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    shown = subprocess.run(["make", "--no-print-directory", "-n", *runs[grading].split()[2:]], cwd=ROOT,
                           env=environment, capture_output=True, text=True, check=True).stdout
    assert " ".join(shown.split()).endswith("workbook-grade submissions --out grades --timeout 10 "
                                            "--isolation required"), shown
    assert runs[:grading] == [None, None, "make venv"], "only the set-up runs before grading"
    # the upload comes straight after the grader, and only when it succeeded, isolated
    (upload,) = job["steps"][grading + 1:]
    assert upload["uses"].startswith("actions/upload-artifact@") and "if" not in upload
    # the run's own files, whole: grades/current is the run the grader made current in one rename
    assert upload["with"]["path"] == "grades/current/" and upload["with"]["if-no-files-found"] == "error"
    header = GRADING.read_text().split("\nname:")[0]
    for protected in ("The grades.", "every sandboxed process is", "The network.", "The repository.",
                      "Isolation or no gradebook."):
        assert protected in " ".join(header.replace("#", " ").split()), f"the header no longer says {protected!r}"


def test_the_guide_points_at_the_grading_workflow_instead_of_a_copy_of_it():
    section = GUIDE.split("## CI for courses")[1].split("\n## ")[0]
    assert "`.github/workflows/grade.yml.example`" in section and "```yaml" not in section


def test_the_guides_gradebook_is_what_the_generated_class_deserves():
    # make test-nbgrader grades that class and holds make grade and nbgrader to DESERVED
    from course.grader.demo_class import DESERVED, gradebook_csv
    numbers = [f"{c}.{n}" for c in range(1, 7) for n in (1, 2, 3)]
    shown = re.search(r"writes this\s+`gradebook.csv`:\n\n```\n(.*?)```", GUIDE, re.S).group(1)
    assert shown == gradebook_csv(DESERVED, numbers)
