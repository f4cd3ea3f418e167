"""`make bench WHAT=setup`: what a new user waits for, each from a fresh clone of this repository.

    python -m bench.setup            # both, with empty package caches (a first install)
    python -m bench.setup --warm     # with this machine's caches (a second install)

1. A fresh clone to JupyterLab serving the learner's copy: `make lab` builds .venv, makes
   my-workbook/ and starts the server; the clock stops when the server lists chapter 1 and the
   welcome file in the copy.
2. A fresh clone to a green `make test`.

Each runs in its own clone in a temporary folder, which is removed. "Empty caches" points uv
and pip at empty temporary cache folders, so every package comes from the index. Writes
build/bench/setup.json and prints a table. Committed work only: a clone holds HEAD (or the
commit given), which must pass make test: a record that disagrees with its tree fails there.
"""
import argparse
import json
import os
import platform
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRST = "01-purpose-and-validation.ipynb"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def clone(folder, commit=None):
    started = time.perf_counter()
    subprocess.run(["git", "clone", "-q", str(ROOT), str(folder)], check=True)
    if commit:
        subprocess.run(["git", "checkout", "-q", commit], cwd=folder, check=True)
    return time.perf_counter() - started


def environment(caches):
    env = dict(os.environ, BROWSER="true")  # the lab would open a browser; here there is none
    env.pop("VIRTUAL_ENV", None)
    if caches is not None:
        env.update(UV_CACHE_DIR=str(caches / "uv"), PIP_CACHE_DIR=str(caches / "pip"))
    return env


def serving(port, token):
    """Whether the server answers with the learner's copy: chapter 1 and the welcome README."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents?token={token}",
                                    timeout=2) as response:
            names = {item["name"] for item in json.load(response)["content"]}
    except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError):
        return False
    return {FIRST, "00-start-here.md"} <= names


def to_lab(folder, env, commit=None, limit=300):
    """Seconds from a fresh clone to JupyterLab serving my-workbook/ through make lab."""
    cloned = clone(folder, commit)
    port, token = free_port(), secrets.token_hex(16)
    log = open(folder.parent / "lab.log", "w")
    started = time.perf_counter()
    server = subprocess.Popen(["make", "lab", f"LAB_PORT={port}"], cwd=folder,
                              env=dict(env, JUPYTER_TOKEN=token), stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    try:
        while not serving(port, token):
            if server.poll() is not None or time.perf_counter() - started > limit:
                raise RuntimeError("make lab did not serve the learner's copy:\n"
                                   + (folder.parent / "lab.log").read_text()[-3000:])
            time.sleep(0.1)
        seconds = time.perf_counter() - started
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()
    installer = (folder / ".venv" / ".installer").read_text().strip()
    return {"seconds": round(cloned + seconds, 1), "clone": round(cloned, 1),
            "installer": installer}


def to_green_tests(folder, env, commit=None):
    """Seconds from a fresh clone to a passing make test, and what it reported."""
    cloned = clone(folder, commit)
    started = time.perf_counter()
    result = subprocess.run(["make", "test"], cwd=folder, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    summary = re.findall(r"=+ (.*(?:passed|failed).*) in [0-9.]+s", result.stdout)
    if result.returncode != 0:
        raise RuntimeError("make test failed in the fresh clone:\n" + result.stdout[-3000:])
    return {"seconds": round(cloned + seconds, 1), "clone": round(cloned, 1),
            "summary": summary[-1] if summary else ""}


def measure(warm=False, commit=None, log=print):
    results = {"warm": warm,
               "environment": {"date": time.strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count(),
                               "python": platform.python_version(),
                               "commit": subprocess.run(["git", "rev-parse", "--short",
                                                         commit or "HEAD"],
                                                        cwd=ROOT, capture_output=True,
                                                        text=True).stdout.strip()}}
    with tempfile.TemporaryDirectory(prefix="workbook-setup-") as scratch:
        scratch = Path(scratch)
        for name, step in (("lab", to_lab), ("test", to_green_tests)):
            caches = None if warm else scratch / f"caches-{name}"
            log(f"{name}: from a fresh clone ({'warm' if warm else 'empty'} caches) ...")
            results[name] = step(scratch / name / "repo", environment(caches), commit)
            log(f"{name}: {results[name]['seconds']} s")
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", action="store_true", help="use this machine's package caches")
    parser.add_argument("--commit", help="clone this commit instead of HEAD (it must pass make test)")
    parser.add_argument("--out", default=str(ROOT / "build" / "bench"))
    args = parser.parse_args(argv)
    results = measure(warm=args.warm, commit=args.commit)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "setup.json").write_text(json.dumps(results, indent=1) + "\n")
    from bench import report
    print("\n".join(report.readme_table({"setup": results})[:4]))
    print(f"make test in that clone: {results['test']['summary']}; installer: "
          f"{results['lab']['installer']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
