"""Growth: per-operation cost of get, put and purge as the records table grows.

All table sizes are built first (in memory, one database per size) and then measured
in interleaved rounds, so the curve compares sizes under the same machine conditions.
Rows are spread over TENANTS tenants; one more tenant, "small", keeps FIXED rows at
every size, which separates "purge scales with the tenant's rows" from "purge scales
with the whole table".
"""

import gc
import random
from time import perf_counter_ns

from bench import floor
from bench.timing import interleave, median, paired_difference, paired_ratio
from bench.workload import NOW, TTL, PAYLOADS, kind_of, lay_rows

TENANTS = 8
FIXED = 50           # rows of the tenant "small" at every table size
SMALL = "small"
HOT = 8              # keys the *_hot operations cycle over


class Table:
    """One database holding `size` rows, with the revisions of its keys tracked."""

    def __init__(self, impl, size, seed=7):
        self.impl, self.size = impl, size
        self.db = impl.connect(":memory:")
        rows, self.revs = [], {}
        spread = size - FIXED
        for i in range(size):
            tenant, index = ((SMALL, i) if i < FIXED else
                             (f"t{(i - FIXED) % TENANTS}", (i - FIXED) // TENANTS))
            kind, key = kind_of(index), f"k{index}"
            rows.append((tenant, kind, key, i + 1, NOW + TTL))
            self.revs[tenant, kind, key] = i + 1
        lay_rows(self.db, rows)
        self.db.execute("UPDATE sequence SET value=?", (size,))
        self.keys = list(self.revs)
        self.random = random.Random(seed)
        self.shared = spread // TENANTS   # rows per ordinary tenant
        self.serial = 0

    def close(self):
        self.db.close()

    def sample(self, n):
        return [self.keys[self.random.randrange(len(self.keys))] for _ in range(n)]

    def hot(self, n):
        """The same HOT keys over and over, as an agent re-reading its own checkpoints."""
        return [self.keys[FIXED + (i % HOT)] for i in range(n)]

    def prepare_get(self, r, n, hot=False):
        get, db = self.impl.get, self.db
        calls = self.hot(n) if hot else self.sample(n)

        def loop():
            for tenant, kind, key in calls:
                get(db, tenant, kind, key, NOW)
            return n
        return loop

    def prepare_put(self, r, n, hot=False):
        put, db, revs, impl = self.impl.put, self.db, self.revs, self.impl
        values = {k: impl.value(v) for k, v in PAYLOADS.items()}
        calls = [(t, k, key, values[k]) for t, k, key in (self.hot(n) if hot else
                                                           self.sample(n))]

        def loop():
            for tenant, kind, key, value in calls:
                revs[tenant, kind, key] = put(db, tenant, kind, key, value,
                                              revs[tenant, kind, key], NOW, TTL)
            return n
        return loop

    def prepare_get_hot(self, r, n):
        return self.prepare_get(r, n, hot=True)

    def prepare_put_hot(self, r, n):
        return self.prepare_put(r, n, hot=True)

    def _purge(self, tenant):
        """Each timed purge removes exactly one expired row, laid just before it."""
        purge, db = self.impl.purge, self.db

        def prepare(r, n):
            base = 10**12 + self.serial
            self.serial += n
            expired = [(tenant, "fact", f"x{i}", base + i, NOW - 1) for i in range(n)]

            def loop():
                # Per-operation timing: lay one expired row (untimed), then purge it.
                total = 0
                for row in expired:
                    lay_rows(db, [row])
                    start = perf_counter_ns()
                    purge(db, tenant, NOW)
                    total += perf_counter_ns() - start
                return n, total
            return loop
        return prepare

    def prepare_purge_small(self, r, n):
        return self._purge(SMALL)(r, n)

    def prepare_purge_shared(self, r, n):
        return self._purge("t0")(r, n)


def measure(impls, sizes, plan, purge_plan):
    """Per-operation cost at each table size.

    plan: {"get"|"put"|"get_hot"|"put_hot": (rounds, batch)}, for every implementation;
    purge_plan: {"purge_small"|"purge_shared": (rounds, batch)}, run for impls[0] only.
    Sizes (and implementations) are interleaved within each round.
    Returns ({op: {impl: [{size, median_ns, vs_smallest, tenant_rows}]}}, query plans).
    """
    tables = {(impl.name, size): Table(impl, size) for impl in impls for size in sizes}
    first = sizes[0]
    gc.collect()
    gc.freeze()    # the tables' key lists are permanent: keep them out of later collections
    try:
        curves = {}
        jobs = [(op, rounds_batch, [impl.name for impl in impls])
                for op, rounds_batch in plan.items()]
        jobs += [(op, rounds_batch, [impls[0].name])
                 for op, rounds_batch in purge_plan.items()]
        for op, (rounds, batch), names in jobs:
            samples = interleave({(name, size): getattr(tables[name, size], f"prepare_{op}")
                                  for name in names for size in sizes}, rounds, batch)
            curves[op] = {name: [{"size": size,
                                  "median_ns": median(samples[name, size]),
                                  "vs_smallest": paired_ratio(samples, (name, size),
                                                              (name, first)),
                                  "minus_floor_ns": (
                                      paired_difference(samples, (name, size),
                                                        ("floor", size))
                                      if "floor" in names else None),
                                  "tenant_rows": _tenant_rows(op, tables[name, size])}
                                 for size in sizes]
                          for name in names}
        plans = query_plans(tables[impls[0].name, sizes[-1]].db)
    finally:
        gc.unfreeze()
        for t in tables.values():
            t.close()
    return curves, plans


def _tenant_rows(op, table):
    if op == "purge_small":
        return FIXED
    if op == "purge_shared":
        return table.shared
    return None


def query_plans(db):
    """EXPLAIN QUERY PLAN of every statement the store runs, on the given database."""
    plans = {}
    for label, (sql, params) in floor.STATEMENTS.items():
        rows = db.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()
        plans[label] = {"sql": " ".join(sql.split()),
                        "plan": [row[3] for row in rows]}
    return plans
