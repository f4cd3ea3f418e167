"""The judge's side of the wire: a student's function as a stand-in, and what a check lends it.

A check calls the student's function as if it were here. It is a Remote: calling it sends the
arguments to the sandbox, which calls the real function there. Arguments that are plain data
cross as data. Anything else the check passes (a database connection, a wrapper around one, a
mailer, a namespace of store functions) is lent: it stays here, and the sandbox gets a stand-in
whose uses come back as questions, which the judge answers by using the object itself. So the
check sees every effect the student's code had, on objects that never left the judge.

What a lent object offers is fixed here, never by the sandbox:
- a connection (anything with `execute`): CONNECTION, and its execute's rows, fetched here;
- a namespace (types.SimpleNamespace, a store): its functions, and the classes it names;
- any other object: the public methods its class defines.
A lent SQLite connection gets an authorizer that allows reading and writing rows and nothing
else (no ATTACH, PRAGMA, schema change or extension function), limits on the size of statements
and values, and a bound on the work of one statement.
"""
import json
import sqlite3
import time
import types

from course.grader import wire

CONNECTION = ("execute", "executemany", "commit", "rollback", "close", "in_transaction",
              "total_changes")
ATTRIBUTES = ("in_transaction", "total_changes")
MOST_ROWS = 10_000            # rows one lent execute returns to the sandbox
MOST_STEPS = 2_000            # progress callbacks (of 10,000 SQLite instructions) per question
MOST_SECONDS = 2.0            # of SQLite's work for one question
MOST_PAGES = 16_384           # of 4 KiB: 64 MiB, the most a lent database may grow to
MOST_BYTES = 4 << 20          # on the wire, of the rows one lent execute returns to the sandbox
MOST_VALUES = 100_000         # in those rows (the wire carries 200,000 in one message)
ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE,
           sqlite3.SQLITE_DELETE, sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT,
           sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
REFUSED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}
LIMITS = {sqlite3.SQLITE_LIMIT_LENGTH: 1_000_000, sqlite3.SQLITE_LIMIT_SQL_LENGTH: 100_000,
          sqlite3.SQLITE_LIMIT_ATTACHED: 0, sqlite3.SQLITE_LIMIT_EXPR_DEPTH: 200,
          sqlite3.SQLITE_LIMIT_COMPOUND_SELECT: 50, sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER: 999,
          sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH: 10}


class Busy:
    """The lent question the judge is answering now: since when, and on which connections
    (judge.job's watchdog interrupts them, and ends the judge when they hold it too long)."""
    started = None
    connections = ()


BUSY = Busy()


class Remote:
    """A function of the student's, in the sandbox. Calling it calls it there."""

    def __init__(self, session, ident, name):
        self._session, self._ident = session, ident
        self.__name__ = self.__qualname__ = name or "answer"

    def __call__(self, *args, **kwargs):
        return self._session.call(self._ident, args, kwargs)

    def __repr__(self):
        return f"<your function {self.__name__}>"


MOST_TYPES = 256   # type names one decoder makes stand-in classes for; the rest share one


def opaque_class(type_name, made=None):
    """An object the sandbox could not send as data: a stand-in that only names its type. One
    class per name in `made` (a decoder's), and at most MOST_TYPES of them: a class costs a
    kilobyte, a name forty bytes on the wire."""
    module, _, name = "".join(c for c in type_name if c.isprintable())[:120].rpartition(".")
    if made is None:
        return type(name or "object", (Opaque,), {"__module__": module or "sandbox"})
    key = (module, name) if len(made) < MOST_TYPES or (module, name) in made else ("sandbox", "object")
    if key not in made:
        made[key] = type(key[1] or "object", (Opaque,), {"__module__": key[0] or "sandbox"})
    return made[key]


class Opaque:
    def __repr__(self):
        return f"<a {type(self).__qualname__} object>"


def guard(db):
    """Let the sandbox's SQL read and write rows of this connection, and do nothing else, within
    a size: 64 MiB of database. (Not SQLite's hard_heap_limit: it is one cap for the whole
    grader, so one student filling it made another student's checks fail with MemoryError; a
    database's pages, and how many databases a check opens, bound each student instead.)"""
    db.execute(f"PRAGMA max_page_count = {MOST_PAGES}")
    def authorize(action, first, second, database, trigger):
        if action == sqlite3.SQLITE_FUNCTION:
            return sqlite3.SQLITE_DENY if str(second).lower() in REFUSED_FUNCTIONS else sqlite3.SQLITE_OK
        return sqlite3.SQLITE_OK if action in ALLOWED else sqlite3.SQLITE_DENY
    db.set_authorizer(authorize)
    for which, value in LIMITS.items():
        db.setlimit(which, value)


