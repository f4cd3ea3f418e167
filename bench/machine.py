"""What a record says about the run behind it: the commit it measured and how busy the machine was.

The machine a benchmark runs on may be shared, so a record keeps the load average (processes
running or waiting for a core, averaged over 1, 5 and 15 minutes) from before and after its run:
a reader can tell a quiet run from one that shared the cores.
"""
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load():
    """The load average over 1, 5 and 15 minutes, as /proc/loadavg gives it."""
    return [round(value, 2) for value in os.getloadavg()]


def commit(root=ROOT):
    """{"commit": HEAD's hash, "changed": tracked files that differ from it}."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                              check=True).stdout
    changed = [line[3:] for line in git("status", "--porcelain", "--untracked-files=no").splitlines()]
    return {"commit": git("rev-parse", "HEAD").strip(), "changed": changed}


def described(environment):
    """The commit and the load, in words, for a record's first paragraph."""
    source = environment["source"]
    text = f"commit {source['commit'][:10]}"
    if source["changed"]:
        text += f" with {len(source['changed'])} tracked file(s) changed ({', '.join(source['changed'])})"
    before, after = environment["load"]["before"], environment["load"]["after"]
    return (f"{text}; load average (1, 5, 15 min) {' / '.join(map(str, before))} before the run, "
            f"{' / '.join(map(str, after))} after")
