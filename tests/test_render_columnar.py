"""HellaSwag's rc table form renders what its row form renders, string for string.

The table form (``_hellaswag_rc_table``: Arrow's kernels on a published batch) stands for the
row form (``_hellaswag_rc``: Python's ``str`` methods and ``re`` on each row) wherever it
does not mark a row ``slow``; a row the row form cannot render must be marked. Hypothesis
changes real fixture rows in the ways the cleaning reads: brackets and ``[title]``, double
spaces, Unicode whitespace at the ends, empty or null ``ctx_b``, first letters beyond ASCII
(``str.capitalize`` title-cases them), nulls the row form fails on; labels ``int`` reads
and Arrow's cast does not leave the batch to the row form.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdvm_hf import stream, write_parquet
from sdvm_hf.formulations import RenderError, render_requests
from sdvm_hf.formulations._columnar import capitalized, stripped
from sdvm_hf.formulations.olmes import _hellaswag_rc, _hellaswag_rc_table

FIXTURE = Path(__file__).parent / "fixtures" / "hellaswag" / "validation.parquet"
TABLE = pq.read_table(FIXTURE)
ROWS = TABLE.to_pylist()

PIECES = [
    "[title]", " [title]", ". [title]", ".[title]", "[header]", " [step] ", "[", "]", "[a\nb]",
    "  ", "   ", "\n", "\t", "\u00a0", "\u3000", "\x1c", "\x85", "\u2028", "É", "ß", "ǆ",
    "ﬁ", "İ", "Σ", "ς", "ŉ", "a", ".", " ", "x [y] z",
]  # fmt: skip
"""What is inserted into a row's texts: the markup, spaces and letters the cleaning reads."""


@st.composite
def edited(draw: st.DrawFn, text: str) -> str:
    """``text`` with a few pieces inserted anywhere (or at its ends)."""
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.sampled_from([0, len(text), draw(st.integers(0, len(text)))]))
        text = text[:at] + draw(st.sampled_from(PIECES)) + text[at:]
    return text


@st.composite
def changed_row(draw: st.DrawFn) -> dict[str, Any]:
    """A real fixture row changed where the cleaning and the capitalising look."""
    row = dict(draw(st.sampled_from(ROWS)))
    row["activity_label"] = draw(edited(row["activity_label"]))
    row["ctx_a"] = draw(edited(row["ctx_a"]))
    first = st.sampled_from(["", "é", "ß", "ǆ", "İ", "Σ", "ﬁ", "\u00a0", " ", "a", "A"])
    ctx_b = draw(first) + draw(edited(row["ctx_b"] or ""))
    row["ctx_b"] = draw(st.sampled_from([ctx_b, ctx_b, "", None]))
    row["endings"] = [draw(edited(ending)) for ending in row["endings"]]
    row["label"] = draw(st.sampled_from([row["label"], "0", "3"]))
    if draw(st.integers(0, 9)) == 0:  # now and then a row the row form fails on
        row[draw(st.sampled_from(["activity_label", "ctx_a", "endings"]))] = None
    return row


def _same_as_rows(rows: list[dict[str, Any]]) -> int:
    """Check the table form against the row form on ``rows``; the number of slow rows."""
    columns = _hellaswag_rc_table(pa.Table.from_pylist(rows, schema=TABLE.schema), None)
    if columns is None:  # the row form renders all of them
        return len(rows)
    values = zip(
        columns.head.column("ind").to_pylist(),
        columns.query.to_pylist(),
        columns.choices.to_pylist(),
        columns.gold.to_pylist(),
        columns.native_id.to_pylist(),
        strict=True,
    )
    for position, (row, slow, (ind, query, choices, gold, native)) in enumerate(
        zip(rows, columns.slow.tolist(), values, strict=True)
    ):
        try:
            expected = _hellaswag_rc(row, position, None)
        except (TypeError, ValueError, AttributeError):
            assert slow, f"row {position} fails the row form but the table form renders it"
            continue
        if slow:
            continue
        doc = {"ind": ind, "query": query, "choices": choices, "gold": gold}
        pairs = [(query, " " + choice) for choice in choices]
        assert (doc, pairs, gold, native) == (expected.doc, expected.pairs, expected.label, ind)
        assert expected.native_id == native
    return int(columns.slow.sum())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(changed_row(), min_size=1, max_size=8))
