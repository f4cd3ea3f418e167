import json
from pathlib import Path
import sqlite3
from tempfile import TemporaryDirectory
import unittest

from workbook.demo import advance
from workbook.store import Conflict, connect, forget, get, purge, put


def fact(text="Fictional preference"):
    return {"schema": 1, "text": text, "source": "note-1", "reviewed": False}


class StoreTests(unittest.TestCase):
    def setUp(self):
        self.db = connect()
        self.addCleanup(self.db.close)

    def add(self, tenant="orchard", key="a", now=100, ttl=10):
        return put(self.db, tenant, "fact", key, fact(), None, now, ttl)

    def test_tenants_and_namespaces(self):
        a = self.add()
        b = self.add("harbour")
        self.assertIsNone(get(self.db, "third", "fact", "a", 100))
        checkpoint = {"schema": 1, "step": 0, "items": []}
        put(self.db, "orchard", "checkpoint", "a", checkpoint, None, 100, 10)
        self.assertFalse(forget(self.db, "harbour", "fact", "a", a))
        self.assertTrue(forget(self.db, "orchard", "fact", "a", a))
        record = get(self.db, "harbour", "fact", "a", 100)
        self.assertEqual(record["revision"], b)
        self.assertIsNotNone(get(self.db, "orchard", "checkpoint", "a", 100))

    def test_expiry_read_does_not_extend(self):
        self.add()
        record = get(self.db, "orchard", "fact", "a", 109)
        self.assertEqual(record["expires"], 110)
        self.assertIsNone(get(self.db, "orchard", "fact", "a", 110))
        with self.assertRaises(Conflict):
            put(self.db, "orchard", "fact", "a", fact(), None, 110, 10)

    def test_purge_tenant_and_boundary(self):
        self.add()
        self.add("harbour")
        self.add(key="b", now=101)
        self.assertEqual(purge(self.db, "orchard", 110), 1)
        rows = self.db.execute(
            "SELECT tenant, key FROM records ORDER BY tenant").fetchall()
        self.assertEqual(rows, [("harbour", "a"), ("orchard", "b")])
        self.assertEqual(purge(self.db, "orchard", 110), 0)

    def test_compare_and_swap(self):
        first = self.add()
        second = put(self.db, "orchard", "fact", "a",
                     fact("changed"), first, 101, 20)
        self.assertGreater(second, first)
        for stale in (None, first):
            with self.assertRaises(Conflict):
                put(self.db, "orchard", "fact", "a", fact(), stale, 102, 20)
        record = get(self.db, "orchard", "fact", "a", 102)
        self.assertEqual(record["value"]["text"], "changed")

    def test_delete_recreate_does_not_reuse_revision(self):
        first = self.add()
        self.assertTrue(forget(self.db, "orchard", "fact", "a", first))
        self.assertFalse(forget(self.db, "orchard", "fact", "a", first))
        second = self.add()
        self.assertGreater(second, first)
        self.assertFalse(forget(self.db, "orchard", "fact", "a", first))
        with self.assertRaises(Conflict):
            put(self.db, "orchard", "fact", "a", fact(), first, 101, 10)

    def test_validation_and_quoted_data(self):
        for changes in ({"schema": True}, {"extra": 1}, {"reviewed": "yes"},
                        {"text": ""}, {"source": "x"*257},
                        {"text": "\u2603"*256, "source": "\u2603"*256}):
            with self.assertRaises(ValueError):
                put(self.db, "orchard", "fact", "a",
                    fact() | changes, None, 100, 10)
        for tenant in ("", "../other", "x' OR 1=1 --", None):
            with self.assertRaises(ValueError):
                self.add(tenant)
        for ttl in (True, 0, 86401):
            with self.assertRaises(ValueError):
                self.add(ttl=ttl)
        quoted = fact("Don't obey 'DELETE FROM records'; this is text.")
        put(self.db, "orchard", "fact", "quote", quoted, None, 100, 10)
        record = get(self.db, "orchard", "fact", "quote", 101)
        self.assertEqual(record["value"], quoted)

    def test_invalid_stored_payload_rejected(self):
        self.add()
        for body in ("{", json.dumps(fact() | {"schema": 2}), " "*2049):
            self.db.execute("UPDATE records SET body=?", (body,))
            with self.assertRaises(ValueError):
                get(self.db, "orchard", "fact", "a", 101)

    def test_failed_write_rolls_back_counter_and_row(self):
        first = self.add()
        self.db.execute("""CREATE TRIGGER fail_update BEFORE UPDATE ON records
            BEGIN SELECT RAISE(ABORT, 'simulated failure'); END""")
        with self.assertRaises(sqlite3.IntegrityError):
            put(self.db, "orchard", "fact", "a",
                fact("changed"), first, 101, 10)
        self.assertFalse(self.db.in_transaction)
        counter = self.db.execute("SELECT value FROM sequence").fetchone()[0]
        self.assertEqual(counter, first)
        record = get(self.db, "orchard", "fact", "a", 101)
        self.assertEqual(record["value"], fact())

    def test_two_connections_and_reopen(self):
        with TemporaryDirectory() as folder:
            path = Path(folder) / "test.db"
            a, b = connect(path), connect(path)
            try:
                rev = put(a, "orchard", "fact", "a", fact(), None, 100, 10)
                seen = get(b, "orchard", "fact", "a", 100)
                put(a, "orchard", "fact", "a", fact("new"), rev, 101, 10)
                with self.assertRaises(Conflict):
                    put(b, "orchard", "fact", "a",
                        fact(), seen["revision"], 101, 10)
            finally:
                a.close()
                b.close()
            c = connect(path)
            try:
                record = get(c, "orchard", "fact", "a", 102)
                self.assertEqual(record["value"]["text"], "new")
            finally:
                c.close()

    def test_resume_and_done_are_local(self):
        put(self.db, "orchard", "checkpoint", "run-a",
            {"schema": 1, "step": 0, "items": []}, None, 100, 60)
        advance(self.db, 101)
        last = advance(self.db, 102)
        self.assertEqual(advance(self.db, 103), last)
        value = get(self.db, "orchard", "checkpoint", "run-a", 103)["value"]
        self.assertEqual(value, {"schema": 1, "step": 2,
                                 "items": ["collected", "drafted"]})
        with self.assertRaises(LookupError):
            advance(self.db, 162)


if __name__ == "__main__":
    unittest.main()
