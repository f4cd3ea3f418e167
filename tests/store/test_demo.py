"""python -m workbook.demo prints the specification's seven lines and leaves nothing behind."""
import subprocess
import sys
import tempfile
from pathlib import Path

from workbook import demo

SPEC_OUTPUT = """\
resumed step: 1
stale write: rejected
other tenant: None
at expiry: None
expired rows purged: 1
checkpoint forgotten: True
remaining rows: 0
"""


def test_module_prints_the_spec_output_byte_for_byte(tmp_path):
    result = subprocess.run([sys.executable, "-m", "workbook.demo"], cwd=tmp_path,
                            capture_output=True, check=True)
    assert result.stdout == SPEC_OUTPUT.encode()
    assert result.stderr == b""
    assert list(tmp_path.iterdir()) == []


def test_main_removes_its_temporary_directory(monkeypatch, capsys):
    folders = []

    class Recording(tempfile.TemporaryDirectory):
        def __enter__(self):
            folders.append(Path(super().__enter__()))
            assert folders[-1].is_dir()
            return str(folders[-1])

    monkeypatch.setattr(demo, "TemporaryDirectory", Recording)
    demo.main()
    assert capsys.readouterr().out == SPEC_OUTPUT
    assert len(folders) == 1 and not folders[0].exists()


def test_advance_is_importable_and_stops_at_step_two():
    from workbook.store import connect, put
    db = connect()
    put(db, "orchard", "checkpoint", "run-a", {"schema": 1, "step": 0, "items": []},
        None, 100, 60)
    assert [demo.advance(db, t) for t in (101, 102, 103)] == [2, 3, 3]
