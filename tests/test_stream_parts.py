"""A stream shared by DataLoader workers and distributed ranks: every row exactly once.

The sources are the bundled real HellaSwag rows cut into several files of several row
groups (a unique ``row_id`` column added, so each row can be told apart; it rides along in
``extra``), the same rows as JSON Lines files, and the bundled MMLU slice, whose subjects are
picked out of a column.
"""

from __future__ import annotations

import importlib.util
import json
import pickle
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sdvm_hf.sources.loaders as loaders
from sdvm_hf import StreamingSamples, load, stream
from sdvm_hf.sources import _parts
from sdvm_hf.sources.source import bundled_file

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed (optional)")

BAD_ROW = 77
"""A row whose label names no ending: rejected, so its number shows how rows are counted."""


def _rows() -> pa.Table:
    table = pq.read_table(bundled_file("hellaswag_validation.parquet"))
    table = table.append_column("row_id", pa.array(range(table.num_rows), pa.int64()))
    labels = table.column("label").to_pylist()
    labels[BAD_ROW] = "9"
    return table.set_column(table.schema.get_field_index("label"), "label", pa.array(labels))


@pytest.fixture(scope="module")
def parquet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """296 rows in two files: 150 rows in row groups of 40, 146 in row groups of 50 (7)."""
    folder = tmp_path_factory.mktemp("parquet")
    table = _rows()
    pq.write_table(table.slice(0, 150), folder / "a.parquet", row_group_size=40)
    pq.write_table(table.slice(150), folder / "b.parquet", row_group_size=50)
    return folder


@pytest.fixture(scope="module")
def jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same rows as three JSON Lines files."""
    folder = tmp_path_factory.mktemp("jsonl")
    rows = _rows().to_pylist()
    for number, start in enumerate((0, 100, 200)):
        lines = (json.dumps(row) for row in rows[start : start + 100])
        (folder / f"{number}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def ids(samples: Any) -> list[int]:
    return [sample.extra["row_id"] for sample in samples]


def every_row(path: Path, split: str = "validation") -> list[int]:
    return ids(load("hellaswag", split=split, data_files=str(path), on_error="skip"))


def _stream(path: Path, split: str = "validation") -> StreamingSamples:
    return stream("hellaswag", split=split, data_files=str(path), on_error="skip")


# -- the source's shards -----------------------------------------------------------------


def test_the_shards_are_the_row_groups_or_the_files(parquet: Path, jsonl: Path) -> None:
    assert _stream(parquet).n_shards == 7
    assert _stream(parquet, "validation[30:200]").n_shards == 5  # the groups the slice meets
    assert _stream(jsonl).n_shards == 3
    assert stream("hellaswag", bundled=True).n_shards == 1
    # a subject picked out of a column: one shard, shared batch by batch
    assert (
        stream("mmlu", "astronomy", data_files=str(bundled_file("mmlu_test.parquet"))).n_shards == 1
    )


@pytest.mark.parametrize("split", ["validation", "validation[30:200]", "validation[-100:]"])
@pytest.mark.parametrize("count", [2, 3, 8])
def test_shards_hold_every_row_once_and_each_reads_only_its_row_groups(
    parquet: Path, split: str, count: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[tuple[str, int]] = []
    pieces = _parts._piece_batches

    def recorded(piece: Any, batch_size: int) -> Iterator[tuple[int, pa.Table]]:
        read.append((piece.file, piece.group))
        return pieces(piece, batch_size)

    monkeypatch.setattr(_parts, "_piece_batches", recorded)
    whole = every_row(parquet, split)
    streamed = _stream(parquet, split)
    parts = []
    for index in range(count):
        read.clear()
        part = streamed.shard(count, index)
        parts.append(ids(part))
        assert len(read) == len(set(read))  # no row group read twice by one reader
        if count <= streamed.n_shards:
            assert len(read) in (streamed.n_shards // count, -(-streamed.n_shards // count))
        # rows keep their numbers in the split: the bad row is rejected under its own number
        assert [r.row for r in part.rejects] == ([BAD_ROW] if BAD_ROW in read_rows(part) else [])
    assert sorted(row for part in parts for row in part) == sorted(whole)


def read_rows(part: StreamingSamples) -> set[int]:
    """The split's row numbers a part covers: its samples' and its rejects' (after a pass)."""
    return set(ids(part)) | {r.row for r in part.rejects}


def test_files_of_other_formats_are_shards(jsonl: Path) -> None:
    streamed = _stream(jsonl)
    parts = [streamed.shard(3, index) for index in range(3)]
    got = [ids(part) for part in parts]
    first = [row for row in range(100) if row != BAD_ROW]
    assert got == [first, list(range(100, 200)), list(range(200, 296))]
    assert [[r.row for r in part.rejects] for part in parts] == [[BAD_ROW], [], []]


