"""A course on a real JupyterHub on this machine (make hub; docs/hub.md).

    workbook-hub start     [options]   check, set the course up, start (or restart) the hub (make hub)
    workbook-hub setup     [options]   check and set the course up only
    workbook-hub stop      --dir DIR   stop the hub, every student's server and the proxy (make hub-stop)
    workbook-hub servers   --dir DIR   start every student's server ahead of a lecture (make hub-servers)
    workbook-hub status    --dir DIR   what runs: the hub, the proxy, whose servers (make hub-status)
    workbook-hub teardown  --dir DIR [--keep DIR] [--yes]
                                       remove the course's accounts, homes and HUB_DIR (make hub-teardown)
    workbook-hub feedback  --dir DIR --grades DIR
                                       make grade's verdicts to each student (make hub-feedback)
    workbook-hub image --dir DIR --exchange EXCHANGE
                                       the same course in a container image (course/hub/files/Dockerfile)

Options (the Makefile's variables): --dir HUB_DIR (default /srv/agent-memory-hub), --homes
HUB_HOMES (/home), --roster ROSTER (course/hub/files/roster.example.csv), --instructor INSTRUCTOR
(instructor), --ip HUB_IP (127.0.0.1), --port HUB_PORT (8000; 0 picks a free one), --timeout
TIMEOUT (nbgrader's per-cell limit in the course's config), --idle HUB_IDLE (seconds before the
idle culler stops an unused server, 3600), --accept-readable ACCEPT_READABLE (paths, or all, where
students may read worked answers), --scan-seconds SCAN_SECONDS (the bound on that search, 120).

start and setup check everything first (course.hub.checks), then change: one system account per
roster line and one for the instructor, each with a private home and, when new, a first password
of its own (in the instructor's hub-passwords.csv); the instructor's nbgrader course folder in
their home; nbgrader's exchange; the learner's edition; the course venv from
course/requirements.txt with the class edition of the package; configurable-http-proxy from
course/hub/files/package-lock.json. It closes this clone to other accounts, since it holds the
worked answers. start then starts the proxy unless it runs, starts JupyterHub in the background in
place of the hub already running (course.hub.service: the servers and the proxy stay), waits until
it answers, prints the URL and how to log in, and returns.
"""
import argparse
import json
import os
import secrets
import socket
import subprocess
import sys
from pathlib import Path

from course import ROOT
from course.editions.package import write_package  # the class edition, as make class writes it
from course.hub import FILES, accounts, ahead, checks, clone, environment, exchange, exposure, feedback, service, teardown

READY = "Course hub ready"


class Refused(ValueError):
    """make hub found problems before changing anything; each is one sentence."""

    def __init__(self, problems):
        super().__init__("\n".join(problems))
        self.problems = problems


def options():
    parser = argparse.ArgumentParser(prog="workbook-hub", description="A course on JupyterHub (docs/hub.md).")
    parser.add_argument("command", choices=["start", "setup", "stop", "servers", "status", "teardown",
                                            "feedback", "image"])
    parser.add_argument("--dir", default="/srv/agent-memory-hub", help="where the hub keeps its files")
    # left out, each of these is what this HUB_DIR's course has (settings.json), else DEFAULTS's
    parser.add_argument("--homes", help="where the accounts' homes are made")
    parser.add_argument("--roster")
    parser.add_argument("--instructor")
    parser.add_argument("--ip")
    parser.add_argument("--port", type=int)
    parser.add_argument("--timeout", type=int)
    parser.add_argument("--idle", type=int, help="seconds before an unused server is stopped")
    parser.add_argument("--accept-readable", default="",
                        help="comma-separated paths (or all) where students may read worked answers")
    parser.add_argument("--scan-seconds", type=int, default=exposure.SECONDS)
    parser.add_argument("--at-once", type=int, default=0, help="servers: how many start at a time")
    parser.add_argument("--keep", default="", help="teardown: copy the course folder (gradebook) here first")
    parser.add_argument("--yes", action="store_true", help="teardown: do not ask")
    parser.add_argument("--grades", help="feedback: make grade's GRADES folder (grades.json); teardown: "
                                         "kept with the course folder when it exists")
    parser.add_argument("--exchange", default="/srv/nbgrader/exchange", help="image: the exchange's mount")
    return parser


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def folders(hub):
    hub = Path(hub).absolute()
    return {"hub": hub, "python": hub / "python", "env": hub / "env", "edition": hub / "edition",
            "package": hub / "class-package",
            "tools": hub / "tools", "proxy": hub / "proxy", "exchange": hub / "exchange", "bin": hub / "bin",
            "state": hub / "state"}


