"""One conversion, three engines: a single process, ``datasets`` ``num_proc=2``, Ray Data.

Builds ROWS (default 1,000,000) HellaSwag rows in ten Parquet shards from the real
validation split (needs ../shared/realdata, or ``--source``), each with an ``id`` column (its
global row number) and every 1000th row's label broken, then converts them in skip mode to
the sample rows and the keyed rejects, in memory:

- single process: each shard read with pyarrow and converted by ``HELLASWAG.tagged``;
- ``datasets``: ``load_dataset("parquet")`` (its Arrow cache warm) and ``Dataset.map`` with
  the batch form, ``num_proc=2``, ``with_indices=True``;
- Ray Data (``num_cpus=2``, local, loopback): ``from_items(files)`` + ``read_keyed`` +
  ``map_batches(HELLASWAG)``, collected with ``to_arrow_refs``.

Every engine's samples and rejects, sorted by ``id``, must equal the single process's.
Medians of REPEATS alternating runs after one warm-up; ratios against the single process.

    python benchmarks/engines.py [--rows 1000000] [--repeats 3] [--source PATH]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sdvm_hf.engines import FILE_COLUMN, ROW_COLUMN, init_ray, read_keyed, reject_rows, sample_rows
from sdvm_hf.presets.hellaswag import HELLASWAG

SHARDS = 10
KEY = (pa.field("id", pa.int64()),)
Output = tuple[pa.Table, pa.Table]  # samples, rejects


def build(source: Path, rows: int, folder: Path) -> list[str]:
    real = pq.read_table(source)
    copies = -(-rows // real.num_rows)
    big = pa.concat_tables([real] * copies).slice(0, rows).combine_chunks()
    ids = np.arange(rows, dtype=np.int64)
    labels = pc.if_else(pa.array(ids % 1000 == 7), "9", big.column("label"))
    big = big.set_column(big.schema.get_field_index("label"), "label", labels)
    big = big.append_column("id", pa.array(ids))
    files, size = [], -(-rows // SHARDS)
    for shard in range(SHARDS):
        files.append(str(folder / f"shard-{shard:02}.parquet"))
        pq.write_table(big.slice(shard * size, size), files[-1])
    return files


def single(files: list[str]) -> Output:
    tagged = [
        HELLASWAG.tagged(pq.read_table(f), split="validation", rows="id", key="id") for f in files
    ]
    return pa.concat_tables(map(sample_rows, tagged)), pa.concat_tables(
        reject_rows(t, KEY) for t in tagged
    )


def with_datasets(files: list[str], cache: Path) -> Output:
    ds = datasets.load_dataset("parquet", data_files=files, split="train", cache_dir=str(cache))
    mapped = ds.map(
        HELLASWAG.batch,
        batched=True,
        with_indices=True,
        num_proc=2,
        remove_columns=ds.column_names,
        features=HELLASWAG.features(ds.features, on_error="skip"),
        fn_kwargs={"split": "validation", "on_error": "skip", "key": "id"},
        load_from_cache_file=False,
    )
    return sample_rows(mapped), reject_rows(mapped, KEY)


def with_ray(files: list[str]) -> Output:
    import ray

    mapping = replace(HELLASWAG, drop=(FILE_COLUMN, ROW_COLUMN))
    tagged = (
        ray.data.from_items(files, override_num_blocks=len(files))
        .map_batches(read_keyed, batch_size=1, batch_format="pyarrow")
        .map_batches(
            mapping,
            fn_kwargs={"split": "validation", "on_error": "skip", "rows": "id", "key": "id"},
            batch_format="pyarrow",
            batch_size=20_000,
        )
    )
    table = pa.concat_tables(ray.get(tagged.to_arrow_refs()))
    return sample_rows(table), reject_rows(table, KEY)


def by_id(samples: pa.Table) -> pa.Table:
    ids = pc.struct_field(samples.column("extra"), "id")
    return samples.take(pc.sort_indices(ids)).combine_chunks()


def same(output: Output, floor: Output) -> bool:
    """The same samples and rejects, sorted by id (a reader's src_* columns aside)."""
    samples, rejects = output
    if not by_id(samples).equals(by_id(floor[0])):
        return False

    def plain(table: pa.Table) -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = table.sort_by("id").to_pylist()
        for r in records:
            original = json.loads(r["original"])
            r["original"] = {
                k: v for k, v in original.items() if k not in (FILE_COLUMN, ROW_COLUMN)
            }
        return records

    return plain(rejects) == plain(floor[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--source", type=Path, default=Path("../shared/realdata/hellaswag/hub_validation.parquet")
    )
    args = parser.parse_args()
    datasets.disable_progress_bars()
    with tempfile.TemporaryDirectory() as work:
        files = build(args.source, args.rows, Path(work))
        start = time.perf_counter()
        init_ray(2, temp_dir=tempfile.mkdtemp(prefix="ray"))
        import ray

        print(f"ray.init(num_cpus=2): {time.perf_counter() - start:.1f} s (not counted)")
        ray.data.DataContext.get_current().enable_progress_bars = False
        logging.getLogger("ray.data").setLevel(logging.WARNING)
        engines: dict[str, Callable[[], Output]] = {
            "single process": lambda: single(files),
            "datasets num_proc=2": lambda: with_datasets(files, Path(work) / "hf"),
            "ray num_cpus=2": lambda: with_ray(files),
        }
        outputs = {name: run() for name, run in engines.items()}  # warm-up, and the outputs
        times: dict[str, list[float]] = {name: [] for name in engines}
        for _ in range(args.repeats):
            for name, run in engines.items():
                start = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - start)
        ray.shutdown()
    floor = statistics.median(times["single process"])
    samples, rejects = outputs["single process"]
    print(
        f"{args.rows} rows in {SHARDS} shards -> {samples.num_rows} samples, "
        f"{rejects.num_rows} rejects; medians of {args.repeats}"
    )
    for name, output in outputs.items():
        seconds = statistics.median(times[name])
        print(
            f"{name:<22} {seconds:7.2f} s  {seconds / floor:5.2f}x  "
            f"{args.rows / seconds / 1000:6.0f}k rows/s  "
            f"same output: {same(output, outputs['single process'])}"
        )


if __name__ == "__main__":
    main()
