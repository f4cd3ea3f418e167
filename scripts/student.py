"""Write the class release of the graded chapters (make class; make student is the same).

    python scripts/student.py [OUT] [--timeout SECONDS]      (default: build/class, 10 s)

OUT is an nbgrader course folder: nbgrader_config.py, source/<chapter>/<chapter>.ipynb (worked
answers, and each check cell an autograder cell with its points) and handout/, the hand-out
edition for classes without nbgrader (solution regions replaced by nbgrader's own stub
`raise NotImplementedError()`, outputs cleared). scripts/classroom/release.py explains the cells.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from classroom.chapters import REGION, ROOT, read_chapter  # noqa: E402,F401  (REGION: imported by others)
from classroom.release import release_notebook, write_release  # noqa: E402

DEFAULT = ROOT / "build" / "class"


def student_notebook(path):
    """The hand-out edition of one chapter."""
    return release_notebook(read_chapter(path), solutions=False)


def main(out=DEFAULT, timeout=10):
    out = Path(out)
    written = write_release(out, timeout=timeout)
    shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    print(f"class release: {len(written)} chapters in {shown}/ (nbgrader source/, the hand-out "
          "handout/ and package/, the package without checks or answers for the students' "
          "environment)")
    return written


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Write the class release of the graded chapters.")
    parser.add_argument("out", nargs="?", default=DEFAULT, help="the course folder to write (default build/class)")
    parser.add_argument("--timeout", type=int, default=10,
                        help="nbgrader's per-cell time limit in seconds (default 10)")
    arguments = parser.parse_args()
    main(arguments.out, arguments.timeout)
