"""The learner's edition of the chapters, and the learner's own copy of it (what make lab opens).

    workbook-learner sync [COPY]     make or refresh the copy (default: my-workbook/)
    workbook-learner update [COPY]   take the newer chapters, keeping the answers
    workbook-learner edition OUT     write the learner's edition alone into OUT
    workbook-learner sync|update COPY EDITION
                                     the same from an edition written by `edition` (a course
                                     hub: the students cannot read notebooks/)

Run from the clone's top folder (make lab and make lab-update do): the chapters are read from
notebooks/ there, whichever clone the command was installed from.

The learner's edition is the source chapter with its answers taken out, by the steps LEARNER
lists: directive cells dropped, chapter 1 pointing to the copy's guide, solution regions blanked
(BlankSolutions: `name = ____` at the top of a cell, `return ____` inside a function, so the
function runs and its check says "not attempted"), and the exercise section and every answer
cell without stored outputs (a verdict or a printed run there could give an answer away; the
teaching cells before keep theirs, but no cell keeps an execution count).

The learner's copy is a folder of their own. `sync` writes each chapter into it once and never
overwrites it: a chapter that changed since it was copied is only reported, on the terminal and
in `COPY/00-updates-available.md`, which heads the file browser. `update` replaces those
chapters with the new edition, carrying the learner's answer cells over by cell id, and first
saves the learner's whole file in `COPY/earlier-versions/`; a chapter open in a JupyterLab
that serves the copy is left for later (saving its tab would write the old version back over
the new one), and `update` says so and fails. The folder's `.workbook.json`
remembers which edition each chapter was copied from. From the command line, the notebooks it
writes are signed as trusted in the learner's Jupyter data folder, as `jupyter trust` would.
Nothing in make test or CI reads the copy.
"""
import hashlib
import json
import sys
from pathlib import Path

import nbformat
from nbconvert.preprocessors import Preprocessor

from course.editions.steps import BlankSolutions, ClearOutputs, DropDirectiveCells, apply
from course.notebook import is_answer_cell

# Paths from the clone's top folder, where make lab and make lab-update run this.
COPY = Path("my-workbook")
SOURCE = Path("notebooks")
MANIFEST = ".workbook.json"
EDITION = ".learners-edition"  # marks a folder written by `edition`: its notebooks are taken as they are
EARLIER = "earlier-versions"
START = "00-start-here.md"
UPDATES = "00-updates-available.md"
STUB = "return ____  # replace this line with your code"
WELCOME = """\
# Your copy of the workbook

These notebooks are yours: answer the exercises here, save as often as you like, and nothing
you type can change the chapters in `notebooks/` or break `make test`.

- Replace each `____` with your answer, run the cell, then run the `qN.check(...)` cell below it.
- `qN.hint()` gives a hint (`qN.hint(2)` a bigger one); `qN.solution()` shows a worked answer.
  The answers are hidden, not secret: they are one call away, so look only when you choose to.
- A check stops your code after a few seconds and says so, if it runs on and on.
- When the chapters change, `make lab` tells you which ones (and `00-updates-available.md`
  appears here); `make lab-update` brings them in, keeping your answers (your previous file
  goes to `earlier-versions/` first). Close the chapter's tab before you update it.
- The `#| export` cells of your copy run like any other cell. The package you import was built
  from the source chapters in `notebooks/`, so changing an export cell here changes nothing
  else.
"""
POINTER = (f"> **This is your own copy.** [{START}]({START}) says how to answer, check and "
           "update it.")
UPDATE_NOTE = """\
# Newer chapters are available

These chapters changed since they were copied here:

{chapters}

Your copies are untouched. To bring the new versions in, close their tabs, then run
`make lab-update` in a terminal. Your answer cells are carried over, and each file you had is
saved in `earlier-versions/` first. While a chapter is open here, `make lab-update` leaves it
as it is and says so: saving its tab afterwards would write your old version over the new one.
"""


