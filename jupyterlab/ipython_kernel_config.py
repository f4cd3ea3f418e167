# The IPython kernel configuration of the workbook's environments: tools/venv installs it as
# .venv/etc/ipython/ipython_kernel_config.py, the course hub (course/hub/environment.py)
# and Binder (postBuild) into theirs. Every kernel there loads workbook.teaching.exercises.kernel, which
# turns itself on only in a learner's copy: there a name the kernel does not know yet (a check
# run before the exercises' first cell) is said in one sentence instead of a traceback.
c = get_config()  # noqa: F821
c.InteractiveShellApp.extensions.append("workbook.teaching.exercises.kernel")

# Matplotlib keeps one font cache per user (~/.cache/matplotlib) that names each font by its path
# inside the matplotlib that built it: once that environment is removed (a temporary clone, an
# old .venv), every figure warns on stderr about the fonts it cannot find, and the first figure
# on a machine says it is building the cache; strict nbval takes either for a changed output.
# Each environment its kernels may write to keeps its own cache instead (tools/venv builds it),
# unless one is set; elsewhere (a course hub's shared environment) each user keeps theirs.
import os  # noqa: E402
import sys  # noqa: E402

own_cache = os.path.join(sys.prefix, "matplotlib")
if os.access(own_cache if os.path.isdir(own_cache) else sys.prefix, os.W_OK):
    os.environ.setdefault("MPLCONFIGDIR", own_cache)