def test_the_table_form_renders_what_the_row_form_renders(rows: list[dict[str, Any]]) -> None:
    """Changed real rows: each row the table form renders is the row form's, string for string."""
    _same_as_rows(rows)


def test_the_fixture_rows_render_by_table_with_no_row_left_to_the_row_form() -> None:
    """Real rows as published: none is slow, and each equals the row form's."""
    assert _same_as_rows(ROWS) == 0


def test_nulls_go_to_the_row_form() -> None:
    """A null the row form fails on marks its row slow (or leaves the batch to the row form)."""
    rows = [dict(row) for row in ROWS[:4]]
    rows[1]["activity_label"], rows[2]["ctx_a"] = None, None
    columns = _hellaswag_rc_table(pa.Table.from_pylist(rows, schema=TABLE.schema), None)
    assert columns is not None
    assert columns.slow.tolist() == [False, True, True, False]
    for label in ("three", " 2", "٣", "+1"):  # int() reads the last three, Arrow's cast does not
        rows[3]["label"] = label
        assert _hellaswag_rc_table(pa.Table.from_pylist(rows, schema=TABLE.schema), None) is None


def test_stripped_strips_what_python_strips_at_every_code_point() -> None:
    """Arrow's Unicode whitespace is ``str.isspace``'s, character for character."""
    characters = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000]
    texts = [f"{c}a{c}" for c in characters]
    assert stripped(pa.array(texts)).to_pylist() == [text.strip() for text in texts]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=6)))
def test_capitalized_is_str_capitalize(texts: list[str]) -> None:
    """Any text (beyond ASCII too) is capitalised as ``str.capitalize`` does it."""
    assert capitalized(pa.array(texts, pa.string())).to_pylist() == [
        text.capitalize() for text in texts
    ]


def _requests(samples: Any, **names: Any) -> list[tuple[Any, ...]]:
    return [
        (r.doc, r.context, r.continuation, r.idx, r.task_name, r.doc_id, r.native_id, r.label)
        for r in render_requests(samples, "olmes-rc", **names)
    ]


def rendered_both_ways(source: Path, folder: Path) -> tuple[list[Any], list[Any]]:
    """A HellaSwag source file's requests by table (its sample file) and by row (its rows)."""
    samples = folder / "samples.parquet"
    write_parquet(stream("hellaswag", data_files=str(source)), samples)
    published = [dict(row) for row in pq.read_table(samples).to_pylist()]
    assert published  # (the sample rows: the row form reads them back through the record)
    by_row = _requests(list(_published_rows(samples)), dataset="hellaswag")
    return _requests(samples), by_row


def _published_rows(samples: Path) -> Any:
    from sdvm_hf.formulations._source import open_source

    source = open_source(samples, None, None, None)
    source.tables = None  # the row form, one sample at a time
    return source.rows()


def test_render_requests_by_table_equals_by_row(tmp_path: Path) -> None:
    """Through ``render_requests``: a sample file's requests are its published rows' ones."""
    by_table, by_row = rendered_both_ways(FIXTURE, tmp_path)
    assert len(by_table) == 8 * len(ROWS)
    assert by_table == by_row


def test_a_bad_row_names_itself_by_table_as_by_row(tmp_path: Path) -> None:
    """A row the table form leaves to the row form fails with the row form's message."""
    table = TABLE.set_column(
        TABLE.column_names.index("activity_label"),
        "activity_label",
        pc.if_else(pa.array([i == 5 for i in range(len(ROWS))]), None, TABLE["activity_label"]),
    )
    source = tmp_path / "bad.parquet"
    pq.write_table(table, source)
    samples = tmp_path / "samples.parquet"
    write_parquet(stream("hellaswag", data_files=str(source)), samples)
    with pytest.raises(RenderError, match=r"row 5: the hellaswag olmes-rc rule cannot read"):
        _requests(samples)


