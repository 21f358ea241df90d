"""A folder of source Parquet shards to sample Parquet shards and a rejects dataset, in Ray Data.

    pip install -e '.[ray]'
    python recipes/ray_convert.py SHARDS/ [--preset hellaswag] [--split validation]
        [--out out/ray] [--key id] [--num-cpus 2] [--batch-size 10000]

Every source file is read by a Ray task with pyarrow, which adds each row's file and row
within it (``src_file``, ``src_row``: ``ray.data.read_parquet`` gives no row numbers and
reorders rows), the preset's mapping converts each batch in skip mode (the mapping is the
batch function), and one pass writes ``OUT/samples/*.parquet`` (the sample schema) and
``OUT/rejects/*.parquet`` (the key columns, then ``REJECT_SCHEMA``): every rejected row keyed
by file + row, or by the source's own ``--key`` column. Ray runs locally on the loopback
interface; samples + rejects == input rows, at any scale.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf import PRESETS, MultipleChoiceMapping
from sdvm_hf.convert.mapping import REJECT_COLUMN
from sdvm_hf.engines import (
    FILE_COLUMN,
    FILE_ROW_KEY,
    ROW_COLUMN,
    init_ray,
    read_keyed,
    reject_rows,
    sample_rows,
)


@dataclass(frozen=True)
class Result:
    rows: int
    samples: int
    rejects: int


def options() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="a folder of Parquet shards")
    parser.add_argument("--preset", default="hellaswag", choices=sorted(PRESETS))
    parser.add_argument("--layout", help="the preset's layout (default: from the columns)")
    parser.add_argument("--split", default=None, help="the split's name, for messages")
    parser.add_argument("--out", type=Path, default=Path("out/ray"))
    parser.add_argument("--key", help="a column that names each source row (default: file + row)")
    parser.add_argument("--num-cpus", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=10_000)
    return parser


def keyed_mapping(mapping: MultipleChoiceMapping) -> MultipleChoiceMapping:
    """The mapping, with the reader's key columns left out of ``extra``."""
    return replace(mapping, drop=(*mapping.drop, FILE_COLUMN, ROW_COLUMN))


def run(argv: Sequence[str] | None = None) -> Result:
    args = options().parse_args(argv)
    files = sorted(str(f) for f in args.source.glob("*.parquet"))
    if not files:
        raise ValueError(f"{args.source}: no *.parquet files")
    schema = pq.read_schema(files[0])
    preset = PRESETS[args.preset]
    mapping = keyed_mapping(preset.mapping(schema.names, args.layout))
    split = args.split or preset.split
    key_fields = FILE_ROW_KEY if args.key is None else (schema.field(args.key),)
    key = tuple(f.name for f in key_fields)

    init_ray(args.num_cpus)  # loopback only; a no-op when Ray already runs (the tests)
    import ray

    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)

    source = ray.data.from_items(files, override_num_blocks=len(files))
    rows = source.map_batches(read_keyed, batch_size=1, batch_format="pyarrow")
    tagged = rows.map_batches(
        mapping,  # the mapping is the batch function: its tagged form, in skip mode
        fn_kwargs={"split": split, "on_error": "skip", "rows": ROW_COLUMN, "key": key},
        batch_format="pyarrow",
        batch_size=args.batch_size,
    ).materialize()  # converted once, written twice
    for folder in ("samples", "rejects"):
        shutil.rmtree(args.out / folder, ignore_errors=True)  # Ray appends by default
    samples = tagged.map_batches(sample_rows, batch_format="pyarrow")
    rejects = tagged.map_batches(reject_rows, fn_kwargs={"key": key_fields}, batch_format="pyarrow")
    samples.write_parquet(str(args.out / "samples"))
    rejects.write_parquet(str(args.out / "rejects"))

    rejected = rejects.count()
    if rejected == 0:  # Ray writes no file for no rows: keep the dataset's schema
        empty = reject_rows(pa.table({REJECT_COLUMN: pa.array([], pa.string())}), key_fields)
        (args.out / "rejects").mkdir(parents=True, exist_ok=True)
        pq.write_table(empty, args.out / "rejects" / "empty.parquet")

    result = Result(
        rows=sum(pq.read_metadata(f).num_rows for f in files),
        samples=samples.count(),
        rejects=rejected,
    )
    print(
        f"{len(files)} files, {result.rows} rows -> {result.samples} samples in "
        f"{args.out / 'samples'}, {result.rejects} rejects in {args.out / 'rejects'} "
        f"(keyed by {' + '.join(key)})"
    )
    if result.samples + result.rejects != result.rows:
        raise AssertionError(
            f"{result.samples} samples + {result.rejects} rejects != {result.rows} rows"
        )
    return result


if __name__ == "__main__":
    try:
        run()
    finally:
        if "ray" in sys.modules:
            sys.modules["ray"].shutdown()
