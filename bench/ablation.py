"""Which part of the proposal buys what: `python -m bench.ablation` (about 30 s).

Measures put and get in memory against the floor, in one interleaved run, for the store,
the proposal (bench/proposal.diff, not adopted) and the proposal with one of its three parts
put back as the store has it:

- "without name memo":       identity() is the store's (two regex matches per call);
- "without template":        payload() encodes with the store's ENCODE again;
- "without fast read path":  stored() is the store's (json.loads, then payload() re-encodes).

It rebinds module globals of the proposal's functions, so it depends on the proposal's
names (identity, payload, shape, stored); it is a review aid for the proposal, not part of
`make bench`.
"""

import types
from types import SimpleNamespace

from bench import impls, overhead
from bench.impls import Impl

PLAN = {"put": (121, 150), "get": (121, 500), "forget": (1, 5), "purge": (1, 5)}


def _rebound(function, **names):
    """A copy of `function` whose module globals have `names` replaced."""
    namespace = dict(function.__globals__)
    namespace.update(names)
    return types.FunctionType(function.__code__, namespace, function.__name__,
                              function.__defaults__, function.__closure__)


def variants(proposal, store):
    v = proposal.payload.__globals__
    shape = v["shape"]

    def dumps_payload(kind, value):
        shape(kind, value)
        encoded = v["ENCODE"](value)   # the store's module-level encoder
        size = len(encoded.encode("utf-8"))
        if size > v["MAX_BYTES"]:
            raise ValueError(f"{kind} payload is {size} bytes as JSON; the limit is "
                             f"{v['MAX_BYTES']}")
        return encoded

    store_stored = store.get.__globals__["stored"]
    parts = {
        "without name memo": {"identity": store.identity},
        "without template": {"payload": dumps_payload},
        "without fast read path": {"stored": _rebound(store_stored,
                                                      payload=proposal.payload)},
    }
    out = []
    for name, swap in parts.items():
        stored = swap.get("stored", proposal.get.__globals__["stored"])
        if "payload" in swap:
            stored = _rebound(stored, payload=swap["payload"])
        get = _rebound(proposal.get, identity=swap.get("identity", proposal.identity),
                       stored=stored)
        put = _rebound(proposal.put, identity=swap.get("identity", proposal.identity),
                       payload=swap.get("payload", proposal.payload))
        out.append(Impl(name, SimpleNamespace(connect=proposal.connect, get=get, put=put,
                                              forget=proposal.forget,
                                              purge=proposal.purge)))
    return out


def main():
    keep = []
    try:
        proposal = impls.proposal(keep=keep)
        store = impls.store()
        contenders = [impls.floor_impl(), store, proposal] + variants(proposal.module,
                                                                      store.module)
        results = overhead.measure(contenders, "memory", PLAN)
    finally:
        for folder in keep:
            folder.cleanup()
    print("| variant | put / floor | get / floor |\n|---|---:|---:|")
    for c in contenders[1:]:
        row = {r["op"]: r for r in results if r["impl"] == c.name}
        print(f"| {c.name} | {row['put']['ratio']:.2f}× | {row['get']['ratio']:.2f}× |")


if __name__ == "__main__":
    main()
