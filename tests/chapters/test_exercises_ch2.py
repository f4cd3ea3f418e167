"""Chapter 2 checks: a right answer, typical wrong answers, and no answer."""
from workbook.teaching.exercises.ch2 import q1, q2, q3
from workbook.records import get


def test_last_visible():
    def right(db, tenant, kind, key, start):
        record = get(db, tenant, kind, key, start)
        if record is None:
            return None
        return record["expires"] - 1

    def probing(db, tenant, kind, key, start):
        if get(db, tenant, kind, key, start) is None:
            return None
        now = start
        while get(db, tenant, kind, key, now + 1) is not None:
            now += 1
        return now

    def the_deadline(db, tenant, kind, key, start):  # off by one: expires is already hidden
        record = get(db, tenant, kind, key, start)
        return None if record is None else record["expires"]

    def any_row(db, tenant, kind, key, start):  # reads the first row, whoever owns it
        expires = db.execute("SELECT expires FROM records").fetchone()[0]
        return expires - 1 if expires > start else None

    def never_none(db, tenant, kind, key, start):
        return db.execute("SELECT expires FROM records WHERE tenant=? AND kind=? AND key=?",
                          (tenant, kind, key)).fetchone()[0] - 1

    def extends(db, tenant, kind, key, start):  # writes while reading
        db.execute("UPDATE records SET expires=expires+1")
        return right(db, tenant, kind, key, start)

    def stub(db, tenant, kind, key, start):
        raise NotImplementedError

    assert q1.verdict(right).correct
    assert q1.verdict(probing).correct
    wrong = q1.verdict(the_deadline)
    assert wrong.status == "not yet" and "get at 110 already returns None: the deadline is exclusive" in wrong.sentence
    assert "get at 159 already returns None: 159 is past" in q1.verdict(any_row).sentence
    assert "already returns None, so the answer is None" in q1.verdict(never_none).sentence
    assert "changed the records table" in q1.verdict(extends).sentence
    assert "got bool" in q1.verdict(lambda *args: True).sentence
    assert "beyond the largest tick" in q1.verdict(lambda *args: 10**11).sentence
    assert q1.verdict(stub).status == "not attempted"
    assert q1.verdict(None).status == "not attempted"
    assert q1.verdict(109).status == "not yet"


def test_read_state():
    def right(db, tenant, kind, key, now):
        if get(db, tenant, kind, key, now) is not None:
            return "visible"
        present = db.execute("SELECT 1 FROM records WHERE tenant=? AND kind=? AND key=?",
                             (tenant, kind, key)).fetchone()
        return "expired" if present is not None else "absent"

    def get_only(db, tenant, kind, key, now):
        return "absent" if get(db, tenant, kind, key, now) is None else "visible"

    def inclusive(db, tenant, kind, key, now):  # compares the deadline itself, with >=
        found = db.execute("SELECT expires FROM records WHERE tenant=? AND kind=? AND key=?",
                           (tenant, kind, key)).fetchone()
        if found is None:
            return "absent"
        return "visible" if found[0] >= now else "expired"

    def ignores_tenant(db, tenant, kind, key, now):
        if get(db, tenant, kind, key, now) is not None:
            return "visible"
        present = db.execute("SELECT 1 FROM records WHERE kind=? AND key=?", (kind, key)).fetchone()
        return "expired" if present is not None else "absent"

    def stub(db, tenant, kind, key, now):
        raise NotImplementedError

    assert q2.verdict(right).correct
    wrong = q2.verdict(get_only)
    assert wrong.status == "not yet"
    assert wrong.sentence == ("read_state(db, 'orchard', 'fact', 'tea', 110) gave 'absent', but get "
                              "returns None and the table holds its row (expires 110), so the "
                              "answer is 'expired'.")
    assert "gave 'visible'" in q2.verdict(inclusive).sentence
    assert "'harbour', 'fact', 'tea'" in q2.verdict(ignores_tenant).sentence
    assert "got bool" in q2.verdict(lambda *args: True).sentence
    assert q2.verdict(stub).status == "not attempted"
    assert q2.verdict(None).status == "not attempted"


