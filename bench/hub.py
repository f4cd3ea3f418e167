"""`make bench WHAT=hub`: thirty students log in to the course hub at once, from plain HTTP clients.

    python -m bench.hub                  # 30 students: cold, then with servers started ahead
    python -m bench.hub --students 5     # a smaller class

make hub runs in a temporary folder (its accounts removed afterwards) on a free port. Each student
is an HTTP client of their own in this process (httpx, and tornado's websocket client): no
browser runs here, as none runs on a course's server. All of them, at the same moment, do what a
browser does for a student opening the course:

    the login form (its _xsrf), then the login        POST /hub/login
    the spawn and its progress, until ready           /hub/spawn, /hub/api/users/NAME/server/progress
    JupyterLab's page on chapter 1, through OAuth     /user/NAME/lab/tree/workbook/CHAPTER
    a session for chapter 1, which starts a kernel    POST /user/NAME/api/sessions
    the chapter's first code cell, run                /user/NAME/api/kernels/ID/channels (websocket)

and the time from the login to that cell's execute_reply is the student's. The page's JavaScript
and styles are not fetched (a browser caches them after its first visit, and renders them on the
student's machine, not this one).

Two rounds. Cold: no server runs, as at a first lecture. Ahead: every server stopped, then
`workbook-hub servers` (make hub-servers) starts them all before the students arrive (its time is
recorded too), then the same thirty log in again. After each round every student's server and
kernel are measured: resident and proportional memory (PSS: shared pages divided among the
processes sharing them, so that PSS adds up across students) and CPU seconds (a server's own, with
its start script's children, and its kernel's). The hub's and the proxy's memory and CPU are
recorded too, and /proc/loadavg at the start and end of each round: other work on the machine
slows the students down, and the record says how busy it was.

Writes build/bench/hub.json and hub.md; `make bench-record WHAT=hub` keeps them in docs/bench/,
which docs/hub.md quotes (tests/project/test_bench_hub.py checks the quote).
"""
import argparse
import asyncio
import csv
import datetime
import json
import os
import platform
import pwd
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
from course.hub import accounts, service  # noqa: E402

OUT = ROOT / "build" / "bench"
INSTRUCTOR = "benchhub-teacher"
CHAPTER = "01-purpose-and-validation"
GOAL = 30.0  # seconds from login to a first executed cell, for every student


def student_names(count):
    return [f"benchhub-s{n:02d}" for n in range(1, count + 1)]


def free_port():
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def first_cell():
    """The chapter's first code cell that a student runs (the first that is not directives)."""
    import nbformat
    from course.editions.learner import only_directives
    notebook = nbformat.read(ROOT / "notebooks" / f"{CHAPTER}.ipynb", as_version=4)
    return next(c.source for c in notebook.cells if c.cell_type == "code" and not only_directives(c))


def hub_command(scratch, students, port, command):
    return [str(ROOT / ".venv" / "bin" / "workbook-hub"), command, "--dir", str(scratch / "srv"),
            "--homes", str(scratch / "home"), "--roster", str(scratch / "roster.csv"), "--instructor", INSTRUCTOR,
            "--port", str(port), "--accept-readable", "all"]


