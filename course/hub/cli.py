"""A course on a real JupyterHub on this machine (make hub; docs/hub.md).

    python course/hub/cli.py start     [options]    set the course up, start the hub, wait (make hub)
    python course/hub/cli.py setup     [options]    set the course up only
    python course/hub/cli.py feedback  [options] --grades DIR
                                                 make grade's verdicts to each student (make hub-feedback)
    python course/hub/cli.py image --dir DIR --exchange EXCHANGE
                                                 the same course in a container image (course/hub/files/Dockerfile)

Options (the Makefile's variables): --dir HUB_DIR (default /srv/agent-memory-hub), --homes
HUB_HOMES (/home), --roster ROSTER (course/hub/files/roster.example.csv), --instructor INSTRUCTOR
(instructor), --ip HUB_IP (127.0.0.1), --port HUB_PORT (8000; 0 picks a free one), --timeout
TIMEOUT (nbgrader's per-cell limit in the course's config).

setup, as root: one system account per roster line and one for the instructor, each with a
private home and, when new, a first password of its own (in the instructor's hub-passwords.csv);
the instructor's nbgrader course folder (make class's) in their home; nbgrader's exchange; the
learner's edition; the course venv from course/requirements.txt with the class edition of the
package; configurable-http-proxy from course/hub/files/package-lock.json. It closes this clone to other
accounts, since it holds the worked answers, and refuses to start while another copy of them is
open to other accounts (course.hub.clone: the repository a worktree's git objects are in, a
clone beside either), naming the chmod that closes it. start then runs JupyterHub (course/hub/files/jupyterhub_config.py),
waits until it answers, prints the URL and how to log in, and runs until Ctrl+C.
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from course.hub import FILES, accounts, clone, environment, exchange, feedback
from course.hub.roster import check_username, read_roster

from course.editions.package import write_package  # the class edition, as make class writes it

from course import ROOT
READY = "Course hub ready"
HEALTH_SECONDS = 120


def options():
    parser = argparse.ArgumentParser(description="A course on JupyterHub: make hub, make hub-feedback.")
    parser.add_argument("command", choices=["start", "setup", "feedback", "image"])
    parser.add_argument("--dir", default="/srv/agent-memory-hub", help="where the hub keeps its files")
    parser.add_argument("--homes", default="/home", help="where the accounts' homes are made")
    parser.add_argument("--roster", default=str(FILES / "roster.example.csv"))
    parser.add_argument("--instructor", default="instructor")
    parser.add_argument("--ip", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--timeout", type=int, default=10)
    parser.add_argument("--grades", help="feedback: make grade's GRADES folder (grades.json)")
    parser.add_argument("--exchange", default="/srv/nbgrader/exchange", help="image: the exchange's mount")
    return parser


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def folders(hub):
    hub = Path(hub).resolve()
    return {"hub": hub, "python": hub / "python", "env": hub / "env", "edition": hub / "edition",
            "package": hub / "class-package",
            "tools": hub / "tools", "proxy": hub / "proxy", "exchange": hub / "exchange", "bin": hub / "bin",
            "state": hub / "state"}


def setup(arguments):
    accounts.require_root()
    where = folders(arguments.dir)
    if where["hub"].is_relative_to(ROOT):
        raise ValueError(f"HUB_DIR: {where['hub']} is inside this clone, which make hub closes to "
                         "other accounts; choose a folder outside it (the default is /srv/agent-memory-hub)")
    check_username(arguments.instructor, "INSTRUCTOR")
    members = read_roster(arguments.roster)
    if arguments.instructor in {m.username for m in members}:
        raise ValueError(f"INSTRUCTOR: {arguments.instructor!r} is also a student in {arguments.roster}")
    refused = clone.refusal(clone.open_copies(ROOT))
    if refused:
        raise ValueError(refused)
    if clone.close(ROOT):
        print(f"Closed {ROOT} to other accounts (chmod go-rwx): it holds the worked answers.")
    where["hub"].mkdir(parents=True, exist_ok=True)
    os.chmod(where["hub"], 0o755)
    where["state"].mkdir(exist_ok=True)
    os.chmod(where["state"], 0o700)
    teacher, rows, given = accounts.ensure_accounts(members, arguments.instructor, arguments.homes)
    python = environment.readable_python(where["python"])
    run = environment.run_with(where["python"] / "lib")
    if environment.install_lock(where["env"], python, environment=run):
        print(f"Course environment: {where['env']} from course/requirements.txt")
    environment.install_package(where["env"], where["package"], write_package, environment=run)
    environment.configure(where["env"], where["exchange"], exchange.COURSE_ID)
    proxy = environment.install_proxy(where["proxy"])
    chapters = environment.write_tools(where["tools"], where["edition"])
    environment.open_to_all(where["env"])
    exchange.ensure_exchange(where["exchange"], teacher)
    course, released = exchange.write_course(teacher, arguments.timeout)
    exchange.instructor_settings(teacher, where["env"], course)
    nbgrader = environment.write_commands(where["bin"], where["env"], where["python"] / "lib",
                                          teacher.pw_name, course)
    port = arguments.port or free_port()
    earlier = where["state"] / "settings.json"
    # the hub's own ports stay as they were, so a make hub setup beside a running hub changes none
    kept = json.loads(earlier.read_text()) if earlier.exists() else {}
    settings = {
        "ip": arguments.ip, "port": port, "hub_port": kept.get("hub_port") or free_port(),
        "proxy_api_port": kept.get("proxy_api_port") or free_port(),
        "proxy": str(proxy), "state": str(where["state"]), "env": str(where["env"]),
        "python_lib": str(where["python"] / "lib"), "tools": str(where["tools"]),
        "edition": str(where["edition"]), "first_chapter": chapters[0],
        "students": [m.username for m in members], "instructor": teacher.pw_name,
        "course": str(course), "exchange": str(where["exchange"]), "roster": str(Path(arguments.roster).resolve()),
        "passwords": str(Path(teacher.pw_dir) / accounts.PASSWORDS), "released": released,
        "nbgrader": str(nbgrader),
    }
    environment.settings_json(where["state"] / "settings.json", settings)
    return settings, given


def image(arguments):
    """For course/hub/files/Dockerfile (Zero to JupyterHub; not tested here): this interpreter's environment,
    which holds the course lock, becomes DIR/env, with the class edition of the package and the
    settings make hub writes; DIR/tools and DIR/edition as make hub writes them; DIR/instructor
    the instructor's Jupyter settings (JUPYTER_CONFIG_PATH in the instructor's pod)."""
    where = folders(arguments.dir)
    where["hub"].mkdir(parents=True, exist_ok=True)
    prefix = Path(sys.prefix)
    if not where["env"].exists():
        where["env"].symlink_to(prefix)
    environment.install_package(prefix, where["package"], write_package, uv=False)  # pip: no uv in the image
    # every pod is uid 1000 (jovyan): owners cannot tell students apart there (docs/hub.md)
    environment.configure(prefix, arguments.exchange, exchange.COURSE_ID, check_owner=False)
    environment.write_tools(where["tools"], where["edition"])
    instructor = where["hub"] / "instructor"
    (instructor / "labconfig").mkdir(parents=True, exist_ok=True)
    (instructor / "nbgrader_config.py").write_text(exchange.course_config("/home/jovyan/course"))
    (instructor / "jupyter_server_config.json").write_text(json.dumps(exchange.server_on(), indent=1))
    (instructor / "labconfig" / "page_config.json").write_text(json.dumps(exchange.lab_on(), indent=1))
    environment.open_to_all(where["hub"])
    print(f"Course image files in {where['hub']}")


def banner(settings, given):
    host = "localhost" if settings["ip"] in ("127.0.0.1", "localhost") else settings["ip"]
    url = f"http://{host}:{settings['port']}/"
    made = f" ({len(given)} new accounts given a first password)" if given else ""
    teacher = settings["instructor"]
    return "\n".join([
        f"{READY}: {len(settings['students'])} students from {settings['roster']}, "
        f"instructor {teacher}{made}.",
        f"  URL:        {url}",
        f"  Log in:     each person with their own username and password; the first passwords are in",
        f"              {settings['passwords']} (only {teacher} and root can read it).",
        f"              Hand each student theirs privately; the instructor's is on its last line.",
        f"  Formgrader: {url}user/{teacher}/formgrader (as {teacher}, in a browser tab of its own):",
        f"              Generate, Release and Collect each chapter there; not its feedback buttons.",
        f"  Course:     {settings['course']} (nbgrader's course folder). Grade as root, in this clone:",
        f"              make grade SUBMISSION={settings['course']}/submitted [CHAPTERS=01,02]",
        f"              make hub-feedback HUB_DIR={Path(settings['state']).parent}   (the verdicts, to each student)",
        f"  nbgrader:   {settings.get('nbgrader', '')} (the course's, from any shell; from root it runs as {teacher})",
        f"  Log:        {settings['state']}/jupyterhub.log",
        "  Stop:       Ctrl+C (accounts, homes and the course stay; make hub again carries on)",
    ])


def wait_until_up(process, settings, log):
    """Wait for the hub's health endpoint through the proxy, or fail with the log's end."""
    url = f"http://127.0.0.1:{settings['port']}/hub/health"
    deadline = time.monotonic() + HEALTH_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterHub exited ({process.returncode}):\n{tail(log)}")
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"JupyterHub did not answer {url} within {HEALTH_SECONDS} s:\n{tail(log)}")


def tail(log, lines=40):
    return "\n".join(Path(log).read_text(errors="replace").splitlines()[-lines:]) if Path(log).exists() else ""


def start(arguments):
    settings, given = setup(arguments)
    state = Path(settings["state"])
    log = state / "jupyterhub.log"
    env = Path(settings["env"])
    environment_ = dict(os.environ, WORKBOOK_HUB_SETTINGS=str(state / "settings.json"),
                        LD_LIBRARY_PATH=settings["python_lib"],
                        PATH=os.pathsep.join([str(env / "bin"), os.environ.get("PATH", "")]))
    for leaked in ("VIRTUAL_ENV", "PYTHONPATH", "JUPYTER_PATH", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR"):
        environment_.pop(leaked, None)
    with open(log, "a") as output:
        process = subprocess.Popen([str(env / "bin" / "jupyterhub"), "-f", str(FILES / "jupyterhub_config.py")],
                                   cwd=state, env=environment_, stdout=output, stderr=subprocess.STDOUT,
                                   start_new_session=True)

    def stop(signum, frame):
        process.send_signal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        wait_until_up(process, settings, log)
        print(banner(settings, given), flush=True)
        return process.wait()
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


def main(argv=None):
    parser = options()
    arguments = parser.parse_args(argv)
    try:
        if arguments.command == "feedback":
            if not arguments.grades:
                parser.error("feedback needs --grades (make hub-feedback GRADES=build/grades)")
            settings = json.loads((folders(arguments.dir)["state"] / "settings.json").read_text())
            print(feedback.release(settings, arguments.grades))
            return 0
        if arguments.command == "image":
            image(arguments)
            return 0
        if arguments.command == "setup":
            settings, given = setup(arguments)
            print(banner(settings, given).replace(READY, "Course hub set up (make hub starts it)"))
            return 0
        return start(arguments)
    except accounts.NeedsRoot as error:
        print(error, file=sys.stderr)
        return 2
    except (ValueError, RuntimeError) as error:
        print(f"make hub: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
