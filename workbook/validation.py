import json
import re

NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")
KINDS = ("checkpoint", "fact")
FIELDS = {"checkpoint": {"schema", "step", "items"},
          "fact": {"schema", "text", "source", "reviewed"}}
MAX_TEXT = 256
MAX_ITEMS = 8
MAX_BYTES = 2048


class Conflict(Exception):
    """A write or replace lost against the stored state; reread and decide again."""

    def __init__(self, message, *, expected=None, current=None):
        super().__init__(message)
        self.expected = expected
        self.current = current


def kind_of(value):
    """Name a value's type for an error message, never its contents."""
    cls = type(value)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def described(value):
    """Describe a wrong value: small ints by value, everything else by type."""
    if type(value) is int:
        return str(value) if abs(value) < 10**20 else "a very large int"
    return kind_of(value)


def shown(value):
    """Show an identity value briefly: short strings verbatim, anything else by type."""
    if isinstance(value, str) and len(value) <= 40:
        return repr(value)
    if isinstance(value, str):
        return f"a str of {len(value)} characters"
    return kind_of(value)


def bound(number):
    """Write the spec's large bounds the way the spec writes them."""
    return {10**10: "10**10", 2**63 - 1: "2**63-1"}.get(number, str(number))


def identity(tenant, kind, key):
    for name, value in (("tenant", tenant), ("key", key)):
        if not isinstance(value, str) or not NAME.fullmatch(value):
            raise ValueError(
                f"{name} must be a lowercase letter followed by up to 31 "
                f"lowercase letters, digits or hyphens, got {shown(value)}")
    if kind not in KINDS:
        raise ValueError(f"kind must be 'checkpoint' or 'fact', got {shown(kind)}")


def integer(value, low, high, name="value"):
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"{name} must be an int from {bound(low)} to "
                         f"{bound(high)}, got {described(value)}")


def text(value, name):
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a str of 1 to {MAX_TEXT} characters, "
                         f"got {kind_of(value)}")
    if not 1 <= len(value) <= MAX_TEXT:
        raise ValueError(f"{name} must be a str of 1 to {MAX_TEXT} characters, "
                         f"got {len(value)} characters")


def fields(kind, value):
    expected = FIELDS[kind]
    if set(value) != expected:
        missing = sorted(expected - set(value))
        extra = sorted(shown(f) for f in set(value) - expected)
        raise ValueError(
            f"{kind} payload must have exactly the fields "
            f"{', '.join(sorted(expected))}; missing: {', '.join(missing) or 'none'}"
            f"; extra: {', '.join(extra) or 'none'}")


def payload(kind, value):
    if not isinstance(value, dict):
        raise ValueError(f"payload must be a dict, got {kind_of(value)}")
    schema = value.get("schema")
    if type(schema) is not int or schema != 1:
        got = described(schema) if "schema" in value else "no schema field"
        raise ValueError(f"payload.schema must be the int 1, got {got}")
    if kind == "checkpoint":
        fields(kind, value)
        integer(value["step"], 0, 2, name="checkpoint.step")
        items = value["items"]
        if not isinstance(items, list) or len(items) > MAX_ITEMS:
            got = f"{len(items)} items" if isinstance(items, list) else kind_of(items)
            raise ValueError(f"checkpoint.items must be a list of at most "
                             f"{MAX_ITEMS} strings, got {got}")
        for index, item in enumerate(items):
            text(item, f"checkpoint.items[{index}]")
    elif kind == "fact":
        fields(kind, value)
        if type(value["reviewed"]) is not bool:
            raise ValueError(f"fact.reviewed must be a bool, got "
                             f"{kind_of(value['reviewed'])}")
        text(value["text"], "fact.text")
        text(value["source"], "fact.source")
    else:
        raise ValueError(f"kind must be 'checkpoint' or 'fact', got {shown(kind)}")
    encoded = json.dumps(value, sort_keys=True, ensure_ascii=True)
    size = len(encoded.encode("utf-8"))
    if size > MAX_BYTES:
        raise ValueError(f"{kind} payload is {size} bytes as JSON; "
                         f"the limit is {MAX_BYTES}")
    return encoded
