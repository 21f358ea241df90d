"""Every problem kind comes from a real bad row, and the kind travels with its reject.

A :class:`~sdvm_hf.errors.Problem`'s ``kind`` is what summaries group rejects by, so it must
be stable whatever the message says: each code in :data:`~sdvm_hf.errors.KINDS` is produced
here by the input it names, and it survives the rejects' records, JSON Lines file, table and
the tagged form; files written before kinds existed read back as ``"unknown"``.
"""

import io
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import get_args

import pyarrow as pa
import pytest

from sdvm_hf import ConversionError, MultipleChoiceMapping, Problem
from sdvm_hf.arrow._rules import find_problems
from sdvm_hf.arrow.rejects import Rejects
from sdvm_hf.arrow.schema import EXTRA_MISSING
from sdvm_hf.convert.mapping import split_rejects
from sdvm_hf.engines import reject_rows
from sdvm_hf.errors import KINDS, ProblemKind
from sdvm_hf.jobs import read_rejects, write_rejects

PLAIN = MultipleChoiceMapping(dataset="t", context="q", choices=("a", "b"), answer="k")
LISTED = MultipleChoiceMapping(dataset="t", context="q", choices="options", answer="k")
BLANK = MultipleChoiceMapping(
    dataset="t", context="sentence", choices=("a", "b"), answer="k", blank="_"
)
TYPED = MultipleChoiceMapping(
    dataset="t", context="q", choices=("a", "b"), answer="k", types={"n": pa.int32()}
)


def row(**cells: object) -> pa.Table:
    """One source row of PLAIN's layout, with ``cells`` replacing or adding columns."""
    values: dict[str, object] = {"q": "Which?", "a": "x", "b": "y", "k": 0, "id": "q1"}
    values.update(cells)
    return pa.Table.from_pylist([values])


def converted(mapping: MultipleChoiceMapping, source: pa.Table) -> list[str]:
    return [reject.kind for reject in mapping.convert(source, on_error="skip").rejects]


def checked(change: Callable[[pa.Table], pa.Table], source: pa.Table | None = None) -> list[str]:
    """The kinds the sample rules find in a good sample table after ``change``."""
    table = PLAIN.table(row() if source is None else source)
    return [problem.kind for problem in find_problems(change(table))]


def column(table: pa.Table, name: str, values: pa.Array) -> pa.Table:
    return table.set_column(table.schema.get_field_index(name), name, values)


NOT_UTF8 = pa.Array.from_buffers(
    pa.string(), 1, [None, pa.py_buffer(b"\x00\x00\x00\x00\x01\x00\x00\x00"), pa.py_buffer(b"\xff")]
)

MAKERS: dict[str, Callable[[], list[str]]] = {
    # a source row the mapping cannot convert (the conversion's own checks)
    "not_castable": lambda: converted(TYPED, row(n="abc")),
    "not_text": lambda: converted(PLAIN, row(a=7)),
    "no_single_blank": lambda: converted(BLANK, row(sentence="Ian ate lunch.")),
    "blank_opens": lambda: converted(BLANK, row(sentence="_ ate lunch.")),
    "answer_unreadable": lambda: converted(PLAIN, row(k="first")),
    "answer_out_of_range": lambda: converted(PLAIN, row(k=5)),
    "label_withheld": lambda: converted(PLAIN, row(k=-1)),
    "empty_context": lambda: converted(PLAIN, row(q="   ")),
    "too_few_choices": lambda: converted(LISTED, row(options=["only one"])),
    "null_choice": lambda: converted(PLAIN, pa.table({**row().to_pydict(), "a": [None]})),
    "not_finite": lambda: converted(PLAIN, row(score=float("nan"))),
    # a sample table that breaks the sample rules (what reading a sample file checks)
    "wrong_task_type": lambda: checked(lambda t: column(t, "task_type", pa.array(["mcq"]))),
    "unknown_style": lambda: checked(lambda t: column(t, "style", pa.array(["poem"]))),
    "null_extra": lambda: checked(
        lambda t: column(t, "extra", pa.nulls(1, t.schema.field("extra").type))
    ),
    "unknown_missing_key": lambda: checked(
        lambda t: t.append_column(EXTRA_MISSING, pa.array([["nope"]]))
    ),
    "missing_key_has_value": lambda: checked(
        lambda t: t.append_column(EXTRA_MISSING, pa.array([["id"]]))
    ),
    "not_json_object": lambda: checked(
        lambda t: column(t, "extra", pa.array(["[1, 2]"])), row().drop_columns(["id"])
    ),
    "reserved_key": lambda: checked(
        lambda t: column(t, "extra", pa.array(['{"context": "x"}'])), row().drop_columns(["id"])
    ),
    "not_utf8": lambda: checked(lambda t: column(t, "context", NOT_UTF8)),
}
"""Each kind, from the smallest real input that breaks its rule."""


