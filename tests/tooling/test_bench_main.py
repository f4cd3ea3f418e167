"""`make bench WHAT=...` and `make bench-record WHAT=...` (bench/__main__.py) in miniature.

Each name must reach its module with the options given, and a record must land where its
readers look: reports in docs/bench/, the figures a notebook reads in workbook/benchmarks/.
The modules here are stand-ins that write their files at once, and every record goes into a
temporary tree, never the repository's own docs/.
"""
import inspect
import json
import re
import subprocess
import sys
import types
from pathlib import Path

import nbformat
import pytest

from bench import __main__ as bench

ROOT = Path(__file__).resolve().parents[2]
RECORDED = [name for name, (_, _, kept) in bench.BENCHMARKS.items() if kept]


@pytest.fixture
def stand_ins(monkeypatch, tmp_path):
    """Every benchmark module replaced by one that notes its arguments and writes its files."""
    calls, status = {}, {"value": None}
    built = bench.places(tmp_path)["built"]
    for name, (module, _, kept) in bench.BENCHMARKS.items():
        def main(argv, name=name, kept=kept):
            calls[name] = argv
            built.mkdir(parents=True, exist_ok=True)
            for file in kept:
                (built / file).write_text(f"{name}: {file}")
            return status["value"]
        monkeypatch.setitem(sys.modules, module, types.SimpleNamespace(main=main))
    return types.SimpleNamespace(calls=calls, status=status, root=tmp_path)


def written(root):
    """Every file under docs/ and workbook/ of a tree, by its path in the tree."""
    return sorted(str(path.relative_to(root)) for folder in ("docs", "workbook")
                  for path in (root / folder).rglob("*") if path.is_file())


@pytest.mark.parametrize("name", bench.BENCHMARKS)
def test_each_name_runs_its_module_with_the_options_given_and_records_nothing(stand_ins, name):
    assert bench.main([name, "--quick", "--students", "3"], root=stand_ins.root) == 0
    assert stand_ins.calls == {name: ["--quick", "--students", "3"]}
    assert written(stand_ins.root) == []


@pytest.mark.parametrize("name", RECORDED)
def test_a_record_keeps_each_file_where_its_readers_look(stand_ins, name):
    module, for_record, kept = bench.BENCHMARKS[name]
    assert bench.main([name, "--record"], root=stand_ins.root) == 0
    assert stand_ins.calls == {name: for_record}
    expected = {file: f"{'docs/bench' if place == 'docs' else 'workbook/benchmarks'}/{file}"
                for file, place in kept.items()}
    assert written(stand_ins.root) == sorted(expected.values())
    for file, path in expected.items():
        assert (stand_ins.root / path).read_text() == f"{name}: {file}"


def test_the_store_record_includes_the_set_up_from_fresh_clones(stand_ins):
    bench.main(["store", "--record"], root=stand_ins.root)
    assert stand_ins.calls["store"] == ["--setup"]


def test_the_package_keeps_exactly_the_figures_a_notebook_reads():
    read = set()
    for path in (ROOT / "notebooks").glob("*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            read |= set(re.findall(r'"benchmarks" / "([\w.]+)"', cell.source))
    kept = {file for _, _, files in bench.BENCHMARKS.values()
            for file, place in files.items() if place == "package"}
    assert read and kept == read


@pytest.mark.parametrize("argv, said", [
    ([], "WHAT: one of store, postgres"),
    (["peers"], "WHAT: one of"),
    (["setup", "--record"], "keeps no record"),
    (["store", "--record", "--quick"], "drop --quick and --out"),
    (["postgres", "--out", "elsewhere", "--record"], "drop --quick and --out"),
])
def test_a_command_that_cannot_be_kept_is_refused_before_anything_runs(stand_ins, capsys, argv,
                                                                      said):
    assert bench.main(argv, root=stand_ins.root) == 2
    assert said in capsys.readouterr().err
    assert stand_ins.calls == {} and written(stand_ins.root) == []


def test_a_failed_run_is_not_recorded(stand_ins):
    stand_ins.status["value"] = 3
    assert bench.main(["postgres", "--record"], root=stand_ins.root) == 3
    assert written(stand_ins.root) == []


@pytest.mark.parametrize("name", bench.BENCHMARKS)
def test_each_module_exists_and_takes_its_arguments(name):
    module = __import__(bench.BENCHMARKS[name][0], fromlist=["main"])
    assert list(inspect.signature(module.main).parameters) == ["argv"]


@pytest.mark.parametrize("target, options", [("bench", "ARGS=--quick"), ("bench-record", "")])
@pytest.mark.parametrize("name", bench.BENCHMARKS)
def test_the_makefile_passes_the_name_and_its_options(target, options, name):
    shown = subprocess.run(["make", "-n", target, f"WHAT={name}", *filter(None, [options])],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout
    expected = f"-m bench {name} --quick" if target == "bench" else f"-m bench {name} --record"
    assert expected in shown


def test_python_m_bench_runs_the_store_benchmark_into_the_folder_given(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "bench", "store", "--quick", "--out", str(out),
                           "--skip", "contention", "--skip", "notebooks"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((out / "results.json").read_text())
    assert results["quick"] and {"overhead", "growth"} <= set(results)
    assert (out / "report.md").read_text().startswith("# Benchmark report")