def start_hub(scratch, students, port):
    (scratch / "roster.csv").write_text("".join(f"{name}\n" for name in students))
    (scratch / "home").mkdir()
    done = subprocess.run(hub_command(scratch, students, port, "start"), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError("make hub failed:\n" + (done.stdout + done.stderr)[-4000:])


def cookie_header(client, path):
    return "; ".join(f"{c.name}={c.value}" for c in client.cookies.jar
                     if path.startswith(c.path or "/") and c.name != "_xsrf")


def xsrf(client, path):
    found = [c for c in client.cookies.jar if c.name == "_xsrf" and path.startswith(c.path or "/")]
    found.sort(key=lambda c: len(c.path or "/"), reverse=True)
    return found[0].value if found else ""


async def one_student(url, name, password, go, timeout, cell):
    """One student's login to a first executed cell; returns the times of each step (seconds
    from the login) and the total."""
    import httpx
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect
    async with httpx.AsyncClient(base_url=url, follow_redirects=True, timeout=timeout) as client:
        page = await client.get("/hub/login")
        token = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
        await go.wait()
        started = time.monotonic()
        steps = {}
        form = {"username": name, "password": password, "_xsrf": token.group(1) if token else ""}
        answer = await client.post("/hub/login?next=%2Fhub%2Fspawn", data=form)
        if answer.status_code != 200 or "/hub/login" in str(answer.url):
            raise RuntimeError(f"{name}: the login failed ({answer.status_code} at {answer.url})")
        steps["logged in"] = time.monotonic() - started
        hub_xsrf = xsrf(client, "/hub/")
        progress = f"/hub/api/users/{name}/server/progress?_xsrf={hub_xsrf}"
        async with client.stream("GET", progress, headers={"X-XSRFToken": hub_xsrf}) as events:
            async for line in events.aiter_lines():
                if line.startswith("data:") and json.loads(line[5:]).get("ready"):
                    break
                if line.startswith("data:") and json.loads(line[5:]).get("failed"):
                    raise RuntimeError(f"{name}: the server failed to start: {line}")
        steps["server ready"] = time.monotonic() - started
        prefix = f"/user/{name}/"
        lab = await client.get(f"{prefix}lab/tree/workbook/{CHAPTER}.ipynb")
        if lab.status_code != 200 or "jupyter-config-data" not in lab.text:
            raise RuntimeError(f"{name}: JupyterLab's page did not come ({lab.status_code} at {lab.url})")
        steps["JupyterLab's page"] = time.monotonic() - started
        session = await client.post(f"{prefix}api/sessions", headers={"X-XSRFToken": xsrf(client, prefix)},
                                    json={"path": f"workbook/{CHAPTER}.ipynb", "name": f"{CHAPTER}.ipynb",
                                          "type": "notebook", "kernel": {"name": "python3"}})
        if session.status_code != 201:
            raise RuntimeError(f"{name}: no session ({session.status_code}): {session.text[:200]}")
        kernel = session.json()["kernel"]["id"]
        steps["kernel started"] = time.monotonic() - started
        # as JupyterLab does, a websocket the server closes (a kernel slow to answer its first
        # kernel_info_request on a loaded machine) is opened again, and the cell sent again
        reconnects, deadline = 0, time.monotonic() + timeout
        while True:
            channels = HTTPRequest(f"{url.replace('http', 'ws', 1)}{prefix}api/kernels/{kernel}/channels"
                                   f"?session_id={uuid.uuid4()}", headers={"Cookie": cookie_header(client, prefix)},
                                   request_timeout=timeout)
            socket = await websocket_connect(channels)
            msg_id = uuid.uuid4().hex
            socket.write_message(json.dumps({
                "header": {"msg_id": msg_id, "username": name, "session": uuid.uuid4().hex,
                           "msg_type": "execute_request", "version": "5.3",
                           "date": datetime.datetime.now(datetime.timezone.utc).isoformat()},
                "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                "content": {"code": cell, "silent": False, "store_history": True, "user_expressions": {},
                            "allow_stdin": False, "stop_on_error": True}}))
            replied = await executed(socket, msg_id, max(1.0, deadline - time.monotonic()), name)
            socket.close()
            if replied:
                break
            reconnects += 1
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name}: no reply to the cell within {timeout} s ({reconnects} reconnects)")
            await asyncio.sleep(1)
        steps["reconnects"] = reconnects
        steps["cell executed"] = time.monotonic() - started
        return steps


async def executed(socket, msg_id, seconds, name):
    """Whether the cell's execute_reply came (True) or the server closed the websocket (False)."""
    while True:
        message = await asyncio.wait_for(socket.read_message(), seconds)
        if message is None:
            return False
        message = json.loads(message)
        if message.get("msg_type") == "execute_reply" and message["parent_header"].get("msg_id") == msg_id:
            if message["content"]["status"] != "ok":
                raise RuntimeError(f"{name}: the cell failed: {message['content'].get('ename')}")
            return True


