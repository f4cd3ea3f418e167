"""Chapter 3 checks: a right answer, typical wrong answers, and no answer."""
import re

from workbook.teaching.exercises import answers
from workbook.teaching.exercises.ch3 import q1, q2, q3
from workbook.records import get
from workbook.validation import Conflict, identity
from workbook.writes import put

KEY = ("orchard", "fact", "visits")


def test_the_hints_of_3_1_lead_to_the_answer_without_being_it():
    # the ladder: hint 1 the idea, hint 2 the shape, solution() the code (issue 21, item 4)
    code = {line.strip() for line in answers()["3.1"].splitlines() if len(line.strip()) > 8}
    for hint in q1.hints:
        assert "`" not in hint and not re.search(r"\b(for|range|continue|except|try)\b", hint), hint
        assert not any(line in hint for line in code), hint


def test_increment():
    def right(db, now):
        for _ in range(5):
            record = get(db, *KEY, now)
            value = record["value"]
            value["text"] = str(int(value["text"]) + 1)
            try:
                return put(db, *KEY, value, record["revision"], now, 60)
            except Conflict:
                continue
        raise Conflict("visits: gave up after 5 attempts")

    def no_retry(db, now):
        record = get(db, *KEY, now)
        value = record["value"] | {"text": str(int(record["value"]["text"]) + 1)}
        return put(db, *KEY, value, record["revision"], now, 60)

    def same_proposal_new_token(db, now):
        record = get(db, *KEY, now)
        value = record["value"] | {"text": str(int(record["value"]["text"]) + 1)}
        try:
            return put(db, *KEY, value, record["revision"], now, 60)
        except Conflict as error:
            return put(db, *KEY, value, error.current, now, 60)

    def forever(db, now):
        while True:
            record = get(db, *KEY, now)
            value = record["value"] | {"text": str(int(record["value"]["text"]) + 1)}
            try:
                return put(db, *KEY, value, record["revision"], now, 60)
            except Exception:
                continue

    def stub(db, now):
        raise NotImplementedError()

    verdict = q1.verdict(right)
    assert verdict.correct and "after 5 attempts" in verdict.sentence
    escaped = q1.verdict(no_retry)
    assert escaped.status == "not yet" and "Conflict escaped" in escaped.sentence
    lost = q1.verdict(same_proposal_new_token)
    assert lost.status == "not yet" and "one increment was lost" in lost.sentence
    spinning = q1.verdict(forever)
    assert spinning.status == "not yet" and "never gives up" in spinning.sentence
    assert q1.verdict(stub).status == "not attempted"
    assert q1.verdict(None).status == "not attempted"
    assert q1.verdict(lambda db, now: None).status == "not yet"


def test_predictions():
    right = [1, "Conflict", 2, 3, "Conflict", "Conflict", 4, "Conflict", 5]
    assert q2.verdict(right).correct
    assert q2.verdict([Conflict if p == "Conflict" else p for p in right]).correct
    counter_spent = [1, "Conflict", 3, 4, "Conflict", "Conflict", 5, "Conflict", 6]
    wrong = q2.verdict(counter_spent)
    assert wrong.status == "not yet" and wrong.sentence == (
        "4 of 9 outcomes are not what the store answers. The first rule your list breaks: a "
        "checkpoint and a fact are different records even under one key, and a refused write "
        "takes no number from the sequence.")
    expiry_missed = right[:7] + [5, 6]
    missed = q2.verdict(expiry_missed).sentence
    assert missed.startswith("2 of 9 outcomes are not") and "at or before now refuses every write" in missed
    # how many and the first rule, never a step's number or the store's answer
    for sentence in (wrong.sentence, missed):
        assert "step" not in sentence and "Conflict" not in sentence and "answered" not in sentence
    assert "predictions should be a list of 9" in q2.verdict(right[:5]).sentence
    assert "int revision or the string" in q2.verdict(right[:8] + ["5"]).sentence
    assert q2.verdict(None).status == "not attempted"


def test_create_fresh():
    def right(db, tenant, kind, key, value, now, ttl):
        identity(tenant, kind, key)
        db.execute("""DELETE FROM records
            WHERE tenant=? AND kind=? AND key=? AND expires<=?""",
            (tenant, kind, key, now))
        return put(db, tenant, kind, key, value, None, now, ttl)

    def no_purge(db, tenant, kind, key, value, now, ttl):
        return put(db, tenant, kind, key, value, None, now, ttl)

    def strict_boundary(db, tenant, kind, key, value, now, ttl):
        db.execute("DELETE FROM records WHERE tenant=? AND kind=? AND key=? AND expires<?",
                   (tenant, kind, key, now))
        return put(db, tenant, kind, key, value, None, now, ttl)

    def whole_tenant(db, tenant, kind, key, value, now, ttl):
        db.execute("DELETE FROM records WHERE tenant=? AND expires<=?", (tenant, now))
        return put(db, tenant, kind, key, value, None, now, ttl)

    def forgets_kind(db, tenant, kind, key, value, now, ttl):
        db.execute("DELETE FROM records WHERE tenant=? AND key=? AND expires<=?",
                   (tenant, key, now))
        return put(db, tenant, kind, key, value, None, now, ttl)

    def even_live(db, tenant, kind, key, value, now, ttl):
        db.execute("DELETE FROM records WHERE tenant=? AND kind=? AND key=?", (tenant, kind, key))
        return put(db, tenant, kind, key, value, None, now, ttl)

    def silent_on_live(db, tenant, kind, key, value, now, ttl):
        try:
            return right(db, tenant, kind, key, value, now, ttl)
        except Conflict:
            return None

    def stub(db, tenant, kind, key, value, now, ttl):
        raise NotImplementedError()

    assert q3.verdict(right).correct
    assert "equals now=110" in q3.verdict(no_purge).sentence
    assert "equals now=110" in q3.verdict(strict_boundary).sentence
    assert "orchard's checkpoint 'report'" in q3.verdict(whole_tenant).sentence
    assert "orchard's checkpoint 'report'" in q3.verdict(forgets_kind).sentence
    assert "changed a live row" in q3.verdict(even_live).sentence
    assert "must refuse with Conflict" in q3.verdict(silent_on_live).sentence
    assert q3.verdict(stub).status == "not attempted"
    assert q3.verdict(None).status == "not attempted"


def test_praise_is_one_line(capsys):
    q2.check([1, "Conflict", 2, 3, "Conflict", "Conflict", 4, "Conflict", 5])
    out = capsys.readouterr().out
    assert out.startswith("Exercise 3.2: correct: ") and out.count("\n") == 1
