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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._wire import LETTERS, shorten
from sdvm_hf.arrow import from_numpy, integers, is_list, scalar
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

    The format's ``decode`` in :data:`SPELLINGS` (the module's table says what each takes). A
    column whose type can hold no answer at all is a :class:`LayoutError`; ``labels`` is the
    label list column, for ``"label"``.
    """
    if pa.types.is_null(raw.type):  # no value at all (one row of None, read from a dict)
        return pa.nulls(len(raw), pa.int64())
    return SPELLINGS[answer_format].decode(raw, choices, where, labels)


def expected_answer(
    dtype: pa.DataType,
    count: int,
    answer_format: AnswerFormat,
    labels: list[object] | None = None,
) -> str:
    """What a valid answer looks like for a row with ``count`` choices, for error messages."""
    return SPELLINGS[answer_format].expected(dtype, count, labels)


def _letters_to_index(raw: pa.Array) -> pa.Array:
    """``"A"`` -> 0, ``"B"`` -> 1, ... ``"Z"`` -> 25; anything else -> null.

    Works on the few distinct values (dictionary encoding), never row by row.
    """
    if not is_text(raw.type) or pa.types.is_null(raw.type):
        return pa.nulls(len(raw), pa.int64())
    encoded = raw.dictionary_encode()
    letters = encoded.dictionary.to_pylist()
    mapped = integers(
        [LETTERS.index(s) if re.fullmatch("[A-Z]", s or "") else None for s in letters]
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
    return from_numpy(first, mask=counts == 0), counts


def _one_based_to_index(raw: pa.Array, where: str) -> pa.Array:
    """``1`` or ``"1"`` (whitespace around it ignored) -> 0, ...; anything else -> null."""
    if pa.types.is_integer(raw.type):
        return pc.subtract(_integer(raw), 1)
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


# -- the table: each format's decode, expected text, and both encodes, in one place ----------


@dataclass(frozen=True)
class Spelling:
    """One answer format: how its column is read, described and written back."""

    decode: Callable[[pa.Array, pa.Array, str, pa.Array | None], pa.Array]
    """(raw answers, choices, where, labels) -> int64 indexes, null where unreadable."""
    expected: Callable[[pa.DataType, int, list[object] | None], str]
    """(column type, choices, the row's labels) -> what a valid answer looks like."""
    row: Callable[[int, list[str], list[Any] | None], Any]
    """(index, choices, the row's labels) -> the published answer of one row."""
    array: Callable[[pa.Array, pa.Array, pa.Array | None], pa.Array | None]
    """(indexes, choices, labels) -> the published answers of a table (``None``: cannot)."""
    read: Callable[[Any], int | None] = lambda value: None
    """A kept published answer -> the index it says, for the formats that spell an index."""
    reads_choices: bool = True
    """Whether ``decode`` looks at the choices (then it is given them as one array)."""


def _number(value: Any, minus: int) -> int | None:
    try:
        return int(str(value).strip()) - minus
    except ValueError:
        return None


def _integer(raw: pa.Array) -> pa.Array:
    if not pa.types.is_unsigned_integer(raw.type):
        return raw.cast(pa.int64())
    # compared as uint64: a Python 2**62 was an int64, and cast a value past it first
    fits = pc.less_equal(raw, scalar(2**62, pa.uint64()))
    return pc.if_else(fits, raw, scalar(None, raw.type)).cast(pa.int64())


def _index_decode(raw: pa.Array, choices: pa.Array, where: str, labels: Any) -> pa.Array:
    if pa.types.is_integer(raw.type):
        return _integer(raw)
    if pa.types.is_floating(raw.type):
        return pa.nulls(len(raw), pa.int64())
    if is_text(raw.type):
        exact = pc.fill_null(pc.match_substring_regex(raw, _INDEX), False)
        return pc.if_else(exact, raw, None).cast(pa.int64())
    raise LayoutError(
        f"{where} has type {raw.type}; expected integers or text for answer_format='index'"
    )


def _index_expected(dtype: pa.DataType, count: int, labels: Any) -> str:
    if pa.types.is_integer(dtype) or pa.types.is_floating(dtype):
        return f"an index 0..{count - 1}"
    return f"'0'..'{count - 1}'"


def _one_based_expected(dtype: pa.DataType, count: int, labels: Any) -> str:
    if pa.types.is_integer(dtype) or pa.types.is_floating(dtype):
        return f"an index 1..{count}"
    return f"'1'..'{count}'"


def _text_decode(raw: pa.Array, choices: pa.Array, where: str, labels: Any) -> pa.Array:
    if not is_text(raw.type):
        raise LayoutError(f"{where} has type {raw.type}; expected text for answer_format='text'")
    return _text_to_index(raw.cast(pa.string()), choices)


def _label_decode(raw: pa.Array, choices: pa.Array, where: str, labels: Any) -> pa.Array:
    if labels is None:
        raise InputError("answer_format='label' needs the labels column")
    return _label_to_index(raw, labels, choices, where)


def _label_expected(dtype: pa.DataType, count: int, labels: list[object] | None) -> str:
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


def _label_row(index: int, choices: list[str], labels: list[Any] | None) -> Any:
    if labels is None:
        raise InputError("the answer is one of the row's labels, and the row has none")
    if len(labels) != len(choices):
        raise InputError(f"{len(labels)} labels for {len(choices)} choices")
    return labels[index]


def _label_array(index: pa.Array, choices: pa.Array, labels: pa.Array | None) -> pa.Array | None:
    if labels is None:
        return None
    if pc.any(pc.not_equal(pc.list_value_length(labels), pc.list_value_length(choices))).as_py():
        return None
    return _element(labels, index)


def _one_hot_array(index: pa.Array, choices: pa.Array, labels: Any) -> pa.Array:
    lengths = np.asarray(pc.list_value_length(choices))
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    positions = np.arange(lengths.sum()) - starts
    flags = (positions == np.repeat(np.asarray(index), lengths)).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(flags))


