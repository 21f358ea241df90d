"""Progress bars (tqdm, rows and rate on stderr) for long conversions and validations.

A bar is drawn only when stderr is a terminal, and never inside :func:`quiet` (the command's
``--quiet``), nor when ``datasets`` progress bars are turned off
(``datasets.disable_progress_bars()`` or ``HF_DATASETS_DISABLE_PROGRESS_BARS``). It appears
after half a second, so a small input never shows one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import IO, Any

_QUIET: ContextVar[bool] = ContextVar("sdvm_hf_quiet", default=False)


@contextmanager
def quiet(on: bool = True) -> Iterator[None]:
    """Within this block, draw no progress bar (when ``on``)."""
    token = _QUIET.set(on or _QUIET.get())
    try:
        yield
    finally:
        _QUIET.reset(token)


def _datasets_bars_off() -> bool:
    bars = sys.modules.get("datasets.utils.tqdm")
    if bars is not None:
        return bool(bars.are_progress_bars_disabled())
    value = os.environ.get("HF_DATASETS_DISABLE_PROGRESS_BARS", "").upper()
    return value in {"1", "ON", "YES", "TRUE"}


def disabled(stream: IO[str] | None = None) -> bool:
    """Whether a bar on ``stream`` (default: stderr) stays hidden."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return _QUIET.get() or not (isatty is not None and isatty()) or _datasets_bars_off()


def bar(total: int | None, desc: str, stream: IO[str] | None = None) -> Any:
    """A bar counting rows (``update(n)``), hidden when :func:`disabled` says so."""
    from tqdm import tqdm  # on the first bar, not on import (start-up time)

    stream = sys.stderr if stream is None else stream
    return tqdm(
        total=total,
        desc=desc,
        unit=" rows",
        unit_scale=True,
        file=stream,
        delay=0.5,
        leave=False,
        disable=disabled(stream),
        dynamic_ncols=True,
    )
