"""The benchmark code (bench/, `make bench`) in miniature, so it cannot rot unnoticed.

Runs every part with tiny repetition counts (seconds) and checks the results are well
formed, not fast: timings on a shared 2-core machine prove nothing in a unit test.
The one property checked strictly is that the floor really is the store's SQL: same
statements, same rows left behind.
"""

import json
import math
import sqlite3
import subprocess
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]

from bench import (cells, contention, growth, impls, machine, notebooks, overhead, report, run,
                   timing, workload)

TINY = {"put": (3, 10), "get": (3, 10), "forget": (3, 10), "purge": (3, 10)}


@pytest.fixture(scope="module")
def contenders():
    return {i.name: i for i in (impls.floor_impl(), impls.store(), impls.reference(),
                                impls.json_only())}


def traced(bench):
    statements = []
    bench.db.set_trace_callback(statements.append)
    return statements


def test_floor_runs_the_store_sql_and_leaves_the_same_rows(contenders):
    benches = {name: overhead.Bench(impl, ":memory:") for name, impl in contenders.items()}
    logs = {name: traced(b) for name, b in benches.items()}
    for op in overhead.OPS:
        for r in range(2):
            for b in benches.values():
                assert getattr(b, f"prepare_{op}")(r, 6)() == 6
    snapshots = {name: workload.snapshot(b.db) for name, b in benches.items()}
    assert (snapshots["floor"] == snapshots["store"] == snapshots["reference"]
            == snapshots["json only"])
    rows, sequence = snapshots["store"]
    assert len(rows) == overhead.BASE_ROWS + overhead.SLOTS   # forgets/purges undid lays
    assert sequence == [(1, overhead.SLOTS + 2 * 6)]   # first puts, then 2 batches of 6
    # Same statements, in the same order (the lays before forget/purge batches included).
    assert logs["floor"] == logs["store"] == logs["json only"]
    floor_db, store_db = benches["floor"].db, benches["store"].db
    row = contenders["floor"].get(floor_db, "orchard", "fact", "k0", workload.NOW)
    record = contenders["store"].get(store_db, "orchard", "fact", "k0", workload.NOW)
    assert (record["revision"], record["expires"]) == row[:2]
    assert record["value"] == json.loads(row[-1]) == workload.FACT
    bound = contenders["json only"].get(benches["json only"].db, "orchard", "fact", "k0",
                                        workload.NOW)
    assert bound == record   # the bound returns what the store returns, with no checks
    for b in benches.values():
        b.close()


def test_floor_put_keeps_compare_and_swap(contenders):
    floor = contenders["floor"]
    db = floor.connect(":memory:")
    body = workload.body("fact")
    first = floor.put(db, "orchard", "fact", "a", body, None, 100, 10)
    with pytest.raises(floor.Conflict):
        floor.put(db, "orchard", "fact", "a", body, None, 100, 10)
    with pytest.raises(floor.Conflict):
        floor.put(db, "orchard", "fact", "a", body, first, 110, 10)   # expired
    assert not db.in_transaction
    assert floor.forget(db, "orchard", "fact", "a", first)
    assert floor.purge(db, "orchard", 200) == 0


def test_interleave_rotates_and_pairs():
    order = []

    def contender(name):
        def prepare(r, n):
            def loop():
                order.append(name)
                return n
            return loop
        return prepare

    samples = timing.interleave({"a": contender("a"), "b": contender("b")}, 4, 5)
    assert order == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert all(len(v) == 4 and all(x > 0 for x in v) for v in samples.values())
    assert timing.paired_ratio({"a": [2, 4], "b": [1, 2]}, "a", "b") == 2
    assert timing.timed(lambda: (4, 400)) == 100


def test_overhead_results_are_well_formed(contenders):
    results = overhead.measure(list(contenders.values()), "memory", TINY)
    assert {(r["op"], r["impl"]) for r in results} == {
        (op, name) for op in overhead.OPS for name in contenders}
    for r in results:
        assert r["median_ns"] > 0 and math.isfinite(r["ratio"]) and r["ratio"] > 0
        if r["impl"] == "floor":
            assert r["ratio"] == 1


def test_growth_curves_plans_and_purge_lays(contenders):
    table = growth.Table(contenders["store"], 120)
    count = "SELECT count(*) FROM records"
    assert table.db.execute(count).fetchone()[0] == 120
    assert table.prepare_purge_shared(0, 3)()[0] == 3
    assert table.prepare_purge_small(0, 3)()[0] == 3
    assert table.db.execute(count).fetchone()[0] == 120   # each purge removed its lay
    table.close()
    chosen = [contenders["store"], contenders["floor"]]
    curves, plans = growth.measure(chosen, [60, 120], {"get": (2, 5), "put": (2, 5)},
                                   {"purge_small": (2, 2), "purge_shared": (2, 2)})
    assert set(curves["get"]) == {"store", "floor"}
    assert set(curves["purge_shared"]) == {"store"}
    for op in curves.values():
        for curve in op.values():
            assert [p["size"] for p in curve] == [60, 120]
            assert curve[0]["vs_smallest"] == 1 and curve[1]["median_ns"] > 0
    assert "USING INDEX" in plans["get: select live row"]["plan"][0]
    assert "(tenant=?)" in plans["purge: delete expired of tenant"]["plan"][0]


