"""The workbook in a classroom: the class release and the grader.

    chapters     the graded chapters and their exercises, read from the author's source
    release      the class release: an nbgrader course folder and a hand-out edition
    package      the class edition of the package (no checks, no worked answers)
    submissions  a class folder: its students, their notebooks, their answer cells (read as JSON)
    gradebook    the plan of each chapter, verdicts into points: the CSV, feedback, JSON
    students     a generated class (right, blank, wrong, error, loops, tamperer) for trying it out

The grader's trust boundary is its layout:

    sandbox/     where student code runs, and nothing is decided (zygote, jail, worker)
    judge/       where verdicts are decided, and no student code runs (sandboxes, lending, session)
    wire         the plain data the two exchange

course/editions/release.py and course/grader/cli.py are the command lines (make class, make grade).
"""
