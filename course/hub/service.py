"""The three kinds of process a course hub runs, and how each outlives the others.

    the proxy     configurable-http-proxy, which every browser talks to. make hub starts it on its
                  own (JupyterHub's ConfigurableHTTPProxy.should_start = False, as JupyterHub's
                  "Running proxy separately from the hub" describes), so that it and the routes it
                  holds to each student's server stay up while the hub restarts
    the hub       JupyterHub itself: logins, spawning, the admin page. make hub starts it in the
                  background and replaces it when run again; its servers stay (cleanup_servers =
                  False) and it takes them up again from its database, where each server's pid is
    the servers   one jupyterhub-singleuser per student, with its kernels and terminals, started by
                  the hub as the student's account in a session of its own

A single-user server checks each browser's login with the hub's API, and keeps the answer for
HubOAuth.cache_max_age (environment.SERVER_SETTINGS): while the hub is away, a tab whose login it
knows goes on saving and running cells.

Each kind has a pid file in HUB_DIR/state: jupyterhub.pid (written by JupyterHub), proxy.pid
(written here), and the servers' pids in jupyterhub.sqlite. A pid counts only while its process is
still the one named (its command line), so a pid the system gave to another process is never
signalled.
"""
import json
import os
import signal
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

UP_SECONDS = 120       # for the hub to answer once started; a loaded 2-core machine takes ~10 s
STOP_SECONDS = 30      # for a process to end after SIGTERM before it is killed


def command_line(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None


def alive(pid, named):
    """Whether `pid` runs (a zombie does not) and its command line holds `named` (not a pid the
    system gave to another process since)."""
    line = command_line(pid) if pid else None
    if line is None or named not in line:
        return False
    try:
        return not Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return False


def default_signals():
    """Run in a child before it starts: SIGINT and SIGQUIT back to their defaults. A shell's
    background job (`nohup make hub &`, a CI script) starts with both ignored, and every process
    the hub starts would inherit that; JupyterHub stops a server or a service with SIGINT and
    waits before it sends SIGTERM."""
    for number in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)


def read_pid(path):
    try:
        return int(Path(path).read_text().strip())
    except (OSError, ValueError):
        return None


def end(pid, named, seconds=STOP_SECONDS, first=signal.SIGTERM):
    """Signal `pid` (when it still is `named`), wait for it to end, kill it after `seconds`.
    Returns whether there was such a process."""
    if not alive(pid, named):
        return False
    try:
        os.kill(pid, first)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + seconds
    while alive(pid, named):
        if time.monotonic() > deadline:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + 10
            while alive(pid, named) and time.monotonic() < deadline:
                time.sleep(0.1)
            break
        time.sleep(0.1)
    return True


def answers(url, token=None, timeout=2):
    """The HTTP status `url` answers with, or None when nothing answers."""
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code
    except (OSError, ValueError):
        return None


# ----------------------------------------------------------------------------------- the proxy

def proxy_arguments(settings):
    return ["--ip", settings["ip"], "--port", str(settings["port"]),
            "--api-ip", "127.0.0.1", "--api-port", str(settings["proxy_api_port"]),
            "--default-target", f"http://127.0.0.1:{settings['hub_port']}",
            "--error-target", f"http://127.0.0.1:{settings['hub_port']}/hub/error",
            "--log-level", "warn"]


def proxy_running(state):
    """The running proxy's pid and the arguments it was started with, or (None, None)."""
    pid = read_pid(Path(state) / "proxy.pid")
    if not alive(pid, "configurable-http-proxy"):
        return None, None
    try:
        started = json.loads((Path(state) / "proxy.json").read_text())
    except (OSError, ValueError):
        started = None
    return pid, started


def ensure_proxy(settings, token):
    """Start the proxy unless one started with the same arguments runs; return what was done:
    "kept", "started" or "restarted" (its address changed, so its students reconnect)."""
    state = Path(settings["state"])
    arguments = proxy_arguments(settings)
    pid, started = proxy_running(state)
    if pid and started == arguments:
        return "kept"
    done = "started"
    if pid:
        end(pid, "configurable-http-proxy")
        done = "restarted"
    with open(state / "proxy.log", "a") as log:
        process = subprocess.Popen([settings["proxy"], *arguments], stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=default_signals,
                                   env=dict(os.environ, CONFIGPROXY_AUTH_TOKEN=token))
    (state / "proxy.pid").write_text(f"{process.pid}\n")
    (state / "proxy.json").write_text(json.dumps(arguments) + "\n")
    api = f"http://127.0.0.1:{settings['proxy_api_port']}/api/routes"
    deadline = time.monotonic() + UP_SECONDS
    while answers(api, token) != 200:
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the proxy did not start; its log, {state / 'proxy.log'}, says why")
        time.sleep(0.2)
    return done