def test_kinds_name_every_problem_kind_in_order() -> None:
    assert tuple(KINDS) == get_args(ProblemKind)
    assert all(meaning for meaning in KINDS.values())


def test_every_kind_but_unknown_has_a_bad_input_here() -> None:
    assert set(MAKERS) == set(KINDS) - {"unknown"}


@pytest.mark.parametrize("kind", list(MAKERS))
def test_each_kind_comes_from_the_input_that_breaks_its_rule(kind: str) -> None:
    assert MAKERS[kind]() == [kind]


def test_a_good_row_has_no_problem_of_any_kind() -> None:
    assert converted(PLAIN, row()) == [] and checked(lambda t: t) == []


def test_the_raised_error_carries_the_kind() -> None:
    with pytest.raises(ConversionError, match=r"row 0, column 'k': expected an index 0\.\.1") as e:
        PLAIN.table(row(k=2))
    assert e.value.problem.kind == "answer_out_of_range"


def test_a_kind_outside_the_closed_set_is_refused() -> None:
    with pytest.raises(ValueError, match=r"kind must be one of not_castable, .*got 'typo'"):
        Problem(0, ("k",), "an index", "'x'", kind="typo")  # type: ignore[arg-type]


def mixed_rejects() -> Rejects:
    good = row().to_pylist()[0]
    changes: list[dict[str, object]] = [{"k": 5}, {"k": -1}, {"a": None}, {}, {"q": ""}]
    source = pa.Table.from_pylist([good | change for change in changes])
    return PLAIN.convert(source, on_error="skip", first_row=10).rejects


def test_the_rejects_file_round_trips_the_kind(tmp_path: Path) -> None:
    rejects = mixed_rejects()
    kinds = ["answer_out_of_range", "label_withheld", "null_choice", "empty_context"]
    assert [r.kind for r in rejects] == kinds
    path = tmp_path / "t.rejects.jsonl"
    with path.open("w", encoding="utf-8") as out:
        write_rejects(rejects, out)
    assert [json.loads(line)["kind"] for line in path.read_text().splitlines()] == kinds
    back = read_rejects(path)
    assert [r.kind for r in back] == kinds and list(back) == list(rejects)


def test_a_rejects_file_written_before_kinds_still_reads(tmp_path: Path) -> None:
    rejects = mixed_rejects()
    lines = io.StringIO()
    write_rejects(rejects, lines)
    older = [json.loads(line) for line in lines.getvalue().splitlines()]
    for record in older:
        del record["kind"]
    path = tmp_path / "old.rejects.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in older))
    back = read_rejects(path)
    assert [r.kind for r in back] == ["unknown"] * 4
    assert [(r.row, r.path, r.expected, r.got, r.note) for r in back] == [
        (r.row, r.path, r.expected, r.got, r.note) for r in rejects
    ]


def test_the_tagged_form_carries_the_kind_through_split_rejects() -> None:
    source = pa.concat_tables([row(), row(k=5), row(q="")])
    tagged = PLAIN.tagged(source, key="id")
    records = [json.loads(text) for text in tagged.column("reject").drop_null().to_pylist()]
    assert [r["kind"] for r in records] == ["answer_out_of_range", "empty_context"]
    assert [r.kind for r in split_rejects(tagged).rejects] == [
        "answer_out_of_range",
        "empty_context",
    ]


def test_categories_group_by_where_and_kind_not_by_message() -> None:
    rejects = mixed_rejects()
    assert rejects.categories() == Counter(
        {"k: answer_out_of_range": 1, "k: label_withheld": 1, "a..b: null_choice": 1}
        | {"q: empty_context": 1}
    )
    assert rejects.categories() == Counter(r.category for r in rejects)
    reworded = Rejects.from_records(
        [{**record, "expected": "something else"} for record in rejects.records()]
    )
    assert [str(p) for p in reworded.problems] != [str(p) for p in rejects.problems]
    assert reworded.categories() == rejects.categories()


def test_the_rejects_as_data_of_an_engine_carry_the_kind() -> None:
    source = pa.concat_tables([row(), row(k=5), row(q="")])
    table = reject_rows(PLAIN.tagged(source, key="id"), [pa.field("id", pa.string())])
    assert table.column("kind").to_pylist() == ["answer_out_of_range", "empty_context"]
    assert [r.kind for r in Rejects.from_table(table)] == ["answer_out_of_range", "empty_context"]
