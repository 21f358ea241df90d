"""Corrupt random cells of real-layout rows: every row is converted or rejected, never lost.

The rows are the real HellaSwag and MMLU fixtures; the corruptions are bad values of the
right type (a withheld label, a blank context, one ending), cells of the wrong type (an
``ind`` of ``"abc"``, ``2**40`` or ``1.7``), and unicode edge cases that are valid text.
Whatever happens, the only exceptions are the library's own, converted + rejected equals the
input, the rejected rows are the corrupted ones with bad values, and the row, batch and
table forms agree with ``Dataset.map`` (``num_proc=2`` included).
"""

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sdvm_hf import ConversionError, MultipleChoiceMapping, SampleSequence
from sdvm_hf.arrow.rejects import json_line
from sdvm_hf.convert.mapping import split_rejects
from sdvm_hf.presets.hellaswag import HELLASWAG
from sdvm_hf.presets.mmlu import MMLU_LAYOUTS

FIXTURES = Path(__file__).parent / "fixtures"
HELLASWAG_ROWS = pq.read_table(FIXTURES / "hellaswag" / "validation.parquet")
MMLU_ROWS = pq.read_table(FIXTURES / "mmlu" / "cais_test.parquet")

VALID_TEXT = ["\u200b zero width", "\ufeffbom", "\u202e rtl", "emoji 🤖", "nul \x00 inside", "é"]
"""Unicode edge cases that are valid text: a row holding them must convert."""


@dataclass(frozen=True)
class Corruption:
    column: str
    values: list[Any]
    """Replacement values, all of one Arrow type with the column's other values."""
    bad: bool
    """Whether the replacement makes its row invalid."""
    as_type: pa.DataType | None = None
    """The type the whole column takes (when a bad cell changes it, as a JSON source would)."""


HELLASWAG_CORRUPTIONS = [
    Corruption("label", ["", "9", "03", " 1", "-1", "99999999999999999999", "x", None, "٣"], True),
    Corruption("ctx", ["", "  ", "\u3000", None], True),
    Corruption("ctx", VALID_TEXT, False),
    Corruption("endings", [[], ["only one"], [None, "a"], ["a", "b", None]], True),
    Corruption("endings", [[t, "x", "y", "z"] for t in VALID_TEXT], False),
    Corruption("ind", ["abc", "1.5", "", "99999999999"], True, pa.string()),
    Corruption("ind", [1.7, float("nan"), 1e300], True, pa.float64()),
    Corruption("ind", [2**40, -(2**31) - 1], True, pa.int64()),
    Corruption("activity_label", VALID_TEXT, False),
]
MMLU_CORRUPTIONS = [
    Corruption("answer", [-1, 4, 2**62], True),
    Corruption("question", ["", " \t", None], True),
    Corruption("question", VALID_TEXT, False),
    Corruption("choices", [["one"], [], [None, "b"]], True),
    Corruption("subject", VALID_TEXT, False),
]
CASES = {
    "hellaswag": (HELLASWAG, HELLASWAG_ROWS, HELLASWAG_CORRUPTIONS),
    "mmlu": (MMLU_LAYOUTS["cais"], MMLU_ROWS, MMLU_CORRUPTIONS),
}


def corrupt(
    source: pa.Table, picks: list[tuple[int, Corruption, int]]
) -> tuple[pa.Table, set[int]]:
    """``source`` with the picked cells replaced; the rows that must be rejected."""
    columns = source.to_pydict()
    types = {field.name: field.type for field in source.schema}
    last: dict[tuple[int, str], Corruption] = {}
    for row, corruption, choice in picks:
        now = types[corruption.column]
        changed = now != source.schema.field(corruption.column).type
        if corruption.as_type is not None and changed and now != corruption.as_type:
            continue  # one type change per column: a source column has one type
        columns[corruption.column][row] = corruption.values[choice % len(corruption.values)]
        if corruption.as_type is not None:
            types[corruption.column] = corruption.as_type
        last[row, corruption.column] = corruption
    bad_rows = {row for (row, _), corruption in last.items() if corruption.bad}
    for name, dtype in types.items():
        if dtype == pa.string() and source.schema.field(name).type != dtype:
            columns[name] = [None if v is None else str(v) for v in columns[name]]
        if pa.types.is_floating(dtype):
            columns[name] = [None if v is None else float(v) for v in columns[name]]
    arrays = [pa.array(columns[name], types[name]) for name in source.column_names]
    return pa.Table.from_arrays(arrays, names=source.column_names), bad_rows


def picks_for(name: str) -> st.SearchStrategy[list[tuple[int, Corruption, int]]]:
    _, source, corruptions = CASES[name]
    one = st.tuples(
        st.integers(0, source.num_rows - 1), st.sampled_from(corruptions), st.integers(0, 20)
    )
    return st.lists(one, min_size=1, max_size=6)