def test_a_subject_of_local_files_is_shared_batch_by_batch(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(loaders, "PART_ROWS", 40)  # several batches out of 285 rows
    table = pq.read_table(bundled_file("mmlu_test.parquet"))  # 5 rows a subject, in a run
    spread = table.take(pa.array([5 * (i % 57) + i // 57 for i in range(table.num_rows)]))
    pq.write_table(spread, tmp_path / "mmlu.parquet")  # each subject's rows 57 rows apart
    files = str(tmp_path / "mmlu.parquet")
    for split in ("test", "test[1:4]"):
        whole = [s.context for s in load("mmlu", "high_school_physics", split, data_files=files)]
        streamed = stream("mmlu", "high_school_physics", split, data_files=files)
        parts = [[s.context for s in streamed.shard(4, index)] for index in range(4)]
        assert sorted(c for part in parts for c in part) == sorted(whole)
        assert sum(1 for part in parts if part) > (1 if split == "test" else 0)
    with pytest.raises(ValueError, match="no row has subject='nonexistent'"):
        list(stream("mmlu", "nonexistent", "test", data_files=files).shard(4, 3))


def test_a_shard_is_named_by_ints_in_range(parquet: Path) -> None:
    with pytest.raises(ValueError, match=r"index should be in 0\.\.1 for 2 shards, got 2"):
        _stream(parquet).shard(2, 2)
    with pytest.raises(TypeError, match="num_shards should be an int, got '2'"):
        _stream(parquet).shard("2", 0)  # type: ignore[arg-type]


@pytest.mark.slow  # the one-minute loop leaves it to the full run
def test_the_datasets_view_has_the_sources_shards(parquet: Path) -> None:
    dataset = _stream(parquet).dataset
    assert dataset.num_shards == 7
    assert sorted(row["extra"]["row_id"] for row in dataset) == sorted(every_row(parquet))
    assert _stream(parquet).shard(2, 1).dataset.num_shards == 3


# -- in torch ---------------------------------------------------------------------------


def _collate(batch: list[Any]) -> list[int]:
    return ids(batch)


def test_a_stream_pickles_and_its_copy_reads_the_same_rows(parquet: Path) -> None:
    """What a DataLoader's ``spawn`` start method needs: the stream travels to the worker."""
    streamed = _stream(parquet, "validation[5:250]").shard(3, 1)
    copy = pickle.loads(pickle.dumps(streamed))
    assert ids(copy) == ids(streamed) and len(ids(copy)) > 50
    files = str(bundled_file("mmlu_test.parquet"))
    subject = stream("mmlu", "astronomy", data_files=files)
    assert [s.context for s in pickle.loads(pickle.dumps(subject))] == [s.context for s in subject]


@pytest.mark.slow  # the one-minute loop leaves it to the full run
@needs_torch
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("source", "start"), [("parquet", "fork"), ("jsonl", "fork"), ("parquet", "spawn")]
)
def test_a_dataloader_with_two_workers_gets_every_row_once(
    source: str, start: str, request: pytest.FixtureRequest
) -> None:
    from torch.utils.data import DataLoader, IterableDataset

    path = request.getfixturevalue(source)
    streamed = _stream(path)
    assert isinstance(streamed, IterableDataset)
    loader = DataLoader(
        streamed,
        batch_size=16,
        num_workers=2,
        collate_fn=_collate,
        multiprocessing_context=start,
    )
    got = [row for batch in loader for row in batch]
    assert sorted(got) == sorted(every_row(path))
    # the datasets view too, shared out by datasets itself
    rows = DataLoader(_stream(path).dataset, batch_size=16, num_workers=2, collate_fn=list)
    assert sorted(r["extra"]["row_id"] for batch in rows for r in batch) == sorted(got)


@needs_torch
@pytest.mark.timeout(300)
def test_two_ranks_of_two_workers_get_every_row_once(
    parquet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two ranks simulated in turn (the forked workers inherit the patched process group)."""
    import torch.distributed as dist
    from torch.utils.data import DataLoader

    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_world_size", lambda group=None: 2)
    got = []
    for rank in range(2):
        monkeypatch.setattr(dist, "get_rank", lambda group=None, rank=rank: rank)
        loader = DataLoader(_stream(parquet), batch_size=16, num_workers=2, collate_fn=_collate)
        mine = [row for batch in loader for row in batch]
        assert mine and len(mine) < 296
        got += mine
    assert sorted(got) == sorted(every_row(parquet))
    # an explicit shard replaces the ranks: shard(1, 0) gives every rank every row
    assert sorted(ids(_stream(parquet).shard(1, 0))) == sorted(got)


@needs_torch
def test_a_worker_iterates_its_part_but_a_writer_gets_every_row(
    parquet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch.utils.data

    parts = []
    for worker in range(3):
        info = SimpleNamespace(id=worker, num_workers=3)
        monkeypatch.setattr(torch.utils.data, "get_worker_info", lambda info=info: info)
        streamed = _stream(parquet)
        parts.append(ids(streamed))
        assert sum(table.num_rows for table in streamed.tables()) == 295  # one row rejected
    assert sorted(r for part in parts for r in part) == sorted(every_row(parquet))
    assert all(parts)
