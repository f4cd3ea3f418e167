"""Inside the sandbox: run one student's chapter, and answer the judge in plain data.

The judge sends one request at a time and waits for its answer:

    {"op": "run", "source": ...}            run a cell (the chapter's, or an answer cell)
    {"op": "bind", "expression": ...}       the value of the expression a check cell names
    {"op": "call", "target": n, "args": []} call a function of the student's that `bind` handed
                                            over, with arguments the judge chose

Objects the judge lends a call (a database connection, a mailer, a store) stay with the judge:
here they are stand-ins (Lent) through which every use is a question to the judge, answered
before the student's code goes on. Nothing this process says is taken on trust: the judge
decides every verdict from data it decodes itself and from the state of what it lent.
"""
import builtins
import itertools
import os
import signal
import sqlite3
import sys

from course.grader import wire


class State:
    """Whether student code is running now, and an interrupt that arrived while it was not."""
    student = False
    pending = False


STATE = State()


def on_interrupt(signum, frame):
    # The judge interrupts a request that runs too long. In the worker's own code (sending,
    # waiting for the judge) the interrupt waits until the student's code runs again.
    if STATE.student:
        raise KeyboardInterrupt
    STATE.pending = True


class StudentCode:
    """`with StudentCode(fresh=True):` runs the student's code: interruptible from here on."""

    def __init__(self, fresh):
        self.fresh = fresh

    def __enter__(self):
        if self.fresh:
            STATE.pending = False  # an interrupt meant for an earlier request
        STATE.student = True
        if STATE.pending:
            STATE.pending = False
            raise KeyboardInterrupt

    def __exit__(self, *exception):
        STATE.student = False


def sandbox_classes():
    """The classes a judge's error may be raised as here, by name."""
    known = {name: value for name, value in vars(builtins).items()
             if isinstance(value, type) and issubclass(value, Exception)}
    known.update({name: getattr(sqlite3, name) for name in
                  ("Error", "DatabaseError", "OperationalError", "IntegrityError",
                   "ProgrammingError", "InterfaceError", "DataError", "NotSupportedError")})
    from workbook.teaching.exercises.ch3 import Runaway
    from workbook.teaching.exercises.ch5 import SimulatedCrash
    from workbook.validation import Conflict
    known.update(Runaway=Runaway, SimulatedCrash=SimulatedCrash, Conflict=Conflict)
    return known


class Rows:
    """What a lent connection's execute returned: its rows, already fetched by the judge."""

    def __init__(self, rows, rowcount, lastrowid, description):
        self._rows = list(rows)
        self.rowcount, self.lastrowid, self.description = rowcount, lastrowid, description
        self.arraysize = 1

    def fetchone(self):
        return self._rows.pop(0) if self._rows else None

    def fetchmany(self, size=None):
        size = self.arraysize if size is None else size
        taken, self._rows = self._rows[:size], self._rows[size:]
        return taken

    def fetchall(self):
        taken, self._rows = self._rows, []
        return taken

    def __iter__(self):
        while self._rows:
            yield self._rows.pop(0)

    def close(self):
        self._rows = []


class Cursor(Rows):
    """db.cursor() of a lent connection: its execute goes to the connection's."""

    def __init__(self, connection):
        super().__init__([], -1, None, None)
        self._connection = connection

    def execute(self, sql, parameters=()):
        done = self._connection.execute(sql, parameters)
        self._rows, self.rowcount = done._rows, done.rowcount
        self.lastrowid, self.description = done.lastrowid, done.description
        return self

    def executemany(self, sql, sequence):
        done = self._connection.executemany(sql, sequence)
        self._rows, self.rowcount = done._rows, done.rowcount
        return self