DEFAULTS = {"homes": "/home", "roster": str(FILES / "roster.example.csv"), "instructor": "instructor",
            "ip": "127.0.0.1", "port": 8000, "timeout": 10, "idle": 3600}
# What a running course cannot change: the instructor's home holds the course folder, and every
# account's home is in HUB_HOMES (a new course needs make hub-teardown first).
FIXED = {"instructor": "INSTRUCTOR", "homes": "HUB_HOMES"}


def same(name, given, before):
    if name in ("homes", "roster"):
        return Path(given).absolute() == Path(before).absolute()
    return given == before


def with_kept(arguments, kept, settings_file):
    """Fill every setting left out with this HUB_DIR's (kept), else its default; return the
    sentences refusing a value that conflicts with the running course's."""
    problems = []
    for name, default in DEFAULTS.items():
        given, before = getattr(arguments, name), kept.get(name)
        if given is None:
            setattr(arguments, name, before if before is not None else default)
        elif name in FIXED and before is not None and not same(name, given, before):
            problems.append(f"{FIXED[name]}={given} conflicts with {FIXED[name]}={before}, which this HUB_DIR's "
                            f"course was set up with ({settings_file}); leave {FIXED[name]} out to keep it, "
                            "or end that course first with make hub-teardown.")
    return problems


def restart_command(hub):
    return f"make hub HUB_DIR={hub}"


def planned_ports(arguments, kept):
    """The public port, and the hub's own two, which stay as an earlier make hub chose them: the
    running servers and the proxy know them."""
    port = arguments.port or kept.get("port") or free_port()
    return {"ip": arguments.ip, "port": port, "hub_port": kept.get("hub_port") or free_port(),
            "proxy_api_port": kept.get("proxy_api_port") or free_port()}


def accepted(arguments, kept=None):
    """What ACCEPT_READABLE names, with what an earlier make hub in this HUB_DIR accepted (kept
    in its settings, so that a restart is not refused over a copy accepted before);
    ACCEPT_READABLE=none forgets those."""
    given = [part.strip() for part in arguments.accept_readable.split(",") if part.strip()]
    before = [] if "none" in given else (kept or {}).get("accept_readable", [])
    return tuple(dict.fromkeys(path for path in [*before, *given] if path != "none"))


def check(arguments, where):
    """Every check, before any change; Refused with every problem found."""
    accounts.require_root()
    kept = checks.kept_settings(where["state"])
    conflicts = with_kept(arguments, kept, where["state"] / "settings.json")
    ports = planned_ports(arguments, kept)
    accept = accepted(arguments, kept)
    # ACCEPT_READABLE=all: the instructor accepts whatever students can read, so nothing is looked for
    search = None if conflicts or "all" in accept else exposure.search(seconds=arguments.scan_seconds)
    problems, members = checks.everything(arguments, where, ports, search, accept)
    if conflicts or problems:
        raise Refused(conflicts + problems)
    print(exposure.summary(search, accept) if search else
          "Did not look for worked answers students could read: ACCEPT_READABLE=all accepts them all.", flush=True)
    return members, ports, accept


