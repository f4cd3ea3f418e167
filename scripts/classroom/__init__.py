"""The workbook in a classroom: the class release and the grader.

    chapters     the graded chapters and their exercises, read from the author's source
    release      the class release: an nbgrader course folder and a hand-out edition
    submissions  a class folder: its students, their notebooks, their answer cells
    runner       runs a chapter's own cells around a student's answers, in forked processes
    gradebook    verdicts into points: the CSV, one feedback file per student, JSON
    students     a generated class (right, blank, wrong, error, loop, tamperer) for trying it out

scripts/student.py and scripts/grade.py are the command lines (make class, make grade).
"""
