"""Checks of chapter 1's exercises: payload limits and identity names."""
import json
import random
import re
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
    for item in items:
        odd = next((c for c in item if not (c.isascii() and c.isalnum())), None)
        if odd is not None:
            why = ("it is escaped in the JSON and costs more than one byte"
                   if len(json.dumps(odd, ensure_ascii=True)) > 3 else "the task asks for those only")
            raise NotYet(f"make the items of ASCII letters and digits (a to z, A to Z, 0 to 9): "
                         f"{odd!r} is not one, and {why}.")
    longer = value | {"items": [i + "x" for i in items]}
    if size_of(longer) <= MAX_BYTES and len(items[0]) < MAX_TEXT:
        raise NotYet(f"each item could be longer: items of {len(items[0]) + 1} "
                     "characters would still fit.")
    return (f"items of {len(items[0])} characters fill {size_of(value)} of "
            f"{MAX_BYTES} bytes; one more character each would not fit.")


# ---------------------------------------------------------------- 1.3 to_key
#
# The task's promise: a title's words are its runs of a-z and 0-9 once lowercased (every other
# character only separates them); titles with the same words share a key, and titles whose words
# differ get different keys unless a key had to be cut to 32 characters. The check tries titles
# of its own, and looks for a counterexample to that promise: two titles with the same words and
# different keys, or two with different words and one key. For a key that is not just its title's
# words it also tries the title that spells the key ("n--2026" -> "n 2026"), which is where a
# prefix put in front of some keys meets the keys of other titles. Once no pair breaks the
# promise, every title's key is held to the task's rule itself (rule_key): a key may be cut only
# where the title's words need it, so a key of 32 characters is no licence to collide.

TITLES = ["Run A: draft #2", "run a draft 2", "2026 plan", "Run 2026 plan", "N 2026 plan",
          "  Orchard -- harvest!!  ", "Ünïcode café run", "Café", "Cafè", "cafe", "x" * 80,
          "###", "N", "a", "7", "Run 7",
          # letters outside a-z that a case-blind match takes for a-z: lowercased, İ is i and a
          # combining dot, ſ (long s) stays ſ, and only the Kelvin sign becomes plain k
          "İstanbul run", "ſun", "\u212Aelvin"]
FORMAT = ("Run A: draft #2", "run-a-draft-2")
WORDS = ["orchard", "harbour", "ladder", "plan", "draft", "report", "gate", "pears", "run",
         "quarry", "buoy", "summary", "n", "x"]
PUNCTUATION = " -_:#!?.,'/()&*+"
ELSEWHERE = ["é", "Ü", "ß", "Ω", "北", "\U0001F600", "☃", "İ", "ſ"]  # outside a-z and 0-9
RANDOM_TITLES = 25  # each a call of the learner's function, which the grader makes across a sandbox
NEAR_THE_CUT = 6    # titles whose words, joined, are about as long as a key may be
LONGEST = 32


def words(title):
    """A title's words, as the task defines them."""
    return tuple(re.findall(r"[a-z0-9]+", title.lower()))


def random_title(rng):
    """A title of words, numbers, punctuation and now and then a character beyond a-z and 0-9."""
    parts = []
    for _ in range(rng.randint(0, 5)):
        kind = rng.random()
        if kind < 0.5:
            parts.append(rng.choice(WORDS))
        elif kind < 0.8:
            parts.append(str(rng.randint(0, 99999)))
        else:
            parts.append("".join(rng.choice(string.ascii_letters + "".join(ELSEWHERE))
                                 for _ in range(rng.randint(1, 9))))
    title = ""
    for part in parts:
        title += "".join(rng.choice(PUNCTUATION) for _ in range(rng.randint(0, 3))) + part
    title += "".join(rng.choice(PUNCTUATION) for _ in range(rng.randint(0, 3)))
    return "".join(c.upper() if rng.random() < 0.3 else c for c in title)


def near_the_cut(rng):
    """A title whose words, joined (with n-- in front when a digit comes first), are a few
    characters short of LONGEST, at it, or a few past it."""
    target = LONGEST + rng.randint(-4, 4)
    found = [str(rng.randint(0, 99))] if rng.random() < 0.4 else []
    while len("-".join(found)) < target:
        found.append(rng.choice(WORDS))
    joined = "-".join(found)
    if not joined[:1].isalpha():
        target -= len("n--")
    while len(joined) > target and len(found) > 1 and len(joined) - len(found[-1]) - 1 >= target - 3:
        found.pop()
        joined = "-".join(found)
    return rng.choice([" ", ": ", " -- "]).join(found).title()


