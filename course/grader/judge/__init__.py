"""Where verdicts are decided, and no student code runs.

    judges     the grader's side: a judge per job, under the job's budget, killed when its
               wall-clock time runs out; its plain, size-capped verdicts checked field by field
    zygote     the judges' zygote: started clean before any submission is read, holding the
               checks and the chapters; forks one judge per job
    job        inside a judge: the budget first, then the notebook (course.grader.reading), the
               plan (course.grader.verdicts) and the session; a watchdog on lent statements
    sandboxes  the sandboxes' zygote, started clean: ask it for sandboxes, interrupt and kill
               them, and at the end make sure that nothing of theirs is left
    lending    a student's function as a callable stand-in (Remote), and what a check lends it
               (a connection, a mailer, a store), kept in the judge and reached only through the
               names lent; SQL only through an authorizer, within size, step and time bounds
    session    one student's chapter: its exercise cells and answers run in a sandbox, each
               check runs in the judge, on what the sandbox reports and on what it lent

A judge never imports, unpickles or evaluates anything a student made: a submission is read as
JSON within caps, a sandbox's answer is decoded into exact built-in types (course.grader.wire),
and a student's function is called only inside the sandbox.
"""
