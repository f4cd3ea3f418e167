"""One student's chapter, from its plan to a verdict per exercise: what a judge decides and sends.

    plan(chapter, found)            the chapter's exercise section with the student's answers in
                                    place of the worked ones, and the instructor's checks
    marks_for(chapter, job, ...)    one verdict per exercise ({exercise, status, sentence}) from
                                    what the run reported, and notes

Both run in a judge process (course.grader.judge.job); the grader turns the verdicts into points
(course.grader.gradebook), from the exercise modules' own points.
"""
import re

from course.grader.chapters import own_cell
from course.notebook import nbgrader_stubbed
from course.grader.text import clean

STATUSES = ("correct", "not yet", "not attempted", "error", "missing", "ungradable")
# A NameError in a graded answer is most often a helper the student wrote in a cell of its own.
NAME_ERROR = re.compile(r"\bNameError\b")
ONLY_ANSWER_CELLS = ("Grading runs only your answer cells, so a helper, import or value you "
                     "defined in another cell is missing there; put it inside the answer cell.")


def plan(chapter, found):
    """The chapter's exercise section (its code cells from the heading "## Exercises" up to its
    last check), with the student's answers in place of the author's and the instructor's check
    in place of each check cell. The section's first cell imports what its exercises use."""
    answer_of = {e.answer_id: e for e in chapter.exercises}
    check_of = {e.check_id: e for e in chapter.exercises}
    cells = chapter.exercise_cells()
    last = max(i for i, cell in enumerate(cells) if cell.get("id") in check_of)
    items = []
    for cell in cells[:last + 1]:
        cell_id = cell.get("id")
        if cell_id in answer_of:
            exercise = answer_of[cell_id]
            stub = nbgrader_stubbed(cell.source)
            answer = found.get(exercise.number)
            items.append({"kind": "answer", "exercise": exercise.number, "cell_id": cell_id,
                          "source": answer.source if answer else stub, "stub": stub})
        elif cell_id in check_of:
            exercise = check_of[cell_id]
            items.append({"kind": "check", "exercise": exercise.number, "cell_id": cell_id,
                          "module": exercise.module, "attribute": exercise.attribute,
                          "expression": exercise.expression})
        else:
            items.append({"kind": "cell", "cell_id": cell_id, "source": cell.source,
                          "tolerated": "raises-exception" in cell.metadata.get("tags", [])})
    return items


def items_in(chapter):
    """How many items the chapter's plan has (its budget of time grows with them)."""
    return len(plan(chapter, {}))


def error_text(error):
    value = clean(error.get("evalue", ""), 160)
    return error["ename"] + (f" ({value})" if value else "")


