"""`make bench WHAT=hub`: ten students log in to the course hub at once.

    python -m bench.hub             # the full run: 10 students (a few minutes on 2 cores)
    python -m bench.hub --students 3

make hub runs in a temporary folder (its accounts removed afterwards) on a free port. Each
student gets a headless Chromium page of their own; all log in through the login page at the
same moment. For each, the time runs from that moment to a usable JupyterLab: chapter 1 of their
learner's copy shown, its kernel started and idle. Then each single-user server's memory is read
(the resident set of jupyterhub-singleuser, and of the chapter's kernel beside it). Writes
build/bench/hub.json and hub.md; `make bench-record WHAT=hub` keeps them in docs/bench/, which the
README quotes (tests/project/test_bench_hub.py checks the quote).
"""
import argparse
import asyncio
import csv
import datetime
import json
import os
import platform
import pwd
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
from course.hub import accounts

OUT = ROOT / "build" / "bench"
CHROMIUM = os.environ.get("WORKBOOK_CHROMIUM", "/usr/bin/chromium")
# every page renders, although only one is in front: JupyterLab lays out on animation frames
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
        "--disable-renderer-backgrounding", "--disable-background-timer-throttling",
        "--disable-backgrounding-occluded-windows"]
INSTRUCTOR = "benchhub-teacher"


def student_names(count):
    return [f"benchhub-s{n:02d}" for n in range(1, count + 1)]


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_hub(scratch, students, port):
    roster = scratch / "roster.csv"
    roster.write_text("".join(f"{name}\n" for name in students))
    (scratch / "home").mkdir()
    command = [str(ROOT / ".venv" / "bin" / "workbook-hub"), "start", "--dir", str(scratch / "srv"),
               "--homes", str(scratch / "home"), "--roster", str(roster), "--instructor", INSTRUCTOR,
               "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    printed = []
    for line in process.stdout:  # the banner comes once the hub answers; setup prints before it
        printed.append(line)
        if line.lstrip().startswith("Stop:"):
            return process
    raise RuntimeError("make hub ended before it was ready:\n" + "".join(printed[-40:]))


async def one_student(playwright, url, name, password, go, timeout):
    """One student in a browser of their own: pages of one browser share its 6 connections to a
    host, and each spawn-pending page holds one open for its progress events, so ten students in
    one browser wait on each other, as ten students on ten machines do not."""
    from playwright.async_api import expect
    browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    page = await context.new_page()
    await page.goto(url + "/hub/login")
    await page.fill("#username_input", name)
    await page.fill("#password_input", password)
    await go.wait()
    started = time.monotonic()
    await page.click("#login_submit")
    try:  # chapter 1 shown, its kernel named and idle: the same waits as make test-hub's
        await page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell").first.wait_for(timeout=timeout)
        await expect(page.locator(".jp-NotebookPanel:visible .jp-Toolbar-kernelName")).to_contain_text(
            "Python", timeout=timeout)
        await page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for(timeout=timeout)
    except Exception:
        OUT.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(OUT / f"hub-failed-{name}.png"))
        raise
    seconds = time.monotonic() - started
    return browser, seconds


async def log_in_together(url, passwords, timeout):
    from playwright.async_api import async_playwright
    async with async_playwright() as playwright:
        go = asyncio.Event()
        tasks = [asyncio.create_task(one_student(playwright, url, name, password, go, timeout))
                 for name, password in passwords.items()]
        await asyncio.sleep(5)  # every page at its filled-in login form
        go.set()
        done = await asyncio.gather(*tasks)
        seconds = {name: result[1] for name, result in zip(passwords, done)}
        memory = servers_memory(list(passwords))
        for browser, _ in done:
            await browser.close()
    return seconds, memory


def servers_memory(names):
    """Each student's jupyterhub-singleuser and kernel resident memory, in MiB."""
    found = {name: {"server MiB": 0.0, "kernel MiB": 0.0} for name in names}
    uids = {pwd.getpwnam(name).pw_uid: name for name in names}
    for process in psutil.process_iter(["uids", "cmdline", "memory_info"]):
        try:
            owner = uids.get(process.info["uids"].real)
            line = " ".join(process.info["cmdline"] or [])
        except (psutil.Error, TypeError):
            continue
        if owner is None:
            continue
        mib = process.info["memory_info"].rss / 2**20
        if "jupyterhub-singleuser" in line:
            found[owner]["server MiB"] += mib
        elif "ipykernel_launcher" in line:
            found[owner]["kernel MiB"] += mib
    return found


def markdown(record):
    times = sorted(record["seconds"].values())
    servers = [m["server MiB"] for m in record["memory"].values()]
    kernels = [m["kernel MiB"] for m in record["memory"].values()]
    lines = [f"# make bench-hub: {record['students']} students log in at once",
             "",
             f"{record['when']} on {record['machine']}.",
             "",
             "| what | first | median | last |",
             "|---|---:|---:|---:|",
             f"| login to a usable JupyterLab (s) | {times[0]:.1f} | {statistics.median(times):.1f} | {times[-1]:.1f} |",
             f"| single-user server memory (MiB) | {min(servers):.0f} | {statistics.median(servers):.0f} | {max(servers):.0f} |",
             f"| its kernel, chapter 1 open (MiB) | {min(kernels):.0f} | {statistics.median(kernels):.0f} | {max(kernels):.0f} |",
             "",
             "| student | seconds | server MiB | kernel MiB |",
             "|---|---:|---:|---:|"]
    for name in sorted(record["seconds"]):
        memory = record["memory"][name]
        lines.append(f"| {name} | {record['seconds'][name]:.1f} | {memory['server MiB']:.0f} | {memory['kernel MiB']:.0f} |")
    return "\n".join(lines) + "\n"


def summary(record):
    """The figures the README quotes."""
    times = sorted(record["seconds"].values())
    servers = [m["server MiB"] for m in record["memory"].values()]
    return {"students": record["students"], "first": round(times[0], 1), "last": round(times[-1], 1),
            "median": round(statistics.median(times), 1),
            "server MiB": round(statistics.median(servers)), "server MiB max": round(max(servers))}


def main(argv=None):
    options = argparse.ArgumentParser(description="Ten students log in to the course hub at once.")
    options.add_argument("--students", type=int, default=10)
    options.add_argument("--timeout", type=float, default=600, help="seconds each login may take")
    arguments = options.parse_args(argv)
    accounts.require_root("make bench-hub")
    students = student_names(arguments.students)
    for name in [INSTRUCTOR, *students]:
        accounts.remove_account(name)
    scratch = Path(tempfile.mkdtemp(prefix="workbook-bench-hub-"))
    os.chmod(scratch, 0o755)
    port = free_port()
    process = None
    try:
        process = start_hub(scratch, students, port)
        teacher = Path(pwd.getpwnam(INSTRUCTOR).pw_dir)
        rows = csv.DictReader((teacher / accounts.PASSWORDS).open())
        passwords = {row["username"]: row["first password"] for row in rows if row["username"] in students}
        seconds, memory = asyncio.run(log_in_together(f"http://127.0.0.1:{port}", passwords,
                                                      arguments.timeout * 1000))
    finally:
        if process and process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        for name in [INSTRUCTOR, *students]:
            accounts.remove_account(name)
        shutil.rmtree(scratch, ignore_errors=True)
    record = {"students": len(students), "when": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
              "machine": f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}",
              "seconds": seconds, "memory": memory}
    record["summary"] = summary(record)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "hub.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    (OUT / "hub.md").write_text(markdown(record))
    print(markdown(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
