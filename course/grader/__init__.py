"""The grader: make grade (cli), and the generated class to try it on (demo_class).

The grader's trust boundary is its layout (AUDIT.md gives the reading order, each file's
invariant and the tests that guard it):

    the grader   lists the class and decides which notebook is each chapter's hand-in
                 (submissions), gives each student's chapter a judge and collects its verdicts
                 (gradebook, judge/judges), bounds each chapter's processes together (cgroups),
                 and writes the files whole (output, text); it never parses a submission
    judge/       where verdicts are decided, one process per student's chapter within that
                 chapter's budget, and no student code runs (zygote, job, session, lending,
                 sandboxes); it reads the notebook (reading) and runs the plan (verdicts)
    sandbox/     where student code runs, and nothing is decided (zygote, jail, worker)
    wire         the plain data the judges and sandboxes exchange

chapters reads the graded chapters from the author's source; course/editions/release.py and
cli.py are the command lines (make class, make grade).
"""
