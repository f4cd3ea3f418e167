"""The PostgreSQL appendix's checks: each worked answer passes, typical near-misses do not."""
import pytest

from workbook.teaching.exercises import answers
from workbook.teaching.exercises.postgres import practise_on, q1, q2, q3


@pytest.fixture(scope="module", autouse=True)
def server(postgres_server):
    practise_on(postgres_server)
    return postgres_server


def solution(exercise):
    namespace = {"____": None}
    exec(answers()[exercise.number], namespace)
    return namespace


def test_each_worked_answer_is_correct():
    assert q1.verdict(solution(q1)["next_ticket"]).correct
    assert q2.verdict(solution(q2)["policy"]).correct
    assert q3.verdict(solution(q3)["add_item"]).correct


def test_a_plain_read_before_the_update_hands_out_a_ticket_twice():
    def read_then_write(db):
        with db.transaction():
            value = db.execute("SELECT value FROM tickets").fetchone()[0]
            db.execute("UPDATE tickets SET value = %s", (value + 1,))
        return value + 1
    verdict = q1.verdict(read_then_write)
    assert verdict.status == "not yet" and "both got ticket 2" in verdict.sentence


def test_a_database_error_in_an_answer_is_one_line_without_the_servers_hint():
    verdict = q1.verdict(lambda db: db.execute("SELECT nosuch FROM tickets").fetchone()[0])
    assert verdict.status == "not yet" and "\n" not in verdict.sentence
    assert verdict.sentence == 'running your answer raised UndefinedColumn: column "nosuch" does not exist.'


def test_an_update_that_adds_one_in_place_is_correct_too():
    def in_place(db):
        return db.execute("UPDATE tickets SET value = value + 1 RETURNING value").fetchone()[0]
    assert q1.verdict(in_place).correct


@pytest.mark.parametrize("policy, says", [
    ("CREATE POLICY p ON notes USING (tenant = current_setting('workbook.tenant'))",
     "raised an error"),
    ("CREATE POLICY p ON notes FOR SELECT USING (tenant = current_setting('workbook.tenant', true))",
     "FOR SELECT covers reading only"),
    ("CREATE POLICY p ON notes USING (true)", "sees 6 notes"),
    ("CREATE POLICY p ON notes USING (tenant = current_setting('workbook.tenant', true))",
     "the setting is '' rather than NULL"),
    ("CREATE POLICY p ON notes USING (tenant = NULLIF(current_setting('workbook.tenant', true), '')) "
     "WITH CHECK (true)", "could write a note for harbour"),
    ("CREATE POLICY p ON nowhere USING (true)", "the server refused your statement"),
    ("CREATE POLICY p ON notes USING (tenant = current_setting('workbook.tenant', true)); DROP TABLE notes",
     "more than one statement"),
    ("DROP TABLE notes; CREATE POLICY p ON notes USING (true)", "one CREATE POLICY statement"),
])
def test_policies_that_leak_or_fail_are_named(policy, says):
    verdict = q2.verdict(policy)
    assert verdict.status == "not yet" and says in verdict.sentence, verdict


def test_letting_the_conflict_out_or_writing_over_the_rival_is_named():
    def no_retry(store, db, item, now):
        record = store.get(db, "orchard", "checkpoint", "run-a", now)
        value = record["value"]
        value["items"].append(item)
        store.put(db, "orchard", "checkpoint", "run-a", value, record["revision"], now, 60)
    assert "let the Conflict out" in q3.verdict(no_retry).sentence

    def swallows(store, db, item, now):
        try:
            no_retry(store, db, item, now)
        except store.Conflict:
            pass
    assert "the items are ['rival']" in q3.verdict(swallows).sentence


def test_checks_leave_no_scratch_schema_behind(server):
    from workbook import postgres
    with postgres.psycopg.connect(server.conninfo()) as admin:
        left = admin.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'exercise%'"
                             ).fetchall()
        roles = admin.execute("SELECT rolname FROM pg_roles WHERE rolname = 'exercise_store'"
                              ).fetchall()
    assert left == [] and roles == []


def test_the_checks_still_answer_after_the_pages_server_is_gone(postgres_server):
    """Run All ends by stopping the page's server; a learner who then scrolls back to an
    exercise still gets a verdict, from a server the checks start for themselves."""
    from workbook.teaching.exercises import postgres as exercises
    from workbook.teaching.postgres_server import TemporaryServer
    with TemporaryServer() as gone:
        practise_on(gone)
    try:
        assert q2.verdict(solution(q2)["policy"]).correct
        assert exercises.SERVER["own"] is not gone and exercises.answering(exercises.SERVER["own"])
    finally:
        practise_on(postgres_server)


def test_starting_the_checks_own_server_is_not_counted_in_the_time_limit(postgres_server,
                                                                        monkeypatch):
    """Starting a server takes seconds, many on a busy machine: the check's limit is for the
    learner's code alone, so the server is there before the limit starts counting."""
    import workbook.teaching.exercises as checks
    from workbook.teaching.exercises import postgres as exercises

    def start_one():        # as the_server starts the checks' own, without the wait
        exercises.SERVER.setdefault("own", postgres_server)
        return postgres_server
    monkeypatch.setattr(exercises, "SERVER", {"given": None})
    monkeypatch.setattr(exercises, "the_server", start_one)
    ready_when_the_limit_starts = []
    limited = checks.within

    def within(seconds, function, *arguments):
        ready_when_the_limit_starts.append("own" in exercises.SERVER)
        return limited(seconds, function, *arguments)
    monkeypatch.setattr(checks, "within", within)
    assert q2.verdict(solution(q2)["policy"]).correct
    assert ready_when_the_limit_starts == [True] and exercises.SERVER["own"] is postgres_server
