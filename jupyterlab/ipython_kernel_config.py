# The IPython kernel configuration of the workbook's environments: tools/venv installs it as
# .venv/etc/ipython/ipython_kernel_config.py, the course hub (course/hub/environment.py)
# and Binder (postBuild) into theirs. Every kernel there loads workbook.teaching.exercises.kernel, which
# turns itself on only in a learner's copy: there a name the kernel does not know yet (a check
# run before the exercises' first cell) is said in one sentence instead of a traceback.
c = get_config()  # noqa: F821
c.InteractiveShellApp.extensions.append("workbook.teaching.exercises.kernel")
