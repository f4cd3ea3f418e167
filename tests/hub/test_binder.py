"""Binder: repo2docker installs environment.yml, then runs postBuild in the repository. Here the
same postBuild runs in a fresh copy of the tree, with a home of its own and an environment whose
prefix is a scratch venv (as Binder's conda environment is its own prefix), and JupyterLab is
started as Binder starts it, in the repository. What it would open: chapter 1 of the learner's
copy, only the learner's copy in the file browser, the workbook's settings and first layout,
and no worked answer anywhere it serves."""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from hub_tree import ROOT, copy_tree, free_port


TOKEN = "binder-test-token"


def get(port, path):
    separator = "&" if "?" in path else "?"
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}{separator}token={TOKEN}", timeout=10) as answer:
        return answer.geturl(), answer.read().decode()


@pytest.fixture(scope="module")
def binder(tmp_path_factory):
    scratch = tmp_path_factory.mktemp("binder")
    clone, home, env = scratch / "repo", scratch / "home", scratch / "env"
    clone.mkdir()
    home.mkdir()
    copy_tree(clone, venv=False)
    # Binder's environment: environment.yml installs requirements.txt and the clone, editable
    uv = shutil.which("uv") or str(ROOT / "build" / "uv" / "bin" / "uv")
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(env)], check=True)
    subprocess.run([uv, "pip", "install", "--quiet", "--python", str(env / "bin" / "python"),
                    "--requirement", str(clone / "requirements.txt")], check=True)
    subprocess.run([uv, "pip", "install", "--quiet", "--no-deps", "--python", str(env / "bin" / "python"),
                    "--editable", str(clone)], check=True)
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("JUPYTER", "WORKBOOK"))}
    environment.update(HOME=str(home), PATH=os.pathsep.join([str(env / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]))
    built = subprocess.run(["bash", "postBuild"], cwd=clone, env=environment, capture_output=True, text=True,
                           timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    port = free_port()
    server = subprocess.Popen([str(env / "bin" / "jupyter"), "lab", "--no-browser", "--ip=127.0.0.1", "--allow-root",
                               f"--port={port}", f"--ServerApp.token={TOKEN}", "--ServerApp.port_retries=0"],
                              cwd=clone, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while True:  # wait until the server answers its status endpoint
        assert server.poll() is None, server.stdout.read()
        try:
            get(port, "/api/status")
            break
        except (urllib.error.URLError, ConnectionError, OSError):
            assert time.monotonic() < deadline, "JupyterLab did not answer within 120 s"
            time.sleep(0.3)
    yield {"clone": clone, "home": home, "env": env, "port": port}
    server.terminate()
    server.wait(timeout=30)


def test_postbuild_makes_the_learners_copy_without_answers(binder):
    copy = binder["clone"] / "my-workbook"
    assert sorted(p.name for p in copy.glob("*.ipynb")) == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    for path in copy.rglob("*"):
        if path.is_file():
            assert "### BEGIN SOLUTION" not in path.read_text(errors="replace"), path.name


def test_a_session_opens_chapter_one_of_the_learners_copy(binder):
    url, _ = get(binder["port"], "/")
    assert url.split("?")[0].endswith("/lab/tree/01-purpose-and-validation.ipynb")
    _, listing = get(binder["port"], "/api/contents")
    names = {item["name"] for item in json.loads(listing)["content"]}
    assert "01-purpose-and-validation.ipynb" in names and "00-start-here.md" in names
    assert not names & {"notebooks", "workbook", "README.md", "Makefile"}


def test_the_source_chapters_are_out_of_reach_of_the_file_browser(binder):
    for path in ["/api/contents/../notebooks", "/api/contents/%2E%2E/notebooks/01-purpose-and-validation.ipynb",
                 "/files/../notebooks/01-purpose-and-validation.ipynb"]:
        try:
            _, body = get(binder["port"], path)
        except urllib.error.HTTPError as error:
            assert error.code in (400, 403, 404), path
        else:
            assert "BEGIN SOLUTION" not in body, path


def test_the_workbooks_settings_and_first_layout_apply(binder):
    overrides = json.loads((ROOT / "jupyterlab" / "overrides.json").read_text())
    for plugin, values in overrides.items():
        _, answer = get(binder["port"], f"/lab/api/settings/{plugin}")
        # an override changes the default in the plugin's schema (the learner's own settings still win)
        schema = json.loads(answer)["schema"]["properties"]
        for key, value in values.items():
            default = schema[key]["default"]
            if isinstance(value, dict):  # an object's override is merged into its default
                default = {name: default.get(name) for name in value}
            assert default == value, (plugin, key)
    # jupyterlab/page_config.json in the page JupyterLab serves: no build check (node at every load)
    wanted = json.loads((ROOT / "jupyterlab" / "page_config.json").read_text())
    _, html = get(binder["port"], "/lab")
    data = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', html, re.S)
    assert {key: json.loads(data.group(1)).get(key) for key in wanted} == wanted
    _, workspace = get(binder["port"], "/lab/api/workspaces/default")
    left = json.loads(workspace)["data"]["layout-restorer:data"]["left"]
    assert left["current"] == "@jupyterlab/toc:plugin"
