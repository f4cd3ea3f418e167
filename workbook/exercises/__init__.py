"""Exercises with check(), hint() and solution(), answering in one friendly sentence.

In a chapter:

    from workbook.exercises.ch1 import q1
    q1.check(my_answer)   # Exercise 1.1: correct. ...  |  not yet: ...  |  not attempted ...
    q1.hint()             # the first hint; q1.hint(2) the next one
    q1.solution()         # the worked answer (hidden when WORKBOOK_HIDE_SOLUTIONS=1)

A checker runs the learner's answer against the real store. It raises NotYet with one
sentence when the answer is wrong; anything else the learner's code raises becomes a
one-sentence verdict too, never a traceback.
"""
import os
from dataclasses import dataclass, field

__all__ = ["Exercise", "NotYet", "Verdict"]


class NotYet(Exception):
    """Raised by a checker: the answer runs but is not right yet; the message says why."""


@dataclass(frozen=True)
class Verdict:
    exercise: str
    status: str  # "correct", "not yet" or "not attempted"
    sentence: str

    def __str__(self):
        if self.status == "not attempted":
            return f"Exercise {self.exercise}: not attempted. {self.sentence}"
        return f"Exercise {self.exercise}: {self.status}: {self.sentence}"

    @property
    def correct(self):
        return self.status == "correct"


@dataclass
class Exercise:
    number: str             # "1.1": chapter and exercise
    task: str               # one sentence: what to produce
    checker: object         # checker(answer) -> praise sentence; raises NotYet
    hints: list = field(default_factory=list)
    answer: str = ""        # the worked solution, as code
    points: int = 1         # what a correct answer earns in a gradebook (make grade and nbgrader)

    def verdict(self, answer=None):
        if answer is None or answer is Ellipsis:
            return Verdict(self.number, "not attempted",
                           "Replace the placeholder with your answer, run the cell, then check again.")
        try:
            praise = self.checker(answer)
        except NotYet as reason:
            return Verdict(self.number, "not yet", str(reason))
        except NotImplementedError:
            return Verdict(self.number, "not attempted",
                           "Your function still raises NotImplementedError; write its body first.")
        except Exception as error:  # the learner's code failed: say how, without a traceback
            return Verdict(self.number, "not yet",
                           f"running your answer raised {type(error).__name__}: {error}")
        return Verdict(self.number, "correct", praise)

    def check(self, answer=None):
        print(self.verdict(answer))

    def hint(self, level=1):
        if not self.hints:
            print(f"Exercise {self.number}: no hint for this one; reread the task: {self.task}")
            return
        level = max(1, min(level, len(self.hints)))
        name = "q" + self.number.split(".")[1]
        more = f" ({name}.hint({level + 1}) for more)" if level < len(self.hints) else ""
        print(f"Exercise {self.number}, hint {level} of {len(self.hints)}: {self.hints[level - 1]}{more}")

    def solution(self):
        if os.environ.get("WORKBOOK_HIDE_SOLUTIONS") == "1":
            print(f"Exercise {self.number}: solutions are hidden in this edition; ask your instructor.")
            return
        print(f"Exercise {self.number}, a solution:\n\n{self.answer.strip()}")
