"""Published answers (an index, a letter, the text of a choice, ...) to answer indexes, vectorised.

=============  ==========================================================================
format         the answer column holds
=============  ==========================================================================
``index``      the 0-based position: an integer, or its exact spelling as text (HellaSwag
               ``"3"``; never ``"03"``, ``" 3"`` or a float)
``one_based``  the 1-based position: an integer, or a string of digits (Social IQa
               ``"1"``, Winogrande ``"2"``); whitespace around a string is ignored
               (Social IQa's raw label files end each label with a line break)
``letter``     ``"A"`` for the first choice, ``"B"`` for the second, ...
``text``       the text of the correct choice (its first equal choice in the row)
``label``      one of the row's labels, a list column parallel to the choices (ARC's
               ``answerKey`` ``"C"`` or ``"3"`` among ``choices.label``); exactly one must match
``one_hot``    a list of 0/1 flags parallel to the choices with exactly one 1 (TruthfulQA's
               ``mc1_targets.labels``)
=============  ==========================================================================
"""

from __future__ import annotations

import re
from typing import Literal, get_args

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._wire import shorten
from sdvm_hf.arrow import is_list
from sdvm_hf.convert._cells import is_text
from sdvm_hf.errors import InputError, LayoutError

AnswerFormat = Literal["index", "one_based", "letter", "text", "label", "one_hot"]

ANSWER_FORMATS: tuple[str, ...] = get_args(AnswerFormat)
"""Every answer format, in the order the docs name them."""

# The exact published spelling of an index: no sign, no leading zero, no space.
_INDEX = r"^(0|[1-9][0-9]{0,17})$"
_ONE_BASED = r"^[1-9][0-9]{0,17}$"  # the same, from 1


def answer_index(
    raw: pa.Array,
    choices: pa.Array,
    answer_format: AnswerFormat,
    where: str,
    labels: pa.Array | None = None,
) -> pa.Array:
    """Each row's answer as an int64 index; null where it cannot be read (the range is not checked).

    ``"index"`` takes integers and the exact published spelling of one as text (HellaSwag's
    ``"3"``; never ``"03"``, ``" 3"`` or a float); ``"letter"`` takes ``"A"``, ``"B"``, ...;
    ``"text"`` finds the answer among the row's choices. A column whose type can hold no
    answer at all is a :class:`LayoutError`. The other formats are in the module's table
    (``labels``: the label list column, for ``"label"``).
    """
    if pa.types.is_null(raw.type):  # no value at all (one row of None, read from a dict)
        return pa.nulls(len(raw), pa.int64())
    if answer_format == "one_based":
        return _one_based_to_index(raw, where)
    if answer_format == "label":
        if labels is None:
            raise InputError("answer_format='label' needs the labels column")
        return _label_to_index(raw, labels, choices, where)
    if answer_format == "one_hot":
        return _one_hot_to_index(raw, choices, where)
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


def expected_answer(
    dtype: pa.DataType,
    count: int,
    answer_format: AnswerFormat,
    labels: list[object] | None = None,
) -> str:
    """What a valid answer looks like for a row with ``count`` choices, for error messages."""
    last = count - 1
    if answer_format == "letter":
        return f"a letter 'A'..{chr(ord('A') + last)!r}"
    if answer_format == "text":
        return f"the text of one of the {count} choices"
    if answer_format == "label":
        if labels is None:
            return f"one of the row's labels, one per choice ({count})"
        if len(labels) != count:
            return f"one label per choice, but the row has {len(labels)} for {count} choices"
        twice = next((label for label in labels if labels.count(label) > 1), None)
        if twice is not None:
            return (
                f"one of the row's labels, each label once, but {twice!r} is there "
                f"{labels.count(twice)} times in {shorten(repr(labels))}"
            )
        return f"one of the row's labels {shorten(repr(labels))}"
    if answer_format == "one_hot":
        return f"{count} flags, one per choice, each 0 or 1, exactly one of them 1"
    if answer_format == "one_based":
        if pa.types.is_integer(dtype) or pa.types.is_floating(dtype):
            return f"an index 1..{count}"
        return f"'1'..'{count}'"
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
    matches = pc.fill_null(pc.equal(pc.list_flatten(choices), answers.take(parents)), False)
    first, _ = _matches(choices, matches)
    return first


