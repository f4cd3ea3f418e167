"""Where verdicts are decided, and no student code runs.

    sandboxes  the zygote, started clean, and the sandboxes it forks: ask for one, interrupt it,
               kill it, and at the end make sure that nothing of theirs is left
    lending    the judge's side of the wire: a student's function as a callable stand-in
               (Remote), and what a check lends that function (a connection, a mailer, a store),
               kept here and reached only through the names lent, the SQL only through an
               authorizer that allows rows to be read and written and nothing else
    session    one student's chapter: its exercise cells and answers run in a sandbox, each
               check runs here, on what the sandbox reports and on what it lent

The judge runs the checks of workbook/teaching/exercises/checks/ in this process. It never imports,
unpickles or evaluates anything a student made: a submission is read as JSON, a sandbox's
answer is decoded into exact built-in types (course.grader.wire), and a student's function is
called only inside the sandbox.
"""
