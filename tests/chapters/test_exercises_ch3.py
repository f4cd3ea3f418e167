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


RIGHT = [1, "Conflict", 2, 3, "Conflict", "Conflict", 4, "Conflict", 5]


def test_predictions():
    assert q2.verdict(RIGHT).correct
    assert q2.verdict([Conflict if p == "Conflict" else p for p in RIGHT]).correct
    # checkpoint and fact kept apart, but the refused write counted: only the numbering is
    # named, not the rule that a checkpoint and a fact are different records, which it kept
    counter_spent = [1, "Conflict", 3, 4, "Conflict", "Conflict", 5, "Conflict", 6]
    wrong = q2.verdict(counter_spent)
    assert wrong.status == "not yet" and wrong.sentence == (
        "your list is not what the store answers. The first rule it breaks: a fresh store hands "
        "out revisions from 1, each successful put takes the next number of the one sequence "
        "every record of every tenant shares, and a refused put takes none.")
    one_record = q2.verdict([1, "Conflict", "Conflict", 2, "Conflict", "Conflict", 3, "Conflict", 4])
    assert "a fact and a checkpoint under one key are two records" in one_record.sentence
    expiry_missed = RIGHT[:7] + [5, 6]
    missed = q2.verdict(expiry_missed).sentence
    assert "from that tick on it refuses every put" in missed
    # the first rule broken: never a step's number, how many are wrong, or the store's answer
    for sentence in (wrong.sentence, one_record.sentence, missed):
        assert not re.search(r"step|\d+ of 9|Conflict|answered", sentence), sentence
    assert "predictions should be a list of 9" in q2.verdict(RIGHT[:5]).sentence
    assert "int revision or the string" in q2.verdict(RIGHT[:8] + ["5"]).sentence
    assert q2.verdict(None).status == "not attempted"


def test_a_misspelt_conflict_is_shown_as_written():
    # the learner wrote a string, so "got str" read as nonsense: the reply shows the string
    said = q2.verdict(RIGHT[:1] + ["conflict"] + RIGHT[2:]).sentence
    assert said == ("put 2: write each outcome as an int revision or the string 'Conflict' "
                    "(spelt so), got 'conflict'.")
    assert "got float" in q2.verdict(RIGHT[:1] + [2.0] + RIGHT[2:]).sentence


def test_compare_shows_each_put_beside_the_prediction(capsys):
    q2.compare(RIGHT)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["put", "you", "predicted", "the", "store", "answered"]
    assert lines[1].split() == ["1", "1", "1"] and lines[2].split() == ["2", "Conflict", "Conflict"]
    assert len(lines) == 10 and "differs" not in "".join(lines)
    wrong = RIGHT[:2] + [3] + RIGHT[3:]
    q2.compare(wrong)  # a wrong prediction: the rule, and how to ask for the run; no run
    said = capsys.readouterr().out
    assert said.startswith("Exercise 3.2: not yet: your list is not") and "reveal=True" in said
    assert "answered" not in said
    q2.compare(wrong, reveal=True)
    lines = capsys.readouterr().out.splitlines()
    assert lines[3].split() == ["3", "3", "2", "<-", "differs"]


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
