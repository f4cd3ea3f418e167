"""make hub-servers: every student's server started before a lecture, so that logging in costs a
login and a kernel, not a server's start (docs/hub.md, "Thirty students at once").

It asks the hub's API, with make hub's own service token (HUB_DIR/state/api_token, root's alone),
to start each student's server that is not running, a few at a time (AT_ONCE; by default two per
core, so that each start stays well within the spawner's start_timeout), and waits until each
answers. The idle culler (jupyterhub_config.py) still applies: a server that nobody uses is
stopped `idle` seconds after it started, so start them at most that long before the lecture.
"""
import json
import os
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

WAIT_SECONDS = 600  # for one server to start, however loaded the machine


def api(settings, path, method="GET", token=None):
    request = urllib.request.Request(f"http://127.0.0.1:{settings['hub_port']}/hub/api{path}", method=method,
                                     headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            body = answer.read()
            return answer.status, json.loads(body) if body else None
    except urllib.error.HTTPError as error:
        return error.code, None


def token(settings):
    return (Path(settings["state"]) / "api_token").read_text().strip()


def ready(settings, name, secret):
    status, user = api(settings, f"/users/{name}", token=secret)
    server = (user or {}).get("servers", {}).get("")
    return bool(server and server.get("ready")), bool(server and server.get("pending"))


def start_one(settings, name, secret):
    """Start `name`'s server unless it runs; return (name, seconds, "started" or "running")."""
    started = time.monotonic()
    is_ready, pending = ready(settings, name, secret)
    if is_ready:
        return name, 0.0, "running"
    if not pending:
        status, _ = api(settings, f"/users/{name}/server", method="POST", token=secret)
        if status not in (201, 202, 400):
            raise RuntimeError(f"the hub refused to start {name}'s server (HTTP {status}); its log says why")
    while not ready(settings, name, secret)[0]:
        if time.monotonic() - started > WAIT_SECONDS:
            raise RuntimeError(f"{name}'s server did not start within {WAIT_SECONDS} s; the hub's log says why")
        time.sleep(1)
    return name, time.monotonic() - started, "started"


def start_all(settings, at_once=None, say=print):
    """Start every student's server; return {name: (seconds, "started" | "running")}."""
    secret = token(settings)
    at_once = at_once or 2 * (os.cpu_count() or 1)
    began = time.monotonic()
    done = {}
    with ThreadPoolExecutor(max_workers=at_once) as pool:
        for name, seconds, what in pool.map(lambda n: start_one(settings, n, secret), settings["students"]):
            done[name] = (seconds, what)
    fresh = sum(1 for _, what in done.values() if what == "started")
    minutes = settings["idle"] // 60
    say(f"Servers ready for {len(done)} students ({fresh} started now, {len(done) - fresh} already running) "
        f"in {time.monotonic() - began:.0f} s, {at_once} at a time. The idle culler stops a server nobody "
        f"uses for {minutes} minutes, so start them at most {minutes} minutes before the lecture.")
    return done
