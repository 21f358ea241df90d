"""The in-place export gives the folder the copying export gave, byte for byte; the table
form of the inverse half gives what the row form gives.

``Method(in_place=False)`` is the export as it was: the rows copied into one chunk
for the table form, every line of the record built one by one, the kept rows copied into
place, the card sized from the copy. The in-place export (the table form batch by batch on
the file's own buffers, the plain lines built in Arrow, no copy when nothing is dropped, the
card's sizes counted) must give the same folder on any file: unchanged, fixed, audited,
dropped, annotated, read in many chunks, or edited by hand into a file that is refused; and
exported a slice of a few rows at a time, as one slice.
``Method(table_form=False)`` sends every row through the row form: the same tables and lines.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_export import FIXTURES, convert

from sdvm_hf import read_samples, write_parquet
from sdvm_hf.errors import SampleTableError
from sdvm_hf.exporter import ExportError, _export_with
from sdvm_hf.exporter._rows import Method
from sdvm_hf.exporter._size import taken_bytes
from sdvm_hf.record import read_record

# presets with a follow rule that can refuse a fix (winogrande), struct choices (arc), one
# configuration per subject (mmlu), and HellaSwag
SOURCES = [
    ("hellaswag", "hellaswag/validation.parquet", "validation"),
    ("mmlu", "mmlu/cais_test.parquet", "test"),
    ("arc", "arc/ARC-Challenge-test.parquet", "test"),
    ("winogrande", "winogrande/winogrande_xl-validation.parquet", "validation"),
]


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("converted")
    return {
        name: convert(name, FIXTURES / file, split, folder / f"{name}.parquet")
        for name, file, split in SOURCES
    }


def folder_files(folder: Path) -> dict[str, Any]:
    """Every file of an export: Parquet as its schema (with metadata) and rows, text as is."""
    files: dict[str, Any] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            name = str(path.relative_to(folder))
            if path.suffix == ".parquet":
                table = pq.read_table(path)
                files[name] = (table.schema, table.to_pylist())
            else:
                files[name] = path.read_bytes()
    return files


def both_ways(flag: str, samples: Path, out: Path, **options: Any) -> tuple[Any, Any]:
    """The folder (or the error) exported with the method's ``flag`` on, then off."""
    results: list[Any] = []
    for value in (True, False):
        method = Method(**{flag: value})
        settings: dict[str, Any] = {
            "policy": "replace",
            "drop_if": (),
            "annotate": False,
            "overwrite": True,
        }
        settings |= dict.fromkeys(("dataset", "layout", "config", "split")) | options
        try:
            _export_with(method, samples, out, **settings)
        except (ExportError, SampleTableError) as error:
            results.append((type(error), str(error)))
        else:
            results.append(folder_files(out))
    return results[0], results[1]


def without_sizes(files: Any) -> Any:
    """The folder with the card's ``num_bytes`` left out (an error as it is)."""
    if not isinstance(files, dict):
        return files
    card = re.sub(rb"num_bytes: \d+", b"num_bytes: -", files["README.md"])
    return {**files, "README.md": card}


def rewrite(table: pa.Table, path: Path, row_group_rows: int) -> None:
    """Write ``table`` with small row groups, so that it reads back in many chunks."""
    pq.write_table(table, path, row_group_size=row_group_rows)


def stage_output(
    source: Path,
    out: Path,
    changes: dict[int, dict[str, Any]],
    verdicts: dict[int, tuple[bool, bool]],
    row_group_rows: int,
    corruption: tuple[int, str] | None = None,
) -> Path:
    """A hand-made refined file: changes, an audit (pass/fail) and a fix (flagged or not).

    ``corruption`` (row, column) then breaks a rule in one cell, as an edit by hand would.
    """
    rows = []
    for index, sample in enumerate(read_samples(source)):
        fields = changes.get(index, {})
        update: dict[str, Any] = dict(fields)
        if index in verdicts:
            passed, flagged = verdicts[index]
            audit = {"ok": passed, "checks": {"grammatical": passed, "deep": {"x": True}}}
            update["audit"] = audit
            update["fix"] = {"changes": list(fields), "flagged": flagged}
        rows.append(sample.model_copy(update=update))
    write_parquet(rows, out)
    record = read_record(source)
    assert record is not None
    metadata = record.with_stage("refine", source, len(rows)).metadata()
    table = pq.read_table(out).replace_schema_metadata(metadata)
    if corruption is not None:
        table = corrupted(table, *corruption)
    rewrite(table, out, row_group_rows)
    return out


BREAKS: dict[str, Any] = {
    "context": "  ",
    "answer_index": 99,
    "choices": [b"a", b"\xff\xfe"],
    "task_type": "rank",
    "style": "essay",
    "audit": "[1, 2]",
}
"""A value for each column that breaks one of its rules (``choices``: bytes not UTF-8)."""


