"""Rejects keyed by a stable row key, in Ray Data and in ``datasets`` multiprocessing.

The Ray tests share one local Ray (``num_cpus=1``, loopback only) and are skipped when the
optional ``ray`` extra is not installed.
"""

import importlib.util
import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from sdvm_hf import ConversionError, LayoutError, Rejects, read_parquet
from sdvm_hf.engines import (
    FILE_COLUMN,
    FILE_ROW_KEY,
    ROW_COLUMN,
    init_ray,
    read_keyed,
    reject_rows,
    sample_rows,
)
from sdvm_hf.presets.hellaswag import HELLASWAG

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent
BUNDLED = Path(str(resources.files("sdvm_hf") / "data" / "hellaswag_validation.parquet"))
BAD = {0: [3, 50], 1: [], 2: [0, 98]}  # shard -> rows within it whose label is unusable

needs_ray = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="the optional ray extra is not installed (pip install -e '.[ray]')",
)
# Ray Data's DataContext sets its own deprecated options when it is created (ray 2.60)
ray_warnings = [
    pytest.mark.filterwarnings(
        f"ignore:`{option}` is deprecated:DeprecationWarning:ray.data.context"
    )
    for option in ("use_push_based_shuffle", "use_polars", "use_arrow_tensor_v2")
]


def shards(folder: Path) -> list[Path]:
    """The bundled HellaSwag slice in three shards, with the rows of ``BAD`` broken."""
    table = pq.read_table(BUNDLED)
    folder.mkdir(parents=True, exist_ok=True)
    paths, start = [], 0
    for shard, size in enumerate((100, 97, table.num_rows - 197)):
        part = table.slice(start, size)
        labels = part.column("label").to_pylist()
        for row in BAD[shard]:
            labels[row] = "9"
        part = part.set_column(
            part.schema.get_field_index("label"), "label", pa.array(labels, pa.string())
        )
        paths.append(folder / f"shard-{shard}.parquet")
        pq.write_table(part, paths[-1], row_group_size=40)
        start += size
    return paths


def expected_keys(paths: list[Path]) -> list[tuple[str, int]]:
    return sorted((str(paths[shard]), row) for shard, rows in BAD.items() for row in rows)


@pytest.fixture(scope="module")
def ray_local() -> Iterator[ModuleType]:
    temp = tempfile.mkdtemp(prefix="ray")  # short: Ray's socket paths live under it
    init_ray(1, temp_dir=temp, object_store_memory=100 * 1024**2)
    import ray

    assert ray.nodes()[0]["NodeManagerAddress"].startswith("127.")
    assert ray.util.get_node_ip_address().startswith("127.")
    yield ray
    ray.shutdown()
    shutil.rmtree(temp, ignore_errors=True)


def recipe_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "ray_convert", ROOT / "recipes" / "ray_convert.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["ray_convert"] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


@needs_ray
@pytest.mark.usefixtures("ray_local")
@pytest.mark.timeout(300)
@ray_warnings[0]
@ray_warnings[1]
@ray_warnings[2]
def test_ray_recipe_writes_sample_shards_and_rejects_keyed_by_file_and_row(
    tmp_path: Path,
) -> None:
    paths = shards(tmp_path / "in")
    out = tmp_path / "out"
    result = recipe_module().run([str(tmp_path / "in"), "--out", str(out), "--batch-size", "64"])
    rows = sum(pq.read_metadata(p).num_rows for p in paths)
    assert (result.rows, result.samples, result.rejects) == (rows, rows - 4, 4)

    rejects = pq.read_table(out / "rejects")
    keys = sorted(
        zip(rejects[FILE_COLUMN].to_pylist(), rejects[ROW_COLUMN].to_pylist(), strict=True)
    )
    assert keys == expected_keys(paths)
    assert rejects["row"].to_pylist() == rejects[ROW_COLUMN].to_pylist()
    back = Rejects.from_table(rejects)  # the REJECT_SCHEMA columns read back as rejects
    assert {r.original["label"] for r in back} == {"9"}
    assert {r.path for r in back} == {("label",)}

    samples = sorted(
        (s.to_dict() for f in sorted((out / "samples").glob("*.parquet")) for s in read_parquet(f)),
        key=lambda d: json.dumps(d, sort_keys=True),
    )
    whole = pa.concat_tables(pq.read_table(p) for p in paths)
    single = HELLASWAG.convert(whole, split="validation", on_error="skip")
    assert samples == sorted(
        (s.to_dict() for s in read_samples_of(single.table)),
        key=lambda d: json.dumps(d, sort_keys=True),
    )


def read_samples_of(table: pa.Table) -> list[Any]:
    from sdvm_hf import SampleSequence

    return list(SampleSequence(table))


def run_keyed(ray: ModuleType, paths: list[Path]) -> tuple[pa.Table, pa.Table]:
    """One Ray run over ``paths`` in skip mode: the sample table and the keyed rejects."""
    key = (FILE_COLUMN, ROW_COLUMN)
    mapping = replace(HELLASWAG, drop=key)
    items = ray.data.from_items([str(p) for p in paths], override_num_blocks=len(paths))
    tagged = items.map_batches(read_keyed, batch_size=1, batch_format="pyarrow").map_batches(
        mapping,
        fn_kwargs={"split": "validation", "on_error": "skip", "rows": ROW_COLUMN, "key": key},
        batch_format="pyarrow",
        batch_size=32,
    )
    table = pa.concat_tables(ray.get(tagged.to_arrow_refs()))
    return sample_rows(table), reject_rows(table, FILE_ROW_KEY)