def _hf_features() -> list[dict[str, Any]]:
    """Every preset's published features, the fixture's own, and some datasets alone reads."""
    from sdvm_hf.presets.registry import PRESETS
    from sdvm_hf.record import hf_features

    found = [dict(f) for preset in PRESETS.values() for f in preset.features.values()]
    found.append(hf_features(TABLE.schema) or {})
    string = {"dtype": "string", "_type": "Value"}
    found.append({"a": {"_type": "Sequence", "feature": {"x": string, "y": string}}})
    found.append({"a": {"_type": "ClassLabel", "names": ["no", "yes"]}, "b": string})
    found.append({"a": {"_type": "Sequence", "feature": string, "length": 2}})
    found.append({"a": {"x": {"_type": "List", "feature": {"dtype": "float64", "_type": "Value"}}}})
    return found


@pytest.mark.parametrize("features", _hf_features())
def test_features_schema_is_datasets_schema(features: dict[str, Any]) -> None:
    """The schema read without ``datasets`` is the one ``datasets`` makes (bar its metadata)."""
    import datasets

    from sdvm_hf.formulations._features import features_schema

    expected = datasets.Features.from_dict(features).arrow_schema.remove_metadata()
    assert features_schema(features).equals(expected)


@pytest.mark.parametrize("leaves", ["all", "some"])
def test_a_batch_the_table_form_leaves_renders_row_by_row(tmp_path: Path, leaves: str) -> None:
    """Rows a table builder leaves (a whole batch, or some rows) go to the row builder, the same.

    Sample files always give canonical labels, so a builder that leaves rows stands in here.
    """
    from sdvm_hf.formulations._batches import table_requests
    from sdvm_hf.formulations._columnar import ClozeColumns
    from sdvm_hf.formulations._plan import plan_for
    from sdvm_hf.formulations._source import open_source

    def leaving(table: pa.Table, config: str | None) -> ClozeColumns | None:
        columns = _hellaswag_rc_table(table, config)
        if leaves == "all" or columns is None:
            return None
        slow = columns.slow.copy()
        slow[::3] = True
        return columns._replace(slow=slow)

    samples = tmp_path / "samples.parquet"
    write_parquet(stream("hellaswag", data_files=str(FIXTURE)), samples)
    source = open_source(samples, None, None, None)
    plan = plan_for(source, "olmes-rc", 0, 1234, None, None)
    got = [
        (r.doc, r.context, r.continuation, r.idx, r.task_name, r.doc_id, r.native_id, r.label)
        for r in table_requests(source, plan, leaving)
    ]
    by_table, by_row = rendered_both_ways(FIXTURE, tmp_path)
    assert got == by_row == by_table
    assert len(got) == 8 * len(ROWS)


def test_write_requests_by_table_writes_the_row_form_s_dump(tmp_path: Path) -> None:
    """The dump of a sample file (the table form) is its published rows' dump, byte for byte."""
    import gzip

    from sdvm_hf.formulations import write_requests

    samples = tmp_path / "samples.parquet"
    write_parquet(stream("hellaswag", data_files=str(FIXTURE)), samples)
    write_requests(samples, tmp_path / "by_table", "olmes-rc")
    rows = list(_published_rows(samples))
    write_requests(rows, tmp_path / "by_row", "olmes-rc", dataset="hellaswag", split="validation")
    lines = [
        gzip.decompress((tmp_path / way / "requests.jsonl.gz").read_bytes()).splitlines()
        for way in ("by_table", "by_row")
    ]
    assert len(lines[0]) == 8 * len(ROWS)
    assert lines[0] == lines[1]