def _element(lists: pa.Array, index: pa.Array) -> pa.Array:
    """``lists[i][index[i]]`` for every row."""
    offsets = np.asarray(lists.offsets)[:-1] + np.asarray(index)
    return lists.values.take(pa.array(offsets))


def _letter_read(value: Any) -> int | None:
    text = str(value).strip().upper()
    return LETTERS.index(text) if len(text) == 1 and text in LETTERS else None


SPELLINGS: dict[str, Spelling] = {
    "index": Spelling(
        decode=_index_decode,
        expected=_index_expected,
        row=lambda index, choices, labels: index,
        array=lambda index, choices, labels: index,
        read=lambda value: _number(value, 0),
        reads_choices=False,
    ),
    "one_based": Spelling(
        decode=lambda raw, choices, where, labels: _one_based_to_index(raw, where),
        expected=_one_based_expected,
        row=lambda index, choices, labels: index + 1,
        array=lambda index, choices, labels: pc.add(index, 1),
        read=lambda value: _number(value, 1),
        reads_choices=False,
    ),
    "letter": Spelling(
        decode=lambda raw, choices, where, labels: _letters_to_index(raw),
        expected=lambda dtype, count, labels: f"a letter 'A'..{LETTERS[count - 1]!r}",
        row=lambda index, choices, labels: LETTERS[index],
        array=lambda index, choices, labels: pa.array(list(LETTERS)).take(index),
        read=_letter_read,
        reads_choices=False,
    ),
    "text": Spelling(
        decode=_text_decode,
        expected=lambda dtype, count, labels: f"the text of one of the {count} choices",
        row=lambda index, choices, labels: choices[index],
        array=lambda index, choices, labels: _element(choices, index),
    ),
    "label": Spelling(
        decode=_label_decode, expected=_label_expected, row=_label_row, array=_label_array
    ),
    "one_hot": Spelling(
        decode=lambda raw, choices, where, labels: _one_hot_to_index(raw, choices, where),
        expected=lambda dtype, count, labels: (
            f"{count} flags, one per choice, each 0 or 1, exactly one of them 1"
        ),
        row=lambda index, choices, labels: [int(i == index) for i in range(len(choices))],
        array=_one_hot_array,
    ),
}
"""Every answer format's spelling, by name: the one place a format is defined."""