class Lending:
    """What one check has lent, by number; every number is refused once the check is over."""

    def __init__(self):
        self.objects, self.offers, self.guarded, self.next = {}, {}, [], 1
        self.steps, self.deadline = 0, 0.0

    def lend(self, value):
        ident = self.next
        self.next += 1
        self.objects[ident] = value
        self.offers[ident] = offered(value)  # asked once: a lent object's __getattr__ may do things
        for connection in connections_in(value):
            if all(connection is not seen for seen in self.guarded):
                self.guarded.append(connection)
                guard(connection)
        return ident

    def progress(self):
        self.steps += 1
        return 1 if self.steps > MOST_STEPS or time.monotonic() > self.deadline else 0

    def bound(self, on):
        """While the sandbox's question is answered, no statement may run for long."""
        for connection in self.guarded:
            try:
                connection.set_progress_handler(self.progress if on else None, 10_000)
            except sqlite3.ProgrammingError:  # closed by the check or by the student's code
                pass

    def close(self):
        self.bound(False)
        self.objects.clear()
        self.offers.clear()
        self.guarded.clear()

    def answer(self, question):
        """Use a lent object as the sandbox asks; what it gives back as plain data (rows fetched
        too, inside the bound), or the error it raised."""
        self.steps, self.deadline = 0, time.monotonic() + MOST_SECONDS
        self.bound(True)
        BUSY.connections, BUSY.started = tuple(self.guarded), time.monotonic()
        try:
            return JudgeEncoder(self)(self.use(question))
        finally:
            BUSY.started = None
            self.bound(False)

    def use(self, question):
        target = self.objects.get(question.get("ref"))
        if target is None:
            raise LookupError("nothing is lent under that number now")
        names, is_callable = self.offers[question.get("ref")]
        if question.get("call") is True:
            if not is_callable:
                raise TypeError("what the grader lent this call is not callable")
            return target(*self.arguments(question))
        name = question.get("get", question.get("method"))
        if name not in names:
            raise AttributeError(f"what the grader lent this call has no attribute {name!r}")
        value = getattr(target, name)
        if "get" in question:
            return value
        return value(*self.arguments(question))

    def arguments(self, question):
        decode = JudgeDecoder(None, self)
        args, kwargs = decode(question.get("args")), decode(question.get("kwargs"))
        if type(args) is not list or type(kwargs) is not dict:
            raise wire.WireError("arguments that are not a list and a dict")
        if kwargs:
            raise TypeError("what the grader lent takes no keyword arguments")
        return args


def encoded_size(item):
    """About what a value of a row costs on the wire (JSON, ASCII only), at most a few more."""
    if isinstance(item, str):
        return len(json.dumps(item))
    if isinstance(item, (bytes, bytearray, memoryview)):
        return len(item) * 4 // 3 + 8
    return 24


def connections_in(value):
    """The SQLite connections a lent value is, or holds as an attribute."""
    if isinstance(value, sqlite3.Connection):
        return [value]
    held = getattr(value, "__dict__", {})
    return [item for item in held.values() if isinstance(item, sqlite3.Connection)]


def offered(value):
    """(the names a lent value offers, whether it can be called)."""
    if isinstance(value, sqlite3.Connection) or callable(getattr(value, "execute", None)):
        return tuple(name for name in CONNECTION if hasattr(value, name)), False
    if isinstance(value, types.SimpleNamespace):
        return tuple(name for name, item in vars(value).items() if not name.startswith("_")), False
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return (), True
    own = type(value).__dict__
    return tuple(name for name, item in own.items()
                 if not name.startswith("_") and callable(item)), False


class JudgeEncoder(wire.Encoder):
    """What the judge sends: data, the classes both sides know, and lent objects."""

    def __init__(self, lending):
        super().__init__()
        self.lending = lending

    def other(self, value, depth):
        if isinstance(value, type) and value.__name__ in wire.CLASSES:
            return {"$": "class", "name": value.__name__}
        if isinstance(value, Remote):
            return {"$": "callable", "id": value._ident}
        if isinstance(value, sqlite3.Cursor) or all(hasattr(value, n) for n in ("fetchall", "fetchone")):
            return self.rows(value)
        if self.lending is None:
            raise TypeError(f"the check tried to send a {type(value).__name__} outside a call")
        ident = self.lending.lend(value)
        names, is_callable = self.lending.offers[ident]
        classes = {name: {"$": "class", "name": item.__name__} for name, item in vars(value).items()
                   if isinstance(item, type) and item.__name__ in wire.CLASSES} \
            if isinstance(value, types.SimpleNamespace) else {}
        return {"$": "lent", "id": ident, "names": [name for name in names if name not in classes],
                "attributes": [name for name in names if name in ATTRIBUTES], "classes": classes,
                "callable": is_callable}

    def rows(self, cursor):
        """The cursor's rows as data, fetched a few at a time and counted as they come: the
        grader never holds more than MOST_ROWS rows or MOST_BYTES of their text and blobs."""
        rows, size, values = [], 0, 0
        while True:
            batch = cursor.fetchmany(100) if hasattr(cursor, "fetchmany") else cursor.fetchall()
            for row in batch:
                size += sum(encoded_size(item) for item in row)
                values += len(row)
                if len(rows) >= MOST_ROWS or size > MOST_BYTES or values > MOST_VALUES:
                    raise ValueError(f"a statement through the grader's connection returns at most "
                                     f"{MOST_ROWS} rows, {MOST_VALUES} values and "
                                     f"{MOST_BYTES >> 20} MiB")
                rows.append(row)
            if not batch or not hasattr(cursor, "fetchmany"):
                break
        description = getattr(cursor, "description", None)
        return {"$": "rows", "rows": [[self(item, 1) for item in row] for row in rows],
                "rowcount": getattr(cursor, "rowcount", -1),
                "lastrowid": getattr(cursor, "lastrowid", None),
                "description": None if description is None else [[str(d[0])] + [None] * 6
                                                                  for d in description]}


