"""What the judge lends a sandbox, tried here without one: the store a chapter-6 test is given
opens only databases of its own, and the rows a lent connection sends back are bounded before
they are built. (tests/grader/red_team/ tries the same through make grade, in sandboxes.)"""
import os
import sqlite3
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
from course.grader.judge import lending
from workbook.teaching.exercises.checks import ch6


def test_the_lent_store_opens_a_database_of_its_own_whatever_path_it_is_given(tmp_path):
    folder, outside = tmp_path / "check", tmp_path / "grader.db"
    folder.mkdir()
    opened = []
    connect = ch6.connect_within(str(folder), opened)
    db = connect(str(outside))
    db.execute("INSERT INTO records VALUES ('t', 'fact', 'k', 1, 1, 'x')")
    db.commit()
    assert not outside.exists() and len(os.listdir(folder)) == 1
    again = connect(str(outside))   # the same path names the same database again
    assert again.execute("SELECT count(*) FROM records").fetchone() == (1,)
    connect(), connect()
    with pytest.raises(ValueError, match="at most 4 databases"):
        connect()
    for each in opened:
        each.close()


def test_a_lent_execute_sends_back_at_most_a_few_mib():
    db = sqlite3.connect(":memory:")
    cursor = db.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 40) "
                        "SELECT replace(zeroblob(250000), x'00', char(128512)) FROM c")
    with pytest.raises(ValueError, match="returns at most"):
        lending.JudgeEncoder(None).rows(cursor)
    small = db.execute("SELECT 'a', x'00' UNION ALL SELECT 'b', x'01'")
    assert lending.JudgeEncoder(None).rows(small)["rows"] != []


def test_a_lent_connection_has_no_process_wide_heap_cap():
    db = sqlite3.connect(":memory:")
    before = db.execute("PRAGMA hard_heap_limit").fetchone()
    lending.guard(db)
    db.set_authorizer(None)  # the guard refuses PRAGMA to the sandbox; this test asks as the judge
    assert db.execute("PRAGMA hard_heap_limit").fetchone() == before
    assert db.execute("PRAGMA max_page_count").fetchone() == (lending.MOST_PAGES,)
