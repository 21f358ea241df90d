"""Published answers (an index, a letter, the text of a choice) to answer indexes, vectorised."""

from __future__ import annotations

import re
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf.convert._cells import is_text
from sdvm_hf.errors import LayoutError

AnswerFormat = Literal["index", "letter", "text"]

# The exact published spelling of an index: no sign, no leading zero, no space.
_INDEX = r"^(0|[1-9][0-9]{0,17})$"


def answer_index(
    raw: pa.Array, choices: pa.Array, answer_format: AnswerFormat, where: str
) -> pa.Array:
    """Each row's answer as an int64 index; null where it cannot be read (the range is not checked).

    ``"index"`` takes integers and the exact published spelling of one as text (HellaSwag's
    ``"3"``; never ``"03"``, ``" 3"`` or a float); ``"letter"`` takes ``"A"``, ``"B"``, ...;
    ``"text"`` finds the answer among the row's choices. A column whose type can hold no
    answer at all is a :class:`LayoutError`.
    """
    if pa.types.is_null(raw.type):  # no value at all (one row of None, read from a dict)
        return pa.nulls(len(raw), pa.int64())
    if answer_format == "letter":
        return _letters_to_index(raw)
    if answer_format == "text":
        if not is_text(raw.type):
            raise LayoutError(
                f"{where} has type {raw.type}; expected text for answer_format='text'"
            )
        return _text_to_index(raw.cast(pa.string()), choices)
    if pa.types.is_integer(raw.type):
        fits = pc.less_equal(raw, 2**62) if pa.types.is_unsigned_integer(raw.type) else None
        return (raw if fits is None else pc.if_else(fits, raw, None)).cast(pa.int64())
    if pa.types.is_floating(raw.type):
        return pa.nulls(len(raw), pa.int64())
    if is_text(raw.type):
        exact = pc.fill_null(pc.match_substring_regex(raw, _INDEX), False)
        return pc.if_else(exact, raw, None).cast(pa.int64())
    raise LayoutError(
        f"{where} has type {raw.type}; expected integers or text for answer_format='index'"
    )


def expected_answer(dtype: pa.DataType, count: int, answer_format: AnswerFormat) -> str:
    """What a valid answer looks like for a row with ``count`` choices, for error messages."""
    last = count - 1
    if answer_format == "letter":
        return f"a letter 'A'..{chr(ord('A') + last)!r}"
    if answer_format == "text":
        return f"the text of one of the {count} choices"
    if pa.types.is_integer(dtype) or pa.types.is_floating(dtype):
        return f"an index 0..{last}"
    return f"'0'..'{last}'"


def _letters_to_index(raw: pa.Array) -> pa.Array:
    """``"A"`` -> 0, ``"B"`` -> 1, ...; anything else -> null.

    Works on the few distinct values (dictionary encoding), never row by row.
    """
    if not is_text(raw.type) or pa.types.is_null(raw.type):
        return pa.nulls(len(raw), pa.int64())
    encoded = raw.dictionary_encode()
    letters = encoded.dictionary.to_pylist()
    mapped = pa.array(
        [ord(s) - ord("A") if re.fullmatch("[A-Z]", s or "") else None for s in letters],
        pa.int64(),
    )
    return mapped.take(encoded.indices)


def _text_to_index(answers: pa.Array, choices: pa.Array) -> pa.Array:
    """Position of each row's answer text among its choices (first match), else null."""
    parents = pc.list_parent_indices(choices)
    flat = pc.list_flatten(choices)
    matches = pc.fill_null(pc.equal(flat, answers.take(parents)), False)
    starts = choices.offsets.slice(0, len(choices)).cast(pa.int64()).take(parents)
    positions = pc.subtract(pa.array(np.arange(len(flat), dtype=np.int64)), starts)
    found = pa.table({"row": parents, "position": positions}).filter(matches)
    first = found.group_by("row").aggregate([("position", "min")])
    index = np.zeros(len(answers), dtype=np.int64)
    missing = np.ones(len(answers), dtype=bool)
    rows = first.column("row").to_numpy()
    index[rows] = first.column("position_min").to_numpy()
    missing[rows] = False
    return pa.array(index, mask=missing)
