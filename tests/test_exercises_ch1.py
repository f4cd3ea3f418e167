"""Chapter 1 checks: a right answer, typical wrong answers, and no answer."""
import re

from workbook.exercises.ch1 import q1, q2, q3


def test_wide_fact():
    right = {"schema": 1, "text": "\u00e9" * 200, "source": "\u00e9" * 200, "reviewed": False}
    assert q1.verdict(right).correct
    ascii_only = right | {"text": "e" * 200, "source": "e" * 200}
    assert "only" in q1.verdict(ascii_only).sentence and q1.verdict(ascii_only).status == "not yet"
    too_many_characters = right | {"text": "\u00e9" * 300}
    assert "256 characters" in q1.verdict(too_many_characters).sentence
    assert q1.verdict({"schema": 1}).status == "not yet"
    assert q1.verdict(None).status == "not attempted"


def test_full_checkpoint():
    right = {"schema": 1, "step": 2, "items": ["x" * 247] * 8}
    assert q2.verdict(right).correct
    assert "247 characters would still fit" in q2.verdict({**right, "items": ["x" * 246] * 8}).sentence
    assert "rejects it" in q2.verdict({**right, "items": ["x" * 248] * 8}).sentence
    assert q2.verdict({**right, "step": 1}).status == "not yet"
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

