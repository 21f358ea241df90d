"""Sample sequences from datasets, mixed collections, one schema per mapping, any size."""

import importlib.util
import itertools
import json
from pathlib import Path

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest
from helpers import assert_same_samples
from hypothesis import given
from hypothesis import strategies as st

import sdvm_hf.arrow._chunks as chunking
from sdvm_hf import (
    MultipleChoiceMapping,
    SampleSequence,
    SampleTableError,
    StreamingSamples,
    load_hellaswag,
    load_mmlu,
    read_jsonl,
    read_parquet,
    stream,
    write_jsonl,
    write_parquet,
)
from sdvm_hf.arrow.sequence import concatenate_samples, samples_to_table, table_to_samples
from sdvm_hf.files import iter_parquet
from sdvm_hf.presets.hellaswag import HELLASWAG
from sdvm_hf.sources.source import bundled_file


@pytest.fixture(scope="module")
def hellaswag() -> SampleSequence:
    return load_hellaswag(bundled=True)


@pytest.fixture(scope="module")
def mmlu() -> SampleSequence:
    return load_mmlu(bundled=True)


# -- 1. typed samples from datasets objects -----------------------------------------------


def test_a_shuffled_dataset_round_trips_in_its_own_order(hellaswag: SampleSequence) -> None:
    shuffled = hellaswag.dataset.shuffle(seed=3)
    order = [hellaswag.dataset[i]["context"] for i in range(3)]
    got = SampleSequence(shuffled)
    assert [s.context for s in got] == list(shuffled["context"])
    assert [s.context for s in got][:3] != order
    assert_same_samples(list(got), [hellaswag[i] for i in shuffled._indices.column(0).to_pylist()])


def test_select_filter_and_train_test_split_keep_their_rows(hellaswag: SampleSequence) -> None:
    ds = hellaswag.dataset
    selected = SampleSequence.from_dataset(ds.select([5, 1, 9]))
    assert_same_samples(list(selected), [hellaswag[5], hellaswag[1], hellaswag[9]])
    kept = ds.filter(lambda row: row["answer_index"] == 2)
    assert [s.answer_index for s in SampleSequence(kept)] == [2] * len(kept)
    split = ds.train_test_split(test_size=0.25, seed=0)
    assert [s.context for s in SampleSequence(split["test"])] == split["test"]["context"]
    assert [s.context for s in table_to_samples(split["test"])] == split["test"]["context"]


def test_list_and_numpy_indexing(hellaswag: SampleSequence) -> None:
    picked = hellaswag[[1, 2, -1]]
    assert isinstance(picked, SampleSequence)
    assert_same_samples(list(picked), [hellaswag[1], hellaswag[2], hellaswag[len(hellaswag) - 1]])
    assert_same_samples(list(hellaswag[np.array([3, 0])]), [hellaswag[3], hellaswag[0]])
    assert hellaswag[np.int64(4)] == hellaswag[4]
    assert len(hellaswag[[]]) == 0
    with pytest.raises(IndexError, match="sample index 296 out of range for 296 samples"):
        hellaswag[[0, 296]]
    with pytest.raises(TypeError, match="indexed by an int, a slice, or a list"):
        hellaswag[np.array([0.5])]


def test_getitems_fetches_a_batch_as_indexing_would(hellaswag: SampleSequence) -> None:
    got = hellaswag.__getitems__([5, 0, -1, 5])
    assert isinstance(got, list)
    assert_same_samples(got, [hellaswag[5], hellaswag[0], hellaswag[295], hellaswag[5]])
    assert hellaswag.__getitems__(np.array([], np.int64)) == []
    with pytest.raises(IndexError, match="sample index -297 out of range for 296 samples"):
        hellaswag.__getitems__([0, -297])
    with pytest.raises(TypeError, match="indexed by an int, a slice, or a list"):
        hellaswag.__getitems__([[0, 1]])  # type: ignore[list-item]


def test_getitems_keeps_the_blocks_of_audited_samples(hellaswag: SampleSequence) -> None:
    audited = hellaswag[1].model_copy(update={"audit": {"verdict": "pass", "checks": [1]}})
    samples = SampleSequence(samples_to_table([hellaswag[0], audited]))
    got = samples.__getitems__([1, 0])
    assert got[0].audit == {"verdict": "pass", "checks": [1]} and got[1].audit is None
    assert_same_samples(got, [audited, hellaswag[0]])


