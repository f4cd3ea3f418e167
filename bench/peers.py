"""Optional peer (`make bench WHAT=peers`, not in CI): LangGraph's SqliteStore beside ours.

Runs in the scratch venv build/peers-venv (langgraph-checkpoint-sqlite installed there by
the Makefile, never into .venv). Times put and get of both stores, interleaved, in
memory and on a file, and says what each call does, read from langgraph's installed
source (langgraph/store/sqlite/base.py, langgraph/store/base/__init__.py):

- SqliteStore.put(namespace, key, value, ttl=minutes): BEGIN (deferred) ... COMMIT
  around one `INSERT OR REPLACE`: last write wins, no revision and no compare-and-swap;
  the value must be a JSON-serialisable mapping (orjson), with no schema or size check.
- SqliteStore.get(namespace, key): BEGIN ... COMMIT around a SELECT by (prefix, key).
  With a TTL config whose refresh_on_read is true, it first runs an UPDATE that pushes
  expires_at forward: every read is a write. The SELECT does not filter on expires_at;
  expired items are removed by sweep_ttl()/the sweeper thread, not hidden on read.
- ours: put validates identity, integers and the payload schema, then BEGIN IMMEDIATE,
  compare-and-swap against the expected revision, a fresh global revision, upsert,
  COMMIT. get validates, selects only a row whose deadline is still ahead (reads never
  extend it), and re-validates the stored body (size, JSON, schema) before returning it.
"""

import json
import os
import platform
import sqlite3
import tempfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from bench import impls
from bench.report import us
from bench.timing import interleave, median, paired_ratio
from bench.workload import FACT, NOW, TTL

ROUNDS = {"memory": (15, 300), "file": (7, 30)}
GET_ROUNDS = {"memory": (15, 1000), "file": (7, 200)}


def langgraph_store(path, ttl):
    from langgraph.store.sqlite import SqliteStore
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    config = {"default_ttl": 60.0, "refresh_on_read": True} if ttl else None
    peer = SqliteStore(conn, ttl=config)
    peer.setup()
    return peer, conn


class Ours:
    def __init__(self, store, path):
        self.store = store
        self.db = store.connect(path)
        self.rev = store.put(self.db, "orchard", "fact", "preference", FACT, None, NOW, TTL)

    def prepare_put(self, r, n):
        db, put = self.db, self.store.put

        def loop():
            rev = self.rev
            for _ in range(n):
                rev = put(db, "orchard", "fact", "preference", FACT, rev, NOW, TTL)
            self.rev = rev
            return n
        return loop

    def prepare_get(self, r, n):
        db, get = self.db, self.store.get

        def loop():
            for _ in range(n):
                get(db, "orchard", "fact", "preference", NOW)
            return n
        return loop


class Peer:
    def __init__(self, path, ttl):
        self.store, self.conn = langgraph_store(path, ttl)
        self.store.put(("orchard", "fact"), "preference", FACT)

    def prepare_put(self, r, n):
        put = self.store.put

        def loop():
            for _ in range(n):
                put(("orchard", "fact"), "preference", FACT)
            return n
        return loop

    def prepare_get(self, r, n):
        get = self.store.get

        def loop():
            for _ in range(n):
                get(("orchard", "fact"), "preference")
            return n
        return loop


def measure(keep):
    results = []
    ours = impls.store().module
    try:
        proposal = impls.proposal(keep=keep).module
    except impls.ProposalError:
        proposal = None
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as folder:
        for backend in ("memory", "file"):
            def path(name):
                return ":memory:" if backend == "memory" else os.path.join(folder, name)
            contenders = {"ours": Ours(ours, path("ours.db")),
                          "langgraph": Peer(path("lg.db"), ttl=False),
                          "langgraph+ttl": Peer(path("lg-ttl.db"), ttl=True)}
            if proposal:
                contenders["ours, proposal"] = Ours(proposal, path("proposal.db"))
            for op, plan in (("put", ROUNDS), ("get", GET_ROUNDS)):
                rounds, batch = plan[backend]
                samples = interleave({name: getattr(c, f"prepare_{op}")
                                      for name, c in contenders.items()}, rounds, batch)
                for name in contenders:
                    results.append({"backend": backend, "op": op, "store": name,
                                    "median_ns": median(samples[name]),
                                    "vs_ours": paired_ratio(samples, name, "ours")})
    return results


def report(results):
    version = metadata.version("langgraph-checkpoint-sqlite")
    lines = ["# Peer: LangGraph SqliteStore beside the workbook store", "",
             f"langgraph-checkpoint-sqlite {version}, Python {platform.python_version()}, "
             f"SQLite {sqlite3.sqlite_version}. Same machine, same run, interleaved batches; "
             "the ratio is per round, then the median.", "",
             "| backend | op | store | median per op | vs ours |",
             "|---|---|---|---:|---:|"]
    for r in results:
        lines.append(f"| {r['backend']} | {r['op']} | {r['store']} | "
                     f"{us(r['median_ns'])} | {r['vs_ours']:.2f}× |")
    lines += ["", "What each call does:", "",
              "- **ours**: `put` validates identity, integers and the payload schema, "
              "takes BEGIN IMMEDIATE, compares the expected revision (compare-and-swap), "
              "allocates a global revision and upserts; `get` validates, returns only a row "
              "whose deadline is ahead (a read never extends it) and re-validates the stored "
              "body (size, JSON, schema).",
              "- **langgraph**: `put` is one `INSERT OR REPLACE` in a deferred transaction: "
              "last write wins, no revision, no compare-and-swap, no schema or size check "
              "(any JSON-serialisable mapping, via orjson). `get` is a SELECT in a "
              "transaction; it does not filter expired items (a sweeper deletes them).",
              "- **ours, proposal**: the same calls with bench/proposal.diff (not adopted) "
              "applied (when it applies), every validation kept.",
              "- **langgraph+ttl**: `ttl={'default_ttl': 60, 'refresh_on_read': True}`: "
              "`get` first runs an UPDATE that pushes `expires_at` forward, so every read "
              "is a write (on a file: a write transaction and its sync per read).",
              ""]
    return "\n".join(lines)


def main():
    out = ROOT / "build" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    keep = []
    try:
        results = measure(keep)
    finally:
        for folder in keep:
            folder.cleanup()
    text = report(results)
    (out / "peers.md").write_text(text)
    (out / "peers.json").write_text(json.dumps(results, indent=1))
    print(text)
    print(f"written: {out / 'peers.md'}")


if __name__ == "__main__":
    main()
