"""The steps editions are made of: nbconvert preprocessors over the one notebook model.

Each edition is a declared list of these steps, applied in order to a copy of the author's
chapter (the way nbgrader declares its own preprocessors): course/editions/learner.py's
LEARNER, course/editions/release.py's steps for nbgrader's source and the hand-out, and
course/editions/html.py's HTML. What a directive cell, a solution region, an answer cell and the
exercise section are is course/notebook.py's to say; a step only decides what to do with them.
"""
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Unicode

from course.notebook import (REGION, at_top_level, exercises_start, is_answer_cell, is_directive_cell,
                             nbgrader_stubbed, replace_regions)


def apply(notebook, steps, resources=None):
    """The notebook after each step in turn (the steps change it in place)."""
    resources = {} if resources is None else resources
    for step in steps:
        notebook, resources = step.preprocess(notebook, resources)
    return notebook


class DropDirectiveCells(Preprocessor):
    """Cells of nbdev directives alone go: they export nothing from a copy."""

    def preprocess(self, nb, resources):
        nb.cells = [cell for cell in nb.cells if not is_directive_cell(cell)]
        return nb, resources


class BlankSolutions(Preprocessor):
    """The learner's edition: a solution region at the top of a cell goes, leaving the
    `name = ____` line before it; one inside a function becomes `stub`, so the function runs and
    its check says "not attempted"."""

    stub = Unicode("return ____  # replace this line with your code")

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and REGION.search(cell.source):
            cell.source = replace_regions(cell.source, lambda indent: f"{indent}{self.stub}\n" if indent else "")
        return cell, resources


class StubSolutions(Preprocessor):
    """The hand-out: each answer cell's region becomes nbgrader's stub, as generate_assignment
    writes it; the cell cannot be deleted. A stub at the top of a cell raises when run, so the
    cell is tagged to let Run All go on past it."""

    def preprocess_cell(self, cell, resources, index):
        if is_answer_cell(cell) and REGION.search(cell.source):
            cell.source = nbgrader_stubbed(cell.source)
            cell.metadata["deletable"] = False
        return cell, resources


class TagRaisingAnswers(Preprocessor):
    """An answer cell whose region sits at its top level raises NotImplementedError once
    nbgrader stubs it: tag it raises-exception, so that Run All goes on past it."""

    def preprocess_cell(self, cell, resources, index):
        if is_answer_cell(cell) and at_top_level(cell.source):
            tags = cell.metadata.setdefault("tags", [])
            if "raises-exception" not in tags:
                tags.append("raises-exception")
        return cell, resources


class ClearOutputs(Preprocessor):
    """No execution counts (the numbers a reader sees are their own run's) and no outputs, or,
    with exercises_only, no outputs only in the exercise section and in answer cells: a verdict
    or a printed run there could give an answer away, while the teaching cells before keep
    theirs so that a chapter reads well before it is run."""

    exercises_only = Bool(False)

    def preprocess(self, nb, resources):
        start = exercises_start(nb.cells)
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            if not self.exercises_only or index >= start or is_answer_cell(cell):
                cell.outputs = []
            cell.execution_count = None
            cell.metadata.pop("execution", None)
            for output in cell.outputs:
                if "execution_count" in output:
                    output["execution_count"] = None
        return nb, resources
