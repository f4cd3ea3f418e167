"""The wire between the sandbox and the judge: length-framed JSON messages holding plain data.

A value crosses as JSON in which every container is a tagged object:

    null, true, 1, 1.5, "text"          themselves
    {"$": "list" | "tuple" | "set" | "frozenset", "v": [...]}
    {"$": "dict", "v": [[key, value], ...]}
    {"$": "bytes", "v": "<base64>"}
    {"$": "blank"}                      the exercise placeholder ____
    {"$": "class", "name": "Conflict"}  one of the classes both sides know (CLASSES)
    {"$": "op", "type": "Put", "fields": {...}}   a timeline operation (chapter 5)
    {"$": "object", "type": "module.Name"}        anything else: only its type's name crosses
    {"$": "callable", "id": 3, "name": "to_key"}  a function of the sandbox's, called by the judge
    {"$": "lent", "id": 7, "names": [...]}        an object of the judge's, lent to the sandbox
    {"$": "ref", "id": 7}                         a lent object, handed back to the judge
    {"$": "rows", ...}                            what a lent connection's execute returned

Decoding builds exact built-in types only (never a subclass, never an object with behaviour of
its own), so nothing the sandbox sends can bring code into the judge: a str subclass whose __eq__
always says yes arrives as an opaque object, or not at all. Its cost is linear in what it reads:
a set or a dict whose items' hashes collide (ints that differ by multiples of 2**61 - 1 all hash
alike, and would cost the square of their number to put in one) is refused before it is built.
Both sides import this module; it imports nothing of the workbook's.
"""
import base64
import json
import struct

MAX_MESSAGE = 8 << 20      # bytes in one message
MAX_DEPTH = 64             # nesting of containers in one value
MAX_NODES = 200_000        # values in one message
MAX_COLLISIONS = 8         # items of one set, or keys of one dict, that may share a hash
SCALARS = (type(None), bool, int, float, str)
SEQUENCES = {list: "list", tuple: "tuple", set: "set", frozenset: "frozenset"}
# The classes a value may name. The sandbox maps a name to its own class, the judge to its own.
CLASSES = ("Conflict",)
# The timeline operations of chapter 5 (workbook.teaching.timeline.OPERATIONS), sent with their fields.
OPERATIONS = ("Put", "Get", "Forget", "Purge", "Reopen", "Clock")


class WireError(Exception):
    """A message that breaks the protocol: too large, malformed or out of turn."""


# ----------------------------------------------------------------------------------- framing

def send(sock, message):
    data = json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    if len(data) > MAX_MESSAGE:
        raise WireError(f"a message of {len(data)} bytes is over the {MAX_MESSAGE}-byte limit")
    sock.sendall(struct.pack(">I", len(data)) + data)


def read_exactly(sock, count):
    chunks, left = [], count
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the channel")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive(sock):
    """The next message. EOFError when the channel closed, WireError when it is not a message;
    socket.timeout (TimeoutError) passes through from the socket's own timeout."""
    (length,) = struct.unpack(">I", read_exactly(sock, 4))
    if length > MAX_MESSAGE:
        raise WireError(f"a message of {length} bytes is over the {MAX_MESSAGE}-byte limit")
    try:
        message = json.loads(read_exactly(sock, length).decode("ascii"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise WireError("a message that is not JSON") from None
    if not isinstance(message, dict):
        raise WireError("a message that is not a JSON object")
    return message


# ---------------------------------------------------------------------------------- encoding

class Encoder:
    """Plain data from a value. Subclasses decide what becomes of what is not plain data
    (`other`), such as a function (the sandbox) or an object to lend (the judge)."""

    def __init__(self):
        self.nodes = 0

    def __call__(self, value, depth=0):
        self.nodes += 1
        if self.nodes > MAX_NODES or depth > MAX_DEPTH:
            raise WireError(f"a value with more than {MAX_NODES} parts or {MAX_DEPTH} levels")
        kind = type(value)
        if kind in SCALARS:
            return value
        if kind in SEQUENCES:
            return {"$": SEQUENCES[kind], "v": [self(item, depth + 1) for item in value]}
        if kind is dict:
            return {"$": "dict", "v": [[self(k, depth + 1), self(v, depth + 1)] for k, v in value.items()]}
        if kind is bytes:
            return {"$": "bytes", "v": base64.b64encode(value).decode("ascii")}
        return self.other(value, depth)

    def other(self, value, depth):
        return opaque(value)


def opaque(value):
    kind = type(value)
    return {"$": "object", "type": f"{kind.__module__}.{kind.__qualname__}"}


class Decoder:
    """Values of exact built-in types from plain data. Subclasses give meaning to the tags that
    name things of one side (`tagged`)."""

    def __call__(self, data, depth=0):
        if depth > MAX_DEPTH:
            raise WireError(f"a value nested more than {MAX_DEPTH} levels")
        kind = type(data)
        if kind in SCALARS:
            return data
        if kind is not dict or not isinstance(data.get("$"), str):
            raise WireError("a value that is neither plain data nor a tagged object")
        tag = data["$"]
        if tag in ("list", "tuple", "set", "frozenset"):
            items = [self(item, depth + 1) for item in self.array(data, "v")]
            if tag in ("set", "frozenset"):
                spread(items, "a set")
            return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
        if tag == "dict":
            pairs = self.array(data, "v")
            if not all(type(pair) is list and len(pair) == 2 for pair in pairs):
                raise WireError("a dict that is not a list of pairs")
            keys = [self(k, depth + 1) for k, _ in pairs]
            spread(keys, "a dict")
            return dict(zip(keys, [self(v, depth + 1) for _, v in pairs]))
        if tag == "bytes":
            text = data.get("v")
            if type(text) is not str:
                raise WireError("bytes that are not base64 text")
            try:
                return base64.b64decode(text, validate=True)
            except ValueError:
                raise WireError("bytes that are not base64 text") from None
        return self.tagged(tag, data, depth)

    @staticmethod
    def array(data, field):
        items = data.get(field)
        if type(items) is not list:
            raise WireError(f"a {data['$']} whose {field} is not a list")
        return items

    def tagged(self, tag, data, depth):
        raise WireError(f"a value tagged {tag!r}, which this side does not take")


def spread(items, what):
    """Refuse items for a set or dict that cannot be hashed, or whose hashes collide more than
    MAX_COLLISIONS times: counted by hash value, which costs one step per item."""
    counts = {}
    for item in items:
        try:
            value = hash(item)
        except TypeError:
            raise WireError(f"{what} with an item that cannot be in one") from None
        counts[value] = counts.get(value, 0) + 1
        if counts[value] > MAX_COLLISIONS:
            raise WireError(f"{what} whose items' hashes collide: more than {MAX_COLLISIONS} "
                            "items share one")


def text_of(data, field, limit=300):
    """A short str field of a message, or WireError."""
    value = data.get(field)
    if type(value) is not str or len(value) > limit:
        raise WireError(f"a field {field!r} that is not a short text")
    return value


def error_of(error):
    """An exception as plain data: its type's name, its message, and for a Conflict the two
    revisions it carries."""
    try:
        message = str(error)
    except Exception:  # noqa: BLE001 - a message that cannot be made is no message
        message = ""
    data = {"type": type(error).__name__, "message": message[:2000],
            "base": "Exception" if isinstance(error, Exception) else "BaseException"}
    if type(error).__name__ == "Conflict":
        data["revisions"] = [value if type(value) is int else None
                             for value in (getattr(error, "expected", None), getattr(error, "current", None))]
    return data