class JudgeDecoder(wire.Decoder):
    """What the judge takes from the sandbox: data, the classes both sides know, the student's
    functions as Remotes, lent objects handed back, and everything else as an Opaque."""

    def __init__(self, session, lending):
        self.session, self.lending, self.made = session, lending, {}

    def tagged(self, tag, data, depth):
        if tag == "blank":
            from workbook.teaching.exercises import ____
            return ____
        if tag == "class":
            from workbook.validation import Conflict
            if data.get("name") == "Conflict":
                return Conflict
            raise wire.WireError("a class the judge does not know")
        if tag == "object":
            return opaque_class(wire.text_of(data, "type"), self.made)()
        if tag == "callable":
            if self.session is None or type(data.get("id")) is not int:
                raise wire.WireError("a function where none can be taken")
            return Remote(self.session, data["id"], str(data.get("name", ""))[:80])
        if tag == "ref":
            if self.lending is None or data.get("id") not in self.lending.objects:
                raise wire.WireError("a lent object that is not lent now")
            return self.lending.objects[data["id"]]
        if tag == "op":
            return self.operation(data, depth)
        return super().tagged(tag, data, depth)

    def operation(self, data, depth):
        from dataclasses import fields

        from workbook.teaching import timeline
        kinds = {kind.__name__: kind for kind in timeline.OPERATIONS}
        kind = kinds.get(data.get("type"))
        values = data.get("fields")
        if kind is None or type(values) is not dict:
            raise wire.WireError("an operation the judge does not know")
        names = {f.name for f in fields(kind)}
        if not set(values) <= names:
            return opaque_class(f"workbook.teaching.timeline.{kind.__name__}", self.made)()
        try:
            return kind(**{name: self(value, depth + 1) for name, value in values.items()})
        except TypeError:
            return opaque_class(f"workbook.teaching.timeline.{kind.__name__}", self.made)()


def judge_error(data):
    """An exception raised in the sandbox, as an exception here: a builtin or sqlite3 class of
    that name, the workbook's Conflict and the chapters' own BaseExceptions (Runaway,
    SimulatedCrash), each made anew with the message only; any other becomes RemoteError."""
    import builtins

    from workbook.teaching.exercises import NotAttempted
    from workbook.teaching.exercises.ch3 import Runaway
    from workbook.teaching.exercises.ch5 import SimulatedCrash
    from workbook.validation import Conflict
    name = "".join(c for c in str(data.get("type", ""))[:200] if c.isprintable())
    message = str(data.get("message", ""))[:2000]
    known = {"Conflict": Conflict, "Runaway": Runaway, "SimulatedCrash": SimulatedCrash,
             "NotAttempted": NotAttempted, "KeyboardInterrupt": KeyboardInterrupt}
    for module in (builtins, sqlite3):
        found = getattr(module, name, None)
        if isinstance(found, type) and issubclass(found, Exception):
            known.setdefault(name, found)
    found = known.get(name)
    if found is Conflict:
        revisions = data.get("revisions") or [None, None]
        expected, current = [r if type(r) is int else None for r in (list(revisions) + [None, None])[:2]]
        return Conflict(message, expected=expected, current=current)
    if found is None or not isinstance(found, type):
        return type(name if name.isidentifier() else "RemoteError", (RemoteError,), {})(message)
    made = type(name, (found,), {"__str__": lambda self: message, "__module__": found.__module__})
    try:
        return made()
    except TypeError:
        return RemoteError(f"{name}: {message}")


class RemoteError(Exception):
    """An exception of the student's own class, raised in the sandbox."""