@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch is not installed (optional)"
)
def test_a_shuffled_dataloader_fetches_whole_batches(
    hellaswag: SampleSequence, monkeypatch: pytest.MonkeyPatch
) -> None:
    from torch.utils.data import DataLoader

    def one_row(self: SampleSequence, index: object) -> None:
        raise AssertionError(f"fetched row by row: {index!r}")

    monkeypatch.setattr(SampleSequence, "__getitem__", one_row)
    loader = DataLoader(hellaswag, batch_size=32, shuffle=True, collate_fn=lambda batch: batch)
    batches = list(loader)
    assert [len(batch) for batch in batches] == [32] * 9 + [8]
    monkeypatch.undo()
    contexts = sorted(sample.context for batch in batches for sample in batch)
    assert contexts == sorted(sample.context for sample in hellaswag)
    assert [s.context for s in batches[0]] != [s.context for s in hellaswag[:32]]


def test_read_jsonl_is_a_lazy_sequence(hellaswag: SampleSequence, tmp_path: Path) -> None:
    write_jsonl(hellaswag, tmp_path / "h.jsonl")
    read = read_jsonl(tmp_path / "h.jsonl")
    assert isinstance(read, SampleSequence)
    assert_same_samples(list(read[[0, 7]]), [hellaswag[0], hellaswag[7]])


# -- 2. streaming in a DataLoader ----------------------------------------------------------


def _stream() -> StreamingSamples:
    return stream("hellaswag", bundled=True)


def test_streaming_shuffle_and_take_are_streams(hellaswag: SampleSequence) -> None:
    taken = _stream().take(10)
    assert isinstance(taken, StreamingSamples)
    assert_same_samples(list(taken), list(hellaswag[:10]))
    once = [s.context for s in _stream().shuffle(buffer_size=50, seed=1)]
    again = [s.context for s in _stream().shuffle(buffer_size=50, seed=1)]
    assert once == again
    assert once != [s.context for s in hellaswag]
    assert sorted(once) == sorted(s.context for s in hellaswag)


def test_streaming_dataset_is_an_iterable_dataset_in_the_sample_features(
    hellaswag: SampleSequence,
) -> None:
    dataset = _stream().take(5).dataset
    assert isinstance(dataset, datasets.IterableDataset)
    assert dataset.features == hellaswag.features
    assert [row["context"] for row in dataset] == [s.context for s in hellaswag[:5]]


@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch is not installed (optional)"
)
def test_streaming_samples_in_a_torch_dataloader(hellaswag: SampleSequence) -> None:
    from torch.utils.data import DataLoader, IterableDataset

    dataset = _stream().shuffle(buffer_size=64, seed=0).take(40).dataset
    assert isinstance(dataset, IterableDataset)
    loader = DataLoader(
        dataset, batch_size=16, collate_fn=lambda batch: [row["context"] for row in batch]
    )
    batches = list(loader)
    assert [len(batch) for batch in batches] == [16, 16, 8]
    assert {c for batch in batches for c in batch} <= {s.context for s in hellaswag}


# -- 3. mixed collections ------------------------------------------------------------------


def test_hellaswag_and_mmlu_in_one_file_stay_exact_and_queryable(
    hellaswag: SampleSequence, mmlu: SampleSequence, tmp_path: Path
) -> None:
    both = concatenate_samples(hellaswag[:20], mmlu[:30])
    path = tmp_path / "both.parquet"
    write_parquet(both, path)
    assert_same_samples(list(read_parquet(path)), [*hellaswag[:20], *mmlu[:30]])
    extra = pq.read_schema(path).field("extra").type
    assert extra.field("ind").type == pa.int32()
    assert extra.field("subject").type == pa.string()
    subject = mmlu[0].extra["subject"]
    found = pads.dataset(path).to_table(filter=pads.field("extra", "subject") == subject)
    assert found.num_rows == sum(s.extra["subject"] == subject for s in mmlu[:30])
    assert all("ind" not in s.extra for s in read_parquet(path)[20:])


def test_none_and_a_missing_key_stay_distinct_through_a_dataset(
    mmlu: SampleSequence,
) -> None:
    with_none = mmlu[0].model_copy(update={"extra": {**mmlu[0].extra, "ind": None}})
    mixed = SampleSequence(samples_to_table([with_none, mmlu[1]]))
    back = SampleSequence(mixed.dataset)
    assert back[0].extra["ind"] is None
    assert "ind" not in back[1].extra


def test_concatenate_datasets_merges_keys_but_concatenate_samples_does_not(
    hellaswag: SampleSequence, mmlu: SampleSequence
) -> None:
    merged = datasets.concatenate_datasets([hellaswag[:2].dataset, mmlu[:2].dataset])
    assert merged[3]["extra"]["ind"] is None  # what datasets does: MMLU gains an ind
    joined = concatenate_samples(hellaswag[:2], mmlu[:2])
    assert_same_samples(list(joined), [*hellaswag[:2], *mmlu[:2]])


