"""make bench-postgres (bench/postgres.py): its code in miniature, and the record the appendix quotes."""
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from bench import postgres as bench

RECORD = ROOT / "docs" / "bench"
DATA = ROOT / "workbook" / "benchmarks"   # the record's figures, package data the appendix reads


def test_two_writers_on_the_server_lose_no_increment(postgres_backend):
    # bench.measure runs bench.writer in spawned processes; threads run the same code cheaply.
    import queue
    import threading
    db = postgres_backend.connect()
    url = postgres_backend.conninfo(postgres_backend.schemas[db])
    postgres_backend.put(db, "orchard", "fact", "tally", bench.tally(0, 0), None, bench.NOW,
                         bench.TTL)
    start, results = threading.Barrier(2), queue.Queue()
    threads = [threading.Thread(target=bench.writer,
                                args=("postgres", url, n, 5, "tally", False, start, results))
               for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    reports = [results.get(timeout=1) for _ in threads]
    assert [report["writes"] for report in reports] == [5, 5]
    assert postgres_backend.get(db, "orchard", "fact", "tally", bench.NOW)["value"]["text"] == "10"
    db.close()


def test_the_record_is_a_full_run_and_its_report():
    record = json.loads((DATA / "postgres.json").read_text())
    assert not record["quick"]
    assert [row["workload"] for row in record["workloads"]] == list(bench.FULL)
    for row in record["workloads"]:
        writers, operations, _, _ = bench.FULL[row["workload"]]
        assert (row["processes"], row["operations each"]) == (writers, operations)
        assert row["PostgreSQL / SQLite"] == row["PostgreSQL per second"] / row["SQLite per second"]
    assert (RECORD / "postgres.md").read_text() == bench.markdown(record)


def test_the_appendix_quotes_the_records_reader_ratio():
    import re
    from quoted import prose
    text = " ".join(prose("appendix-postgres.ipynb", "apg-053").split())
    found = re.search(r"In the record, the server's lone reader did (\d+\.\d+) times", text)
    assert found, "apg-053 no longer quotes the record's reader ratio: reword this check with it"
    record = json.loads((DATA / "postgres.json").read_text())
    assert float(found[1]) == round(record["workloads"][0]["PostgreSQL / SQLite"], 2)
