"""Read-only JSON containers: a sample's ``extra``, ``choices`` and blocks cannot change.

:class:`FrozenDict` and :class:`FrozenList` subclass ``dict`` and ``list``, so they compare
equal to plain ones, serialise with ``json`` as before and pass ``isinstance`` checks; every
method that would change them raises ``TypeError``. :func:`freeze_json` checks a value is
JSON-compatible and returns a frozen deep copy of it in one pass.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any, NoReturn

from sdvm_hf.errors import PathPart, format_path

MAX_DEPTH = 32
"""How deeply lists and dicts may nest inside a value: deeper ones cannot be read back from
Parquet (its readers stop at about 100 schema levels, and a list takes two)."""


def _read_only(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(f"a sample's {type(self).__name__} is read-only; build a new sample instead")


class FrozenDict(dict[str, Any]):
    """A ``dict`` that cannot be changed (and so can be hashed)."""

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset((key, hashable(value)) for key, value in self.items()))


class FrozenList(list[Any]):
    """A ``list`` that cannot be changed (and so can be hashed)."""

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = clear = extend = insert = pop = remove = reverse = sort = _read_only

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(hashable(value) for value in self))


def frozen_copy(value: Any) -> Any:
    """A frozen deep copy of a value already known to be JSON-compatible (no checks)."""
    if isinstance(value, dict):
        return FrozenDict({key: frozen_copy(item) for key, item in value.items()})
    if isinstance(value, list):
        return FrozenList(frozen_copy(item) for item in value)
    return value


def hashable(value: Any) -> Hashable:
    """``value`` as something hashable that is equal exactly when the values are equal."""
    if isinstance(value, dict):
        return frozenset((key, hashable(item)) for key, item in value.items())
    if isinstance(value, list):
        return tuple(hashable(item) for item in value)
    return value  # type: ignore[no-any-return]


def _problem(path: tuple[PathPart, ...], text: str) -> ValueError:
    return ValueError(f"{format_path(path)} {text}")


def text_problem(value: str) -> str | None:
    """Say why ``value`` cannot travel as UTF-8 (a lone surrogate), ``None`` when it can."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"holds a lone surrogate {value[error.start]!r} at position {error.start}"
    return None


def freeze_json(value: Any, path: tuple[PathPart, ...], depth: int = 0) -> Any:
    """A frozen deep copy of a JSON-compatible ``value``; ``ValueError`` naming the path if not.

    JSON-compatible means str (valid Unicode), int, float (finite), bool, None, and lists and
    str-keyed dicts of those, nested at most :data:`MAX_DEPTH` deep.
    """
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, str):
        problem = text_problem(value)
        if problem:
            raise _problem(path, problem)
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _problem(path, f"is {value!r}, which JSON cannot carry")
        return value
    if isinstance(value, list | dict) and depth >= MAX_DEPTH:
        raise _problem(path, f"nests deeper than {MAX_DEPTH} levels, which Parquet cannot read")
    if isinstance(value, list):
        return FrozenList(freeze_json(item, (*path, i), depth + 1) for i, item in enumerate(value))
    if isinstance(value, dict):
        items = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _problem(path, f"has a key {type(key).__name__} {key!r}; JSON keys are str")
            problem = text_problem(key)
            if problem:
                raise _problem(path, f"has a key that {problem}")
            items[key] = freeze_json(item, (*path, key), depth + 1)
        return FrozenDict(items)
    raise _problem(
        path,
        "must be JSON-compatible (str, int, float, bool, None, list, dict with str keys), "
        f"got {type(value).__name__} {value!r}"[:160],
    )
