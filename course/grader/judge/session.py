"""One student's chapter: its cells and answers run in a sandbox, its checks run here.

This runs in the chapter's own judge process (judge.job), whose budget bounds whatever it costs.
The plan (course.grader.verdicts.plan) is the chapter's exercise section: its own cells, the
student's answer cells in place of the worked ones, and a check in place of each check cell. A
cell runs in the sandbox under the per-cell limit. A check asks the sandbox for the value its
cell names, then runs the check here (workbook.teaching.exercises.checks), on that value as data or, for
a function, on a Remote that calls it in the sandbox with cases drawn from a random.Random
seeded at grading time. Whatever a check lends that function stays here (judge.lending).

Time: a request that runs past its limit is interrupted (SIGINT, as a notebook's interrupt
button does); one that still does not answer after a grace period is killed with its sandbox,
and the chapter runs again in a new sandbox without that exercise's answer, so that the answers
after it are still graded. A sandbox that dies, or breaks the channel, is handled the same way.
"""
import importlib
import itertools
import random
import time
from dataclasses import dataclass, field

from course.grader import wire
from course.grader.chapters import own_cell
from course.grader.judge.lending import JudgeDecoder, JudgeEncoder, Lending, judge_error


@dataclass
class Job:
    """One student's chapter: the items to run, in order. An item is a dict with `kind`
    ("cell": the chapter's own; "answer": the student's; "check": the instructor's check),
    `source` (cells) or `module`, `attribute`, `expression` (checks), `exercise` and `cell_id`."""
    key: tuple
    items: list
    skip: set = field(default_factory=set)       # exercises whose answers stopped an earlier run
    stopped: dict = field(default_factory=dict)  # exercise -> (item kind, why its answer stopped a run)
    results: dict = field(default_factory=dict)  # item index -> outcome
    halted: str | None = None                    # why the chapter could not run to the end
    attempts: int = 0


class Stopped(BaseException):
    """The sandbox is gone: killed for not answering, dead, or no longer to be trusted. A
    BaseException, so that no check's `except Exception` takes it for the student's error."""


def in_words(item):
    """The item as a student can find it in their notebook (no cell ids)."""
    if item["kind"] == "cell":
        return own_cell(item["source"])
    if item["kind"] == "answer":
        return f"your answer cell for {item['exercise']}"
    return f"the check of {item['exercise']}"