def rule_key(title):
    """The key the task's rule gives a title: its words joined by single hyphens, n-- in front
    when they do not start with a letter, cut to LONGEST characters."""
    key = "-".join(words(title))
    if not key[:1].isalpha():
        key = "n--" + key
    return key[:LONGEST]


def disguised(title, rng):
    """A title with the same words: their case changed, and other characters between them."""
    separators = [" ", "-", ": ", " #", "__", "!? ", " é ", "☃", "\U0001F600"]
    found = words(title)
    return ("".join(rng.choice(separators) + word.upper() if rng.random() < 0.5 else
                    rng.choice(separators) + word for word in found)
            + rng.choice(["", "!", " ?", "ß"]))


def key_of(to_key, title):
    key = to_key(title)
    try:
        identity("orchard", "checkpoint", key)
    except ValueError as error:
        raise NotYet(f"to_key({title!r}) gave {key!r}, which identity rejects: {error}.") from None
    return key


def spelled(key):
    """The title that spells a key's own words, when the key has any."""
    return " ".join(part for part in key.split("-") if part)


def check_to_key(to_key, rng=None):
    if not callable(to_key):
        raise NotYet("to_key should be a function that takes a title and returns a key.")
    rng = rng or random.Random(13)  # the chapter's own search; the grader brings a seed of its own
    titles = list(TITLES)
    for _ in range(RANDOM_TITLES):
        title = random_title(rng)
        titles += [title, disguised(title, rng)]
    for _ in range(NEAR_THE_CUT):
        title = near_the_cut(rng)
        titles += [title, disguised(title, rng)]
    keys, by_words, by_key = {}, {}, {}
    pending = list(dict.fromkeys(titles))
    while pending:
        title = pending.pop(0)
        if title in keys:
            continue
        key = keys[title] = key_of(to_key, title)
        found = words(title)
        if words(spelled(key)) != found and spelled(key) not in keys:
            pending.append(spelled(key))   # the title that spells this key: does it reach it too?
        other = by_words.setdefault(found, title)
        if keys[other] != key:
            raise NotYet(f"to_key({other!r}) gave {keys[other]!r} and to_key({title!r}) gave "
                         f"{key!r}, but both titles have the words {'-'.join(found) or 'none'}; "
                         "titles with the same words should share a key.")
        rival = by_key.setdefault(key, title)
        if words(rival) != found and len(key) < LONGEST:
            raise NotYet(f"to_key({rival!r}) and to_key({title!r}) both gave {key!r}, but their "
                         f"words differ ({'-'.join(words(rival)) or 'none'} and "
                         f"{'-'.join(found) or 'none'}); titles whose words differ should get "
                         "different keys unless a key had to be cut to 32 characters.")
    if keys[FORMAT[0]] != FORMAT[1]:
        raise NotYet(f"to_key({FORMAT[0]!r}) gave {keys[FORMAT[0]]!r}; a title that starts with "
                     f"a letter keeps its words, joined by single hyphens: {FORMAT[1]!r}.")
    for title, key in keys.items():
        if key != rule_key(title):
            raise NotYet(f"to_key({title!r}) gave {key!r}, but {against_the_rule(title)}.")
    return (f"all {len(keys)} titles the check tried became the keys the task's rule gives; titles "
            "with the same words shared a key, and no two titles with different words did.")


def against_the_rule(title):
    """Why the rule gives this title its key, as the second half of a sentence."""
    joined, want = "-".join(words(title)), rule_key(title)
    if not joined:
        return f"that title has no words, so its key is {want!r}"
    front = "" if joined[:1].isalpha() else "n-- in front, "
    if len(("" if not front else "n--") + joined) <= LONGEST:
        return (f"that title's words, joined by hyphens ({front}no cut needed), give {want!r}; only "
                "a key longer than 32 characters may be cut")
    return f"that title's words, joined by hyphens ({front}cut to 32 characters), give {want!r}"