class PointToGuide(Preprocessor):
    """Chapter 1, which make lab opens, points to the file that says how the copy works."""

    def preprocess(self, nb, resources):
        if resources.get("name", "").startswith("01-"):
            first = next(cell for cell in nb.cells if cell.cell_type == "markdown")
            heading, rest = first.source.split("\n\n", 1)
            first.source = f"{heading}\n\n{POINTER}\n\n{rest}"
        return nb, resources


# The learner's edition, step by step (course/editions/steps.py; course/notebook.py says what
# each part of a chapter is).
LEARNER = [DropDirectiveCells(), PointToGuide(), BlankSolutions(stub=STUB), ClearOutputs(exercises_only=True)]


def learner_notebook(path):
    return apply(nbformat.read(path, as_version=4), LEARNER, {"name": Path(path).name})


def edition_notebook(path):
    """The learner's edition of one notebook: made from the source chapter, or read as it is
    from a folder that `edition` wrote."""
    if (Path(path).parent / EDITION).exists():
        return nbformat.read(path, as_version=4)
    return learner_notebook(path)


def write_edition(out, source=SOURCE):
    """The learner's edition of every chapter into `out`, marked as an edition; return them."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = chapters(source)
    for path in written:
        (out / path.name).write_text(text_of(learner_notebook(path)))
    (out / EDITION).write_text("The learner's edition, written by course/editions/learner.py edition.\n")
    return written


def chapters(source=SOURCE):
    """Every notebook of the source that a learner gets: the chapters and the appendices."""
    return sorted(Path(source).glob("*.ipynb"))


def text_of(notebook):
    return nbformat.writes(notebook) + "\n"


def digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def read_manifest(copy):
    path = copy / MANIFEST
    return json.loads(path.read_text()) if path.exists() else {}


def write_manifest(copy, manifest):
    (copy / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def write_notebook(target, notebook, trust=False):
    """Write a learner's notebook; with `trust`, sign it as `jupyter trust` would."""
    if trust:
        from nbformat.sign import NotebookNotary
        NotebookNotary().sign(notebook)
    target.write_text(text_of(notebook))


def sync(copy=COPY, source=SOURCE, trust=False):
    """Add missing chapters to the copy; return (added, changed) chapter names.

    `changed` lists chapters whose edition moved on since they were copied; they are left as
    they are for `update`, and named in UPDATES.
    """
    copy = Path(copy)
    copy.mkdir(parents=True, exist_ok=True)
    if not (copy / START).exists():
        # an edition may bring its own how-to file (a course hub's says how updates arrive there)
        own = Path(source) / START
        (copy / START).write_text(own.read_text() if own.exists() else WELCOME)
    manifest = read_manifest(copy)
    added, changed = [], []
    for path in chapters(source):
        notebook = edition_notebook(path)
        text = text_of(notebook)
        target = copy / path.name
        if not target.exists():
            write_notebook(target, notebook, trust)
            manifest[path.name] = digest(text)
            added.append(path.name)
        elif manifest.get(path.name) != digest(text):
            changed.append(path.name)
    write_manifest(copy, manifest)
    note = copy / UPDATES
    if changed:
        note.write_text(UPDATE_NOTE.format(chapters="\n".join(f"- [{name}]({name})" for name in changed)))
    elif note.exists():
        note.unlink()
    return added, changed


def carried_over(new, old):
    """The new edition with the learner's answer cells (matched by id) put back in."""
    answers = {cell.get("id"): cell for cell in old.cells if is_answer_cell(cell)}
    for index, cell in enumerate(new.cells):
        mine = answers.get(cell.get("id")) if is_answer_cell(cell) else None
        if mine is not None:
            kept = nbformat.from_dict(dict(mine))
            kept.outputs, kept.execution_count = [], None
            new.cells[index] = kept
    return new


def saved_earlier(copy, name):
    folder = copy / EARLIER
    folder.mkdir(exist_ok=True)
    stem = Path(name).stem
    number = 1 + sum(1 for _ in folder.glob(f"{stem}.*.ipynb"))
    return folder / f"{stem}.{number}.ipynb"