def stop_proxy(state):
    pid, _ = proxy_running(state)
    (Path(state) / "proxy.pid").unlink(missing_ok=True)
    return end(pid, "configurable-http-proxy")


# ------------------------------------------------------------------------------------- the hub

def hub_pid(state):
    pid = read_pid(Path(state) / "jupyterhub.pid")
    return pid if alive(pid, "jupyterhub") else None


def start_hub(settings, environment, config):
    """Start JupyterHub in the background (its own session: it outlives make hub), replacing a hub
    already running for this HUB_DIR; wait until it answers through the proxy. Returns whether
    one was replaced."""
    state = Path(settings["state"])
    replaced = stop_hub(state)
    log = state / "jupyterhub.log"
    with open(log, "a") as output:
        process = subprocess.Popen([str(Path(settings["env"]) / "bin" / "jupyterhub"), "-f", str(config)],
                                   cwd=state, env=environment, stdin=subprocess.DEVNULL, stdout=output,
                                   stderr=subprocess.STDOUT, start_new_session=True,
                                   preexec_fn=default_signals)
    url = f"http://127.0.0.1:{settings['port']}/hub/health"
    deadline = time.monotonic() + UP_SECONDS
    while answers(url) != 200:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterHub stopped as it started (exit status {process.returncode}); "
                               f"the end of its log, {log}, says why")
        if time.monotonic() > deadline:
            raise RuntimeError(f"JupyterHub did not answer {url} within {UP_SECONDS} s; its log, {log}, says why")
        time.sleep(0.2)
    return replaced


def with_command_line(named):
    """The pids of every process whose command line holds `named`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid() and alive(int(entry.name), named):
            found.append(int(entry.name))
    return found


def stop_hub(state):
    """Stop the hub alone (its servers and the proxy stay); whether one ran. The hub stops the
    services it started (the idle culler); one left by a hub that was killed is stopped here."""
    stopped = end(hub_pid(state), "jupyterhub")
    culler = f"{Path(state).parent / 'env' / 'bin' / 'python'} -m jupyterhub_idle_culler"
    for pid in with_command_line(culler):
        end(pid, culler)
    return stopped


# --------------------------------------------------------------------------------- the servers

def servers(state):
    """{username: pid} of every server the hub's database records as started."""
    database = Path(state) / "jupyterhub.sqlite"
    if not database.exists():
        return {}
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        rows = connection.execute("SELECT users.name, spawners.state FROM spawners "
                                  "JOIN users ON users.id = spawners.user_id").fetchall()
    found = {}
    for name, text in rows:
        try:
            pid = json.loads(text or "{}").get("pid")
        except ValueError:
            continue
        if pid:
            found[name] = pid
    return found


def running_servers(state):
    return {name: pid for name, pid in servers(state).items() if alive(pid, "jupyterhub-singleuser")}


def stop_servers(state):
    """Stop every running server as JupyterHub's LocalProcessSpawner does (SIGINT, so that it shuts
    its kernels down, then SIGTERM, then SIGKILL); returns the usernames stopped."""
    running = running_servers(state)
    for pid in running.values():
        try:
            os.kill(pid, signal.SIGINT)
        except ProcessLookupError:
            pass
    for pid in running.values():
        end(pid, "jupyterhub-singleuser", seconds=10)
    return sorted(running)


def run_from(folder):
    """{pid: command line} of every process whose program is in `folder`: its first or second word
    (an interpreter's script) is a path under it. make's own command line, which only names the
    folder in a variable, is not such a process."""
    top = str(Path(folder).absolute()).rstrip("/") + "/"
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")[:2]
        except OSError:
            continue
        if any(word.decode(errors="replace").startswith(top) for word in words):
            found[int(entry.name)] = b" ".join(words).decode(errors="replace")
    return found


def end_all(processes):
    """End every one of {pid: command line} (SIGTERM, then SIGKILL), each only while it is still
    the process named; returns the pids that were running."""
    ended = []
    for pid, line in processes.items():
        if end(pid, line.split(" ")[0], seconds=10):
            ended.append(pid)
    return ended


def stop_everything(state):
    """make hub-stop: the hub first (so that it starts nothing more), then every server, then the
    proxy, then whatever else still runs a program of HUB_DIR's (a service or a kernel whose
    parent was killed): nothing of the course is left running. Returns what was stopped:
    (hub, [usernames], proxy)."""
    hub = stop_hub(state)
    stopped = stop_servers(state)
    proxy = stop_proxy(state)
    end_all(run_from(Path(state).parent))
    return hub, stopped, proxy