def test_extra_missing_must_name_null_fields(
    hellaswag: SampleSequence, mmlu: SampleSequence
) -> None:
    table = concatenate_samples(hellaswag[:1], mmlu[:1]).table
    index = table.schema.get_field_index("extra_missing")
    table = table.set_column(index, "extra_missing", pa.array([["ind"], None]))
    with pytest.raises(SampleTableError, match=r"row 0, column 'extra.ind': expected null"):
        SampleSequence(table)
    table = table.set_column(index, "extra_missing", pa.array([None, ["nope"]]))
    with pytest.raises(SampleTableError, match=r"row 1, column 'extra_missing': expected names"):
        SampleSequence(table)


# -- 4. one schema per mapping, multi-file reads -------------------------------------------

TINY = MultipleChoiceMapping(
    dataset="tiny", context="q", choices="c", answer="a", answer_format="index", style="qa"
)


def _source(ind: pa.Array, note: pa.Array) -> pa.Table:
    n = len(ind)
    return pa.table(
        {
            "q": pa.array([f"question {i}?" for i in range(n)], pa.large_string()),
            "c": pa.array([["x", "y"]] * n, pa.large_list(pa.large_string())),
            "a": pa.array([i % 2 for i in range(n)], pa.int32()),
            "ind": ind,
            "note": note,
        }
    )


def test_the_schema_does_not_depend_on_physical_types() -> None:
    typed = TINY.table(_source(pa.array([1, 2], pa.int32()), pa.array(["a", "b"], pa.string())))
    large = _source(pa.array([1, 2], pa.int32()), pa.array(["a", "b"], pa.large_string()))
    assert TINY.table(large).schema == typed.schema
    assert TINY.schema(large.schema) == typed.schema
    view = large.set_column(4, "note", pa.array(["a", "b"], pa.string_view()))
    assert TINY.table(view).schema == typed.schema


def _write_shards(tmp_path: Path) -> dict[str, Path]:
    shards = {
        "typed": _source(pa.array([1, 2], pa.int32()), pa.array(["a", "b"])),
        "all_null": _source(pa.array([3, 4], pa.int32()), pa.nulls(2)),
        "large": _source(pa.array([5, 6], pa.int32()), pa.array(["e", "f"])),
        "int64": _source(pa.array([7, 8], pa.int64()), pa.array(["g", "h"])),
    }
    paths = {}
    for name, source in shards.items():
        table = TINY.table(source)
        if name == "large":
            table = table.cast(
                table.schema.set(
                    table.schema.get_field_index("context"), pa.field("context", pa.large_string())
                )
            )
        paths[name] = tmp_path / f"{name}.parquet"
        pq.write_table(table, paths[name])
    return paths


@pytest.mark.parametrize("reverse", [False, True])
def test_read_parquet_unifies_shards_exactly_in_any_order(tmp_path: Path, reverse: bool) -> None:
    paths = _write_shards(tmp_path)
    assert pq.read_schema(paths["all_null"]).field("extra").type.field("note").type == pa.null()
    order = [paths["typed"], paths["all_null"], paths["large"]]
    order = order[::-1] if reverse else order
    samples = read_parquet(order)
    assert samples.table.schema.field("extra").type == pa.struct(
        [("ind", pa.int32()), ("note", pa.string())]
    )
    assert sorted(s.extra["ind"] for s in samples) == [1, 2, 3, 4, 5, 6]
    assert {s.extra["ind"]: s.extra["note"] for s in samples}[3] is None


@pytest.mark.parametrize("reverse", [False, True])
def test_read_parquet_names_a_shard_whose_types_conflict(tmp_path: Path, reverse: bool) -> None:
    paths = _write_shards(tmp_path)
    order = [paths["typed"], paths["int64"]]
    with pytest.raises(SampleTableError, match=r"column 'extra.ind': expected int(32|64) as in"):
        read_parquet(order[::-1] if reverse else order)
    with pytest.raises(SampleTableError, match=r"int64\.parquet|typed\.parquet"):
        read_parquet(str(tmp_path / "*.parquet"))


def test_read_parquet_takes_a_folder_and_a_glob(tmp_path: Path) -> None:
    paths = _write_shards(tmp_path)
    paths["int64"].unlink()
    assert len(read_parquet(tmp_path)) == 6
    assert len(read_parquet(str(tmp_path / "[tl]*.parquet"))) == 4
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_parquet(tmp_path / "none-*.parquet")