@needs_ray
@pytest.mark.timeout(300)
@ray_warnings[0]
@ray_warnings[1]
@ray_warnings[2]
def test_map_batches_rejects_are_keyed_by_file_and_row_the_same_in_every_run(
    ray_local: ModuleType, tmp_path: Path
) -> None:
    paths = shards(tmp_path)
    first_samples, first = run_keyed(ray_local, paths)
    second_samples, second = run_keyed(ray_local, paths)
    order = [(FILE_COLUMN, "ascending"), (ROW_COLUMN, "ascending")]
    assert first.sort_by(order).equals(second.sort_by(order))
    keys = list(zip(first[FILE_COLUMN].to_pylist(), first[ROW_COLUMN].to_pylist(), strict=True))
    assert sorted(keys) == expected_keys(paths)
    originals = [json.loads(text) for text in first.sort_by(order)["original"].to_pylist()]
    assert [(o[FILE_COLUMN], o[ROW_COLUMN]) for o in originals] == expected_keys(paths)
    assert first_samples.num_rows == second_samples.num_rows == 296 - 4


def test_datasets_num_proc_rejects_are_keyed_by_the_key_column(tmp_path: Path) -> None:
    table = pq.read_table(BUNDLED).slice(0, 60)
    labels = table.column("label").to_pylist()
    bad = [7, 31, 59]
    for row in bad:
        labels[row] = ""
    table = table.set_column(table.schema.get_field_index("label"), "label", pa.array(labels))
    ids = pa.array([f"hs-{i:03}" for i in range(table.num_rows)])
    ds = datasets.Dataset(datasets.table.InMemoryTable(table.append_column("id", ids)))
    ds = ds.shuffle(seed=3)  # the dataset's rows are no longer the source's
    mapped = ds.map(
        HELLASWAG.batch,
        batched=True,
        batch_size=8,
        with_indices=True,
        num_proc=2,
        remove_columns=ds.column_names,
        features=HELLASWAG.features(ds.features, on_error="skip"),
        fn_kwargs={"split": "validation", "on_error": "skip", "key": "id"},
        cache_file_name=str(tmp_path / "mapped.arrow"),
    )
    rejects = reject_rows(mapped, [ds.features.arrow_schema.field("id")])
    assert sorted(rejects["id"].to_pylist()) == [f"hs-{i:03}" for i in bad]
    assert all(
        json.loads(o)["id"] == k
        for o, k in zip(rejects["original"].to_pylist(), rejects["id"].to_pylist(), strict=True)
    )
    samples = sample_rows(mapped)
    assert samples.num_rows + rejects.num_rows == 60
    assert sorted(pc.struct_field(samples["extra"], "id").to_pylist()) == sorted(
        set(ids.to_pylist()) - {f"hs-{i:03}" for i in bad}
    )


# -- the tagged form's keys, without an engine --------------------------------------------------


def broken(n: int = 4) -> pa.Table:
    table = pq.read_table(BUNDLED).slice(0, n)
    labels = table.column("label").to_pylist()
    labels[1] = "7"
    table = table.set_column(table.schema.get_field_index("label"), "label", pa.array(labels))
    return table.append_column(ROW_COLUMN, pa.array([10, 11, 12, 13][:n], pa.int64()))


def test_rows_from_a_column_number_rejects_by_the_source_not_the_batch() -> None:
    tagged = HELLASWAG(broken(), on_error="skip", rows=ROW_COLUMN, key=ROW_COLUMN)
    record = json.loads(tagged["reject"][1].as_py())
    assert (record["row"], record["key"]) == (11, {ROW_COLUMN: 11})


def test_raise_mode_names_the_source_row_and_the_key() -> None:
    with pytest.raises(
        ConversionError, match=r"hellaswag validation row 11, column 'label'.*key src_row=11"
    ):
        HELLASWAG(broken(), split="validation", rows=ROW_COLUMN, key=ROW_COLUMN)


def test_a_missing_key_or_rows_column_is_a_layout_error() -> None:
    with pytest.raises(LayoutError, match=r"key column 'id' is missing; columns seen: .*label"):
        HELLASWAG.tagged(broken(), key="id")
    with pytest.raises(LayoutError, match=r"rows='nope' names no column"):
        HELLASWAG.tagged(broken(), rows="nope")
    with pytest.raises(LayoutError, match=r"rows='label' should be a column of row numbers"):
        HELLASWAG.tagged(broken(), rows="label")


def test_reject_rows_needs_the_key_it_is_asked_for() -> None:
    tagged = HELLASWAG.tagged(broken())
    with pytest.raises(ValueError, match=r"reject of row 1 has no key"):
        reject_rows(tagged, FILE_ROW_KEY)
    assert reject_rows(tagged, ()).column_names == Rejects().table().column_names
