"""Chapter 4 checks: a right answer, typical wrong answers, and no answer."""
from workbook.deletion import forget, purge
from workbook.teaching.exercises.ch4 import q1, q2, q3
from workbook.records import get


def stub(*args):
    raise NotImplementedError


def not_yet(verdict, words):
    assert verdict.status == "not yet", verdict
    assert words in verdict.sentence, verdict.sentence


# Exercise 4.1

def purge_job(db, tenants, now):
    report = []
    for tenant in tenants:
        count = purge(db, tenant, now)
        report.append({"operation": "purge", "time": now, "tenant": tenant, "count": count})
    return report


def test_purge_job_right():
    verdict = q1.verdict(purge_job)
    assert verdict.correct, verdict
    assert "orchard 2, harbour 1, meadow 0" in verdict.sentence


def test_purge_job_that_copies_the_text_into_the_report():
    def helpful(db, tenants, now):
        report = []
        for tenant in tenants:
            texts = [row[0] for row in db.execute(
                "SELECT body FROM records WHERE tenant=? AND expires<=?", (tenant, now))]
            count = purge(db, tenant, now)
            report.append({"operation": "purge", "time": now, "tenant": tenant,
                           "count": count, "removed": texts})
        return report

    not_yet(q1.verdict(helpful), "one more copy of what you deleted")


def test_purge_job_without_the_tenant_condition():
    def everyone(db, tenants, now):
        count = db.execute("DELETE FROM records WHERE expires<=?", (now,)).rowcount
        return [{"operation": "purge", "time": now, "tenant": t, "count": count} for t in tenants]

    not_yet(q1.verdict(everyone), "quarry was not on the list")


def test_purge_job_that_misses_the_boundary():
    def strict(db, tenants, now):
        return [{"operation": "purge", "time": now, "tenant": t,
                 "count": db.execute("DELETE FROM records WHERE tenant=? AND expires<?",
                                     (t, now)).rowcount} for t in tenants]

    not_yet(q1.verdict(strict), "purge removes the boundary too")


def test_purge_job_with_a_poor_report():
    def skips_empty(db, tenants, now):
        report = purge_job(db, tenants, now)
        return [entry for entry in report if entry["count"]]

    not_yet(q1.verdict(skips_empty), "an empty tenant too")

    def no_time(db, tenants, now):
        return [{k: v for k, v in e.items() if k != "time"} for e in purge_job(db, tenants, now)]

    not_yet(q1.verdict(no_time), "has no time")

    def counts_everything(db, tenants, now):
        report = []
        for tenant in tenants:
            total = db.execute("SELECT count(*) FROM records WHERE tenant=?", (tenant,)).fetchone()[0]
            purge(db, tenant, now)
            report.append({"operation": "purge", "time": now, "tenant": tenant, "count": total})
        return report

    not_yet(q1.verdict(counts_everything), "use the number purge returns")


def test_purge_job_not_attempted():
    assert q1.verdict(None).status == "not attempted"
    assert q1.verdict(stub).status == "not attempted"
    assert q1.verdict("purge").status == "not yet"


# Exercise 4.2

def forget_current(db, tenant, kind, key, now):
    record = get(db, tenant, kind, key, now)
    if record is None:
        return False
    return forget(db, tenant, kind, key, record["revision"])


def test_forget_current_right():
    verdict = q2.verdict(forget_current)
    assert verdict.correct, verdict
    assert "revision 2" in verdict.sentence


def test_forget_current_in_a_transaction_is_right_too():
    def locked(db, tenant, kind, key, now):
        db.execute("BEGIN IMMEDIATE")
        try:
            result = forget_current(db, tenant, kind, key, now)
        finally:
            db.execute("COMMIT")
        return result

    verdict = q2.verdict(locked)
    assert verdict.correct, verdict
    assert "kept the other worker out" in verdict.sentence


def test_forget_current_that_deletes_without_the_revision():
    def blunt(db, tenant, kind, key, now):
        if get(db, tenant, kind, key, now) is None:
            return False
        return db.execute("DELETE FROM records WHERE tenant=? AND kind=? AND key=?",
                          (tenant, kind, key)).rowcount == 1

    not_yet(q2.verdict(blunt), "wrote revision 2 after your read, and your function deleted it")


def test_forget_current_that_retries():
    def stubborn(db, tenant, kind, key, now):
        while True:
            record = get(db, tenant, kind, key, now)
            if record is None:
                return False
            if forget(db, tenant, kind, key, record["revision"]):
                return True

    not_yet(q2.verdict(stubborn), "your function deleted it")


def test_forget_current_that_claims_success():
    def boastful(db, tenant, kind, key, now):
        forget_current(db, tenant, kind, key, now)
        return True

    not_yet(q2.verdict(boastful), "never written, forget_current should return False")


def test_forget_current_without_a_missing_case():
    def careless(db, tenant, kind, key, now):
        return forget(db, tenant, kind, key, get(db, tenant, kind, key, now)["revision"])

    verdict = q2.verdict(careless)
    not_yet(verdict, "TypeError")


def test_forget_current_without_the_tenant():
    def tenantless(db, tenant, kind, key, now):
        record = get(db, tenant, kind, key, now)
        if record is None:
            return False
        db.execute("DELETE FROM records WHERE kind=? AND key=?", (kind, key))
        return True

    not_yet(q2.verdict(tenantless), "also removed harbour's 'gate'")


def test_forget_current_not_attempted():
    assert q2.verdict(None).status == "not attempted"
    assert q2.verdict(stub).status == "not attempted"


# Exercise 4.3

RIGHT = {("harbour", "fact", "a"), ("orchard", "fact", "b"), ("orchard", "fact", "c")}


def test_prediction_right():
    assert q3.verdict(RIGHT).correct


def test_prediction_wrong_at_the_boundary():
    not_yet(q3.verdict(RIGHT | {("orchard", "fact", "a")}),
            "1 row is wrong (1 you list is not present). The first rule your set breaks: purge "
            "removes each row of its tenant whose deadline, the time + ttl of its last put, is at "
            "or before its now")


def test_prediction_that_purges_another_tenant():
    not_yet(q3.verdict(RIGHT - {("harbour", "fact", "a")}),
            "(1 present is not in your set). The first rule your set breaks: purge('orchard', "
            "120) removes rows of orchard only")


def test_prediction_that_misses_the_rewrite():
    not_yet(q3.verdict(RIGHT - {("orchard", "fact", "c")}), "a rewrite moves it")


def test_prediction_that_keeps_a_forgotten_row():
    not_yet(q3.verdict(RIGHT | {("harbour", "checkpoint", "b")}), "forget removes a row at once")


def test_a_wrong_prediction_learns_how_many_and_a_rule_never_which_rows():
    verdict = q3.verdict({("orchard", "fact", "a"), ("harbour", "checkpoint", "b")})
    not_yet(verdict, "5 rows are wrong (2 you list are not present and 3 present are not in your set)")
    for row in ("'a'", "'b'", "'c'", "harbour fact", "orchard fact", "remains"):
        assert row not in verdict.sentence, row


def test_prediction_not_attempted_or_malformed():
    assert q3.verdict(None).status == "not attempted"
    not_yet(q3.verdict([("orchard", "fact", "b")]), "a set of (tenant, kind, key) tuples")
