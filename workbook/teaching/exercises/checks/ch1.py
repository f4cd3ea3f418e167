"""Checks of chapter 1's exercises: payload limits and identity names."""
import json
import string

from workbook.teaching.exercises import NotYet
from workbook.validation import FIELDS, MAX_BYTES, MAX_TEXT, identity, payload


def size_of(value):
    return len(json.dumps(value, sort_keys=True, ensure_ascii=True).encode("utf-8"))


MOST_BYTES_PER_CHARACTER = 12  # a character beyond U+FFFF: two \uXXXX escapes


def fewest_characters():
    """The fewest characters text and source can hold together while the fact is too large."""
    empty = size_of({"schema": 1, "text": "", "source": "", "reviewed": False})
    return (MAX_BYTES - empty) // MOST_BYTES_PER_CHARACTER + 1


# ---------------------------------------------------------------- 1.1 a fact too large

def check_wide_fact(value, rng=None):
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


# ---------------------------------------------------------------- 1.2 the fullest checkpoint

def check_full_checkpoint(value, rng=None):
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


# ---------------------------------------------------------------- 1.3 to_key

TITLES = ["Run A: draft #2", "2026 plan", "  Orchard -- harvest!!  ", "Ünïcode café run",
          "x" * 80, "###", "a"]
DIFFERENT = ["Run A: draft #2", "Run B: draft #2", "2026 plan", "2027 plan", "Orchard harvest"]
WORDS = ["orchard", "harbour", "ladder", "plan", "draft", "report", "gate", "pears", "run",
         "quarry", "buoy", "summary"]
PUNCTUATION = " -_:#!?.,'/()&*+"


def random_title(rng):
    """A title of words, numbers, punctuation and now and then a character beyond ASCII."""
    parts = []
    for _ in range(rng.randint(1, 5)):
        kind = rng.random()
        if kind < 0.55:
            parts.append(rng.choice(WORDS))
        elif kind < 0.8:
            parts.append(str(rng.randint(0, 99999)))
        elif kind < 0.9:
            parts.append(rng.choice(["café", "Ünïcode", "straße", "Ωmega", "北", "\U0001F600"]))
        else:
            parts.append("".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(1, 9))))
    title = ""
    for part in parts:
        title += "".join(rng.choice(PUNCTUATION) for _ in range(rng.randint(0, 3))) + part
    title += "".join(rng.choice(PUNCTUATION) for _ in range(rng.randint(0, 3)))
    return "".join(c.upper() if rng.random() < 0.3 else c for c in title) or "x"


def disguised(title, rng):
    """The same title with its case and its runs of punctuation changed, and nothing else."""
    words, current = [], ""
    for character in title:
        if character.isascii() and character.isalnum():
            current += character
        elif current:
            words.append(current)
            current = ""
    if current:
        words.append(current)
    separators = [rng.choice(["-", " ", ": ", " #", "__", "!? "]) for _ in words]
    return "".join(sep + word.swapcase() for sep, word in zip(separators, words)) + rng.choice(["", "!", " ?"])


def different_titles(rng):
    """Pairs of short titles that differ in a letter or digit within their first few characters."""
    titles = []
    for _ in range(6):
        word, number = rng.choice(WORDS), rng.randint(0, 9999)
        titles += [f"{word.title()} {number}: notes", f"{word.title()} {number + 1}: notes"]
    return titles


def check_to_key(to_key, rng=None):
    if not callable(to_key):
        raise NotYet("to_key should be a function that takes a title and returns a key.")
    titles = TITLES + ([random_title(rng) for _ in range(12)] if rng else [])
    for title in titles:
        key = to_key(title)
        try:
            identity("orchard", "checkpoint", key)
        except ValueError as error:
            raise NotYet(f"to_key({title!r}) gave {key!r}, which identity rejects: {error}.") from None
    pairs = [("Run A: draft #2", "run a draft 2")]
    if rng:
        pairs += [(title, disguised(title, rng)) for title in
                  ["Run " + rng.choice(WORDS) + f" #{rng.randint(0, 999)}" for _ in range(4)]]
    for title, variant in pairs:
        if to_key(title) != to_key(variant):
            raise NotYet(f"to_key({title!r}) and to_key({variant!r}) differ, but the titles "
                         "differ only in case and punctuation, so they should give the same key.")
    if to_key("Run A: draft #2") != "run-a-draft-2":
        raise NotYet(f"to_key('Run A: draft #2') gave {to_key('Run A: draft #2')!r}; lowercase it and "
                     "replace each run of other characters by one hyphen: 'run-a-draft-2'.")
    seen = {}
    for title in DIFFERENT + (different_titles(rng) if rng else []):
        key = to_key(title)
        if key in seen and seen[key] != title:
            raise NotYet(f"to_key({seen[key]!r}) and to_key({title!r}) both gave {key!r}; titles "
                         "that differ in their letters or digits should give different keys.")
        seen[key] = title
    return (f"all {len(titles)} sample titles became keys that identity accepts, and different "
            "titles stay apart.")
