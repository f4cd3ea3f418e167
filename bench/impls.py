"""The implementations a benchmark compares, each a namespace of the five store calls.

- store:     workbook.store, the package as it is in this tree.
- reference: workbook/specification/store.py, the specification's code verbatim.
- floor:     bench.floor, the same SQL without validation or JSON.
- json only: bench.json_only, the floor plus only the spec's JSON encoding and decoding
             (a lower bound for any store that validates with the standard library's json).
"""

import importlib
import json
from dataclasses import dataclass
from types import ModuleType

from bench import floor


@dataclass
class Impl:
    name: str
    module: ModuleType
    raw_body: bool = False  # the floor's put takes the encoded body, not the value

    def __getattr__(self, attr):
        return getattr(self.module, attr)

    def value(self, value):
        """What this implementation's put takes for a payload."""
        if self.raw_body:
            return json.dumps(value, sort_keys=True, ensure_ascii=True)
        return value


def store():
    return Impl("store", importlib.import_module("workbook.store"))


def floor_impl():
    return Impl("floor", floor, raw_body=True)


def json_only():
    return Impl("json only", importlib.import_module("bench.json_only"))


def reference():
    return Impl("reference", importlib.import_module("workbook.specification.store"))


def load():
    """floor, store, reference and json only: the contenders `make bench` compares."""
    return [floor_impl(), store(), reference(), json_only()]
