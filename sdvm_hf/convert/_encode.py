"""The inverse half of a mapping: a sample back to a row of its source's published layout.

:meth:`MultipleChoiceMapping.encode` reads the same description the converters read: the
``extra`` keys go back to their columns (renamed back, nested back), the context, the choices
and the answer go back to their columns in the answer's format. A column the mapping keeps in
``extra`` as well (:attr:`~MultipleChoiceMapping.keep`) is given back as it was whenever the
sample still says the same thing, so an unchanged row comes back value for value (a label
with a trailing line break keeps it). A context joined from several columns or split at a
blank is the preset's to give back (its ``follow`` rule), from the kept columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sdvm_hf.convert._description import Description

if TYPE_CHECKING:
    from sdvm_hf.samples import MultipleChoiceSample


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class EncodeError(ValueError):
    """A sample that the mapping cannot give back as a source row."""


def put(row: dict[str, Any], path: str, value: Any) -> None:
    """Set ``row[a][b] = value`` for the path ``"a.b"`` (a struct field)."""
    head, _, rest = path.partition(".")
    if not rest or (head in row and not isinstance(row[head], dict)):
        row[path] = value
        return
    put(row.setdefault(head, {}), rest, value)


def get(row: dict[str, Any], path: str) -> Any:
    """``row[a][b]`` for the path ``"a.b"``; ``KeyError`` when it is not there."""
    if path in row:
        return row[path]
    head, _, rest = path.partition(".")
    if not rest:
        raise KeyError(path)
    return get(row[head], rest)


def _index(value: Any, answer_format: str) -> int | None:
    """The answer index a kept raw answer says, for the formats that spell an index."""
    try:
        if answer_format == "index":
            return int(str(value).strip())
        if answer_format == "one_based":
            return int(str(value).strip()) - 1
        if answer_format == "letter":
            return LETTERS.index(str(value).strip().upper())
    except ValueError:
        return None
    return None


def encode(mapping: Description, sample: MultipleChoiceSample) -> dict[str, Any]:
    """The source row ``sample`` stands for, in ``mapping``'s layout (values, not yet typed)."""
    inverse = {key: column for column, key in mapping.rename.items()}
    row: dict[str, Any] = {}
    for key, value in sample.extra.items():
        put(row, inverse.get(key, key), _plain(value))
    context = mapping.context
    if isinstance(context, str) and mapping.blank is None:
        put(row, context, sample.context)
    else:
        missing = [c for c in mapping.context_columns if c not in mapping.keep]
        if missing:
            raise EncodeError(
                f"{mapping.name}: the context is built from {'+'.join(mapping.context_columns)}"
                f" and {', '.join(missing)} is not kept in extra, so it cannot be given back"
            )
    choices = list(sample.choices)
    if isinstance(mapping.choices, str):
        put(row, mapping.choices, choices)
    elif mapping.blank is None:
        if len(choices) != len(mapping.choices):
            raise EncodeError(
                f"{mapping.name}: the layout has {len(mapping.choices)} choice columns "
                f"({', '.join(mapping.choices)}), the sample {len(choices)} choices"
            )
        for column, text in zip(mapping.choices, choices, strict=True):
            put(row, column, text)
    put(row, mapping.answer, _answer(mapping, row, sample.answer_index, choices))
    if mapping.unnest is not None:
        row = {mapping.unnest: row}
    return row


def _answer(mapping: Description, row: dict[str, Any], index: int, choices: list[str]) -> Any:
    if mapping.answer in mapping.keep:
        try:
            kept = get(row, mapping.answer)
        except KeyError:
            kept = None
        if kept is not None and _index(kept, mapping.answer_format) == index:
            return kept
    form = mapping.answer_format
    if form == "index":
        return index
    if form == "one_based":
        return index + 1
    if form == "letter":
        return LETTERS[index]
    if form == "text":
        return choices[index]
    if form == "one_hot":
        return [int(i == index) for i in range(len(choices))]
    assert mapping.labels is not None  # answer_format == "label"
    try:
        labels = get(row, mapping.labels)
    except KeyError:
        raise EncodeError(
            f"{mapping.name}: the answer is one of the labels in {mapping.labels}, which the "
            "sample does not keep in extra, so the answer cannot be given back"
        ) from None
    if len(labels) != len(choices):
        raise EncodeError(
            f"{mapping.name}: {len(labels)} labels in {mapping.labels} for {len(choices)} choices"
        )
    return labels[index]


def _plain(value: Any) -> Any:
    """A sample's read-only containers as plain lists and dicts."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple) or type(value).__name__ == "FrozenList":
        return [_plain(v) for v in value]
    return value
