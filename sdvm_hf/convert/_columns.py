"""Column shaping for the mapping, vectorised: struct fields by path, joined contexts, blanks.

- :func:`flatten_paths`: a mapping may name a field of a struct column by a dotted path
  (ARC's ``choices.text``, a struct of lists); the struct column is replaced by its fields,
  each a column named ``column.field``. Only struct columns a path names are flattened; the
  others travel in ``extra`` as they are.
- :func:`join_columns`: a context built from several text columns, joined row by row with a
  separator (Social IQa: ``context + " " + question``); a null in any of them gives null.
- :func:`fill_blank`: a sentence with one blank (Winogrande's ``_``) becomes a context (the
  text before the blank, trailing whitespace removed) and choices (each choice followed by
  the text after the blank).
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._wire import shorten
from sdvm_hf.errors import ProblemKind


def flatten_paths(table: pa.Table, paths: Iterable[str]) -> pa.Table:
    """``table`` with each struct column that a dotted path in ``paths`` names flattened.

    A path that is itself a column name is left alone (a column may have a dot in its name).

    >>> t = pa.table({"choices": [{"text": ["a", "b"], "label": ["A", "B"]}], "id": ["q"]})
    >>> flatten_paths(t, ["choices.text"]).column_names
    ['choices.text', 'choices.label', 'id']
    """
    wanted = {
        path.split(".", 1)[0] for path in paths if "." in path and path not in table.column_names
    }
    for name in [n for n in table.column_names if n in wanted]:
        column = table.column(name)
        if not pa.types.is_struct(column.type):
            continue
        index = table.schema.get_field_index(name)
        table = table.remove_column(index)
        for offset, (child, values) in enumerate(zip(column.type, column.flatten(), strict=True)):
            table = table.add_column(index + offset, f"{name}.{child.name}", values)
    return table


def join_columns(table: pa.Table, columns: Iterable[str], separator: str) -> pa.ChunkedArray:
    """The text columns joined row by row with ``separator``; null where any of them is null.

    >>> t = pa.table({"a": ["Sydney left.", None], "b": ["Why?", "How?"]})
    >>> join_columns(t, ["a", "b"], " ").to_pylist()
    ['Sydney left. Why?', None]
    """
    parts = [table.column(name).cast(pa.string()) for name in columns]
    return pc.binary_join_element_wise(*parts, separator)


def fill_blank(
    sentence: pa.Array, choices: pa.Array, blank: str
) -> tuple[pa.Array, pa.Array, list[tuple[int, str, str, str, ProblemKind]]]:
    """Split each sentence at its one ``blank``: (context, choices, problems).

    The context is the text before the blank with trailing whitespace removed; each choice
    becomes the choice followed by the text after the blank (its spacing kept). A problem is
    ``(row, expected, got, note, kind)`` for a sentence without exactly one blank, or with nothing
    before it; those rows' context is left null.

    >>> ctx, ch, bad = fill_blank(pa.array(["Ian ate because _ was hungry."]),
    ...                           pa.array([["Ian", "Dennis"]]), "_")
    >>> ctx.to_pylist(), ch.to_pylist(), bad
    (['Ian ate because'], [['Ian was hungry.', 'Dennis was hungry.']], [])
    """
    count = pc.count_substring(sentence, blank)
    one = pc.fill_null(pc.equal(count, 1), False)
    parts = pc.split_pattern(pc.if_else(one, sentence, None), blank, max_splits=1)
    before = pc.utf8_rtrim_whitespace(pc.list_element(parts, 0))
    after = pc.list_element(parts, 1)
    empty = pc.fill_null(pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(before)), 0), False)
    problems: list[tuple[int, str, str, str, ProblemKind]] = []
    wrong_count = pc.and_(pc.is_valid(sentence), pc.invert(one))
    for row in pc.indices_nonzero(pc.or_(wrong_count, empty)).to_pylist():
        got = shorten(repr(sentence[row].as_py()))
        if empty[row].as_py():
            note = f"the {blank!r} opens the sentence, so the context would be empty"
            problems.append((row, f"text before the {blank!r}", got, note, "blank_opens"))
        else:
            expected = f"a sentence with exactly one {blank!r}"
            problems.append((row, expected, got, "", "no_single_blank"))
    context = pc.if_else(empty, None, before)
    # each choice, then the text after its row's blank
    offsets = choices.offsets.to_numpy(zero_copy_only=False)
    parents = pc.list_parent_indices(choices)
    filled = pc.binary_join_element_wise(pc.list_flatten(choices), after.take(parents), "")
    rebased = pa.array(offsets - offsets[0], pa.int32())
    filled_choices = pa.ListArray.from_arrays(rebased, filled, mask=pc.is_null(choices))
    return context, filled_choices, problems
