"""Chapter 1 checks: a right answer, typical wrong answers, and no answer."""
import re

from workbook.teaching.exercises.ch1 import q1, q2, q3


def test_wide_fact():
    emoji = "\U0001F600"
    right = {"schema": 1, "text": emoji * 165, "source": emoji, "reviewed": False}
    verdict = q1.verdict(right)
    assert verdict.correct and verdict.sentence.startswith("166 characters, the fewest possible")
    assert q1.verdict(right | {"reviewed": True}).correct  # true is a byte shorter, still enough
    one_short = right | {"text": emoji * 164}
    assert q1.verdict(one_short).sentence == (
        "payload accepts it: it is only 2038 bytes as JSON; each of your characters already "
        "costs the most there is, so use more of them.")
    cheap = q1.verdict(right | {"text": "e" * 100, "source": "e"})
    assert cheap.sentence.endswith("use characters that cost more bytes each when escaped, or more "
                                   "of them.")
    accents = right | {"text": "\u00e9" * 200, "source": "\u00e9" * 200}  # too large, but 400 characters
    assert q1.verdict(accents).sentence == (
        "payload rejects it for size (2458 bytes), but text and source hold 400 characters between "
        "them, and fewer would do: which characters cost the most bytes as JSON?")
    ascii_only = right | {"text": "e" * 200, "source": "e" * 200}
    assert "cost more bytes" in q1.verdict(ascii_only).sentence
    too_many_characters = right | {"text": emoji * 300}
    assert "256 characters" in q1.verdict(too_many_characters).sentence
    assert q1.verdict({"schema": 1}).status == "not yet"
    assert q1.verdict(None).status == "not attempted"


def test_full_checkpoint():
    right = {"schema": 1, "step": 2, "items": ["x" * 247] * 8}
    assert q2.verdict(right).correct
    assert "247 characters would still fit" in q2.verdict({**right, "items": ["x" * 246] * 8}).sentence
    assert "rejects it" in q2.verdict({**right, "items": ["x" * 248] * 8}).sentence
    assert q2.verdict({**right, "step": 1}).status == "not yet"
    # a quote is escaped to two bytes: 123 of them per item fill the record, but are not the longest
    quotes = q2.verdict({**right, "items": ['"' * 123] * 8})
    assert quotes.status == "not yet" and "letters and digits" in quotes.sentence
    assert "same length" in q2.verdict({**right, "items": ["x" * 247] * 7 + ["x"]}).sentence
    assert q2.verdict(None).status == "not attempted"


def right(title):
    key = "-".join(re.findall(r"[a-z0-9]+", title.lower()))
    if not key[:1].isalpha():
        key = "n--" + key
    return key[:32]


def test_to_key():
    def no_prefix(title):
        return "-".join(re.findall(r"[a-z0-9]+", title.lower()))[:32]

    def stub(title):
        raise NotImplementedError

    verdict = q3.verdict(right)
    assert verdict.correct and "titles with the same words shared a key" in verdict.sentence
    wrong = q3.verdict(no_prefix)
    assert wrong.status == "not yet" and "'2026 plan'" in wrong.sentence and "identity rejects" in wrong.sentence
    crashing = q3.verdict(lambda title: title.nope())
    assert crashing.status == "not yet" and "AttributeError" in crashing.sentence
    assert q3.verdict(stub).status == "not attempted"
    assert q3.verdict(None).status == "not attempted"
    assert q3.verdict("run-a").status == "not yet"
    constant = q3.verdict(lambda title: "x")
    assert constant.status == "not yet" and "both gave 'x', but their words differ" in constant.sentence
    # keys of the right shape for every title, but the wrong ones for letter-first titles
    shifted = q3.verdict(lambda title: ("k" + right(title))[:32])
    assert shifted.status == "not yet" and "'run-a-draft-2'" in shifted.sentence


def test_to_key_finds_the_pair_that_breaks_the_promise():
    # the workbook's earlier worked answer: "run-" in front of a key that starts with a digit
    def run_prefix(title):
        key = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
        if not key[:1].isalpha():
            key = "run-" + key
        return key[:32].rstrip("-")
    assert q3.verdict(run_prefix).sentence == (
        "to_key('2026 plan') and to_key('Run 2026 plan') both gave 'run-2026-plan', but their "
        "words differ (2026-plan and run-2026-plan); titles whose words differ should get "
        "different keys unless a key had to be cut to 32 characters.")
    # another prefix: no sample title holds its pair, the search builds it from the key
    k_prefix = q3.verdict(lambda title: right(title).replace("n--", "k-", 1))
    assert k_prefix.sentence.startswith(
        "to_key('2026 plan') and to_key('k 2026 plan') both gave 'k-2026-plan', but their words "
        "differ"), k_prefix.sentence
    # stripping after the cut: "n--" was the key of a title with no words
    stripped = q3.verdict(lambda title: right(title).rstrip("-"))
    assert "to_key('###') and to_key('N') both gave 'n'" in stripped.sentence
    # an accented letter read as its plain letter: café and cafe have different words
    import unicodedata
    plain = q3.verdict(lambda title: right(unicodedata.normalize("NFKD", title)
                                             .encode("ascii", "ignore").decode()))
    assert "to_key('Café') and to_key('cafe') both gave 'cafe'" in plain.sentence
    # same words, different keys: a key that keeps the case of a title's letters apart
    case_kept = q3.verdict(lambda title: right(title) + ("x" if any(c.isupper() for c in title) else ""))
    assert "both titles have the words" in case_kept.sentence


def test_to_key_searches_afresh_for_every_seed_the_grader_brings():
    import random
    for seed in range(5):
        assert q3.verdict(right, rng=random.Random(seed)).correct
    # a key that collides only for titles the chapter never shows: found by the search
    def blind_to_quarry(title):
        return right(title.replace("quarry", "buoy"))
    assert q3.verdict(blind_to_quarry).status == "not yet"
