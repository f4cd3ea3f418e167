"""Where student code runs, and nothing is decided.

    zygote   a clean process, started by the grader with a clean environment, that holds the
             chapters' libraries and forks one sandbox per student's chapter on request
    jail     what makes a fork a sandbox: its own user, PID, mount, network and IPC namespaces,
             a read-only view of the package's class edition and a private /tmp, and limits
    worker   the process inside: runs the chapter's exercise cells and the student's answers,
             and reports what they did, as plain data, to the judge (course.grader.judge)

Nothing here imports the checks, the worked answers or another student's work: a sandbox is
forked from the zygote, which never held them.
"""
