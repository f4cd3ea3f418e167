"""Everything make hub can check before it changes anything (no account, file or process yet).

Each check returns None or one sentence that says what is wrong and what to do; make hub prints
every sentence it gets and stops, having made nothing. The checks read the machine only: the
folders every account must be able to enter, the roster and the usernames it claims, the ports,
Node.js for the proxy, the commands that make accounts, a course environment that would be
rebuilt under running servers, and (course.hub.exposure) worked answers a student could read.
"""
import json
import os
import pwd
import re
import shutil
import socket
import stat
import subprocess
from pathlib import Path

from course import ROOT
from course.hub import accounts, service
from course.hub.roster import check_username, read_roster

NODE_MAJOR = 18  # configurable-http-proxy 5 runs on Node 18 and later


def enterable_by_all(path):
    """The first folder from / down to `path` (or to its nearest existing parent) that an account
    in none of its groups cannot enter, or None."""
    path = Path(path).absolute()
    existing = path
    while not existing.exists():
        existing = existing.parent
    for folder in [*reversed(existing.parents), existing]:
        try:
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                return folder
        except OSError:
            return folder
    return None


def hub_folder(hub):
    hub = Path(hub).absolute()
    if hub.resolve().is_relative_to(ROOT):
        return (f"HUB_DIR {hub} is inside this clone, which make hub closes to other accounts; "
                "choose a folder outside it (the default is /srv/agent-memory-hub).")
    if hub.is_symlink():
        return f"HUB_DIR {hub} is a symbolic link; give make hub the folder it points to."
    closed = enterable_by_all(hub)
    if closed:
        return (f"HUB_DIR {hub} is under {closed}, which other accounts cannot enter, so no student's "
                f"server could start its Python there; choose a HUB_DIR every account can reach "
                f"(the default is /srv/agent-memory-hub), or chmod o+x {closed}.")
    if hub.exists() and os.stat(hub).st_uid != 0:
        return f"HUB_DIR {hub} belongs to another account than root; choose a folder of root's."
    return None


def homes_folder(homes):
    closed = enterable_by_all(homes)
    if closed:
        return (f"HUB_HOMES {homes} is under {closed}, which other accounts cannot enter, so no student "
                f"could reach their home; choose a folder every account can reach (the default is /home).")
    return None


def people(roster, instructor):
    """The roster's members (or a sentence) and every name's account, checked without making any."""
    try:
        check_username(instructor, "INSTRUCTOR")
        members = read_roster(roster)
    except ValueError as error:
        return None, f"{error}."
    if instructor in {m.username for m in members}:
        return None, f"INSTRUCTOR {instructor!r} is also a student in {roster}; give the instructor another username."
    taken = [name for name in [instructor, *(m.username for m in members)]
             if accounts.account(name) and not accounts.made_here(accounts.account(name))]
    if taken:
        one = len(taken) == 1
        return None, (f"{', '.join(taken)} already belong{'s to an account' if one else ' to accounts'} on this "
                      f"machine that make hub did not make; give {'that person another username' if one else 'those people other usernames'} "
                      "in the roster (or INSTRUCTOR).")
    return members, None


def port_free(port, ip="127.0.0.1"):
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((ip, port))
            return True
        except OSError:
            return False


def ports(settings, state):
    """The hub's three ports are free, or held by this hub's own proxy and hub."""
    proxy, started = service.proxy_running(state)
    hub = service.hub_pid(state)
    ours = set()
    if proxy and started:
        ours |= {int(started[started.index("--port") + 1]), int(started[started.index("--api-port") + 1])}
    if hub:
        ours.add(settings["hub_port"])
    for name, port, ip in (("HUB_PORT", settings["port"], settings["ip"]),
                           ("the hub's own port", settings["hub_port"], "127.0.0.1"),
                           ("the proxy's API port", settings["proxy_api_port"], "127.0.0.1")):
        if port in ours or port_free(port, ip):
            continue
        if name == "HUB_PORT":
            return (f"HUB_PORT {port} is taken by another program on this machine; choose another "
                    f"(make hub HUB_PORT=8001), or HUB_PORT=0 for any free one.")
        return (f"{name}, {port}, which an earlier make hub in this HUB_DIR chose, is now taken by another "
                f"program; remove {Path(state) / 'settings.json'} and make hub chooses new ones.")
    return None


def node(proxy_installed):
    if proxy_installed:
        return None
    if not shutil.which("node") or not shutil.which("npm"):
        return (f"make hub needs Node.js {NODE_MAJOR} or later with npm for JupyterHub's proxy; "
                "install them (apt-get install nodejs npm) and run make hub again.")
    found = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    major = re.match(r"v(\d+)", found)
    if not major or int(major.group(1)) < NODE_MAJOR:
        return (f"make hub needs Node.js {NODE_MAJOR} or later for JupyterHub's proxy, and this machine has "
                f"{found or 'an unknown version'}; install a newer one and run make hub again.")
    return None


def commands(needed=("useradd", "userdel", "chpasswd", "find", "runuser")):
    missing = [name for name in needed if not shutil.which(name)]
    if missing:
        return f"make hub needs {', '.join(missing)}, which this machine lacks; install them (Debian's passwd, findutils and util-linux packages)."
    return None


def environment_under_servers(env, lock, state):
    """A changed lock rebuilds the course environment, which every running server runs from."""
    from course.hub.environment import digest
    stamp = Path(env) / ".lock"
    if not stamp.exists() or stamp.read_text() == digest(lock):
        return None
    running = service.running_servers(state)
    if running:
        return (f"course/requirements.txt changed, so make hub would rebuild the course environment that "
                f"{len(running)} running servers use; stop them first with make hub-stop, then run make hub.")
    return None


def kept_settings(state):
    try:
        return json.loads((Path(state) / "settings.json").read_text())
    except (OSError, ValueError):
        return {}


def everything(arguments, where, settings, exposure_result=None, accept=()):
    """Every problem found, each one sentence; an empty list when make hub may go ahead."""
    from course.hub import exposure
    from course.hub.environment import LOCK
    problems = [hub_folder(where["hub"]), homes_folder(arguments.homes)]
    members, problem = people(arguments.roster, arguments.instructor)
    problems.append(problem)
    problems += [ports(settings, where["state"]),
                 node((where["proxy"] / "node_modules" / ".bin" / "configurable-http-proxy").exists()),
                 commands(), environment_under_servers(where["env"], LOCK, where["state"])]
    try:
        pwd.getpwnam(exposure.STUDENT)
    except KeyError:
        problems.append(f"make hub looks for readable answers as the account {exposure.STUDENT}, which this "
                        "machine lacks; add it (useradd --system nobody) and run make hub again.")
    else:
        if exposure_result is not None:
            problems.append(exposure.refusal(exposure_result, accept))
    return [p for p in problems if p], members