def test_prediction():
    assert q3.verdict([500, None, 105, None, None]).correct
    as_stored = q3.verdict([105, None, 105, None, None])
    assert as_stored.status == "not yet" and as_stored.sentence == (
        "1 of 5 entries is not what the sequence prints. The first rule your list breaks: a "
        "record get returns is a new dict of your own: a change you make to it shows in that "
        "dict, and nowhere else.")
    inclusive = q3.verdict([500, 105, 105, None, None])
    assert inclusive.sentence.startswith("1 of 5 entries is not")
    assert "the deadline is exclusive" in inclusive.sentence
    two_wrong = q3.verdict([500, 105, None, None, None])
    assert two_wrong.sentence.startswith("2 of 5 entries are not")
    assert "the deadline is exclusive" in two_wrong.sentence  # the first rule broken, b's
    # a wrong prediction learns how many and which rule, never a true value
    for wrong in (as_stored, inclusive, two_wrong, q3.verdict([1, 2, 3, 4, 5])):
        assert "500" not in wrong.sentence and "105" not in wrong.sentence, wrong.sentence
    assert "an int or None; the entry for b is str" in q3.verdict([500, "none", 105, None, None]).sentence
    assert "five entries" in q3.verdict([500, None]).sentence
    assert q3.verdict(None).status == "not attempted"


def test_read_state_must_bind_its_values():
    def answer_with(select):
        def read_state(db, tenant, kind, key, now):
            if get(db, tenant, kind, key, now) is not None:
                return "visible"
            return "expired" if select(db, tenant, kind, key) is not None else "absent"
        return read_state

    f_string = answer_with(lambda db, tenant, kind, key: db.execute(
        f"SELECT 1 FROM records WHERE tenant='{tenant}' AND kind='{kind}' AND key='{key}'").fetchone())
    percent = answer_with(lambda db, tenant, kind, key: db.cursor().execute(
        "SELECT 1 FROM records WHERE tenant=? AND kind=? AND key='%s'" % key, (tenant, kind)).fetchone())
    named = answer_with(lambda db, tenant, kind, key: db.execute(
        "SELECT 1 FROM records WHERE tenant=:t AND kind=:k AND key=:n",
        {"t": tenant, "k": kind, "n": key}).fetchone())
    pasted = q2.verdict(f_string)
    assert pasted.status == "not yet"
    assert pasted.sentence == ("your SQL text contains the value 'orchard' itself; pass every value "
                               "as a ? placeholder with a tuple of parameters, as get does.")
    assert "contains the value 'tea' itself" in q2.verdict(percent).sentence
    assert q2.verdict(named).correct  # named placeholders bind values too


def test_compare_shows_the_run_to_a_right_prediction_or_when_asked(capsys):
    q3.compare(None)
    assert "make your prediction first" in capsys.readouterr().out
    q3.compare([500, None, 105, None, None])
    assert capsys.readouterr().out.splitlines() == [
        "you predicted:      [500, None, 105, None, None]",
        "the sequence shows: [500, None, 105, None, None]"]
    # a wrong prediction: how many entries and the first rule, then how to ask for the run
    q3.compare([1, 2, 3, 4, 5])
    said = capsys.readouterr().out
    assert said.startswith("Exercise 2.3: not yet: 5 of 5 entries are not what the sequence "
                           "prints.") and "q3.compare(your prediction, reveal=True)" in said
    assert "500" not in said and "105" not in said and "the sequence shows" not in said
    q3.compare([1, 2, 3, 4, 5], reveal=True)
    assert capsys.readouterr().out.splitlines() == [
        "you predicted:      [1, 2, 3, 4, 5]",
        "the sequence shows: [500, None, 105, None, None]"]
    q3.compare([500, None])  # the wrong form: said as check says it, and nothing run
    assert capsys.readouterr().out == (
        "Exercise 2.3: predicted should be a list of five entries, one for each of a to e.\n")
