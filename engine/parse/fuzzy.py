"""rapidfuzz's `fuzz` and `process`, imported at the first fuzzy comparison, not at every start.

Most questions name models and cards exactly, so `cardfit ask` need not pay rapidfuzz's import (~12-30 ms of a
cold start that must stay within 150 ms of `python -c pass`). After the first use each name is a plain
attribute: no cost per comparison.
"""
from __future__ import annotations

import importlib
from typing import Any


class _LazyModule:
    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(importlib.import_module(self._name), attribute)
        setattr(self, attribute, value)  # found on the instance from now on; __getattr__ is not called again
        return value


fuzz = _LazyModule("rapidfuzz.fuzz")
process = _LazyModule("rapidfuzz.process")