class Session:
    """`sandboxes`: where a sandbox is had (start()) and how one ended is asked (status()).
    `doing(item)`, if given, is told each item as it starts."""

    def __init__(self, sandboxes, job, limit, grace, seed, doing=None):
        self.sandboxes, self.job, self.limit, self.grace, self.seed = sandboxes, job, limit, grace, seed
        self.doing = doing or (lambda item: None)
        # A check's own limit, just inside the cell's: a slow but right answer gets the time the
        # instructor allowed, and a loop ends as the check's "not yet", as in a notebook.
        self.check_limit = max(limit * 0.8, limit - 1)
        self.sandbox, self.lending, self.check_deadline = None, None, None
        self.numbers = itertools.count(1)

    # ------------------------------------------------------------------------- the chapter

    def run(self):
        job = self.job
        while True:
            job.attempts += 1
            job.results, current = {}, None
            try:
                self.sandbox = self.sandboxes.start()
            except Exception as error:  # noqa: BLE001 - no sandbox: the chapter cannot run
                job.halted = f"the grader could not start a sandbox ({type(error).__name__})"
                return job
            try:
                for index, item in enumerate(job.items):
                    skipped = item.get("exercise") in job.skip and item["kind"] != "cell"
                    if skipped and item["kind"] == "check":
                        continue
                    if skipped:  # an answer that stopped an earlier run: its stub keeps the names
                        item = dict(item, source=item["stub"])
                    current = index
                    self.doing(item)
                    job.results[index] = (self.check(item) if item["kind"] == "check"
                                          else self.cell(item))
                return job
            except Stopped as why:
                exercise = job.items[current].get("exercise") if current is not None else None
                if job.items[current]["kind"] != "cell" and exercise not in job.skip:
                    job.skip.add(exercise)
                    job.stopped[exercise] = (job.items[current]["kind"], str(why))
                    continue
                where = in_words(job.items[current]) if current is not None else "the chapter"
                job.halted = f"{where} {why}"
                return job
            finally:
                self.sandbox.close()

    def cell(self, item):
        reply, interrupted = self.request({"op": "run", "source": item["source"]},
                                          time.monotonic() + self.limit)
        error = reply.get("error")
        return {"error": self.error_data(error), "timed_out": interrupted}

    @staticmethod
    def error_data(error):
        if error is None:
            return None
        if type(error) is not dict:
            raise Stopped("broke the grader's channel")
        name = "".join(c for c in str(error.get("type", ""))[:80] if c.isprintable())
        return {"ename": name or "an exception", "evalue": str(error.get("message", ""))[:500]}

    def check(self, item):
        exercise = getattr(importlib.import_module(item["module"]), item["attribute"])
        limit = exercise.seconds or self.check_limit
        reply, interrupted = self.request({"op": "bind", "expression": item["expression"]},
                                          time.monotonic() + self.limit)
        if interrupted or "raise" in reply:
            error = reply.get("raise") or {"type": "KeyboardInterrupt", "message": ""}
            return {"error": self.error_data(error), "timed_out": interrupted}
        self.lending = Lending()
        self.check_deadline = time.monotonic() + limit
        rng = random.Random(f"{self.seed}/{exercise.number}")
        try:
            value = JudgeDecoder(self, self.lending)(reply.get("value"))
            verdict = exercise.decide(value, limit, lambda answer: exercise.run(answer, rng),
                                      passes=(Stopped,))
        except (wire.WireError, ValueError, TypeError, RecursionError):  # a value not to be read
            self.sandbox.kill()
            raise Stopped("broke the grader's channel") from None
        finally:
            self.lending.close()
            self.lending, self.check_deadline = None, None
        return {"verdict": {"exercise": verdict.exercise, "status": verdict.status,
                            "sentence": verdict.sentence}, "timed_out": False}

    # ----------------------------------------------------------- the student's functions

    def call(self, ident, args, kwargs):
        """Call the student's function `ident` in the sandbox (Remote.__call__)."""
        from workbook.teaching.exercises import OutOfTime
        if self.lending is None:
            raise RuntimeError("a student's function is called only while a check runs")
        encode = JudgeEncoder(self.lending)
        reply, interrupted = self.request(
            {"op": "call", "target": ident, "args": encode(list(args)), "kwargs": encode(dict(kwargs))},
            self.check_deadline)
        if interrupted:
            raise OutOfTime()
        try:
            if "raise" in reply:
                error = judge_error(reply["raise"] if type(reply["raise"]) is dict else {})
            else:
                return JudgeDecoder(self, self.lending)(reply.get("value"))
        except (wire.WireError, ValueError, TypeError, RecursionError):
            self.sandbox.kill()
            raise Stopped("broke the grader's channel") from None
        raise error

    # ------------------------------------------------------------------------ the channel

    def request(self, message, deadline):
        """Send a request; answer the sandbox's questions until its reply comes. Returns (reply,
        whether it had to be interrupted). Raises Stopped when the sandbox is gone."""
        number = next(self.numbers)
        sock = self.sandbox.sock
        try:
            wire.send(sock, dict(message, id=number))
        except OSError:
            raise Stopped(self.why_gone()) from None
        interrupted = False
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                if interrupted:
                    self.sandbox.kill()
                    raise Stopped(f"did not stop when interrupted at the {self.limit:g} s limit")
                self.sandbox.interrupt()
                interrupted = True
                deadline = time.monotonic() + self.grace
                continue
            sock.settimeout(left)
            try:
                reply = wire.receive(sock)
            except TimeoutError:
                continue
            except (EOFError, OSError):
                raise Stopped(self.why_gone()) from None
            except wire.WireError:
                self.sandbox.kill()
                raise Stopped("broke the grader's channel") from None
            if "rpc" in reply:
                self.answer(reply, usable=not interrupted)
                continue
            if reply.get("id") != number or "broken" in reply:
                self.sandbox.kill()
                raise Stopped("broke the grader's channel")
            return reply, interrupted

    def answer(self, question, usable):
        """The judge's answer to a question about something it lent."""
        lending = self.lending if usable else None
        try:
            if lending is None:
                raise LookupError("nothing is lent now: the check has ended")
            reply = {"reply": question["rpc"], "value": lending.answer(question)}
        except (KeyboardInterrupt, SystemExit):
            raise
        except wire.WireError:
            self.sandbox.kill()
            raise Stopped("broke the grader's channel") from None
        except BaseException as error:  # noqa: BLE001 - the lent object's error is the answer
            reply = {"reply": question.get("rpc"), "raise": wire.error_of(error)}
        try:
            wire.send(self.sandbox.sock, reply)
        except OSError:
            raise Stopped(self.why_gone()) from None

    def why_gone(self):
        status = self.sandboxes.status(self.sandbox)
        if status is None:
            return "broke the grader's channel"
        if status < 0:
            return f"ended the Python process (signal {-status})"
        return f"ended the Python process (exit code {status})"