def secret_file(path):
    """A secret kept in the state folder (root's alone), made once."""
    if not path.exists():
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_hex(32) + "\n")
    return path.read_text().strip()


def setup(arguments):
    where = folders(arguments.dir)
    members, ports, accept = check(arguments, where)
    homes_made = not Path(arguments.homes).exists()
    if clone.close(ROOT):
        print(f"Closed {ROOT} to other accounts (chmod go-rwx): it holds the worked answers.")
    where["hub"].mkdir(parents=True, exist_ok=True)
    os.chmod(where["hub"], 0o755)
    where["state"].mkdir(exist_ok=True)
    os.chmod(where["state"], 0o700)
    Path(arguments.homes).mkdir(mode=0o755, parents=True, exist_ok=True)
    teacher, rows, given = accounts.ensure_accounts(members, arguments.instructor, arguments.homes)
    teardown.record_made(where["state"], given)
    python = environment.readable_python(where["python"])
    run = environment.run_with(where["python"] / "lib")
    if environment.install_lock(where["env"], python, environment=run):
        print(f"Course environment: {where['env']} from course/requirements.txt")
    environment.install_package(where["env"], where["package"], write_package, environment=run)
    environment.configure(where["env"], where["exchange"], exchange.COURSE_ID)
    proxy = environment.install_proxy(where["proxy"])
    chapters = environment.write_tools(where["tools"], where["edition"])
    environment.open_to_all(where["env"])
    environment.write_profile(where["env"])
    exchange.ensure_exchange(where["exchange"], teacher)
    course, released = exchange.write_course(teacher, arguments.timeout, where["edition"])
    exchange.instructor_settings(teacher, where["env"], course)
    nbgrader = environment.write_commands(where["bin"], where["env"], where["python"] / "lib",
                                          teacher.pw_name, course)
    secret_file(where["state"] / "proxy_token")
    secret_file(where["state"] / "api_token")
    settings = dict(ports, **{
        "proxy": str(proxy), "state": str(where["state"]), "env": str(where["env"]),
        "python_lib": str(where["python"] / "lib"), "tools": str(where["tools"]),
        "edition": str(where["edition"]), "first_chapter": chapters[0],
        "students": [m.username for m in members], "instructor": teacher.pw_name,
        "course": str(course), "exchange": str(where["exchange"]), "roster": str(Path(arguments.roster).resolve()),
        "passwords": str(Path(teacher.pw_dir) / accounts.PASSWORDS), "released": released,
        "nbgrader": str(nbgrader), "idle": arguments.idle, "timeout": arguments.timeout,
        "homes": str(Path(arguments.homes).absolute()), "accept_readable": list(accept),
        # teardown removes HUB_HOMES too when this make hub made it (and it is empty by then)
        "homes_made": homes_made or checks.kept_settings(where["state"]).get("homes_made", False),
    })
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


def plural(count, one, many=None):
    return f"{count} {one if count == 1 else (many or one + 's')}"


def banner(settings, given):
    host = "localhost" if settings["ip"] in ("127.0.0.1", "localhost") else settings["ip"]
    url = f"http://{host}:{settings['port']}/"
    made = f" ({plural(len(given), 'new account')} given a first password)" if given else ""
    teacher = settings["instructor"]
    hub = Path(settings["state"]).parent
    return "\n".join([
        f"{READY}: {plural(len(settings['students']), 'student')} from {settings['roster']}, "
        f"instructor {teacher}{made}.",
        f"  URL:        {url}",
        f"  Log in:     each person with their own username and password; the first passwords are in",
        f"              {settings['passwords']} (only {teacher} and root can read it).",
        f"              Hand each student theirs privately; the instructor's is on its last line.",
        f"  Formgrader: {url}user/{teacher}/formgrader (as {teacher}, in a browser tab of its own):",
        f"              Generate, Release and Collect each chapter there.",
        f"  Course:     {settings['course']} (nbgrader's course folder). Grade as root, in this clone:",
        f"              make grade SUBMISSION={settings['course']}/submitted [CHAPTERS=01,02]",
        f"              make hub-feedback HUB_DIR={hub}   (the verdicts, to each student)",
        f"  nbgrader:   {settings.get('nbgrader', '')} (the course's, from any shell; from root it runs as {teacher})",
        f"  Log:        {settings['state']}/jupyterhub.log",
        f"  Lecture:    make hub-servers HUB_DIR={hub} starts every student's server ahead (unused ones stop after {settings['idle'] // 60} min)",
        f"  Restart:    {restart_command(hub)}   (this HUB_DIR keeps ROSTER, INSTRUCTOR, HUB_PORT and the other",
        f"              settings; name one to change it): every student's server and kernel keep running",
        f"  Stop:       make hub-stop HUB_DIR={hub} stops everything; make hub-teardown HUB_DIR={hub} ends the term",
    ])


