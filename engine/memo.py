"""Caching a derived value per immutable object (a registry, a catalog, a card list), keyed by identity.

Hashing a large frozen model on every call is the cost we want to avoid, so the key is id(obj); the entry keeps
the object alive, so its id cannot be reused by another object while the entry exists.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def by_identity(maxsize: int = 8) -> Callable[[Callable[[T], R]], Callable[[T], R]]:
    def decorate(build: Callable[[T], R]) -> Callable[[T], R]:
        entries: dict[int, tuple[T, R]] = {}

        @wraps(build)
        def cached(obj: T) -> R:
            entry = entries.get(id(obj))
            if entry is not None and entry[0] is obj:
                return entry[1]
            value = build(obj)
            if len(entries) >= maxsize:
                entries.clear()
            entries[id(obj)] = (obj, value)
            return value

        return cached

    return decorate
