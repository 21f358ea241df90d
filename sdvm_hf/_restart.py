"""Reading a source once on the chance that it need not be read twice.

A stream that must know a whole file before it gives its first batch (a JSON Lines file's
column types) can instead take the types of the file's start and check every later batch
against them, when its reader can throw away what it was given and read again: a writer
of a temporary file, say. The reader says so by reading inside :func:`restartable` (or
:func:`at_most_twice`); the stream checks :func:`may_restart`, and on a wrong guess raises
:class:`StartAgain` before it gives a batch the guess got wrong. The reader then reads once
more, outside, where the stream reads the whole file first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["StartAgain", "at_most_twice", "may_restart", "restartable"]

T = TypeVar("T")

_RESTARTABLE: ContextVar[bool] = ContextVar("sdvm_hf_restartable", default=False)


class StartAgain(Exception):
    """A stream read inside :func:`restartable` guessed wrong: read it again, outside."""


@contextmanager
def restartable() -> Iterator[None]:
    """Streams read inside (and by threads started inside) may raise :class:`StartAgain`."""
    token = _RESTARTABLE.set(True)
    try:
        yield
    finally:
        _RESTARTABLE.reset(token)


def may_restart() -> bool:
    """Whether this read is inside :func:`restartable`."""
    return _RESTARTABLE.get()


def at_most_twice(run: Callable[[], T]) -> T:
    """``run()`` inside :func:`restartable`; once more outside it if a stream asked.

    ``run`` must leave nothing behind when it raises (a temporary file discarded).
    """
    try:
        with restartable():
            return run()
    except StartAgain:
        return run()