def hub_environment(settings):
    env = Path(settings["env"])
    environment_ = dict(os.environ, WORKBOOK_HUB_SETTINGS=str(Path(settings["state"]) / "settings.json"),
                        LD_LIBRARY_PATH=settings["python_lib"],
                        PATH=os.pathsep.join([str(env / "bin"), os.environ.get("PATH", "")]))
    for leaked in ("VIRTUAL_ENV", "PYTHONPATH", "JUPYTER_PATH", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR"):
        environment_.pop(leaked, None)
    return environment_


def servers_sentence(running, instructor, names=False):
    """The running servers, the instructor's apart: "3 student servers and the instructor's"
    (with names: "3 student servers (ada, bo, cy) and the instructor's")."""
    students = sorted(name for name in running if name != instructor)
    said = plural(len(students), "student server") + (f" ({', '.join(students)})" if names and students else "")
    return said + (" and the instructor's" if instructor in running else "")


def status_servers(running, instructor):
    students = [name for name in sorted(running) if name != instructor]
    sentence = servers_sentence(running, instructor)
    return f"{sentence[0].upper()}{sentence[1:]} running{': ' + ', '.join(students) if students else ''}."


def start(arguments):
    settings, given = setup(arguments)
    state = Path(settings["state"])
    proxy = service.ensure_proxy(settings, (state / "proxy_token").read_text().strip())
    if proxy == "restarted":
        print("The proxy's address changed (HUB_IP or HUB_PORT), so it was restarted: open tabs reconnect.")
    running = service.running_servers(state)
    replaced = service.start_hub(settings, hub_environment(settings), FILES / "jupyterhub_config.py")
    if replaced:
        print(f"Restarted the hub; {servers_sentence(running, settings['instructor'])} kept running.")
    print(banner(settings, given), flush=True)
    return 0


def read_settings(arguments):
    path = folders(arguments.dir)["state"] / "settings.json"
    if not path.exists():
        raise ValueError(f"HUB_DIR {folders(arguments.dir)['hub']} holds no course hub (no {path}); "
                         "name the HUB_DIR make hub used.")
    return json.loads(path.read_text())


def stop(arguments):
    accounts.require_root("make hub-stop")
    settings = read_settings(arguments)
    hub, stopped, proxy = service.stop_everything(settings["state"])
    print(f"Stopped {'the hub' if hub else 'no hub (none was running)'}, "
          f"{servers_sentence(stopped, settings['instructor'], names=True)}, "
          f"and {'the proxy' if proxy else 'no proxy (none was running)'}. make hub starts the course again.")
    return 0


def status(arguments):
    settings = read_settings(arguments)
    state = Path(settings["state"])
    hub, (proxy, _) = service.hub_pid(state), service.proxy_running(state)
    running = sorted(service.running_servers(state))
    print(f"Hub: {'running, pid ' + str(hub) if hub else 'stopped'}. Proxy: "
          f"{'running, pid ' + str(proxy) if proxy else 'stopped'}. "
          f"{status_servers(running, settings['instructor'])}")
    return 0


def servers(arguments):
    accounts.require_root("make hub-servers")
    settings = read_settings(arguments)
    if not service.hub_pid(settings["state"]):
        raise ValueError("the hub is not running; start it with make hub, then run make hub-servers again.")
    ahead.start_all(settings, arguments.at_once or None)
    return 0


def end_of_term(arguments):
    accounts.require_root("make hub-teardown")
    settings, people, paths = teardown.plan(folders(arguments.dir)["hub"])
    keep = Path(arguments.keep).absolute() if arguments.keep else None
    if keep and (keep.is_relative_to(folders(arguments.dir)["hub"])
                 or any(keep.is_relative_to(home) for _, home in people)):
        raise ValueError(f"KEEP {keep} is inside what make hub-teardown removes; name a folder outside "
                         "HUB_DIR and the course's homes.")
    if keep and keep.exists():
        raise ValueError(f"KEEP {keep} already exists; name a new folder, so that nothing in it is replaced.")
    grades = Path(arguments.grades).absolute() if arguments.grades else None
    homes = teardown.made_homes(settings)
    print(teardown.describe(people, paths, keep, grades, homes), flush=True)
    if not arguments.yes:
        try:
            answer = input("Remove all of this? Type yes to go on: ")
        except EOFError:
            answer = ""
        if answer.strip().lower() != "yes":
            print("Nothing removed.")  # declining is an answer, not a failure
            return 0
    if keep:
        teardown.keep_course(settings, keep, grades)
        kept_grades = (keep / "grades").is_dir()
        print(f"Kept the course folder, with its gradebook.db, in {keep}"
              + (f", and make grade's output in {keep / 'grades'}" if kept_grades else "") + " (root's alone).")
    removed, left = teardown.remove(settings, people, paths)
    print(f"Removed {plural(len(people), 'account')} with their homes, and "
          f"{', '.join(str(p) for p in [*paths, *filter(None, [removed])])}.")
    if left:
        print(f"Left {left}, which make hub made for the homes: it still holds files that are not the course's.")
    return 0


def main(argv=None):
    parser = options()
    arguments = parser.parse_args(argv)
    what = {"start": "make hub", "setup": "make hub", "stop": "make hub-stop", "servers": "make hub-servers",
            "status": "make hub-status", "teardown": "make hub-teardown", "feedback": "make hub-feedback",
            "image": "workbook-hub image"}[arguments.command]
    try:
        if arguments.command == "feedback":
            if not arguments.grades:
                parser.error("feedback needs --grades (make hub-feedback GRADES=build/grades)")
            print(feedback.release(read_settings(arguments), arguments.grades))
            return 0
        if arguments.command == "image":
            image(arguments)
            return 0
        if arguments.command == "setup":
            settings, given = setup(arguments)
            print(banner(settings, given).replace(READY, "Course hub set up (make hub starts it)"))
            return 0
        command = {"start": start, "stop": stop, "status": status, "servers": servers,
                   "teardown": end_of_term}[arguments.command]
        return command(arguments)
    except accounts.NeedsRoot as error:
        print(error, file=sys.stderr)
        return 2
    except Refused as refused:
        for problem in refused.problems:
            print(f"{what}: {problem}", file=sys.stderr)
        print(f"{what}: nothing was changed.", file=sys.stderr)
        return 2
    except (ValueError, RuntimeError) as error:
        print(f"{what}: {error}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as error:
        command = error.cmd if isinstance(error.cmd, str) else " ".join(map(str, error.cmd))
        print(f"{what}: {command} failed (exit status {error.returncode}); what it printed above says why.",
              file=sys.stderr)
        return 2
    except OSError as error:
        print(f"{what}: {error.strerror or error} ({error.filename or 'no file named'}); the checks missed "
              "this: please report it with this line.", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