class Lent:
    """An object of the judge's, lent to the student's code for one call: a connection, a mailer,
    a store. Only the names the judge lent it under exist."""

    def __init__(self, worker, ident, names, attributes, classes, is_callable):
        object.__setattr__(self, "_lent", (worker, ident, frozenset(names), frozenset(attributes),
                                           is_callable, classes))

    def __getattr__(self, name):
        worker, ident, names, attributes, _, classes = object.__getattribute__(self, "_lent")
        if name in classes:
            return classes[name]
        if name == "cursor" and "execute" in names:
            return lambda: Cursor(self)
        if name.startswith("__") or name not in names:
            raise AttributeError(f"what the grader lent this call has no attribute {name!r}")
        if name in attributes:
            return worker.ask({"ref": ident, "get": name})
        return lambda *args, **kwargs: worker.ask({"ref": ident, "method": name, "args": list(args),
                                                   "kwargs": kwargs})

    def __setattr__(self, name, value):
        raise AttributeError("what the grader lent this call cannot be changed")

    def __call__(self, *args, **kwargs):
        worker, ident, _, _, is_callable, _ = object.__getattribute__(self, "_lent")
        if not is_callable:
            raise TypeError("what the grader lent this call is not callable")
        return worker.ask({"ref": ident, "call": True, "args": list(args), "kwargs": kwargs})

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        (self.commit if kind is None else self.rollback)()
        return False

    def __repr__(self):
        return "<lent by the grader>"


class Encoder(wire.Encoder):
    def __init__(self, worker):
        super().__init__()
        self.worker = worker

    def other(self, value, depth):
        kind = type(value)
        if kind is Lent:
            return {"$": "ref", "id": object.__getattribute__(value, "_lent")[1]}
        if value is self.worker.blank:
            return {"$": "blank"}
        if isinstance(value, type) and value.__name__ in wire.CLASSES and \
                value is self.worker.classes.get(value.__name__):
            return {"$": "class", "name": value.__name__}
        if kind.__name__ in wire.OPERATIONS and kind.__module__.startswith("workbook.teaching.timeline") \
                and hasattr(kind, "__dataclass_fields__"):
            return {"$": "op", "type": kind.__name__,
                    "fields": {name: self(getattr(value, name), depth + 1)
                               for name in kind.__dataclass_fields__}}
        plain = as_built_in(value)
        if plain is not None:
            return self(plain, depth)
        if callable(value):
            ident = next(self.worker.numbers)
            self.worker.functions[ident] = value
            return {"$": "callable", "id": ident, "name": str(getattr(kind, "__name__", ""))[:80]}
        return wire.opaque(value)


def as_built_in(value):
    """A subclass of a built-in type (an OrderedDict, a namedtuple, a str with an __eq__ of its
    own) as the built-in value it holds, read with the built-in type's own methods, so that
    nothing it overrides decides what crosses; None for anything else."""
    for base, read in ((dict, lambda v: {k: dict.__getitem__(v, k) for k in dict.__iter__(v)}),
                       (list, lambda v: [list.__getitem__(v, i) for i in range(list.__len__(v))]),
                       (tuple, lambda v: tuple(tuple.__getitem__(v, i) for i in range(tuple.__len__(v)))),
                       (frozenset, lambda v: frozenset(frozenset.__iter__(v))),
                       (set, lambda v: set(set.__iter__(v))), (str, str.__str__),
                       (bytes, lambda v: bytes.__getitem__(v, slice(None))),
                       (int, lambda v: int.__add__(v, 0)), (float, lambda v: float.__add__(v, 0.0))):
        if isinstance(value, base) and type(value) is not base:
            return read(value)
    return None


class Decoder(wire.Decoder):
    def __init__(self, worker):
        self.worker = worker

    def tagged(self, tag, data, depth):
        if tag == "lent":
            names, attributes = self.array(data, "names"), self.array(data, "attributes")
            classes = data.get("classes") or {}
            if type(classes) is not dict:
                raise wire.WireError("lent classes that are not a mapping")
            classes = {str(name): self(value, depth + 1) for name, value in classes.items()}
            return Lent(self.worker, data.get("id"), names, attributes, classes,
                        data.get("callable") is True)
        if tag == "rows":
            rows = [tuple(self(value, depth + 1) for value in row)
                    for row in self.array(data, "rows") if type(row) is list]
            description = data.get("description")
            return Rows(rows, data.get("rowcount", -1), data.get("lastrowid"),
                        None if description is None else tuple(tuple(d) for d in description))
        if tag == "class":
            found = self.worker.classes.get(data.get("name"))
            if found is None:
                raise wire.WireError("a class this side does not know")
            return found
        if tag == "callable" and data.get("id") in self.worker.functions:
            return self.worker.functions[data["id"]]
        if tag == "blank":
            return self.worker.blank
        return super().tagged(tag, data, depth)