def test_contention_counts():
    rows = contention.measure((1, 2), seconds=0.2)
    assert [r["writers"] for r in rows] == [1, 2]
    assert rows[0]["writes"] > 0 and rows[0]["conflicts"] == 0
    for r in rows:
        assert r["attempts"] == r["writes"] + r["conflicts"] + r["busy"]


def test_notebooks_runner_and_floor(tmp_path):
    folder = tmp_path / "repo" / "notebooks"
    folder.mkdir(parents=True)
    assert "skipped" in notebooks.measure(folder)
    (tmp_path / "repo" / "data.txt").write_text("beside the notebooks")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# A chapter"),
                nbformat.v4.new_code_cell("import json\nfrom pathlib import Path\n"
                                          "%time x = 1\nprint(json.dumps(x))"),
                nbformat.v4.new_code_cell("!true\nimport json\n"
                                          "Path('../data.txt').read_text()\n"
                                          "Path('out.txt').write_text('written')")]
    path = folder / "01-tiny.ipynb"
    nbformat.write(nb, path)
    broken = nbformat.v4.new_notebook()
    broken.cells = [nbformat.v4.new_code_cell("raise RuntimeError('unfinished chapter')")]
    nbformat.write(broken, folder / "02-broken.ipynb")
    before = path.read_text()
    result = notebooks.measure(folder, timeout=120, repeats=1)
    assert path.read_text() == before            # ran in a temporary copy
    assert not (folder / "out.txt").exists()
    (chapter,) = result["chapters"]
    assert chapter["imports"] == ["import json", "from pathlib import Path"]
    assert chapter["chapter_s"] > 0 and chapter["floor_s"] > 0 and result["ratio"] > 0
    (failed,) = result["failed"]
    assert failed["notebook"] == "02-broken.ipynb" and "unfinished" in failed["error"]
    assert "did not run to the end" in "\n".join(report.notebook_lines(result))


def test_cells_times_each_code_cell_from_a_copy(tmp_path):
    folder = tmp_path / "repo" / "notebooks"
    folder.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# A chapter"),
                nbformat.v4.new_code_cell("import time\ntime.sleep(0.2)"),
                nbformat.v4.new_code_cell("open('out.txt', 'w').write('x')")]
    nbformat.write(nb, folder / "01-tiny.ipynb")
    before = (folder / "01-tiny.ipynb").read_text()
    result = cells.measure(folder, repeats=1, timeout=120)["01-tiny.ipynb"]
    assert (folder / "01-tiny.ipynb").read_text() == before and not (folder / "out.txt").exists()
    (_, slow, first), (_, quick, _) = result["cells"]
    assert first == "import time" and slow >= 0.2 > quick
    assert result["total_s"] > result["cells_s"] >= slow


def test_make_bench_compares_the_store_with_the_floor_the_spec_and_the_json_bound():
    assert [c.name for c in impls.load()] == ["floor", "store", "reference", "json only"]


def test_report_files(tmp_path):
    empty = tmp_path / "repo" / "notebooks"
    empty.mkdir(parents=True)
    results, text = run.run(tmp_path / "out", quick=True, notebooks_dir=empty, skip=("contention",),
                            log=lambda message: None)
    assert "## Targets" in text
    # no set-up run and no chapters: the three targets are shown, none of them measured
    assert text.count("| not measured |") == 3 and "| put in memory, store/floor |" in text
    assert "Skipped: no chapters" in text
    assert (tmp_path / "out" / "bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((tmp_path / "out" / "results.json").read_text())["quick"] is True
    assert report.verdict(1.2, 1.3) == "PASS" and report.verdict(1.4, 1.3) == "MISS"
    # the record names what it measured and how busy the machine was
    environment = results["environment"]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()
    assert environment["source"]["commit"] == head
    assert all(len(environment["load"][when]) == 3 for when in ("before", "after"))
    assert f"at commit {head[:10]}" in text.splitlines()[2] and "load average" in text


def test_the_record_names_tracked_files_that_differ_from_its_commit(tmp_path):
    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                       cwd=tmp_path, check=True, capture_output=True)
    git("init", "-q")
    (tmp_path / "store.py").write_text("one\n")
    (tmp_path / "notes.txt").write_text("untracked, not part of what is measured\n")
    git("add", "store.py")
    git("commit", "-qm", "first")
    assert machine.commit(tmp_path)["changed"] == []
    (tmp_path / "store.py").write_text("two\n")
    source = machine.commit(tmp_path)
    assert source["changed"] == ["store.py"]
    said = machine.described({"source": source,
                              "load": {"before": [1.0, 0.5, 0.25], "after": [2.0, 1.0, 0.5]}})
    assert said == (f"commit {source['commit'][:10]} with 1 tracked file(s) changed (store.py); "
                    "load average (1, 5, 15 min) 1.0 / 0.5 / 0.25 before the run, "
                    "2.0 / 1.0 / 0.5 after")


def test_statement_texts_match_the_store_source():
    sources = "".join((ROOT / "workbook" / f).read_text()
                      for f in ("records.py", "writes.py", "deletion.py"))
    from bench import floor
    for label, (sql, _) in floor.STATEMENTS.items():
        assert sql in sources, f"{label}: bench/floor.py no longer matches workbook/"
    assert sqlite3.sqlite_version
