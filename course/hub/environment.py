"""What the hub and every server on it run, in HUB_DIR, readable by every account.

    HUB_DIR/python/     a copy of the interpreter the workbook runs on. The interpreters on the
                        workbook's machine live in root's home, which no other account can enter,
                        so a student's server could not start them where they are; the copy is
                        world-readable, and its lib/ goes on LD_LIBRARY_PATH for its libpython.
    HUB_DIR/env/        the course venv on that copy, installed with --no-deps from the lock,
                        course/requirements.txt (JupyterHub, nbgrader and its extensions, the
                        workbook's lab and postgres packages), then the class edition of the
                        package, editable from HUB_DIR/class-package/ (course.editions.package); the
                        workbook's JupyterLab settings and nbgrader's course config
    HUB_DIR/edition/    the learner's edition of the chapters, which every server copies from
    HUB_DIR/tools/      the modules of the course package that course.editions.learner needs
                        (LEARNER_MODULES; not the grader's) and course/hub/files/start-server
    HUB_DIR/proxy/      configurable-http-proxy from npm, as course/hub/files/package-lock.json locks it
    HUB_DIR/bin/        nbgrader, the course environment's, for a shell outside the hub (a
                        root shell): it sets LD_LIBRARY_PATH, and from root runs as the instructor
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from course import ROOT
from course.hub import FILES
LOCK = ROOT / "course" / "requirements.txt"
VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"
# Parts of the standard library no server uses; site-packages stays empty (the venv has its own).
STDLIB_SKIPPED = {"site-packages", "test", "idlelib", "tkinter", "turtledemo"}
STUDENTS_OFF = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                "@jupyter/nbgrader:course-list"]
SERVER_OFF = ["nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list"]
# What start-server runs as each person (python -m course.editions.learner, PYTHONPATH=HUB_DIR/tools)
LEARNER_MODULES = ["course/__init__.py", "course/notebook.py", "course/editions/__init__.py",
                   "course/editions/learner.py", "course/editions/steps.py"]
# Every server's own settings, beyond JupyterLab's (jupyterlab/overrides.json):
# - as tools/lab starts make lab's server: the kernel websocket's legacy protocol (tools/lab says
#   why: on v1 a replaced connection's late frame is misread and lost) and the pre-save hook that
#   saves a time explorer as its still (jupyterlab/workbook_lab.py);
# - how long a server keeps the hub's word that a browser's login is good: while the hub restarts,
#   a tab whose login the server knows goes on saving and running cells. Logging out still ends a
#   session at once (the server's cache is per session), and make hub-stop ends every server.
SERVER_SETTINGS = {
    "ZMQChannelsWebsocketConnection": {"kernel_ws_protocol": ""},
    "FileContentsManager": {"pre_save_hook": "workbook_lab.drop_widget_views"},
    "HubOAuth": {"cache_max_age": 12 * 3600},
}


def digest(*paths):
    hashed = hashlib.sha256()
    for path in paths:
        path = Path(path)
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            if "__pycache__" in file.parts:
                continue
            hashed.update(str(file.relative_to(path) if path.is_dir() else file.name).encode())
            hashed.update(file.read_bytes())
    return hashed.hexdigest()[:16]


def open_to_all(top):
    """Every folder enterable and every file readable by all; executables stay executable."""
    for folder, dirs, files in os.walk(top):
        os.chmod(folder, 0o755)
        for name in files:
            path = Path(folder) / name
            if not path.is_symlink():
                os.chmod(path, 0o755 if os.stat(path).st_mode & 0o100 else 0o644)


def readable_python(dest):
    """A copy of this interpreter (sys.base_prefix) in `dest` that every account may run."""
    dest = Path(dest)
    base = Path(sys.base_prefix)
    stamp = dest / ".copied-from"
    want = f"{base} {sys.version}"
    if stamp.exists() and stamp.read_text() == want:
        return dest / "bin" / VERSION
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "bin").mkdir(parents=True)
    (dest / "lib").mkdir()
    shutil.copy2(base / "bin" / VERSION, dest / "bin" / VERSION)
    os.symlink(VERSION, dest / "bin" / "python3")
    for library in sorted((base / "lib").glob("libpython3*.so*")):
        shutil.copy2(library, dest / "lib" / library.name)  # follows links: each a file of its own
    shutil.copytree(base / "lib" / VERSION, dest / "lib" / VERSION, symlinks=True,
                    ignore=lambda folder, names: STDLIB_SKIPPED & set(names)
                    if Path(folder) == base / "lib" / VERSION else set())
    (dest / "lib" / VERSION / "site-packages").mkdir()
    open_to_all(dest)
    stamp.write_text(want)
    return dest / "bin" / VERSION


def run_with(python_lib):
    """The environment for commands that start the copied interpreter."""
    paths = [str(python_lib), *filter(None, [os.environ.get("LD_LIBRARY_PATH")])]
    return dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(paths))


def installer():
    """uv as tools/venv finds it (on PATH, or the one it keeps in build/uv), else None (pip)."""
    found = shutil.which("uv")
    if found:
        return found
    kept = ROOT / "build" / "uv" / "bin" / "uv"
    return str(kept) if kept.exists() else None


def install_lock(env, python, lock=LOCK, environment=None, uv=None):
    """The venv `env` on `python` with exactly the lock's packages (--no-deps, then a check that
    they satisfy one another); rebuilt only when the lock changed."""
    env = Path(env)
    stamp = env / ".lock"
    want = digest(lock)
    if stamp.exists() and stamp.read_text() == want:
        return False
    uv = uv or installer()
    shutil.rmtree(env, ignore_errors=True)
    run = dict(check=True, env=environment)
    if uv:
        subprocess.run([uv, "venv", "--quiet", "--python", str(python), str(env)], **run)
        # --compile-bytecode: no account but root may write __pycache__ here, so without it
        # every server would compile what it imports at every start (pip compiles by default)
        subprocess.run([uv, "pip", "install", "--quiet", "--no-deps", "--compile-bytecode",
                        "--python", str(env / "bin" / "python"), "--requirement", str(lock)], **run)
        subprocess.run([uv, "pip", "check", "--quiet", "--python", str(env / "bin" / "python")], **run)
    else:
        print("uv not found: installing the course environment with pip (a few minutes)", file=sys.stderr)
        subprocess.run([str(python), "-m", "venv", str(env)], **run)
        pip = [str(env / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
        subprocess.run([*pip, "install", "--quiet", "--no-deps", "--requirement", str(lock)], **run)
        subprocess.run([*pip, "check"], **run)
    stamp.write_text(want)
    return True


def install_package(env, tree, write_package, environment=None, uv=None):
    """The class edition of the package in `tree`, installed editable into `env`; replaced when it
    changed. Returns its digest."""
    tree = Path(tree)
    with tempfile.TemporaryDirectory() as scratch:
        fresh = Path(scratch) / "package"
        write_package(fresh)  # course/editions/package.py: fresh/workbook and fresh/pyproject.toml
        want = digest(fresh)
        stamp = Path(env) / ".package"
        if stamp.exists() and stamp.read_text() == want and tree.exists():
            return want
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(fresh, tree)
    open_to_all(tree)
    # editable_mode=compat: a path in a .pth file, not setuptools' import hook, which Python asks
    # only after the path: with the hook, `import workbook` in a terminal at ~ found the student's
    # own ~/workbook/ folder (a namespace package) instead of the class edition
    uv = installer() if uv is None else uv
    python = str(Path(env) / "bin" / "python")
    if uv:
        command = [uv, "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--reinstall",
                   "--config-settings", "editable_mode=compat", "--python", python, "--editable", str(tree)]
    else:
        command = [python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                   "--force-reinstall", "--config-settings", "editable_mode=compat", "--editable", str(tree)]
    subprocess.run(command, check=True, env=environment)
    # compiled here, since no student may write its __pycache__; then readable like the rest
    subprocess.run([python, "-m", "compileall", "-q", str(tree)], check=True, env=environment,
                   stdout=subprocess.DEVNULL)
    open_to_all(tree)
    stamp.write_text(want)
    return want


def site_packages(env):
    return Path(env) / "lib" / VERSION / "site-packages"


COLLECT = "coursehub_collect"  # course/hub/collect.py, as installed in the course environment


def configure(env, exchange, course_id, check_owner=True):
    """The workbook's JupyterLab and IPython kernel settings and nbgrader's course settings for
    every server in `env`; the instructor's tools (formgrader, create assignment, course list) off
    for everyone, turned back on in the instructor's own settings (exchange.instructor_settings).
    nbgrader's collect is course.hub.collect's, which skips a submission made in another student's
    name (check_owner False: where every account is one uid, as in the Kubernetes image, only
    links are refused)."""
    env = Path(env)
    site_packages(env).mkdir(parents=True, exist_ok=True)
    collect = site_packages(env) / f"{COLLECT}.py"
    shutil.copy(Path(__file__).with_name("collect.py"), collect)
    os.chmod(collect, 0o644)
    hook = site_packages(env) / "workbook_lab.py"  # the pre-save hook, as tools/venv installs it
    shutil.copy(ROOT / "jupyterlab" / "workbook_lab.py", hook)
    os.chmod(hook, 0o644)
    settings = env / "share" / "jupyter" / "lab" / "settings" / "overrides.d"
    settings.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "jupyterlab" / "overrides.json", settings / "workbook.json")
    # as tools/venv does: the kernels load workbook.teaching.exercises.kernel, on in a learner's copy
    # (~/workbook), where a name not defined yet is said in one sentence, not a traceback
    kernels = env / "etc" / "ipython"
    kernels.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "jupyterlab" / "ipython_kernel_config.py", kernels / "ipython_kernel_config.py")
    config = env / "etc" / "jupyter"
    config.mkdir(parents=True, exist_ok=True)
    (config / "nbgrader_config.py").write_text(
        "# The course on this hub (written by make hub): which course, and where nbgrader's exchange is.\n"
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.course_id = {course_id!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
        "# nbgrader's collect, except that a submission one student made in another's name (or\n"
        "# one holding a link) is skipped and named in the log, not collected (coursehub/collect.py)\n"
        f"c.ExchangeFactory.collect = '{COLLECT}.OwnerCheckedCollect'\n"
        + ("" if check_owner else "c.ExchangeCollect.check_owner = False\n"))
    # What `jupyter server extension disable --sys-prefix` and `jupyter labextension disable
    # --level=sys_prefix` write, written directly: those commands take seconds each (they import
    # every extension to validate it), and the second also locks the plugin.
    (config / "jupyter_server_config.d").mkdir(exist_ok=True)
    (config / "jupyter_server_config.d" / "workbook.json").write_text(json.dumps(SERVER_SETTINGS, indent=1) + "\n")
    for extension in SERVER_OFF:
        (config / "jupyter_server_config.d" / f"{extension}.json").write_text(json.dumps(
            {"ServerApp": {"jpserver_extensions": {extension: False}}}, indent=1) + "\n")
    (config / "labconfig").mkdir(exist_ok=True)
    # as tools/venv does, jupyterlab/page_config.json: no build check (node at every page load)
    page = json.loads((ROOT / "jupyterlab" / "page_config.json").read_text())
    (config / "labconfig" / "page_config.json").write_text(json.dumps(
        {**page, "disabledExtensions": {plugin: True for plugin in STUDENTS_OFF}}, indent=1) + "\n")
    formgrader_css(env)
    open_to_all(env / "etc")
    open_to_all(env / "share" / "jupyter" / "lab" / "settings")


def install_proxy(proxy):
    """configurable-http-proxy from npm, exactly as course/hub/files/package-lock.json locks it."""
    proxy = Path(proxy)
    command = proxy / "node_modules" / ".bin" / "configurable-http-proxy"
    want = digest(FILES / "package-lock.json")
    stamp = proxy / ".lock"
    if command.exists() and stamp.exists() and stamp.read_text() == want:
        return command
    if not shutil.which("npm") or not shutil.which("node"):
        raise RuntimeError("make hub needs Node.js and npm for JupyterHub's proxy "
                           "(configurable-http-proxy): apt-get install nodejs npm")
    shutil.rmtree(proxy, ignore_errors=True)
    proxy.mkdir(parents=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(FILES / name, proxy / name)
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=proxy, check=True,
                   stdout=subprocess.DEVNULL)
    stamp.write_text(want)
    return command


def write_tools(tools, edition):
    """The course package (for course.editions.learner, which start-server runs as each person),
    the start script for every server, and the learner's edition."""
    from course.editions import learner
    tools, edition = Path(tools), Path(edition)
    tools.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(tools / "course", ignore_errors=True)
    for name in LEARNER_MODULES:  # these alone: the rest of the course package is the instructor's
        (tools / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tools / name)
    shutil.copy(FILES / "start-server", tools / "start-server")
    shutil.copy(ROOT / "jupyterlab" / "workspace.json", tools / "workspace.json")
    shutil.rmtree(edition, ignore_errors=True)
    written = learner.write_edition(edition, ROOT / "notebooks")
    shutil.copy(FILES / "start-here.md", edition / learner.START)
    open_to_all(tools)
    open_to_all(edition)
    return [path.name for path in written]


