"""Chapter 5 checks: a right answer, typical wrong answers, and no answer."""
from workbook.teaching.exercises.checks.ch5 import run_worker
from workbook.teaching.exercises.ch5 import PREDICT, q1, q2, q3, table
from workbook.store import get, put
from workbook.teaching.timeline import Clock, Get, Purge, Put, fact


def stub(*args):
    raise NotImplementedError


def not_yet(verdict, words):
    assert verdict.status == "not yet", verdict
    assert words in verdict.sentence, verdict.sentence


# Exercise 5.1

def test_prediction_right():
    assert q1.verdict([(100, 109), (111, 113)]).correct
    assert q1.verdict([[100, 109], [111, 113]]).correct


def test_prediction_that_ignores_the_rewrite():
    not_yet(q1.verdict([(100, 105), (111, 113)]), "(did a later put set a new deadline?)")


def test_prediction_with_the_last_visible_tick_as_end():
    not_yet(q1.verdict([(100, 108), (111, 113)]), "(you wrote the last visible tick")


def test_prediction_that_ignores_the_forget():
    not_yet(q1.verdict([(100, 109), (111, 115)]), "forget removes the row")


def test_prediction_with_the_wrong_number_or_shape():
    not_yet(q1.verdict([(100, 109)]), "2 separate visible intervals")
    not_yet(q1.verdict([(100.0, 109), (111, 113)]), "two ints")
    not_yet(q1.verdict("100-109"), "list of (start, end) tuples")
    assert q1.verdict(None).status == "not attempted"


def test_prediction_table_never_shows_a_value():
    shown = table(PREDICT).data.to_string()
    assert "expected current ttl 5" in shown and fact()["text"] not in shown


def test_prediction_table_reads_left_aligned_without_an_index():
    # issue 21, item 8: the default DataFrame output right-aligned the operations
    html = table(PREDICT).to_html()
    assert "text-align: left" in html and "text-align: right" not in html
    assert "<th class=\"blank" not in html and ">put orchard / fact / note expected None ttl 5<" in html


# Exercise 5.2

GAP = ("orchard", "fact", "gap")


def test_gap_right():
    right = [Put(100, *GAP, fact(), expected=None, ttl=5), Get(104, *GAP), Get(105, *GAP),
             Purge(108, "orchard")]
    verdict = q2.verdict(right)
    assert verdict.correct and "from 105" in verdict.sentence, verdict
    assert q2.verdict([Put(100, *GAP, fact(), expected=None, ttl=5), Purge(108, "orchard")]).correct


def test_gap_off_by_one():
    not_yet(q2.verdict([Put(100, *GAP, fact(), expected=None, ttl=5), Purge(109, "orchard")]),
            "4 ticks, not 3")


def test_gap_purged_at_the_deadline_is_never_hidden():
    not_yet(q2.verdict([Put(100, *GAP, fact(), expected=None, ttl=5), Purge(105, "orchard")]),
            "never hidden while present")


def test_gap_purged_too_early_or_in_another_tenant():
    not_yet(q2.verdict([Put(100, *GAP, fact(), expected=None, ttl=5), Purge(104, "orchard"),
                        Clock(110)]), "no purge removed it")
    not_yet(q2.verdict([Put(100, *GAP, fact(), expected=None, ttl=5), Purge(108, "harbour")]),
            "no purge removed it")


def test_gap_without_purge_or_operations():
    not_yet(q2.verdict([Put(100, *GAP, fact(), expected=None, ttl=5), Clock(108)]), "has no Purge")
    not_yet(q2.verdict([("put", 100), ("purge", 108)]), "observe refused the scenario")
    not_yet(q2.verdict("put then purge"), "a list of operations")
    assert q2.verdict(None).status == "not attempted"


# Exercise 5.3

NOTIFY = ("orchard", "checkpoint", "notify")


def send_once(db, mailer, now):
    record = get(db, *NOTIFY, now)
    if record is None:
        raise LookupError("checkpoint absent or expired")
    value = record["value"]
    if value["step"] > 0:
        return record["revision"]
    value["step"] = 1
    value["items"].append("send-intended")
    revision = put(db, *NOTIFY, value, record["revision"], now, 60)
    mailer.send("weekly-summary")
    value["step"] = 2
    value["items"].append("sent")
    return put(db, *NOTIFY, value, revision, now, 60)


def send_then_save(db, mailer, now):
    record = get(db, *NOTIFY, now)
    value = record["value"]
    if value["step"] == 2:
        return record["revision"]
    mailer.send("weekly-summary")
    value["step"] = 2
    value["items"].append("sent")
    return put(db, *NOTIFY, value, record["revision"], now, 60)


def test_send_once_right():
    verdict = q3.verdict(send_once)
    assert verdict.correct, verdict
    assert "4 crash points" in verdict.sentence and "at most once" in verdict.sentence


def test_the_right_answer_sends_at_most_once_at_every_crash_point():
    events, sent, step = run_worker(send_once)
    assert (events, sent, step) == (["just after commit 1", "just before the send",
                                     "just after the send", "just after commit 2"], 1, 2)
    outcomes = [run_worker(send_once, crash_at)[1:] for crash_at in range(len(events))]
    assert outcomes == [(0, 1), (0, 1), (1, 1), (1, 2)]


def test_send_then_save_sends_twice():
    not_yet(q3.verdict(send_then_save), "called 2 times for one message, because nothing was committed")
    assert run_worker(send_then_save, 1)[1] == 2  # the crash just after the send


def test_resending_on_a_found_intent():
    def resend(db, mailer, now):
        record = get(db, *NOTIFY, now)
        value, revision = record["value"], record["revision"]
        if value["step"] == 2:
            return revision
        if value["step"] == 0:
            value["step"] = 1
            value["items"].append("send-intended")
            revision = put(db, *NOTIFY, value, revision, now, 60)
        mailer.send("weekly-summary")
        value["step"] = 2
        value["items"].append("sent")
        return put(db, *NOTIFY, value, revision, now, 60)

    not_yet(q3.verdict(resend), "because the retry found the intent and sent anyway")


def test_claiming_sent_without_sending():
    def claim(db, mailer, now):
        record = get(db, *NOTIFY, now)
        value = record["value"]
        if value["step"] == 1:
            value["step"] = 2
            value["items"].append("sent")
            return put(db, *NOTIFY, value, record["revision"], now, 60)
        return send_once(db, mailer, now)

    def save_then_send(db, mailer, now):
        record = get(db, *NOTIFY, now)
        value = record["value"]
        if value["step"] == 2:
            return record["revision"]
        value["step"] = 2
        value["items"].append("sent")
        revision = put(db, *NOTIFY, value, record["revision"], now, 60)
        mailer.send("weekly-summary")
        return revision

    not_yet(q3.verdict(claim), "nothing was sent, yet the checkpoint says step 2")
    not_yet(q3.verdict(save_then_send), "after a crash just after commit 1, nothing was sent")


def test_catching_the_crash_or_never_sending():
    def catcher(db, mailer, now):
        try:
            return send_once(db, mailer, now)
        except BaseException:
            return None

    not_yet(q3.verdict(catcher), "caught the simulated crash")
    not_yet(q3.verdict(lambda db, mailer, now: None), "called 0 times")
    assert q3.verdict(stub).status == "not attempted"
    assert q3.verdict(None).status == "not attempted"
    assert q3.verdict("send_once").status == "not yet"