def test_iter_parquet_checks_and_yields_batch_by_batch(
    hellaswag: SampleSequence, tmp_path: Path
) -> None:
    path = tmp_path / "h.parquet"
    write_parquet(hellaswag, path)
    assert_same_samples(list(iter_parquet(path, batch_rows=50)), list(hellaswag))
    table = hellaswag.table
    answers = table.column("answer_index").to_pylist()
    answers[123] = 9
    table = table.set_column(4, "answer_index", pa.array(answers, pa.int64()))
    pq.write_table(table, path)
    with pytest.raises(SampleTableError, match=r"row 123, column 'answer_index': expected 0\.\.3"):
        list(iter_parquet(path, batch_rows=50))


# -- 5. any size ---------------------------------------------------------------------------


def test_tables_are_processed_in_chunks_under_the_limit(
    hellaswag: SampleSequence, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = pq.read_table(bundled_file("hellaswag_validation.parquet"))
    whole = HELLASWAG.table(source, split="validation")
    limit = 20_000
    assert source.nbytes > 10 * limit
    monkeypatch.setattr(chunking, "CHUNK_BYTES", limit)
    seen: list[int] = []
    chunks = chunking.row_chunks

    def spy(table: pa.Table, limit: int | None = None):  # type: ignore[no-untyped-def]
        parts = list(chunks(table, limit))
        seen.append(len(parts))
        return iter(parts)

    monkeypatch.setattr("sdvm_hf.convert.mapping.row_chunks", spy)
    pieces = HELLASWAG.table(source, split="validation")
    assert max(seen) > 10
    assert pieces.schema == whole.schema
    assert pieces.equals(whole.combine_chunks()) or pieces.to_pylist() == whole.to_pylist()
    positions = np.random.default_rng(0).permutation(len(hellaswag))
    assert chunking.take(hellaswag.table, positions, limit).to_pylist() == (
        hellaswag.table.take(pa.array(positions)).to_pylist()
    )
    assert_same_samples(list(SampleSequence(pieces)), list(hellaswag))


@given(
    sizes=st.lists(st.integers(0, 9), min_size=1, max_size=8),
    picks=st.lists(st.integers(0, 10_000), max_size=40),
    limit=st.sampled_from([1, 200, 1 << 30]),
)
def test_rows_taken_chunk_by_chunk_are_arrows_take(
    sizes: list[int], picks: list[int], limit: int
) -> None:
    """Any order, repeats, empty chunks: what Arrow's take of the table gives, no concat."""
    offsets = np.cumsum([0, *sizes])
    chunks = [
        pa.record_batch(
            {
                "n": pa.array(range(a, b), pa.int64()),
                "s": pa.array([f"{i}" * 3 for i in range(a, b)], pa.string()),
            }
        )
        for a, b in itertools.pairwise(offsets)
    ]
    table = pa.Table.from_batches(chunks)
    positions = np.array([pick % max(table.num_rows, 1) for pick in picks], np.int64)
    if not table.num_rows:
        positions = positions[:0]
    expected = table.take(pa.array(positions, pa.int64())).to_pylist()
    assert chunking.take_by_chunk(table, positions).to_pylist() == expected
    assert chunking.take(table, positions, limit).to_pylist() == expected


def test_the_tagged_form_is_cut_in_pieces_like_the_table_form(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = pq.read_table(bundled_file("hellaswag_validation.parquet")).slice(0, 400)
    labels = source.column("label").to_pylist()
    labels[3] = labels[250] = "9"  # a bad row in two different pieces
    source = source.set_column(source.schema.get_field_index("label"), "label", pa.array(labels))
    whole = HELLASWAG.tagged(source, split="validation", first_row=10)
    monkeypatch.setattr(chunking, "CHUNK_BYTES", source.nbytes // 8)
    cuts: list[int] = []
    chunks = chunking.row_chunks

    def spy(table: pa.Table, limit: int | None = None):  # type: ignore[no-untyped-def]
        parts = list(chunks(table, limit))
        cuts.append(len(parts))
        return iter(parts)

    monkeypatch.setattr("sdvm_hf.convert.mapping.row_chunks", spy)
    pieces = HELLASWAG.tagged(source, split="validation", first_row=10)
    assert cuts == [cuts[0]] and cuts[0] >= 8  # one cut, the same the table form makes
    assert pieces.to_pylist() == whole.to_pylist()
    rejected = [r for r in pieces.column("reject").to_pylist() if r is not None]
    assert [json.loads(r)["row"] for r in rejected] == [13, 260]
