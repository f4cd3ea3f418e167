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


def test_to_key():
    def right(title):
        key = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
        if not key[:1].isalpha():
            key = "run-" + key
        return key[:32].rstrip("-")

    def no_prefix(title):
        return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:32]

    def stub(title):
        raise NotImplementedError

    assert q3.verdict(right).correct
    wrong = q3.verdict(no_prefix)
    assert wrong.status == "not yet" and "'2026 plan'" in wrong.sentence
    crashing = q3.verdict(lambda title: title.nope())
    assert crashing.status == "not yet" and "AttributeError" in crashing.sentence
    assert q3.verdict(stub).status == "not attempted"
    assert q3.verdict(None).status == "not attempted"
    assert q3.verdict("run-a").status == "not yet"
    # keys identity accepts are not enough: the stated rules, and different titles kept apart
    constant = q3.verdict(lambda title: "x")
    assert constant.status == "not yet" and "'run-a-draft-2'" in constant.sentence
    # the pair named is the pair that collided
    leading_digits_dropped = q3.verdict(lambda title: right(title).removeprefix("run-2026-")
                                        .removeprefix("run-2027-"))
    assert leading_digits_dropped.sentence == (
        "to_key('2026 plan') and to_key('2027 plan') both gave 'plan'; titles that differ in "
        "their letters or digits should give different keys.")
    digits_lost = q3.verdict(lambda title: "run-plan" if title[0].isdigit() else right(title))
    assert digits_lost.status == "not yet" and "different keys" in digits_lost.sentence

