"""Overhead: each store call against the floor (same SQL, no validation, no JSON)."""

import os
import tempfile

from bench.timing import (fitted_batch, interleave, median, paired_ratio,
                          ratio_quartiles, spread)
from bench.workload import NOW, TTL, PAYLOADS, kind_of, lay_rows

OPS = ("put", "get", "forget", "purge")
TENANT = "orchard"
SLOTS = 8          # put/get cycle over 8 live keys, alternating fact and checkpoint
BASE_ROWS = 200    # other tenants' rows, so no statement runs on an empty table


class Bench:
    """One implementation's database, its live keys and their current revisions."""

    def __init__(self, impl, path):
        self.impl = impl
        self.db = impl.connect(path)
        lay_rows(self.db, [(f"t{i % 4}", kind_of(i), f"b{i}", 10**12 + i, NOW + TTL)
                           for i in range(BASE_ROWS)])
        self.slots = [(kind_of(i), f"k{i}", impl.value(PAYLOADS[kind_of(i)]))
                      for i in range(SLOTS)]
        self.revs = {}
        for kind, key, value in self.slots:
            self.revs[kind, key] = impl.put(self.db, TENANT, kind, key, value,
                                            None, NOW, TTL)
        self.serial = 0

    def close(self):
        self.db.close()

    # Each prepare_* does the untimed set-up of one batch and returns the timed loop.

    def prepare_put(self, r, n):
        put, db, revs, slots = self.impl.put, self.db, self.revs, self.slots
        calls = [slots[i % len(slots)] for i in range(n)]

        def loop():
            for kind, key, value in calls:
                revs[kind, key] = put(db, TENANT, kind, key, value, revs[kind, key],
                                      NOW, TTL)
            return n
        return loop

    def prepare_get(self, r, n):
        get, db = self.impl.get, self.db
        calls = [self.slots[i % len(self.slots)][:2] for i in range(n)]

        def loop():
            for kind, key in calls:
                get(db, TENANT, kind, key, NOW)
            return n
        return loop

    def prepare_forget(self, r, n):
        forget, db = self.impl.forget, self.db
        base = 10**9 + self.serial
        self.serial += n
        calls = [(kind_of(i), f"f{i}", base + i) for i in range(n)]
        lay_rows(db, [(TENANT, k, key, rev, NOW + TTL) for k, key, rev in calls])

        def loop():
            for kind, key, revision in calls:
                forget(db, TENANT, kind, key, revision)
            return n
        return loop

    def prepare_purge(self, r, n):
        purge, db = self.impl.purge, self.db
        tenants = [f"p{i}" for i in range(n)]
        lay_rows(db, [(t, "fact", "old", 10**11 + i, NOW - 1)
                      for i, t in enumerate(tenants)])

        def loop():
            for tenant in tenants:
                purge(db, tenant, NOW)
            return n
        return loop


MAX_BATCH_MS = 40   # a batch of the slowest implementation; bounds file runs on slow disks


def measure(impls, backend, plan, max_batch_ms=MAX_BATCH_MS):
    """plan: {op: (rounds, most ops per batch)}. One result dict per (op, implementation).

    On a file the batch is shrunk when one batch of the slowest implementation would take
    longer than max_batch_ms (timing.fitted_batch): a slow disk sync then costs fewer
    operations per round, not a longer run.
    """
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as folder:
        benches = {}
        for impl in impls:
            path = ":memory:" if backend == "memory" else os.path.join(folder, f"{impl.name}.db")
            benches[impl.name] = Bench(impl, path)
        results = []
        try:
            for op in OPS:
                rounds, batch = plan[op]
                contenders = {name: getattr(b, f"prepare_{op}")
                              for name, b in benches.items()}
                if backend == "file":   # only a disk's sync can make a batch slow
                    batch = fitted_batch(contenders, batch, max_batch_ms)
                samples = interleave(contenders, rounds, batch)
                for name, values in samples.items():
                    results.append({
                        "backend": backend, "op": op, "impl": name,
                        "median_ns": median(values),
                        "ratio": paired_ratio(samples, name, "floor"),
                        "ratio_iqr": ratio_quartiles(samples, name, "floor"),
                        "iqr": spread(values), "rounds": rounds, "batch": batch})
        finally:
            for b in benches.values():
                b.close()
    return results
