"""A student is the name of their folder: two folders stay two students in the gradebook, and
every name fits a feedback file's name (the grader attacker named folders 'right' and 'right'
with a no-break space after it, and one of 252 characters)."""
import csv
import io
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
from course.grader import gradebook
from course.grader.chapters import SOURCE, read_chapter
from course.grader.cgroups import Bounds
from course.grader.judge.sandboxes import Isolation
from course.grader.submissions import MOST_NAME, shown, students

NAMES = ["right", "right\u00a0", "right\t", "right  two", "right two", "José Núñez", "x" * 252, "y" * 252]


def test_names_that_differ_stay_different_and_fit_a_file_name():
    seen = [shown(name) for name in NAMES]
    assert len(set(seen)) == len(NAMES)
    assert all(len(name) <= MOST_NAME and name.isprintable() and "/" not in name for name in seen)
    assert shown("José Núñez") == "José Núñez" and shown("right") == "right"


def test_the_gradebook_has_a_row_and_a_feedback_file_for_each_folder(tmp_path):
    chapter = read_chapter(sorted(SOURCE.glob("01-*.ipynb"))[0])
    for name in NAMES:
        (tmp_path / "class" / name).mkdir(parents=True)
    roster = students(tmp_path / "class", [chapter])
    book = gradebook.Gradebook([chapter], [gradebook.Grades(s.name, []) for s in roster], 1.0, 1,
                              Isolation("none", "a test of the files only"),
                              bounds=Bounds("per process", 1 << 30, 64, False))
    gradebook.write(book, tmp_path / "out")
    rows = list(csv.reader(io.StringIO((tmp_path / "out" / "gradebook.csv").read_text())))[1:]
    assert sorted(row[0] for row in rows) == sorted(shown(name) for name in NAMES)
    assert len(list((tmp_path / "out" / "feedback").iterdir())) == len(NAMES)
