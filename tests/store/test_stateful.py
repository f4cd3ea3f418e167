"""Hypothesis drives the store (a real file) and the dictionary model with the same steps.

Steps: put, get at a deadline, forget, purge, move the clock either way, and close and
reopen the file. After every step every get, every physical row and the counter agree.
The machine runs once per backend (the `backend` fixture); on PostgreSQL "the file" is a
store on the server and reopening it is a new connection, with fewer examples there.
"""
from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (RuleBasedStateMachine, initialize, invariant, rule,
                                 run_state_machine_as_test)

from soak import scaled
from workbook.reference import Reference, outcome

TENANTS = ("orchard", "harbour")
KINDS = ("checkpoint", "fact")
KEYS = ("a", "b")

names = st.tuples(st.sampled_from(TENANTS), st.sampled_from(KINDS), st.sampled_from(KEYS))
texts = st.text(min_size=0, max_size=300)   # sometimes empty or too long: then both refuse
checkpoints = st.fixed_dictionaries(
    {"schema": st.just(1), "step": st.integers(0, 3), "items": st.lists(texts, max_size=9)})
facts = st.fixed_dictionaries(
    {"schema": st.just(1), "text": texts, "source": texts, "reviewed": st.booleans()})


class StoreAgainstModel(RuleBasedStateMachine):
    backend = None              # set by the test below
    checked = 0                 # invariant checks, for the figures

    def __init__(self):
        super().__init__()
        self.folder = TemporaryDirectory()
        self.path = Path(self.folder.name) / "machine.db"
        self.db = self.backend.connect(self.path)
        self.model = Reference()
        self.now = 100
        self.issued = []            # revisions put has returned: tokens, fresh or stale

    def same(self, store_says, model_says):
        assert store_says == model_says

    def token(self, data, name):
        """A revision to pass as `expected`: the current one, a stale one, or any."""
        row = self.model.rows.get(name)
        choices = [None, 1, self.model.counter + 1] + self.issued[-5:]
        if row is not None:
            choices += [row[0]] * 3
        return data.draw(st.sampled_from(choices))

    @initialize(start=st.sampled_from([0, 0, 2**63 - 4]))
    def start_counter(self, start):
        # Near the top of the counter, a few writes reach the last revision there is.
        self.backend.set_counter(self.db, start)
        self.model.counter = start

    @rule(name=names, data=st.data(), ttl=st.integers(1, 30))
    def put(self, name, data, ttl):
        value = data.draw(checkpoints if name[1] == "checkpoint" else facts)
        expected = self.token(data, name)
        result = outcome(self.backend.put, self.db, *name, value, expected, self.now, ttl)
        self.same(result, outcome(self.model.put, *name, value, expected, self.now, ttl))
        if result[0] == "returned":
            self.issued.append(result[1])

    @rule(name=names, offset=st.sampled_from([-1, 0, 1]))
    def get_at_deadline(self, name, offset):
        row = self.model.rows.get(name)
        when = self.now if row is None else row[1] + offset
        self.same(outcome(self.backend.get, self.db, *name, when), outcome(self.model.get, *name, when))

    @rule(name=names, data=st.data())
    def forget(self, name, data):
        expected = self.token(data, name) or 1
        self.same(outcome(self.backend.forget, self.db, *name, expected),
                  outcome(self.model.forget, *name, expected))

    @rule(tenant=st.sampled_from(TENANTS))
    def purge(self, tenant):
        self.same(outcome(self.backend.purge, self.db, tenant, self.now),
                  outcome(self.model.purge, tenant, self.now))

    @rule(seconds=st.integers(-30, 30))
    def move_clock(self, seconds):
        self.now = max(0, self.now + seconds)

    @rule()
    def reopen(self):
        self.db.close()
        self.db = self.backend.connect(self.path)

    @invariant()
    def agree(self):
        type(self).checked += 1
        for name in [(t, k, key) for t in TENANTS for k in KINDS for key in KEYS]:
            self.same(self.backend.get(self.db, *name, self.now), self.model.get(*name, self.now))
        self.same(self.backend.physical_rows(self.db), self.model.physical_rows())
        self.same(self.backend.counter(self.db), self.model.counter)
        assert not self.db.in_transaction

    def teardown(self):
        self.db.close()
        self.folder.cleanup()


def test_store_against_model(backend, figures):
    machine = type(f"StoreAgainstModelOn{backend.name.title()}", (StoreAgainstModel,),
                   {"backend": backend, "checked": 0})
    run_state_machine_as_test(machine, settings=settings(
        max_examples=backend.size(scaled(60, 1000)), stateful_step_count=scaled(30, 50),
        deadline=None, suppress_health_check=[HealthCheck.too_slow]))
    assert machine.checked > 0
    figures[backend.figure("stateful steps checked against the model")] += machine.checked
