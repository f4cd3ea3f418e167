"""A watchdog for make test-hub: once the test process it watches has ended, however it ended (a
kill -9 included, which runs no fixture's clean-up), it ends every process whose program is in
the test's folders (the hub, the proxy, the idle culler, the servers and their kernels, all run
from the temporary HUB_DIR and clone), removes the test's accounts and the folders.

    python tests/support/hub_reaper.py --watch PID --folder DIR [--folder DIR] [--account NAME ...]

The hub test starts it first, in a session of its own, and stops it after its own clean-up.
"""
import argparse
import os
import shutil
import time

from course.hub import accounts, service


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie has ended: its parent just has not reaped it yet
        with open(f"/proc/{pid}/stat") as stat:
            return not stat.read().rsplit(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return False


def leftovers(folders):
    """{pid: command line} of every process run from one of `folders`."""
    found = {}
    for folder in folders:
        found.update(service.run_from(folder))
    return found


def reap(folders, names):
    for _ in range(3):  # a process may start another as it is ended
        if not service.end_all(leftovers(folders)):
            break
    for name in names:
        if os.geteuid() == 0:
            accounts.remove_account(name)
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watch", type=int, required=True)
    parser.add_argument("--folder", action="append", default=[])
    parser.add_argument("--account", action="append", default=[])
    arguments = parser.parse_args(argv)
    while alive(arguments.watch):
        time.sleep(0.5)
    reap(arguments.folder, arguments.account)


if __name__ == "__main__":
    main()
