from pathlib import Path
from tempfile import TemporaryDirectory

from workbook.store import Conflict, connect, forget, get, purge, put


def advance(db, now):
    record = get(db, "orchard", "checkpoint", "run-a", now)
    if record is None:
        raise LookupError("checkpoint absent or expired")
    value = record["value"]
    if value["step"] == 2:
        return record["revision"]
    value["step"] += 1
    value["items"].append(("collected", "drafted")[value["step"]-1])
    return put(db, "orchard", "checkpoint", "run-a", value,
               record["revision"], now, 60)


def main():
    with TemporaryDirectory() as folder:
        path = Path(folder) / "fictional.db"
        db = connect(path)
        start = {"schema": 1, "step": 0, "items": []}
        first = put(db, "orchard", "checkpoint", "run-a",
                    start, None, 100, 60)
        advance(db, 101)
        db.close()
        db = connect(path)
        print("resumed step:", get(db, "orchard", "checkpoint",
                                   "run-a", 102)["value"]["step"])
        last = advance(db, 102)
        assert advance(db, 103) == last
        try:
            put(db, "orchard", "checkpoint", "run-a",
                start, first, 103, 60)
        except Conflict:
            print("stale write: rejected")
        fact = {"schema": 1, "text": "Fictional team likes checklists.",
                "source": "workshop-note-1", "reviewed": False}
        rev = put(db, "orchard", "fact", "preference", fact, None, 103, 5)
        print("other tenant:", get(db, "harbour", "fact", "preference", 104))
        print("at expiry:", get(db, "orchard", "fact", "preference", 108))
        print("expired rows purged:", purge(db, "orchard", 108))
        print("checkpoint forgotten:", forget(
            db, "orchard", "checkpoint", "run-a", last))
        print("remaining rows:", db.execute(
            "SELECT count(*) FROM records").fetchone()[0])
        db.close()


if __name__ == "__main__":
    main()