def corrupted(table: pa.Table, row: int, column: str) -> pa.Table:
    """``table`` with ``BREAKS[column]`` in one cell, the schema and record kept."""
    values = table.column(column).to_pylist()
    values[row] = BREAKS[column]
    field = table.schema.field(column)
    if column == "choices":  # bytes that are not UTF-8, under the string type
        values = [[v.encode() if isinstance(v, str) else v for v in vs] for vs in values]
        array = pa.array(values, pa.list_(pa.binary())).view(field.type)
    else:
        array = pa.array(values, field.type)
    return table.set_column(table.schema.get_field_index(column), field, array)


@st.composite
def edits(draw: st.DrawFn, count: int, choices: list[int]) -> dict[int, dict[str, Any]]:
    """Changes to some rows: a new context, a changed choice, a moved answer."""
    rows = draw(st.sets(st.integers(0, count - 1), max_size=min(count, 6)))
    changes: dict[int, dict[str, Any]] = {}
    for row in sorted(rows):
        kind = draw(st.sampled_from(["context", "choice", "answer", "all"]))
        fields: dict[str, Any] = {}
        if kind in ("context", "all"):
            fields["context"] = draw(st.sampled_from(["A new stem", "Fixed: ", "Ünïcode ✓ _ x"]))
        if kind in ("choice", "all"):
            fields["choice"] = draw(st.integers(0, choices[row] - 1))
        if kind in ("answer", "all"):
            fields["answer_index"] = draw(st.integers(0, choices[row] - 1))
        changes[row] = fields
    return changes


