"""Chapter 1 exercises: payload limits and identity names."""
import json

from workbook.exercises import Exercise, NotYet
from workbook.validation import FIELDS, MAX_BYTES, MAX_TEXT, identity, payload


def size_of(value):
    return len(json.dumps(value, sort_keys=True, ensure_ascii=True).encode("utf-8"))


def fewest_characters():
    """The fewest characters text and source can hold together while the fact is too large."""
    empty = size_of({"schema": 1, "text": "", "source": "", "reviewed": False})
    return (MAX_BYTES - empty) // MOST_BYTES_PER_CHARACTER + 1


MOST_BYTES_PER_CHARACTER = 12  # a character beyond U+FFFF: two \uXXXX escapes


def check_wide_fact(value):
    if not isinstance(value, dict) or set(value) != FIELDS["fact"]:
        raise NotYet("a fact is a dict with exactly the fields schema, text, source and reviewed.")
    if type(value["schema"]) is not int or value["schema"] != 1 or type(value["reviewed"]) is not bool:
        raise NotYet("keep schema as the int 1 and reviewed as a bool, so only the size can fail.")
    for name in ("text", "source"):
        if not isinstance(value[name], str) or not 1 <= len(value[name]) <= MAX_TEXT:
            raise NotYet(f"{name} must stay within 1 to {MAX_TEXT} characters; "
                         "the point is to pass that check and fail the byte limit.")
    size = size_of(value)
    if size <= MAX_BYTES:
        costliest = all(ord(c) > 0xFFFF for c in value["text"] + value["source"])
        advice = ("each of your characters already costs the most there is, so use more of them"
                  if costliest else "use characters that cost more bytes each when escaped, "
                  "or more of them")
        raise NotYet(f"payload accepts it: it is only {size} bytes as JSON; {advice}.")
    try:
        payload("fact", value)
    except ValueError as error:
        if "bytes as JSON" not in str(error):
            raise NotYet("payload rejects it, but not for size; fix the other field first.")
    used, fewest = len(value["text"]) + len(value["source"]), fewest_characters()
    if used > fewest:
        raise NotYet(f"payload rejects it for size ({size} bytes), but text and source hold "
                     f"{used} characters between them, and fewer would do: which characters "
                     "cost the most bytes as JSON?")
    return (f"{used} characters, the fewest possible, and the stored JSON needs {size} bytes, "
            f"over the {MAX_BYTES}-byte limit: each character beyond U+FFFF costs "
            f"{MOST_BYTES_PER_CHARACTER} bytes.")


def check_full_checkpoint(value):
    try:
        payload("checkpoint", value)
    except ValueError as error:
        raise NotYet(f"payload rejects it ({error}).") from None
    items = value["items"]
    if value["step"] != 2 or len(items) != 8:
        raise NotYet("use step 2 and exactly eight items.")
    if len({len(i) for i in items}) != 1:
        raise NotYet("make the eight items all the same length.")
    if not all(len(json.dumps(i, ensure_ascii=True)) == len(i) + 2 for i in items):
        raise NotYet("use letters and digits: a quote, a backslash, a control character or a "
                     "non-ASCII one is escaped in the JSON and costs more than one byte.")
    longer = value | {"items": [i + "x" for i in items]}
    if size_of(longer) <= MAX_BYTES and len(items[0]) < MAX_TEXT:
        raise NotYet(f"each item could be longer: items of {len(items[0]) + 1} "
                     "characters would still fit.")
    return (f"items of {len(items[0])} characters fill {size_of(value)} of "
            f"{MAX_BYTES} bytes; one more character each would not fit.")


TITLES = ["Run A: draft #2", "2026 plan", "  Orchard -- harvest!!  ", "Ünïcode café run",
          "x" * 80, "###", "a"]


def check_to_key(to_key):
    if not callable(to_key):
        raise NotYet("to_key should be a function that takes a title and returns a key.")
    for title in TITLES:
        key = to_key(title)
        try:
            identity("orchard", "checkpoint", key)
        except ValueError as error:
            raise NotYet(f"to_key({title!r}) gave {key!r}, which identity rejects: {error}.") from None
    if to_key("Run A: draft #2") != to_key("run a draft 2"):
        raise NotYet("titles that differ only in case and punctuation should give the same key.")
    if to_key("Run A: draft #2") != "run-a-draft-2":
        raise NotYet(f"to_key('Run A: draft #2') gave {to_key('Run A: draft #2')!r}; lowercase it and "
                     "replace each run of other characters by one hyphen: 'run-a-draft-2'.")
    different = ["Run A: draft #2", "Run B: draft #2", "2026 plan", "2027 plan", "Orchard harvest"]
    seen = {}
    for title in different:
        key = to_key(title)
        if key in seen:
            raise NotYet(f"to_key({seen[key]!r}) and to_key({title!r}) both gave {key!r}; titles "
                         "that differ in their letters or digits should give different keys.")
        seen[key] = title
    return (f"all {len(TITLES)} sample titles became keys that identity accepts, and different "
            "titles stay apart.")


q1 = Exercise(
    "1.1", "Write a fact that payload rejects for its size alone, with as few characters in "
    "text and source as possible.", check_wide_fact,
    hints=["The limit is on json.dumps(value, sort_keys=True, ensure_ascii=True), in bytes: find "
           "the character that costs the most bytes there (the table above measures a few).",
           "An emoji costs 12 bytes; measure the JSON of the fact with empty text and source, and "
           "work out how many 12-byte characters push it past 2,048."])

q2 = Exercise(
    "1.2", "Write the longest eight-item checkpoint that payload accepts.", check_full_checkpoint,
    hints=["Measure the JSON of an eight-item checkpoint whose items are all empty strings, "
           "with ENCODE (payload itself refuses empty items, but their JSON is what you need).",
           "Whatever is left of the 2,048 bytes, shared by eight items, is each item's length: "
           "a letter or a digit costs one byte."])

q3 = Exercise(
    "1.3", "Write to_key(title) that turns any title into a valid key.", check_to_key,
    hints=["Lowercase the title first, then replace each run of characters other than a-z "
           "and 0-9 by a single hyphen: one call of re.sub with a + in its pattern.",
           "re.sub(r'[^a-z0-9]+', '-', title.lower()) does that. Then strip hyphens at the "
           "ends, put a letter prefix (such as 'run-') before a key that does not start with a "
           "letter, and cut it to 32 characters."])