def marks_for(chapter, job, found, limit):
    """One verdict per exercise of the chapter from what its run reported, and notes."""
    results, items = job.results, job.items
    where = {(item["kind"], item.get("exercise")): index for index, item in enumerate(items)
             if item["kind"] != "cell"}
    first_answer = min(where[("answer", e.number)] for e in chapter.exercises)
    limit_text = f"the {limit:g} s limit"

    def outcome(index):
        return results.get(index)

    # A chapter's own cell that fails before any answer runs: nothing in the chapter can be graded.
    for index, item in enumerate(items[:first_answer]):
        result = outcome(index)
        if result is None:
            return [mark(e, "ungradable", f"the chapter stopped before any answer ran: {job.halted}.")
                    for e in chapter.exercises], []
        if result["timed_out"] or (result.get("error") and not item["tolerated"]):
            what = (f"did not finish within {limit_text}" if result["timed_out"]
                    else f"raised {error_text(result['error'])}")
            return [mark(e, "ungradable", f"{own_cell(item['source'])} {what} "
                                          "before any answer ran; tell your instructor.")
                    for e in chapter.exercises], []

    marks = []
    for exercise in chapter.exercises:
        n = exercise.number
        answer, check = outcome(where[("answer", n)]), outcome(where[("check", n)])
        if n not in found:
            marks.append(mark(exercise, "missing",
                              f"your notebook for chapter {chapter.number} has no answer cell for {n}."))
        elif n in job.stopped:
            kind, why = job.stopped[n]
            if kind == "answer":
                marks.append(mark(exercise, "error", f"your answer to {n} {why}."))
            else:
                marks.append(mark(exercise, "error", f"while being checked, your answer to {n} {why}."))
        elif answer is None:
            marks.append(mark(exercise, "ungradable", f"the chapter stopped before your answer to {n} "
                                                      f"ran: {job.halted}."))
        elif answer["timed_out"]:
            marks.append(mark(exercise, "error", f"your answer to {n} did not finish within {limit_text}."))
        elif answer.get("error") and answer["error"]["ename"] == "NotImplementedError":
            if untouched(items[where[("answer", n)]]):
                marks.append(mark(exercise, "not attempted", "Your answer cell still holds the stub; "
                                  "put your answer in place of it."))
            else:
                marks.append(mark(exercise, "error", f"your answer to {n} never ran to its end: the "
                                  "stub's raise NotImplementedError() is still in the cell; delete it "
                                  "(and # YOUR CODE HERE) so your answer counts."))
        elif answer.get("error"):
            marks.append(mark(exercise, "error", f"{error_text(answer['error'])} in your answer to {n}.",
                              helper_hint(answer["error"]["ename"])))
        elif check is None:
            marks.append(mark(exercise, "ungradable", f"the chapter stopped before your answer to {n} "
                                                      f"was checked: {job.halted}."))
        elif check["timed_out"]:
            marks.append(mark(exercise, "error", f"checking your answer to {n} did not finish within "
                                                 f"{limit_text}."))
        elif check.get("error"):
            marks.append(mark(exercise, "error", f"{error_text(check['error'])} while checking your "
                                                 f"answer to {n}.", helper_hint(check["error"]["ename"])))
        else:
            verdict = check["verdict"]
            if verdict["exercise"] != n or verdict["status"] not in ("correct", "not yet", "not attempted"):
                marks.append(mark(exercise, "error", f"the check of {n} gave no verdict."))
            else:
                hint = helper_hint(verdict["sentence"]) if verdict["status"] == "not yet" else None
                marks.append(mark(exercise, verdict["status"], verdict["sentence"], hint))
        marks[-1]["found_by"] = found[n].found_by if n in found else None
    notes = []
    for index, item in enumerate(items[first_answer:], start=first_answer):
        result = outcome(index)
        if item["kind"] == "cell" and result and not item["tolerated"] and (result["timed_out"] or result.get("error")):
            what = (f"did not finish within {limit_text}" if result["timed_out"]
                    else f"raised {error_text(result['error'])}")
            notes.append(f"chapter {chapter.number}: {own_cell(item['source'])} {what} after "
                         "your answers ran; it uses what an answer cell defines or changes.")
    return marks, notes


def untouched(item):
    """Whether an answer cell holds nothing but its stub: every line of code it has is a line of
    the stub (the ____ placeholder line and nbgrader's two lines)."""
    def lines(source):
        return {line.strip() for line in source.splitlines() if line.strip()}
    return lines(item["source"]) <= lines(item["stub"])


def helper_hint(text):
    """ONLY_ANSWER_CELLS when the failure (an exception's name, or a check's sentence) is a
    NameError, else None."""
    return ONLY_ANSWER_CELLS if NAME_ERROR.search(text) else None


def mark(exercise, status, sentence, hint=None):
    """A verdict as plain data; `hint`, a sentence of the grader's own, follows the (cut)
    sentence in full."""
    sentence = clean(sentence)
    if hint:
        sentence = sentence + ("" if sentence.endswith((".", "!", "?", "...")) else ".") + f" {hint}"
    return {"exercise": exercise.number, "status": status, "sentence": sentence}
