"""The table form of a rule: a batch of published rows rendered at once, with Arrow kernels.

A rule may give, beside its row builder, a table builder (:data:`TableBuild`) for the shapes
that have one (cloze, so far): from a published Arrow table it makes the documents' columns
(:class:`ClozeColumns`). Its contract is the row builder's output, string for string: where
Arrow's kernels cannot say a row exactly as Python does (a null, a label ``int`` reads and a
cast does not), the row is marked ``slow`` and the row builder renders it, or raises its
error. The helpers here are Python's string methods on Arrow arrays, exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["ClozeColumns", "TableBuild", "capitalized", "changed_where", "stripped"]


class ClozeColumns(NamedTuple):
    """A batch of documents in the cloze shape (:func:`~sdvm_hf.formulations._shapes.cloze`).

    The document is ``head``'s columns, then ``query``, ``choices`` and ``gold``; the
    requests are ``(query, " " + choice)``.
    """

    head: pa.Table
    """The document's leading fields (HellaSwag's ``ind``), one column each."""
    query: pa.Array
    choices: pa.Array
    """A list of strings per row."""
    gold: pa.Array
    native_id: pa.Array
    slow: np.ndarray
    """Per row: whether the row builder renders it instead (its value or its error)."""


TableBuild = Callable[[pa.Table, "str | None"], "ClozeColumns | None"]
"""A table builder: the published table and configuration to columns; ``None``: the row form
renders every row of this table."""


def stripped(strings: pa.Array) -> pa.Array:
    """``str.strip()`` of each string: Unicode whitespace off both ends.

    Arrow's whitespace (utf8proc's) is ``str.isspace``'s, character for character: a test
    checks every code point.
    """
    return pc.utf8_trim_whitespace(strings)


def changed_where(
    strings: pa.Array, where: pa.Array, change: Callable[[pa.Array], pa.Array]
) -> pa.Array:
    """``strings`` with ``change`` made to those ``where`` says (the others as they are).

    Arrow's replacing kernels cost about as much for a string they leave as for one they
    change: a cheap search first spares them most strings.
    """
    which = np.flatnonzero(where.to_numpy(zero_copy_only=False))
    if not len(which):
        return strings
    changed = change(strings.take(which))
    order = np.arange(len(strings))
    order[which] = len(strings) + np.arange(len(which))
    return pa.concat_arrays([strings, changed.cast(strings.type)]).take(order)


def capitalized(strings: pa.Array) -> pa.Array:
    """``str.capitalize()`` of each string (no nulls).

    Arrow's kernel upper-cases ASCII as Python does; beyond ASCII Python title-cases the
    first character and lower-cases the rest with its own special cases (``ß``, final sigma),
    so those strings are Python's own.
    """
    capital = pc.ascii_capitalize(strings)
    other = pc.invert(pc.string_is_ascii(strings))
    if pc.any(other).as_py():
        which = np.flatnonzero(other.to_numpy(zero_copy_only=False))
        texts = [text.capitalize() for text in strings.take(which).to_pylist()]
        capital = pc.replace_with_mask(capital, other, pa.array(texts, capital.type))
    return capital