NBGRADER = """#!/bin/sh
# The course hub's nbgrader, from any shell (written by make hub; docs/hub.md). The course
# environment runs on the copy of Python in {hub}/python, which finds its libpython through
# LD_LIBRARY_PATH, so {env}/bin/nbgrader alone fails outside the hub's servers. Run as root,
# this runs as the instructor, in the course folder, so that what nbgrader writes there (the
# gradebook, submitted/, feedback/) stays the instructor's.
set -eu
if [ "$(id -u)" = 0 ]; then
  cd {course}
  exec runuser -u {instructor} -- "$0" "$@"
fi
LD_LIBRARY_PATH={lib}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}
PATH={env}/bin:$PATH
export LD_LIBRARY_PATH PATH
exec {env}/bin/nbgrader "$@"
"""


def write_commands(bin_dir, env, python_lib, instructor, course):
    """HUB_DIR/bin/nbgrader (NBGRADER); returns its path."""
    import shlex
    bin_dir = Path(bin_dir)
    bin_dir.mkdir(parents=True, exist_ok=True)
    command = bin_dir / "nbgrader"
    command.write_text(NBGRADER.format(hub=Path(env).parent, env=shlex.quote(str(env)),
                                       lib=shlex.quote(str(python_lib)), course=shlex.quote(str(course)),
                                       instructor=shlex.quote(instructor)))
    open_to_all(bin_dir)
    os.chmod(command, 0o755)
    return command


