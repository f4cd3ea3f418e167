"""The benchmark code (bench/, `make bench`) in miniature, so it cannot rot unnoticed.

Runs every part with tiny repetition counts (seconds) and checks the results are well
formed, not fast: timings on a shared 2-core machine prove nothing in a unit test.
The one property checked strictly is that the floor really is the store's SQL: same
statements, same rows left behind.
"""

import difflib
import json
import math
import sqlite3
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]

from bench import (ablation, cells, contention, growth, impls, notebooks,
                   overhead, report, run, timing, validation_check, workload)

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


def test_proposal_loads_beside_the_store(tmp_path):
    source = (ROOT / "workbook" / "store.py").read_text().splitlines(keepends=True)
    patched = source + ["BENCH_PATCHED = True\n"]
    diff = tmp_path / "p.diff"
    diff.write_text("".join(difflib.unified_diff(source, patched, "a/workbook/store.py",
                                                 "b/workbook/store.py")))
    keep = []
    try:
        proposal = impls.proposal(diff, keep)
        assert proposal.module.BENCH_PATCHED
        assert not hasattr(sys.modules["workbook.store"], "BENCH_PATCHED")
        db = proposal.connect(":memory:")
        assert proposal.put(db, "orchard", "fact", "a", workload.FACT, None, 1, 5) == 1
    finally:
        for folder in keep:
            folder.cleanup()
    stale = ["# a line workbook/store.py does not have\n"] + source[1:]
    diff.write_text("".join(difflib.unified_diff(stale, ["import os\n"] + stale,
                                                 "a/workbook/store.py",
                                                 "b/workbook/store.py")))
    with pytest.raises(impls.ProposalError):
        impls.proposal(diff)
    with pytest.raises(impls.ProposalError):
        impls.proposal(tmp_path / "absent.diff")


def test_validation_check_passes_the_store_itself(contenders):
    store, spec = contenders["store"].module, contenders["reference"].module
    assert validation_check.check_all(store, store, spec) == []


def test_proposal_validates_like_the_store(contenders):
    """bench/proposal.diff (measured, not adopted) still applies and keeps every rule.

    If this fails because the diff no longer applies, the store changed under it: rebase
    the diff onto the new workbook/ (docs/benchmarks.md says how it was measured) or
    remove it and its column, but do not skip.
    """
    keep = []
    try:
        proposal = impls.proposal(keep=keep)
    except impls.ProposalError as error:
        pytest.fail(f"{error}: rebase bench/proposal.diff onto workbook/")
    try:
        store, spec = contenders["store"].module, contenders["reference"].module
        assert validation_check.check_all(proposal.module, store, spec) == []
        for variant in ablation.variants(proposal.module, store):   # still runnable
            db = variant.connect(":memory:")
            revision = variant.put(db, "orchard", "fact", "a", workload.FACT, None, 1, 5)
            assert variant.get(db, "orchard", "fact", "a", 2)["revision"] == revision
    finally:
        for folder in keep:
            folder.cleanup()


def test_make_bench_measures_the_proposal_by_default():
    keep = []
    try:
        contenders, note = impls.load(keep=keep)
    finally:
        for folder in keep:
            folder.cleanup()
    assert note is None
    assert [c.name for c in contenders] == ["floor", "store", "reference", "json only",
                                            "proposal"]


def test_report_files(tmp_path):
    empty = tmp_path / "repo" / "notebooks"
    empty.mkdir(parents=True)
    results, text = run.run(tmp_path / "out", quick=True, proposal=None,
                            notebooks_dir=empty, skip=("contention",),
                            log=lambda message: None)
    assert "## Targets" in text
    # no set-up run and no chapters: the three targets are shown, none of them measured
    assert text.count("| not measured |") == 3 and "| put in memory, store/floor |" in text
    assert "Skipped: no chapters" in text
    assert (tmp_path / "out" / "bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((tmp_path / "out" / "results.json").read_text())["quick"] is True
    assert report.verdict(1.2, 1.3) == "PASS" and report.verdict(1.4, 1.3) == "MISS"


def test_statement_texts_match_the_store_source():
    sources = "".join((ROOT / "workbook" / f).read_text()
                      for f in ("records.py", "writes.py", "deletion.py"))
    from bench import floor
    for label, (sql, _) in floor.STATEMENTS.items():
        assert sql in sources, f"{label}: bench/floor.py no longer matches workbook/"
    assert sqlite3.sqlite_version
