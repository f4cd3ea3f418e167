"""The implementations a benchmark compares, each a namespace of the five store calls.

- store:     workbook.store, the package as it is in this tree.
- reference: workbook/specification/store.py, the specification's code verbatim.
- proposal:  workbook/ copied to a temporary folder with a unified diff applied
             (bench/proposal.diff by default: a speed-up measured, not adopted),
             imported beside the real one.
- floor:     bench.floor, the same SQL without validation or JSON.
- json only: bench.json_only, the floor plus only the spec's JSON encoding and decoding
             (a lower bound for any store that validates with the standard library's json).
"""

import importlib
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from bench import floor

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PROPOSAL = ROOT / "bench" / "proposal.diff"


@dataclass
class Impl:
    name: str
    module: ModuleType
    raw_body: bool = False  # the floor's put takes the encoded body, not the value

    def __getattr__(self, attr):
        return getattr(self.module, attr)

    def value(self, value):
        """What this implementation's put takes for a payload."""
        if self.raw_body:
            return json.dumps(value, sort_keys=True, ensure_ascii=True)
        return value


def store():
    return Impl("store", importlib.import_module("workbook.store"))


def floor_impl():
    return Impl("floor", floor, raw_body=True)


def json_only():
    return Impl("json only", importlib.import_module("bench.json_only"))


def reference():
    return Impl("reference", importlib.import_module("workbook.specification.store"))


class ProposalError(Exception):
    """The proposal diff is missing or no longer applies to workbook/."""


def proposal(diff=DEFAULT_PROPOSAL, keep=None):
    """Import workbook/ with `diff` applied, from a temporary copy, beside the real package.

    The package imports itself by absolute name (`from workbook.validation import ...`),
    so the copy is imported under the name `workbook` with the real modules set aside for
    the moment, then the real ones are put back. The copy's functions keep their own
    module globals, so both versions run side by side in one process.
    `keep` is a list that receives the TemporaryDirectory (delete it when done).
    """
    diff = Path(diff)
    if not diff.is_file():
        raise ProposalError(f"no proposal at {diff}")
    folder = tempfile.TemporaryDirectory(prefix="bench-proposal-")
    if keep is not None:
        keep.append(folder)
    shutil.copytree(ROOT / "workbook", Path(folder.name) / "workbook",
                    ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run(["git", "apply", "--include=workbook/*", str(diff.resolve())],
                          cwd=folder.name, capture_output=True, text=True)
    if done.returncode != 0:
        raise ProposalError(f"{diff} does not apply to workbook/ (already applied?): "
                            f"{done.stderr.strip()}")
    saved = {name: mod for name, mod in sys.modules.items()
             if name == "workbook" or name.startswith("workbook.")}
    for name in saved:
        del sys.modules[name]
    sys.path.insert(0, folder.name)
    try:
        importlib.invalidate_caches()
        module = importlib.import_module("workbook.store")
        if not module.__file__.startswith(folder.name):
            raise ProposalError(f"imported {module.__file__}, not the patched copy")
    finally:
        sys.path.remove(folder.name)
        for name in [n for n in sys.modules if n == "workbook" or n.startswith("workbook.")]:
            del sys.modules[name]
        sys.modules.update(saved)
    return Impl("proposal", module)


def load(proposal_diff=DEFAULT_PROPOSAL, keep=None):
    """floor, store, reference, json only and (when its diff applies) proposal; plus a note."""
    impls = [floor_impl(), store(), reference(), json_only()]
    note = None
    if proposal_diff:
        try:
            impls.append(proposal(proposal_diff, keep))
        except ProposalError as error:
            note = str(error)
    return impls, note
