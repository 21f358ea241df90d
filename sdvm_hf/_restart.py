"""Reading a source once on the chance that it need not be read twice.

A stream that must know a whole file before it gives its first batch (a JSON Lines file's
column types) can instead guess them from the file's start and check every later batch,
when its reader can throw away what it was given and read again: a writer of a temporary
file, say. The reader says so by reading inside :func:`at_most_twice`; the stream checks
:func:`may_restart`, opens a :func:`guess` while it reads on a guess, and on a wrong guess
raises :class:`StartAgain` before it gives a batch the guess got wrong. The reader then
reads once more, outside, where the stream reads the whole file first. It also reads once
more when anything else went wrong while a guess was open (the guessed types may have made
the conversion fail: a column missing from the first block, text that looked like dates),
and when it stopped reading before a guess was checked to the end (``take``): what it was
given then may not be what the whole file gives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["StartAgain", "at_most_twice", "guess", "may_restart", "restartable"]

T = TypeVar("T")


@dataclass
class _Run:
    open: int = 0
    """Guesses made and not yet checked to the end of their file."""


_RUN: ContextVar[_Run | None] = ContextVar("sdvm_hf_restartable", default=None)


class StartAgain(Exception):
    """A stream read inside :func:`restartable` guessed wrong: read it again, outside."""


@contextmanager
def restartable() -> Iterator[_Run]:
    """Streams read inside (and by threads started inside) may read on a guess."""
    run = _Run()
    token = _RUN.set(run)
    try:
        yield run
    finally:
        _RUN.reset(token)


def may_restart() -> bool:
    """Whether this read is inside :func:`restartable`."""
    return _RUN.get() is not None


@contextmanager
def guess() -> Iterator[None]:
    """A stream reads on a guess inside: it counts as checked only if the block ends."""
    run = _RUN.get()
    if run is not None:
        run.open += 1
    yield
    if run is not None:  # not on an error, nor when the reader stopped early (GeneratorExit)
        run.open -= 1


def at_most_twice(run: Callable[[], T]) -> T:
    """``run()`` inside :func:`restartable`; once more outside it when a guess was not good.

    Again when a stream asked (:class:`StartAgain`), when ``run`` raised while a guess was
    open, and when it returned before every guess was checked. ``run`` must leave nothing
    behind when it raises (a temporary file discarded), and its result is replaced.
    """
    try:
        with restartable() as state:
            result = run()
        if not state.open:
            return result
    except StartAgain:
        pass
    except Exception:
        if not state.open:
            raise
    # here, out of the handler, the first run's exception and the streams its frames held
    # are let go (their threads stopped) before the file is read again
    return run()
