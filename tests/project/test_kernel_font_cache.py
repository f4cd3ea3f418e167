"""A chapter's figure writes nothing on stderr, whatever the user's own matplotlib cache holds.

Matplotlib's per-user font cache names fonts by their paths inside the matplotlib that built it.
A cache left by a removed environment (a temporary clone's .venv) made every figure warn about
fonts it could not find, which strict nbval took for a changed output (a loaded make test failed
on the costs appendix). The environment's kernels keep their own cache
(jupyterlab/ipython_kernel_config.py, built by tools/venv)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
FIGURE = ("from matplotlib.figure import Figure\n"
          "fig = Figure(); ax = fig.subplots(); ax.set(xscale='log', title='$x^2$')\n"
          "ax.plot([1, 10, 100], [1, 2, 3]); fig.savefig('/dev/null', format='png')\n"
          "import os; print(os.environ.get('MPLCONFIGDIR'))")


def stale_cache(home):
    """A user's cache as a removed environment left it: every font's file gone. Built apart, so
    that this user's own cache is neither read nor written."""
    apart = home / "built"
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], check=True, capture_output=True,
                   env=dict(os.environ, MPLCONFIGDIR=str(apart)))
    built = next(apart.glob("fontlist-*.json"))
    fonts = json.loads(built.read_text())
    for entry in fonts["ttflist"] + fonts["afmlist"]:
        entry["fname"] = "/nonexistent/removed-venv/" + Path(entry["fname"]).name
    (home / ".cache" / "matplotlib").mkdir(parents=True)
    (home / ".cache" / "matplotlib" / built.name).write_text(json.dumps(fonts))


def test_a_figure_in_a_kernel_writes_nothing_on_stderr_beside_a_stale_user_cache(tmp_path, monkeypatch):
    stale_cache(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("MPLCONFIGDIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(FIGURE)])
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = notebook.cells[0].outputs
    assert [o for o in outputs if o.get("name") == "stderr"] == []
    assert outputs[0]["text"].strip() == os.path.join(sys.prefix, "matplotlib")
