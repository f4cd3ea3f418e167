"""Exercises with check(), hint() and solution(), answering in one friendly sentence.

In a chapter:

    from workbook.teaching.exercises.ch1 import q1, ____
    wide_fact = ____      # the blank to replace with your answer
    q1.check(wide_fact)   # Exercise 1.1: correct: ...  |  not yet: ...  |  not attempted. ...
    q1.hint()             # the first hint; q1.hint(2) the next one
    q1.solution()         # a worked answer (hidden when WORKBOOK_HIDE_SOLUTIONS=1)

A checker runs the learner's answer against the real store, under a time limit. It raises
NotYet with one sentence when the answer is wrong; anything else the learner's code raises,
a loop that never ends and an interrupt all become a one-sentence verdict too, never a
traceback.

Each chapter's module (ch1.py ... ch6.py) holds what an exercise asks: its task, hints, points
and any data the question shows. What decides a verdict lives apart, in the checks package
(checks/ch1.py ...), imported only when a check runs: the class and grading editions of the
package leave that package and answers.json out, so that nothing a student's code can read
there gives an answer away. In those editions check() says that the grader will judge it.

The worked answers are not attributes of an exercise: `make export` copies them out of the
chapters' solution cells into answers.json, and solution() reads that file when asked. That
keeps them off the screen (no repr, tab completion or error shows them), but hidden is not
secret: in the self-study edition anyone can open the file.
"""
import base64
import functools
import importlib
import json
import os
import signal
import sys
import threading
from dataclasses import dataclass, field
from importlib import resources

__all__ = ["Exercise", "InChecks", "NotYet", "Verdict", "____"]

SECONDS = 5  # the default time limit of one check; WORKBOOK_CHECK_SECONDS changes it


class NotYet(Exception):
    """Raised by a checker: the answer runs but is not right yet; the message says why."""


class NotAttempted(BaseException):
    """A learner's function returned ____: not written yet. A BaseException, so that a checker
    or an answer catching Exception passes it on."""


class OutOfTime(BaseException):
    """The check's time limit passed. A BaseException, so `except Exception` cannot swallow it."""


class ChecksAbsent(Exception):
    """This edition of the package has no checks package: the class and grading editions."""


@dataclass(frozen=True)
class InChecks:
    """A function of the checks package, `workbook.teaching.exercises.checks.<chapter>.<name>`, imported
    when it is first called, so that a chapter's module imports without it."""
    chapter: str
    name: str

    def __call__(self, *args, **kwargs):
        module = f"{__name__}.checks.{self.chapter}"
        try:
            found = importlib.import_module(module)
        except ModuleNotFoundError as error:
            if error.name in (f"{__name__}.checks", module):
                raise ChecksAbsent() from None
            raise
        return getattr(found, self.name)(*args, **kwargs)


class Placeholder:
    """The blank ____ that an exercise cell asks the learner to replace."""

    _the_one = None

    def __new__(cls):
        if cls._the_one is None:
            cls._the_one = super().__new__(cls)
        return cls._the_one

    def __repr__(self):
        return "____"


____ = Placeholder()


def holds_placeholder(value, depth=0):
    """Whether ____ is the answer or sits somewhere inside a list, tuple, set or dict of it."""
    if value is ____:
        return True
    if depth > 20:
        return False
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(holds_placeholder(item, depth + 1) for item in value)
    return False


def unless_blank(function):
    """The learner's function, refusing to count a call that still returns the placeholder."""
    @functools.wraps(function)
    def called(*args, **kwargs):
        result = function(*args, **kwargs)
        if holds_placeholder(result):
            raise NotAttempted()
        return result
    return called


def time_limit():
    """The limit in seconds: WORKBOOK_CHECK_SECONDS if it is a positive number, else SECONDS."""
    try:
        seconds = float(os.environ.get("WORKBOOK_CHECK_SECONDS", SECONDS))
    except ValueError:
        return SECONDS
    return seconds if seconds > 0 else SECONDS