async def log_in_together(url, passwords, timeout, cell):
    go = asyncio.Event()
    tasks = [asyncio.create_task(one_student(url, name, password, go, timeout, cell))
             for name, password in passwords.items()]
    await asyncio.sleep(2)  # every client at its login form
    go.set()
    done = await asyncio.gather(*tasks)
    return dict(zip(passwords, done))


def processes_of(names):
    """Each student's server and kernel processes."""
    uids = {pwd.getpwnam(name).pw_uid: name for name in names}
    found = {name: {"server": [], "kernel": []} for name in names}
    for process in psutil.process_iter(["uids", "cmdline"]):
        try:
            owner = uids.get(process.info["uids"].real)
            line = " ".join(process.info["cmdline"] or [])
        except (psutil.Error, TypeError):
            continue
        if owner is None:
            continue
        if "jupyterhub-singleuser" in line:
            found[owner]["server"].append(process)
        elif "ipykernel_launcher" in line:
            found[owner]["kernel"].append(process)
    return found


def cost(processes, children=False):
    """(RSS MiB, PSS MiB, CPU seconds) of these processes."""
    rss = pss = cpu = 0.0
    for process in processes:
        try:
            memory = process.memory_full_info()
            times = process.cpu_times()
        except psutil.Error:
            continue
        rss += memory.rss / 2**20
        pss += memory.pss / 2**20
        cpu += times.user + times.system + ((times.children_user + times.children_system) if children else 0)
    return round(rss, 1), round(pss, 1), round(cpu, 2)


def measure(names, state):
    students = {}
    for name, found in processes_of(names).items():
        server, kernel = cost(found["server"], children=True), cost(found["kernel"])
        students[name] = {"server RSS MiB": server[0], "server PSS MiB": server[1], "server CPU s": server[2],
                          "kernel RSS MiB": kernel[0], "kernel PSS MiB": kernel[1], "kernel CPU s": kernel[2]}
    hub = [psutil.Process(pid) for pid in [service.hub_pid(state)] if pid]
    proxy = [psutil.Process(pid) for pid in [service.proxy_running(state)[0]] if pid]
    hub_cost, proxy_cost = cost(hub, children=True), cost(proxy)
    return students, {"hub RSS MiB": hub_cost[0], "hub PSS MiB": hub_cost[1], "hub CPU s": hub_cost[2],
                      "proxy RSS MiB": proxy_cost[0], "proxy PSS MiB": proxy_cost[1], "proxy CPU s": proxy_cost[2]}


def loadavg():
    return Path("/proc/loadavg").read_text().strip()


def hub_cpu(state):
    pid = service.hub_pid(state)
    return cost([psutil.Process(pid)], children=True)[2] if pid else 0.0


def one_round(url, passwords, timeout, cell, state):
    load = [loadavg()]
    hub_before = hub_cpu(state)
    began = time.monotonic()
    steps = asyncio.run(log_in_together(url, passwords, timeout, cell))
    wall = time.monotonic() - began
    load.append(loadavg())
    students, shared = measure(list(passwords), state)
    shared["hub CPU s this round"] = round(shared["hub CPU s"] - hub_before, 2)
    return {"steps": steps, "students": students, "shared": shared, "loadavg": load, "wall s": round(wall, 1)}


def stop_servers(settings):
    """Every student's server stopped through the hub (as the idle culler stops one)."""
    from course.hub import ahead
    secret = ahead.token(settings)
    for name in settings["students"]:
        ahead.api(settings, f"/users/{name}/server", method="DELETE", token=secret)
    deadline = time.monotonic() + 300
    while any(ahead.ready(settings, name, secret)[0] or ahead.ready(settings, name, secret)[1]
              for name in settings["students"]):
        if time.monotonic() > deadline:
            raise RuntimeError("the students' servers did not stop within 300 s")
        time.sleep(1)


def figures(seconds):
    ordered = sorted(seconds)
    return {"first": round(ordered[0], 1), "median": round(statistics.median(ordered), 1),
            "slowest": round(ordered[-1], 1), "within goal": sum(1 for s in ordered if s <= GOAL)}