def settings_json(path, settings):
    Path(path).write_text(json.dumps(settings, indent=1, sort_keys=True) + "\n")


PROFILES = Path("/etc/profile.d")


def profile_path(env, profiles=PROFILES):
    """This hub's login-shell snippet: one per HUB_DIR, so that two hubs on a machine keep theirs."""
    return Path(profiles) / f"agent-memory-hub-{hashlib.sha256(str(Path(env)).encode()).hexdigest()[:8]}.sh"


PROFILE = """\
# The course hub in {hub} (written by make hub; make hub-teardown removes it). A terminal in
# JupyterLab is a login shell, and a login shell's /etc/profile sets PATH afresh, which left the
# course's python, nbgrader and jupyter out of it. Only a shell started by one of this hub's servers
# (its environment names the course's) gets them back, first on PATH.
if [ "${{WORKBOOK_HUB_ENV:-}}" = {env} ]; then
  PATH={env}/bin:$PATH
  export PATH
fi
"""


def write_profile(env, profiles=PROFILES):
    """The snippet that puts the course environment first on PATH in the hub's terminals."""
    import shlex
    path = profile_path(env, profiles)
    path.write_text(PROFILE.format(hub=Path(env).parent, env=shlex.quote(str(env))))
    os.chmod(path, 0o644)
    return path


FORMGRADER_CSS = """
/* Added by make hub (course/hub/environment.py). The course's feedback is make grade's, handed back
   by make hub-feedback, so the formgrader's Generate Feedback and Release Feedback columns (the
   last two of Manage Assignments' eleven) are hidden; and a dialog's log wraps at its edge. */
.table thead th:nth-child(10):nth-last-child(2), .table thead th:nth-child(11):last-child,
td.generate-feedback, td.release-feedback { display: none; }
.modal-body pre { white-space: pre-wrap; word-break: break-word; }
"""


def formgrader_css(env):
    """FORMGRADER_CSS at the end of nbgrader's formgrader stylesheet in the course environment,
    once. The file is replaced, never written in place: uv links installed files to its cache."""
    sheets = list(site_packages(env).glob("nbgrader/server_extensions/formgrader/static/css/nbgrader.css"))
    for sheet in sheets:
        text = sheet.read_text()
        if FORMGRADER_CSS in text:
            continue
        fresh = sheet.with_name(sheet.name + ".new")
        fresh.write_text(text + FORMGRADER_CSS)
        os.chmod(fresh, 0o644)
        os.replace(fresh, sheet)
    return sheets