def _matches(lists: pa.Array, matches: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """Per row: the position of its first matching item (null if none), and the match count.

    ``matches`` flags each item of ``pc.list_flatten(lists)``. Positions count from each
    row's own start, also when ``lists`` is a slice whose offsets do not start at 0 (a batch
    of a larger table).
    """
    n = len(lists)
    parents = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    offsets = lists.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    starts = offsets[:-1] - offsets[0]
    hits = np.flatnonzero(matches.to_numpy(zero_copy_only=False))
    counts = np.bincount(parents[hits], minlength=n)
    first = np.zeros(n, dtype=np.int64)
    # the first hit of each row: hits are in order, so take the lowest per parent
    rows, where = np.unique(parents[hits], return_index=True)
    first[rows] = hits[where] - starts[rows]
    return pa.array(first, mask=counts == 0), counts


def _one_based_to_index(raw: pa.Array, where: str) -> pa.Array:
    """``1`` or ``"1"`` (whitespace around it ignored) -> 0, ...; anything else -> null."""
    if pa.types.is_integer(raw.type):
        fits = pc.less_equal(raw, 2**62) if pa.types.is_unsigned_integer(raw.type) else None
        index = (raw if fits is None else pc.if_else(fits, raw, None)).cast(pa.int64())
        return pc.subtract(index, 1)
    if is_text(raw.type):
        text = pc.utf8_trim_whitespace(raw)
        digits = pc.fill_null(pc.match_substring_regex(text, _ONE_BASED), False)
        return pc.subtract(pc.if_else(digits, text, None).cast(pa.int64()), 1)
    raise LayoutError(
        f"{where} has type {raw.type}; expected integers or strings of digits for "
        f"answer_format='one_based'"
    )


def _label_to_index(raw: pa.Array, labels: pa.Array, choices: pa.Array, where: str) -> pa.Array:
    """Position of the one label equal to the answer; null unless exactly one matches.

    Null too where the row's labels are not one per choice.
    """
    if not is_text(raw.type):
        raise LayoutError(f"{where} has type {raw.type}; expected text for answer_format='label'")
    parents = pc.list_parent_indices(labels)
    flat = pc.list_flatten(labels).cast(pa.string())
    matches = pc.fill_null(pc.equal(flat, raw.cast(pa.string()).take(parents)), False)
    first, counts = _matches(labels, matches)
    one_per_choice = pc.fill_null(
        pc.equal(pc.list_value_length(labels), pc.list_value_length(choices)), False
    )
    return pc.if_else(pc.and_(one_per_choice, pa.array(counts == 1)), first, None)


def _one_hot_to_index(raw: pa.Array, choices: pa.Array, where: str) -> pa.Array:
    """Position of the one 1 among flags that are all 0 or 1, one per choice; else null."""
    if not (is_list(raw.type) and _is_flag(raw.type.value_type)):
        raise LayoutError(
            f"{where} has type {raw.type}; expected a list of 0/1 integers for "
            f"answer_format='one_hot'"
        )
    flat = pc.list_flatten(raw)
    if pa.types.is_boolean(flat.type):
        flat = flat.cast(pa.int8())
    ones = pc.fill_null(pc.equal(flat, pa.scalar(1, flat.type)), False)
    first, counts = _matches(raw, ones)
    strays = pc.invert(pc.fill_null(pc.is_in(flat, pa.array([0, 1], flat.type)), False))
    _, stray_counts = _matches(raw, strays)
    same_length = pc.fill_null(
        pc.equal(pc.list_value_length(raw), pc.list_value_length(choices)), False
    )
    good = pc.and_(same_length, pa.array((counts == 1) & (stray_counts == 0)))
    return pc.if_else(good, first, None)


def _is_flag(dtype: pa.DataType) -> bool:
    return bool(pa.types.is_integer(dtype) or pa.types.is_boolean(dtype))