def summary(record):
    """The figures docs/hub.md quotes and plans from."""
    found = {"students": record["students"], "goal s": GOAL}
    for name in ("cold", "ahead"):
        run = record[name]
        found[name] = figures([steps["cell executed"] for steps in run["steps"].values()])
        students = run["students"].values()
        for key in ("server PSS MiB", "kernel PSS MiB", "server RSS MiB", "kernel RSS MiB",
                    "server CPU s", "kernel CPU s"):
            found[name][key] = round(statistics.median(s[key] for s in students), 1)
        found[name].update({key: run["shared"][key] for key in ("hub PSS MiB", "proxy PSS MiB")})
    found["ahead"]["servers started ahead s"] = record["started ahead s"]
    found["plan"] = plan(found, record)
    return found


PLAN = 300  # the class docs/hub.md plans for


def plan(found, record, students=PLAN):
    """A class of `students` from this run's medians: memory while every student has a server and
    chapter 1's kernel, and the cores that put every student's first cell within GOAL seconds of
    logging in, cold and with the servers started ahead (whose start then takes the time given,
    on those cores). The hub's CPU per login is its CPU during the cold round over the students."""
    cold = found["cold"]
    per_login_hub = record["cold"]["shared"]["hub CPU s this round"] / record["students"]
    student = cold["server PSS MiB"] + cold["kernel PSS MiB"]
    memory = students * student + cold["hub PSS MiB"] + cold["proxy PSS MiB"]
    cold_cpu = cold["server CPU s"] + cold["kernel CPU s"] + per_login_hub
    ahead_cpu = cold["kernel CPU s"] + per_login_hub
    cores_ahead = max(1, -(-students * ahead_cpu // GOAL))
    return {"students": students, "MiB a student": round(student), "memory GiB": round(memory / 1024, 1),
            "CPU s a cold login": round(cold_cpu, 1), "CPU s a login, server started ahead": round(ahead_cpu, 1),
            "cores cold": int(-(-students * cold_cpu // GOAL)), "cores ahead": int(cores_ahead),
            "start ahead minutes on those cores": round(students * cold["server CPU s"] / cores_ahead / 60, 1)}


def markdown(record):
    s = record["summary"]
    cold, ahead = s["cold"], s["ahead"]
    lines = [f"# make bench WHAT=hub: {record['students']} students log in at once",
             "",
             f"{record['when']} on {record['machine']}, from plain HTTP clients (no browser): each logs in, "
             f"waits for their server, loads JupyterLab's page, starts a kernel and runs chapter 1's first "
             f"code cell. Other work shared the machine; /proc/loadavg (1, 5, 15 minutes) was:",
             "",
             f"- cold round: {record['cold']['loadavg'][0]} at its start, {record['cold']['loadavg'][1]} at its end",
             f"- ahead round: {record['ahead']['loadavg'][0]} at its start, {record['ahead']['loadavg'][1]} at its end",
             "",
             f"| login to the first executed cell (s) | first | median | slowest | within {GOAL:.0f} s |",
             "|---|---:|---:|---:|---:|",
             f"| cold: no server running | {cold['first']} | {cold['median']} | {cold['slowest']} | "
             f"{cold['within goal']} of {record['students']} |",
             f"| ahead: make hub-servers first ({ahead['servers started ahead s']} s for all) | {ahead['first']} | "
             f"{ahead['median']} | {ahead['slowest']} | {ahead['within goal']} of {record['students']} |",
             "",
             "| what each costs (median) | PSS MiB | RSS MiB | CPU s |",
             "|---|---:|---:|---:|",
             f"| a student's server (jupyterhub-singleuser, its start script included), cold | {cold['server PSS MiB']} | "
             f"{cold['server RSS MiB']} | {cold['server CPU s']} |",
             f"| its kernel, chapter 1 and its first cell | {cold['kernel PSS MiB']} | {cold['kernel RSS MiB']} | "
             f"{cold['kernel CPU s']} |",
             f"| the hub (JupyterHub, with its idle culler), after the cold round; CPU during it | {cold['hub PSS MiB']} | "
             f"{record['cold']['shared']['hub RSS MiB']} | {record['cold']['shared']['hub CPU s this round']} |",
             f"| the proxy (configurable-http-proxy) | {cold['proxy PSS MiB']} | "
             f"{record['cold']['shared']['proxy RSS MiB']} | {record['cold']['shared']['proxy CPU s']} |",
             "",
             f"A class of {s['plan']['students']}, from these medians: {s['plan']['MiB a student']} MiB a student "
             f"(a server and chapter 1's kernel), {s['plan']['memory GiB']} GiB with every student in; "
             f"{s['plan']['CPU s a cold login']} CPU s a cold login, so {s['plan']['cores cold']} cores for every first cell "
             f"within {GOAL:.0f} s cold; {s['plan']['CPU s a login, server started ahead']} CPU s a login with the servers "
             f"started ahead, so {s['plan']['cores ahead']} cores, on which starting the {s['plan']['students']} servers ahead "
             f"takes {s['plan']['start ahead minutes on those cores']} minutes.",
             "",
             "| student | cold: server ready | cold: cell | ahead: cell | server PSS MiB | kernel PSS MiB | websocket reopened (cold, ahead) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name in sorted(record["cold"]["steps"]):
        cold_steps, ahead_steps = record["cold"]["steps"][name], record["ahead"]["steps"][name]
        memory = record["cold"]["students"][name]
        lines.append(f"| {name} | {cold_steps['server ready']:.1f} | {cold_steps['cell executed']:.1f} | "
                     f"{ahead_steps['cell executed']:.1f} | {memory['server PSS MiB']:.0f} | {memory['kernel PSS MiB']:.0f} | "
                     f"{cold_steps['reconnects']}, {ahead_steps['reconnects']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    options = argparse.ArgumentParser(description="Thirty students log in to the course hub at once.")
    options.add_argument("--students", type=int, default=30)
    options.add_argument("--timeout", type=float, default=900, help="seconds each student may take")
    arguments = options.parse_args(argv)
    accounts.require_root("make bench WHAT=hub")
    students = student_names(arguments.students)
    for name in [INSTRUCTOR, *students]:
        accounts.remove_account(name)
    scratch = Path(tempfile.mkdtemp(prefix="workbook-bench-hub-"))
    os.chmod(scratch, 0o755)
    port = free_port()
    cell = first_cell()
    record = {"students": len(students), "when": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
              "machine": f"{os.cpu_count()} cores, {round(psutil.virtual_memory().total / 2**30)} GiB, "
                         f"{platform.machine()}, Python {platform.python_version()}", "cell": cell}
    try:
        start_hub(scratch, students, port)
        settings = json.loads((scratch / "srv" / "state" / "settings.json").read_text())
        state = Path(settings["state"])
        teacher = Path(pwd.getpwnam(INSTRUCTOR).pw_dir)
        rows = csv.DictReader((teacher / accounts.PASSWORDS).open())
        passwords = {row["username"]: row["first password"] for row in rows if row["username"] in students}
        url = f"http://127.0.0.1:{port}"
        record["cold"] = one_round(url, passwords, arguments.timeout, cell, state)
        stop_servers(settings)
        began = time.monotonic()
        done = subprocess.run(hub_command(scratch, students, port, "servers")[:4], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError("make hub-servers failed:\n" + done.stdout + done.stderr)
        record["started ahead s"] = round(time.monotonic() - began, 1)
        record["ahead"] = one_round(url, passwords, arguments.timeout, cell, state)
    finally:
        if (scratch / "srv" / "state").exists():
            service.stop_everything(scratch / "srv" / "state")
        for name in [INSTRUCTOR, *students]:
            accounts.remove_account(name)
        from course.hub import environment
        environment.profile_path(scratch / "srv" / "env").unlink(missing_ok=True)
        shutil.rmtree(scratch, ignore_errors=True)
    record["summary"] = summary(record)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "hub.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    (OUT / "hub.md").write_text(markdown(record))
    print(markdown(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