def open_in_lab(copy):
    """The notebooks of `copy` that a running JupyterLab has open: every server that serves
    the folder (jupyter_server's runtime files name them, with their tokens) is asked for its
    kernel sessions and for the tabs of its layout (a tab whose kernel was shut down has no
    session). A server that does not answer holds nothing open."""
    import urllib.request
    from jupyter_server.serverapp import list_running_servers
    found = set()
    for server in list_running_servers():
        if Path(server.get("root_dir", "")).resolve() != Path(copy).resolve():
            continue
        def ask(path):
            request = urllib.request.Request(server["url"].rstrip("/") + path, headers={
                "Authorization": f"token {server.get('token', '')}"})
            with urllib.request.urlopen(request, timeout=5) as response:
                return json.loads(response.read())
        try:
            found |= {session["path"] for session in ask("/api/sessions")}
            layout = ask("/lab/api/workspaces/default").get("data", {})
        except (OSError, ValueError):
            continue
        found |= {entry.get("data", {}).get("path") for key, entry in layout.items()
                  if key.startswith("notebook:") and isinstance(entry, dict)}
    return {name for name in found if name}


def update(copy=COPY, source=SOURCE, trust=False, keep=()):
    """Bring every changed chapter up to date, keeping answers; return the names updated.

    Chapters named in `keep` (open in a running lab) are left as they are, still offered."""
    copy = Path(copy)
    added, changed = sync(copy, source, trust)
    manifest = read_manifest(copy)
    waiting = [name for name in changed if name in keep]
    changed = [name for name in changed if name not in keep]
    for name in changed:
        target = copy / name
        old = nbformat.read(target, as_version=4)
        fresh = edition_notebook(Path(source) / name)
        manifest[name] = digest(text_of(fresh))
        saved_earlier(copy, name).write_text(target.read_text())
        write_notebook(target, carried_over(fresh, old), trust)
    write_manifest(copy, manifest)
    if not waiting:
        (copy / UPDATES).unlink(missing_ok=True)
    return changed


def shown(path):
    here = Path.cwd()
    return path.relative_to(here) if path.is_relative_to(here) else path


def run(command="sync", where=None, edition=None):
    copy = Path(where or COPY).resolve()
    source = Path(edition) if edition else SOURCE
    if command == "edition":
        out = Path(where)
        written = write_edition(out)
        print(f"learner's edition: {len(written)} notebooks in {shown(out.resolve())}")
        return 0
    if command == "update":
        busy = open_in_lab(copy)
        updated = update(copy, source, trust=True, keep=busy)
        where = shown(copy)
        # what is still waiting is only what a running lab has open: anything else that still
        # differs from the new edition right after an update is not a learner's to fix
        waiting = [name for name in sync(copy, source)[1] if name in busy]
        if updated:
            print(f"Updated in {where}/, your answers kept: {', '.join(updated)} "
                  f"(your previous files are in {where}/{EARLIER}/).")
        elif not waiting:
            print(f"Every chapter in {where}/ is up to date.")
        if waiting:
            print(f"Not updated, open in JupyterLab: {', '.join(waiting)}. Saving that tab would "
                  "write your old version over the new one. Save your work, close the tab "
                  "(File > Close and Shut Down Notebook), then run make lab-update again.",
                  file=sys.stderr)
            return 1
        return 0
    if command != "sync":
        print(f"unknown command {command!r}: use sync, update or edition", file=sys.stderr)
        return 2
    added, changed = sync(copy, source, trust=True)
    where = shown(copy)
    if added:
        print(f"Your copy of the workbook is {where}/: added {len(added)} notebooks "
              f"(answers hidden; your work stays there). JupyterLab opens chapter 1; "
              f"{where}/{START}, linked under its title, says how your copy works.")
    else:
        print(f"Your copy of the workbook is {where}/ (your work stays there).")
    if changed:
        print(f"Newer versions of {', '.join(changed)} are available. Your copies are untouched; "
              "close their tabs, then `make lab-update` brings them in and keeps your answers "
              f"(also said in {where}/{UPDATES}).")
    return 0


def main(argv=None):
    """workbook-learner [sync|update|edition] [COPY] [EDITION]"""
    return run(*(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