def within(seconds, function, *args):
    """Run function(*args), raising OutOfTime if it is still running after `seconds`.

    In the main thread (a notebook cell) an alarm signal interrupts the learner's code where it
    is. Elsewhere (no signals in threads, or no SIGALRM on Windows) the call runs in a daemon
    thread and the check stops waiting for it; the runaway thread is left behind.
    """
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        def expire(signum, frame):
            raise OutOfTime()
        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return function(*args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    outcome = {}

    def run():
        try:
            outcome["value"] = function(*args)
        except BaseException as error:  # carried back to the caller's thread
            outcome["error"] = error
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise OutOfTime()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def plural(seconds):
    return f"{seconds:g} second" + ("" if seconds == 1 else "s")


@functools.cache
def answers():
    """Exercise number -> worked answer, decoded from answers.json (written by make export)."""
    stored = json.loads(resources.files(__name__).joinpath("answers.json").read_text())
    return {number: base64.b64decode(code).decode("utf-8") for number, code in stored.items()}


@dataclass(frozen=True)
class Verdict:
    exercise: str
    status: str  # "correct", "not yet" or "not attempted"
    sentence: str
    # the name, when the answer raised NameError: check() then says what to run first
    undefined: str = field(default=None, compare=False, repr=False)

    def __str__(self):
        if self.status == "not attempted":
            return f"Exercise {self.exercise}: not attempted. {self.sentence}"
        return f"Exercise {self.exercise}: {self.status}: {self.sentence}"

    @property
    def correct(self):
        return self.status == "correct"


BLANK = "Replace the ____ with your answer, run that cell, then run this check again."
BLANK_AND_STUB = ("Replace the ____ with your answer and delete any raise NotImplementedError() "
                  "line, run that cell, then run this check again.")
ELSEWHERE = ("this copy of the workbook holds no checks, so that nothing in it gives an answer "
             "away: your instructor's grader checks this answer when you hand in your work.")
NOT_SHOWN = ("this copy of the workbook does not run the real sequence, so that nothing in it "
             "gives an answer away: your instructor's feedback compares your prediction with it.")
RAISED = ("the cell you ran just before this check raised an error, so a grader would not count "
          "its answer (a leftover raise NotImplementedError() counts too); fix it, run it, then "
          "run this check again.")


def the_cell_before_raised():
    """In a notebook: whether the cell run just before this one ended with an exception."""
    if "IPython" not in sys.modules:
        return False
    shell = sys.modules["IPython"].get_ipython()
    return shell is not None and getattr(shell, "last_execution_succeeded", True) is False
STUB = "Your function still raises NotImplementedError; write its body first."


def raised(error):
    """An exception as the end of a sentence: "KeyError: 'nope'." or "ZeroDivisionError."."""
    # a database error's first line, not its LINE/HINT lines; any text on one line
    primary = getattr(getattr(error, "diag", None), "message_primary", None)
    text = " ".join(str(primary or error).split())
    name = type(error).__name__
    if not text:
        return name + "."
    return f"{name}: {text}" + ("" if text.endswith((".", "!", "?")) else ".")


@dataclass
class Exercise:
    number: str             # "1.1": chapter and exercise
    task: str               # one sentence: what to produce
    checker: object         # checker(answer) -> praise sentence; raises NotYet
    hints: list = field(default_factory=list)
    points: int = 1         # what a correct answer earns in a gradebook (make grade and nbgrader)
    seconds: float = None   # this check's time limit, if it needs more than the default
    # reveal(answer, show=True): the real run beside a prediction; with show=False it only
    # raises NotYet for a prediction of the wrong form
    reveal: object = field(default=None, repr=False)

    def verdict(self, answer=None, seconds=None, rng=None):
        """The verdict on `answer`, which runs in this process under the check's time limit.
        `rng` (a random.Random) lets the check add cases of its own choosing to the chapter's;
        the grader passes one seeded at grading time, so no answer can know them in advance."""
        limit = seconds or self.seconds or time_limit()
        return self.decide(answer, limit, lambda answer: within(limit, self.run, answer, rng))

    def run(self, answer, rng=None):
        """The checker on `answer`: its sentence of praise, or NotYet with the reason."""
        return self.checker(answer) if rng is None else self.checker(answer, rng=rng)

    def decide(self, answer, limit, attempt, passes=()):
        """The verdict from `attempt(answer)`, which runs the checker: verdict() runs it here,
        the grader runs it where the answer is a stand-in for code in a sandbox. Exceptions of
        the types in `passes` (the grader's own) are not the answer's, and pass through."""
        if answer is None or answer is Ellipsis or holds_placeholder(answer):
            return Verdict(self.number, "not attempted", BLANK)
        if callable(answer):
            answer = unless_blank(answer)
        try:
            praise = attempt(answer)
        except NotYet as reason:
            return Verdict(self.number, "not yet", str(reason))
        except NotAttempted:
            return Verdict(self.number, "not attempted",
                           "Your function still returns ____; replace that line with your code.")
        except NotImplementedError:
            return Verdict(self.number, "not attempted", STUB)
        except OutOfTime:
            return Verdict(self.number, "not yet",
                           f"your answer was still running after {plural(limit)}, this check's "
                           "time limit; look for a loop that never ends.")
        except KeyboardInterrupt:
            return Verdict(self.number, "not yet",
                           "the check was interrupted before your answer finished; run it again "
                           f"and it stops by itself after {plural(limit)}.")
        except ChecksAbsent:
            raise
        except (SystemExit, GeneratorExit, *passes):
            raise
        except BaseException as error:  # the learner's code failed: say how, without a traceback
            name = getattr(error, "name", None) if type(error) is NameError else None
            return Verdict(self.number, "not yet", f"running your answer raised {raised(error)}",
                           undefined=name)
        return Verdict(self.number, "correct", praise)

    def check(self, answer=None, seconds=None):
        try:
            verdict = self.verdict(answer, seconds)
        except ChecksAbsent:
            print(f"Exercise {self.number}: {ELSEWHERE}")
            return
        from workbook.teaching.exercises.kernel import setup_missing
        missing = setup_missing(self.number, verdict.undefined)
        if missing:
            # a right answer can call a name that the exercises' first cell imports, run later
            print(f"Exercise {self.number}: {missing}")
            return
        if the_cell_before_raised():
            # As a grader sees it (make grade, nbgrader): an answer cell that raised counts for
            # nothing, even if it set the answer before it raised.
            verdict = (Verdict(self.number, "not attempted", BLANK_AND_STUB)
                       if verdict.status == "not attempted"
                       else Verdict(self.number, "not yet", RAISED))
        print(verdict)

    def compare(self, answer=None, reveal=False):
        """Show the real run beside a prediction: at once for a prediction that matches it, and
        for any other only when asked with reveal=True, since the run gives the answer away.
        Until then a wrong prediction learns, from check(), how many entries are wrong and the
        first rule it breaks, never the true values."""
        if answer is None or answer is Ellipsis or holds_placeholder(answer):
            print(f"Exercise {self.number}: make your prediction first; this cell then shows "
                  "the real outcome beside it.")
            return None
        try:
            if not reveal:
                self.reveal(answer, show=False)  # a prediction of the wrong form: NotYet, why
                verdict = self.verdict(answer)
                if not verdict.correct:
                    name = "q" + self.number.split(".")[1]
                    print(f"Exercise {self.number}: {verdict.status}: {verdict.sentence} The run "
                          "itself gives the answer away, so it waits until you ask for it: "
                          f"{name}.compare(your prediction, reveal=True).")
                    return None
            return self.reveal(answer)
        except NotYet as reason:
            print(f"Exercise {self.number}: {reason}")
        except ChecksAbsent:
            print(f"Exercise {self.number}: {NOT_SHOWN}")
        return None

    def hint(self, level=1):
        if not self.hints:
            print(f"Exercise {self.number}: no hint for this one; reread the task: {self.task}")
            return
        asked, level = level, max(1, min(level, len(self.hints)))
        name = "q" + self.number.split(".")[1]
        more = f" ({name}.hint({level + 1}) for more)" if level < len(self.hints) else ""
        last = f" (there is no hint {asked})" if asked > len(self.hints) else ""
        print(f"Exercise {self.number}, hint {level} of {len(self.hints)}{last}: "
              f"{self.hints[level - 1]}{more}")

    def solution(self):
        hidden = os.environ.get("WORKBOOK_HIDE_SOLUTIONS") == "1"
        if not hidden and not resources.files(__name__).joinpath("answers.json").is_file():
            hidden = True  # the class and grading editions ship no worked answers
        if hidden:
            print(f"Exercise {self.number}: solutions are hidden in this edition; ask your instructor.")
            return
        print(f"Exercise {self.number}, a solution:\n\n{answers()[self.number].strip()}")