class Worker:
    def __init__(self, sock, shell):
        self.sock, self.shell = sock, shell
        self.functions, self.numbers, self.questions = {}, itertools.count(1), itertools.count(1)
        from workbook.teaching.exercises import ____
        self.blank = ____
        self.classes = sandbox_classes()

    # --------------------------------------------------------------- questions to the judge

    def ask(self, question):
        """Ask the judge about something it lent; its answer, or its error raised here."""
        STATE.student = False
        try:
            number = next(self.questions)
            question = dict(question, rpc=number, args=Encoder(self)(question.get("args", [])),
                            kwargs=Encoder(self)(question.get("kwargs", {})))
            wire.send(self.sock, question)
            answer = wire.receive(self.sock)
            if answer.get("reply") != number:
                raise wire.WireError("an answer to a question that was not asked")
            if "raise" in answer:
                error = self.error(answer["raise"])
            else:
                return Decoder(self)(answer.get("value"))
        finally:
            STATE.student = True
            if STATE.pending:
                STATE.pending = False
                raise KeyboardInterrupt
        raise error

    def error(self, data):
        name, message = str(data.get("type")), str(data.get("message", ""))
        if name == "Conflict":
            expected, current = (data.get("revisions") or [None, None])[:2]
            return self.classes["Conflict"](message, expected=expected, current=current)
        found = self.classes.get(name)
        if found is None:
            return RuntimeError(f"{name}: {message}")
        return found(message) if message else found()

    # --------------------------------------------------------------------------- requests

    def op_run(self, request):
        source = wire.text_of(request, "source", limit=wire.MAX_MESSAGE)
        with StudentCode(fresh=True):
            result = self.shell.run_cell(source, store_history=False)
        error = result.error_before_exec or result.error_in_exec
        return {"error": None if error is None else wire.error_of(error)}

    def op_bind(self, request):
        expression = wire.text_of(request, "expression", limit=10_000)
        try:
            with StudentCode(fresh=True):
                value = eval(expression, self.shell.user_ns)  # noqa: S307 - the check cell's own
        except BaseException as error:  # noqa: BLE001 - reported, as the check would see it
            return {"raise": wire.error_of(error)}
        return {"value": Encoder(self)(value)}

    def op_call(self, request):
        function = self.functions.get(request.get("target"))
        if function is None:
            raise wire.WireError("a call of nothing this sandbox handed over")
        args, kwargs = Decoder(self)(request.get("args")), Decoder(self)(request.get("kwargs"))
        if type(args) is not list or type(kwargs) is not dict:
            raise wire.WireError("a call whose arguments are not a list and a dict")
        try:
            with StudentCode(fresh=True):
                result = function(*args, **kwargs)
        except BaseException as error:  # noqa: BLE001 - reported, as the check would see it
            return {"raise": wire.error_of(error)}
        return {"value": Encoder(self)(result)}

    def serve(self):
        while True:
            try:
                request = wire.receive(self.sock)
            except EOFError:
                return
            handler = getattr(self, f"op_{request.get('op')}", None)
            try:
                if handler is None:
                    raise wire.WireError("a request this worker does not take")
                answer = handler(request)
            except wire.WireError as error:
                answer = {"broken": str(error)}
            except KeyboardInterrupt:
                answer = {"raise": wire.error_of(KeyboardInterrupt())}
            answer["id"] = request.get("id")
            wire.send(self.sock, answer)


class NoOutputs(dict):
    """IPython 9's history keeps every line a cell prints (run_cell tees stdout and stderr into
    history_manager.outputs, even with the history turned off), so a cell that prints without
    end fills the memory. Here nothing is kept."""

    def __contains__(self, key):
        return False

    def __getitem__(self, key):
        return []


def make_shell():
    """An IPython shell: the cell semantics of a Jupyter kernel, without a kernel's start-up.
    Only plain text is formatted, tracebacks are not drawn, figures are closed after each cell,
    and no printed output is kept."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    shell.history_manager.outputs = NoOutputs()
    shell.display_formatter.active_types = ["text/plain"]
    shell.showtraceback = lambda *args, **kwargs: None
    shell.showsyntaxerror = lambda *args, **kwargs: None

    def close_figures(result):
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            pyplot.close("all")
    shell.events.register("post_run_cell", close_figures)
    return shell


def main(sock):
    """The sandbox's life: serve the judge until it closes the channel. Never returns."""
    try:
        signal.signal(signal.SIGINT, on_interrupt)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        Worker(sock, make_shell()).serve()
    finally:
        os._exit(0)
