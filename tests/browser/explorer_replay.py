"""The workbook's time explorer as the page shows it, replayed step by step against the store's own
functions (tests/browser/: every notebook's explorers, and chapter 5's again and again)."""
import re
from pathlib import Path

from workbook.store import Conflict, connect, forget, get, purge, put
from workbook.teaching.timeline import checkpoint, fact

from labpage import WAIT


HEADER = re.compile(r"step (\d+) of (\d+) · now = (\d+)((?: \(clock pass \d+\))?) · (.+)")


def operation_and_outcome(did):
    """The header's last part ("get ... returns None", "put ... raises Conflict", "the file is
    closed and reopened", "the clock is set to 104") as the operation and its outcome."""
    if did == "the file is closed and reopened":
        return "reopen", "reopened"
    if re.fullmatch(r"the clock is set to \d+", did):
        return "clock", "clock set"
    return re.fullmatch(r"(.+) (?:returns|raises) (.+)", did).groups()
IDENTITY = r"([a-z][a-z0-9-]*) / ([a-z]+) / ([a-z][a-z0-9-]*)"


def read_explorer(explorer):
    return explorer.evaluate("""root => {
        const rows = table => [...table.querySelectorAll('tbody tr')]
            .map(tr => [...tr.cells].map(td => td.textContent));
        const tables = [...root.querySelectorAll('.workbook-explorer-tables table')].map(rows);
        return {header: root.querySelector('.workbook-explorer-status b').textContent,
                gets: tables[0], rows: tables[1],
                image: root.querySelector('img.workbook-explorer-picture').src,
                slider: root.querySelector('.workbook-explorer-readout')?.textContent.trim(),
                spoken: root.querySelector('[role=status][aria-live=polite]').textContent,
                valuetext: root.querySelector('input[type=range]').getAttribute('aria-valuetext'),
                alt: root.querySelector('img.workbook-explorer-picture').alt};
    }""")


def value_for(kind):
    return checkpoint(0) if kind == "checkpoint" else fact()


def answer(db, path, now, operation):
    """Do what the header says with the store's own functions; return the connection and outcome."""
    try:
        if m := re.fullmatch(f"put {IDENTITY} expected (\\w+) ttl (\\d+)", operation):
            tenant, kind, key, expected, ttl = m.groups()
            expected = None if expected == "None" else int(expected)
            return db, f"revision {put(db, tenant, kind, key, value_for(kind), expected, now, int(ttl))}"
        if m := re.fullmatch(f"get {IDENTITY}", operation):
            record = get(db, *m.groups(), now)
            return db, "None" if record is None else f"revision {record['revision']}"
        if m := re.fullmatch(f"forget {IDENTITY} revision (\\w+)", operation):
            *name, revision = m.groups()
            return db, str(forget(db, *name, None if revision == "None" else int(revision)))
        if m := re.fullmatch(r"purge ([a-z][a-z0-9-]*)", operation):
            return db, f"{purge(db, m[1], now)} removed"
        if operation == "reopen":
            db.close()
            return connect(path), "reopened"
        if operation == "clock":
            return db, "clock set"
    except (Conflict, ValueError) as error:
        return db, type(error).__name__
    raise AssertionError(f"the explorer shows an operation the test cannot replay: {operation}")


def announce_the_whole_step(explorer):
    """Press the explorer's button for the whole step; the live region's text once it says it."""
    explorer.get_by_role("button", name="Announce the whole step").click()
    explorer.page.wait_for_function(
        "root => root.querySelector('[role=status][aria-live=polite]').textContent"
        ".includes('get returns: ')", arg=explorer.element_handle(), timeout=WAIT)
    return read_explorer(explorer)["spoken"]


def step_to(explorer, key, step, image=None):
    """Press a key on the slider; wait until the state and the picture show ``step``."""
    explorer.get_by_role("slider", name="step").press(key)
    explorer.page.wait_for_function(
        "([root, step, image]) => root.querySelector('.workbook-explorer-status b')"
        ".textContent.startsWith(`step ${step} of`)"
        " && root.querySelector('img.workbook-explorer-picture').src != image",
        arg=[explorer.element_handle(), step, image], timeout=WAIT)
    return read_explorer(explorer)


def check_explorer(explorer, folder):
    """Step from the first operation to the last; each state must be what the store answers."""
    path = Path(folder) / "replay.db"
    db = connect(path)
    images = set()
    try:
        explorer.get_by_role("slider", name="step").focus()
        shown = step_to(explorer, "Home", 1)
        last = int(HEADER.fullmatch(shown["header"])[2])
        for step in range(1, last + 1):
            if step > 1:
                shown = step_to(explorer, "ArrowRight", step, shown["image"])
            at, _, now, passing, did = HEADER.fullmatch(shown["header"]).groups()
            operation, outcome = operation_and_outcome(did)
            assert shown["slider"] == str(step)  # the slider counts as the header does
            # what a screen reader hears: the slider's value text, the live region (what
            # changed and the operation, in short; never the step again), and on request, from
            # the button, the whole step (what get returned for every identity), and the alt
            assert shown["valuetext"] == f"step {step} of {last}"
            assert shown["spoken"].endswith(f"({did}, now {now}{passing}).") and "get returns: " not in shown["spoken"]
            assert f"step {step} of" not in shown["spoken"]
            whole = announce_the_whole_step(explorer)
            assert whole.startswith(f"{did}, now {now}{passing}. get returns: "), whole
            assert all(f"{identity} {returns}" in whole for identity, returns, _ in shown["gets"])
            assert f"cursor at step {step} of {last}" in shown["alt"]
            now = int(now)
            db, said = answer(db, path, now, operation)
            assert (int(at), said) == (step, outcome), shown["header"]
            gets = {}
            for identity, returns, expires in shown["gets"]:
                record = get(db, *identity.split(" / "), now)
                expected = ("None", "") if record is None else (
                    f"revision {record['revision']}", str(record["expires"]))
                assert (returns, expires) == expected, (shown["header"], identity)
                gets[identity] = record
            raw = sorted(db.execute("SELECT tenant, kind, key, revision, expires FROM records"))
            assert shown["rows"] in ([], [["no rows"]]) or all(len(r) == 4 for r in shown["rows"])
            listed = sorted((*identity.split(" / "), int(revision), int(expires))
                            for identity, revision, expires, _ in
                            [r for r in shown["rows"] if len(r) == 4])
            assert listed == [tuple(r) for r in raw], shown["header"]
            for identity, _, _, visible in [r for r in shown["rows"] if len(r) == 4]:
                assert visible == ("hidden" if gets[identity] is None else "visible")
            images.add(shown["image"])
        # one picture per step: the cursor moves even between operations at the same tick
        assert len(images) == last, "the picture did not change at every step"
        return last
    finally:
        db.close()
