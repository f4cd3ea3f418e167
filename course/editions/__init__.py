"""The editions made from the author's chapters in notebooks/, each a list of steps over one
notebook model (course.notebook):

    learner   the learner's edition and the learner's own copy (make lab, make lab-update)
    release   the class release: an nbgrader course folder and a hand-out (make class)
    package   the class edition of the package: no checks, no worked answers
    html      the static HTML edition (make html)
    answers   the worked answers, copied out of the chapters into the package (make export)
"""
