"""What the hub and Binder tests share: a copy of the working tree, and a free port."""
import shutil
import socket
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def copy_tree(target, venv=True):
    """The working tree as git sees it (committed or not, ignored files left out) in `target`,
    as a fresh clone would have it. venv=True links our .venv and uv into it; venv="own" links
    only uv, so that the copy's first make target builds a .venv of its own (about 15 s), whose
    editable install is the copy: the course package make hub runs is then the copy's, not ours."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    if venv is True:
        (target / ".venv").symlink_to(ROOT / ".venv")
    if venv and (ROOT / "build" / "uv").exists():
        (target / "build").mkdir(exist_ok=True)
        (target / "build" / "uv").symlink_to(ROOT / "build" / "uv")
