"""The floor plus only the JSON work the spec's store does: a lower bound for the overhead targets.

`put` encodes the value as the spec's payload() does (sorted keys, ASCII escapes; with the
store's prebuilt encoder, the fastest way the standard library offers) and measures its UTF-8
size; `get` parses the stored body and encodes the result again for the same size check, as
the spec's get does through payload(). Nothing else: no identity, integer or schema checks.

So a store that validates the spec's way, with the standard library's `json`, cannot beat
this column: where it misses a limit, meeting that limit needs something other than `json`
(a hand-written encoder, a read that skips the re-encoding), not tidier validation.
"""

import json

from bench import floor
from bench.floor import connect, forget, purge  # noqa: F401 - the same calls as the floor
from workbook.validation import ENCODE

__all__ = ["connect", "get", "put", "forget", "purge"]


def put(db, tenant, kind, key, value, expected, now, ttl):
    body = ENCODE(value)
    len(body.encode("utf-8"))   # what the size check costs; no limit is enforced here
    return floor.put(db, tenant, kind, key, body, expected, now, ttl)


def get(db, tenant, kind, key, now):
    row = floor.get(db, tenant, kind, key, now)
    if row is None:
        return None
    revision, expires, _, body = row
    value = json.loads(body.decode("utf-8"))
    len(ENCODE(value).encode("utf-8"))   # the spec's payload() re-encodes only to measure
    return {"revision": revision, "expires": expires, "value": value}