def applied(source: Path, changes: dict[int, dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """``changes`` as sample fields (a changed choice gets a suffix)."""
    samples = read_samples(source)
    fields = {}
    for row, change in changes.items():
        update = {k: v for k, v in change.items() if k != "choice"}
        if "choice" in change:
            choices = list(samples[row].choices)
            choices[change["choice"]] += " (fixed)"
            update["choices"] = choices
        fields[row] = update
    return fields


@pytest.mark.slow  # the one-minute loop leaves it to the full run
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_the_in_place_export_gives_the_copying_exports_folder(
    data: st.DataObject,
    converted: dict[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = data.draw(st.sampled_from([name for name, _, _ in SOURCES]), label="preset")
    source = converted[name]
    tmp = tmp_path_factory.mktemp("both")
    samples = read_samples(source)
    count = len(samples)
    row_group_rows = data.draw(st.integers(1, count + 1), label="row group rows")
    kind = data.draw(st.sampled_from(["convert output", "stage output"]), label="file")
    if kind == "convert output":
        path = tmp / "samples.parquet"
        rewrite(pq.read_table(source), path, row_group_rows)
        options: dict[str, Any] = {}
    else:
        changes = data.draw(edits(count, [len(s.choices) for s in samples]), label="changes")
        verdicts = data.draw(
            st.dictionaries(
                st.integers(0, count - 1), st.tuples(st.booleans(), st.booleans()), max_size=8
            ),
            label="verdicts",
        )
        corruption = data.draw(
            st.none() | st.tuples(st.integers(0, count - 1), st.sampled_from(sorted(BREAKS))),
            label="corruption",
        )
        fields = applied(source, changes)
        path = stage_output(
            source, tmp / "refined.parquet", fields, verdicts, row_group_rows, corruption
        )
        options = {
            "policy": data.draw(st.sampled_from(["replace", "drop", "original"]), label="policy"),
            "annotate": data.draw(st.booleans(), label="annotate"),
            "drop_if": data.draw(
                st.sampled_from([(), ("checks.grammatical",), ("fix.flagged",)]), label="drop_if"
            ),
        }
        if options["drop_if"] == ("checks.grammatical",) and not verdicts:
            options["drop_if"] = ()  # a check no verdict has is refused (tested in test_export)
        if options["policy"] != "drop" and not options["annotate"]:
            options["drop_if"] = ()  # it would do nothing there: refused (tested in test_export)
    in_place, copied = both_ways("in_place", path, tmp / "out", **options)
    assert in_place == copied
    # read and exported a few rows at a time (a slice of the input, and of its original):
    # the same folder as in one slice
    slice_rows = data.draw(st.integers(1, count + 1), label="slice rows")
    with monkeypatch.context() as patched:
        patched.setattr("sdvm_hf.exporter._rows.SLICE_ROWS", slice_rows)
        sliced, sliced_copied = both_ways("in_place", path, tmp / "out", **options)
    assert sliced == in_place
    assert sliced_copied == copied
    by_table, by_row = both_ways("table_form", path, tmp / "out", **options)
    assert by_table == in_place
    if options.get("annotate"):
        # the original_<column> a copy of the rows gives is sized as the copy lays it out
        by_table, by_row = without_sizes(by_table), without_sizes(by_row)
    assert by_table == by_row


# -- files edited by hand are refused, the same way --------------------------------------------


def edited(source: Path, path: Path, row: int, column: str) -> Path:
    """``source`` with one cell broken (its record kept), in row groups of 3 rows."""
    rewrite(corrupted(pq.read_table(source), row, column), path, 3)
    return path


@pytest.mark.parametrize(
    ("column", "message"),
    [
        ("context", "'context': expected a non-empty string, got '  '"),
        ("answer_index", "'answer_index': expected 0..3 for 4 choices, got 99"),
        ("choices", "'choices': expected UTF-8 text, got bytes that are not UTF-8"),
        ("task_type", "'task_type': expected 'multiple_choice', got 'rank'"),
    ],
)
def test_a_file_edited_by_hand_is_refused_naming_file_row_and_column(
    column: str,
    message: str,
    converted: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The record and the schema are ours, the row is not: every row is still checked.

    Row 7 is in the third of the file's chunks; a list column's chunks each hold the whole
    column's child, so a check that only looked at the first window would miss it.
    """
    path = edited(converted["hellaswag"], tmp_path / "edited.parquet", 7, column)
    assert read_record(path) is not None
    assert pq.read_table(path).column("choices").num_chunks > 2
    in_place, copied = both_ways("in_place", path, tmp_path / "out")
    assert in_place == copied
    kind, text = in_place
    assert kind is SampleTableError
    assert text == f"{path} has rows that are not valid samples: row 7, column {message}"


# -- the card's sizes ----------------------------------------------------------------------------

_TYPES = [
    pa.int32(),
    pa.int64(),
    pa.float64(),
    pa.bool_(),
    pa.string(),
    pa.large_string(),
    pa.list_(pa.string()),
    pa.list_(pa.int64()),
    pa.struct([("text", pa.list_(pa.string())), ("label", pa.list_(pa.string()))]),
    pa.struct([("n", pa.int32()), ("s", pa.string())]),
    pa.null(),
]


@st.composite
def columns(draw: st.DrawFn, rows: int) -> pa.Array:
    dtype = draw(st.sampled_from(_TYPES))
    nulls = draw(st.booleans())

    def value(dtype: pa.DataType) -> st.SearchStrategy[Any]:
        if pa.types.is_null(dtype):
            return st.none()
        if pa.types.is_integer(dtype):
            plain: st.SearchStrategy[Any] = st.integers(-5, 5)
        elif pa.types.is_floating(dtype):
            plain = st.floats(allow_nan=False)
        elif pa.types.is_boolean(dtype):
            plain = st.booleans()
        elif pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
            plain = st.text(max_size=5)
        elif pa.types.is_list(dtype):
            plain = st.lists(value(dtype.value_type), max_size=3)
        else:
            plain = st.fixed_dictionaries({f.name: value(f.type) for f in dtype})
        return st.one_of(st.none(), plain) if nulls else plain

    return pa.array(draw(st.lists(value(dtype), min_size=rows, max_size=rows)), dtype)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_the_counted_size_is_what_the_copy_into_place_reported(data: st.DataObject) -> None:
    rows = data.draw(st.integers(0, 40), label="rows")
    arrays = data.draw(st.lists(columns(rows), min_size=1, max_size=3), label="columns")
    whole = pa.table({f"c{i}": array for i, array in enumerate(arrays)})
    # the old export: one chunk, filtered into place with every row kept
    copied = whole.filter(pa.array(np.ones(rows, dtype=bool)))
    # the same rows in place: chunks of a larger table, sliced
    cuts = sorted(data.draw(st.lists(st.integers(0, rows), max_size=3), label="cuts"))
    bounds = [0, *cuts, rows]
    padded = pa.concat_tables([whole, whole])
    pieces = [padded.slice(a + rows, b - a) for a, b in itertools.pairwise(bounds)]
    chunked = pa.concat_tables(pieces) if pieces else whole
    for name in whole.column_names:
        assert taken_bytes(chunked.column(name)) == copied.column(name).nbytes, name


@pytest.mark.parametrize("name", [name for name, _, _ in SOURCES])
def test_the_table_form_on_windows_of_the_columns_gives_what_it_gives_on_a_copy(
    name: str, converted: dict[str, Path]
) -> None:
    """Batches whose columns are windows on larger arrays (offsets into a shared child, as a
    Parquet reader's batches are) encode in place as their copy into one chunk does."""
    from sdvm_hf.convert.inverse import published_table
    from sdvm_hf.exporter._inputs import read_part
    from sdvm_hf.exporter._layout import layout_schema as _schema
    from sdvm_hf.exporter._rows import _encode

    part = read_part(converted[name], dict.fromkeys(("dataset", "layout", "config", "split")), 1)
    table = read_samples(converted[name]).table.combine_chunks()
    schema = _schema(part)
    windows = pa.concat_tables([table.slice(start, 3) for start in range(1, table.num_rows, 3)])
    copied = published_table(part.mapping, windows.combine_chunks(), schema)
    in_place = _encode(part, windows, schema, in_place=True)
    assert copied is not None and in_place is not None
    assert in_place.schema == copied.schema
    assert in_place.to_pylist() == copied.to_pylist()
    assert all(chunk.offset > 0 for chunk in windows.column("choices").chunks)  # windows