def by_table(mapping: MultipleChoiceMapping, table: pa.Table) -> tuple[list[Any], list[int]]:
    result = mapping.convert(table, split="test", on_error="skip")
    return list(SampleSequence(result.table)), [r.row for r in result.rejects]


def by_batches(mapping: MultipleChoiceMapping, table: pa.Table) -> tuple[list[Any], list[int]]:
    samples: list[Any] = []
    rejected: list[int] = []
    for start in range(0, table.num_rows, 5):
        part = table.slice(start, 5)
        indices = list(range(start, start + part.num_rows))
        out = mapping.batch(part.to_pydict(), indices, split="test", on_error="skip")
        schema = mapping.features(table.schema, on_error="skip").arrow_schema
        result = split_rejects(pa.Table.from_pydict(dict(out), schema=schema))
        samples += list(SampleSequence(result.table))
        rejected += [r.row for r in result.rejects]
    return samples, rejected


def by_rows(mapping: MultipleChoiceMapping, table: pa.Table) -> tuple[list[Any], list[int]]:
    samples: list[Any] = []
    rejected: list[int] = []
    for row, record in enumerate(table.to_pylist()):
        try:
            samples.append(mapping.row(record, split="test", row=row))
        except ConversionError as error:
            assert error.problem.row == row
            rejected.append(row)
    return samples, rejected


@pytest.mark.slow  # hypothesis at strength, or a big table
@pytest.mark.parametrize("name", sorted(CASES))
@given(data=st.data())
def test_corrupted_rows_are_rejected_and_nothing_is_lost_in_every_form(
    name: str, data: st.DataObject
) -> None:
    mapping, source, _ = CASES[name]
    table, bad_rows = corrupt(source, data.draw(picks_for(name)))
    samples, rejected = by_table(mapping, table)
    assert len(samples) + len(rejected) == table.num_rows
    assert rejected == sorted(set(rejected)) and set(rejected) == bad_rows
    kept = [row for row in range(table.num_rows) if row not in bad_rows]
    contexts = table.column(mapping.context).to_pylist()
    assert [s.context for s in samples] == [contexts[row] for row in kept]
    assert by_batches(mapping, table) == (samples, rejected)
    assert by_rows(mapping, table) == (samples, rejected)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=3, deadline=None)
@given(data=st.data())
def test_dataset_map_with_two_processes_reports_every_reject_by_its_global_row(
    name: str, data: st.DataObject
) -> None:
    mapping, source, _ = CASES[name]
    picks = data.draw(picks_for(name).filter(lambda p: any(c.bad for _, c, _ in p)))
    table, bad_rows = corrupt(source, picks)
    assume(bad_rows)
    expected_samples, expected_rows = by_table(mapping, table)
    dataset = datasets.Dataset(datasets.table.InMemoryTable(table))
    with tempfile.TemporaryDirectory() as folder:
        options: dict[str, Any] = {
            "batched": True,
            "batch_size": 2,
            "with_indices": True,
            "num_proc": 2,
            "remove_columns": dataset.column_names,
        }
        first_bad = min(bad_rows)
        with pytest.raises(ConversionError, match=rf"{mapping.dataset} test row {first_bad}, "):
            dataset.map(
                mapping.batch,
                features=mapping.features(dataset.features),
                fn_kwargs={"split": "test"},
                cache_file_name=str(Path(folder) / "raise.arrow"),
                **options,
            )
        for _ in range(2):  # the second run is a datasets cache hit: the rejects are still there
            mapped = dataset.map(
                mapping.batch,
                features=mapping.features(dataset.features, on_error="skip"),
                fn_kwargs={"split": "test", "on_error": "skip"},
                cache_file_name=str(Path(folder) / "skip.arrow"),
                **options,
            )
            result = split_rejects(mapped)
            assert [r.row for r in result.rejects] == expected_rows == sorted(bad_rows)
            assert [json_line(r.original) for r in result.rejects] == [
                json_line(table.slice(row, 1).to_pylist()[0]) for row in expected_rows
            ]  # the originals travel as strict JSON: a NaN comes back as "NaN"
            assert list(SampleSequence(result.table)) == expected_samples


def test_the_reject_column_holds_strict_json_even_for_a_nan_cell() -> None:
    corruption = next(c for c in HELLASWAG_CORRUPTIONS if c.as_type == pa.float64())
    table, _ = corrupt(HELLASWAG_ROWS, [(2, corruption, 1)])  # ind = NaN
    tagged = HELLASWAG.tagged(table, split="test")
    text = tagged.column("reject")[2].as_py()
    record = json.loads(text, parse_constant=lambda token: pytest.fail(f"{token} in JSON"))
    assert record["original"]["ind"] == "NaN" and record["row"] == 2
