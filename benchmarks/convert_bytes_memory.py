"""Peak memory of ``sdvm-hf convert`` on wide rows: bounded by bytes, not only by rows.

HellaSwag's ``hub_validation.parquet`` (10,042 rows, in its real layout) is made wide: each
row's ``ctx`` and each of its ``endings`` is its own text repeated (``--row-kib`` KiB a row in
all, 100 by default: about 1 GB of strings in 10k rows, where the real rows hold 1 KiB). The
file is written in several row-group layouts (one row group; 10k-row groups; 1k-row groups).
Each case is a fresh subprocess reporting its peak RSS (``VmHWM``):

- ``convert``: ``sdvm-hf convert hellaswag --data-files F -o OUT`` (samples, rejects, summary);
- ``floor``: pyarrow streaming the same file, ``pq.ParquetFile(F).iter_batches()`` into a
  ``pq.ParquetWriter``, batch by batch, nothing else (pyarrow's default batches: 65,536 rows);
- ``floor-bounded``: the same with batches of about ``BATCH_BYTES`` (what ``convert`` reads at
  a time: rows from the widest row group's size in the footer).

The same rows as JSON Lines (1 GB): the floors are ``pyarrow.json.open_json`` streaming into a
``ParquetWriter``, in its default 1 MiB blocks and in the 8 MiB ``convert`` reads at a time.

Medians of ``--repeats`` rounds, run alternately; ratios against the floors, and of what each
case takes above its own figure on the real, narrow file (``narrow``: the imports, which
``convert``'s are more of: ``datasets``, ``pydantic``). A row group is
the unit pyarrow reads: a file of one 1 GB row group holds its column chunks whole while it is
read, whatever the batch size, in the floors as in ``convert``.

    python benchmarks/convert_bytes_memory.py [--realdata ../shared/realdata] [--repeats 3]
        [--checkout FOLDER]   (an earlier commit's tree, e.g. from git archive: "before")
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from _data import PEAK, options

from sdvm_hf.arrow import BATCH_BYTES

ROOT = Path(__file__).resolve().parent.parent

LAYOUTS: dict[str, int | str | None] = {
    "one row group": None,
    "10k-row groups": 10_000,
    "1k-row groups": 1_000,
    "JSON Lines": "jsonl",
}

_PEAK = PEAK + "\nimport json, sys\nprint(json.dumps({'peak': peak_bytes()}), file=sys.stderr)"
_CODE = {
    "convert": (
        "from sdvm_hf.cli import main\n"
        "code = main(['convert', 'hellaswag', '--data-files', {f!r}, '-o', {out!r}, '--quiet'])"
        "\nassert code == 0, code"
    ),
    "floor": (
        "import pyarrow.parquet as pq\n"
        "source = pq.ParquetFile({f!r}, pre_buffer=False)\n"
        "with pq.ParquetWriter({out!r}, source.schema_arrow) as writer:\n"
        "    for batch in source.iter_batches():\n"
        "        writer.write_batch(batch)"
    ),
    "floor-bounded": (
        "import pyarrow.parquet as pq\n"
        "source = pq.ParquetFile({f!r}, pre_buffer=False)\n"
        "meta = source.metadata\n"
        "wide = max(meta.row_group(i).total_byte_size / max(meta.row_group(i).num_rows, 1)"
        " for i in range(meta.num_row_groups))\n"
        "rows = max(1, int({limit} // max(wide, 1)))\n"
        "with pq.ParquetWriter({out!r}, source.schema_arrow) as writer:\n"
        "    for batch in source.iter_batches(batch_size=rows):\n"
        "        writer.write_batch(batch)"
    ),
}
_JSONL_FLOORS = {
    "floor": (
        "import pyarrow.json as paj, pyarrow.parquet as pq\n"
        "source = paj.open_json({f!r})\n"
        "with pq.ParquetWriter({out!r}, source.schema) as writer:\n"
        "    for batch in source:\n"
        "        writer.write_batch(batch)"
    ),
    "floor-bounded": (
        "import pyarrow.json as paj, pyarrow.parquet as pq\n"
        "options = paj.ReadOptions(block_size=8 << 20, use_threads=False)\n"
        "source = paj.open_json({f!r}, read_options=options)\n"
        "with pq.ParquetWriter({out!r}, source.schema) as writer:\n"
        "    for batch in source:\n"
        "        writer.write_batch(batch)"
    ),
}


def widened(source: Path, row_kib: int) -> pa.Table:
    """HellaSwag's rows with ``ctx`` and ``endings`` repeated to about ``row_kib`` KiB a row."""
    table = pq.read_table(source)
    endings = table.column("endings").combine_chunks()
    ctx = table.column("ctx").combine_chunks()
    per_row = pc.add(pc.binary_length(ctx), pc.list_value_length(endings)).to_numpy().mean()
    per_row += pc.sum(pc.binary_length(pc.list_flatten(endings))).as_py() / table.num_rows
    times = max(1, int(row_kib * 1024 // per_row))
    long_ctx = pc.binary_repeat(pc.binary_join_element_wise(ctx, " ", ""), times)
    words = pc.binary_repeat(pc.binary_join_element_wise(endings.flatten(), " ", ""), times)
    long_endings = pa.ListArray.from_arrays(endings.offsets, words)
    table = table.set_column(table.schema.get_field_index("ctx"), "ctx", long_ctx)
    return table.set_column(table.schema.get_field_index("endings"), "endings", long_endings)


def peak(code: str, folder: Path, checkout: Path = ROOT) -> int:
    """Peak RSS in bytes of a fresh process running ``code`` in ``folder``, ``checkout``'s sdvm_hf.

    Not in this folder: ``python -c`` imports from its working folder first.
    """
    done = subprocess.run(
        [sys.executable, "-c", code + _PEAK],
        check=True,
        capture_output=True,
        text=True,
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(checkout)},
    )
    return int(json.loads(done.stderr.strip().splitlines()[-1])["peak"])


def main() -> None:
    """Write each layout, measure every case, print medians and ratios."""
    parser = options(__doc__.splitlines()[0], repeats=3)
    parser.add_argument("--row-kib", type=int, default=100)
    parser.add_argument("--layouts", nargs="+", choices=list(LAYOUTS), help="default: all")
    parser.add_argument(
        "--checkout",
        type=Path,
        default=ROOT,
        help="measure the sdvm_hf of this folder (an earlier commit's tree)",
    )
    args = parser.parse_args()
    real = args.realdata / "hellaswag" / "hub_validation.parquet"
    table = widened(real, args.row_kib)
    strings = sum(
        pc.sum(pc.binary_length(column)).as_py()
        for column in (table.column("ctx"), pc.list_flatten(table.column("endings")))
    )
    print(
        f"{table.num_rows:,} HellaSwag rows, {strings / 2**30:.2f} GiB of ctx and endings "
        f"({table.nbytes / 2**30:.2f} GiB in Arrow); batches of {BATCH_BYTES >> 20} MiB; "
        f"medians of {args.repeats}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        narrow: dict[str, float] = {}
        for layout, group in {"narrow": "narrow", **LAYOUTS}.items():
            if args.layouts and layout != "narrow" and layout not in args.layouts:
                continue
            source = folder / ("wide.jsonl" if group == "jsonl" else "wide.parquet")
            codes = {**_CODE, **_JSONL_FLOORS} if group == "jsonl" else _CODE
            if group == "narrow":
                shutil.copy(real, source)
            elif group == "jsonl":
                with source.open("w", encoding="utf-8") as lines:
                    for batch in table.to_batches(max_chunksize=500):
                        lines.writelines(json.dumps(row) + "\n" for row in batch.to_pylist())
            else:
                rows = group if isinstance(group, int) else table.num_rows
                pq.write_table(table, source, row_group_size=rows)
            peaks: dict[str, list[int]] = {case: [] for case in _CODE}
            for _ in range(args.repeats):
                for case, code in codes.items():
                    out = folder / f"{case}.parquet"
                    code = code.format(f=str(source), out=str(out), limit=BATCH_BYTES)
                    checkout = args.checkout if case == "convert" else ROOT
                    peaks[case].append(peak(code, folder, checkout))
                    for written in folder.glob(f"{case}.*"):
                        written.unlink()
            median = {case: statistics.median(values) for case, values in peaks.items()}
            floor, bounded = median["floor"], median["floor-bounded"]
            if not narrow:
                narrow = median
                print(
                    f"{layout:<15} convert {median['convert'] / 2**20:6.0f} MiB | floor "
                    f"{floor / 2**20:6.0f} MiB | floor-bounded {bounded / 2**20:6.0f} MiB"
                )
                source.unlink()
                continue
            above = (median["convert"] - narrow["convert"]) / (bounded - narrow["floor-bounded"])
            print(
                f"{layout:<15} convert {median['convert'] / 2**20:6.0f} MiB | floor "
                f"{floor / 2**20:6.0f} MiB ({median['convert'] / floor:4.2f}x) | floor-bounded "
                f"{bounded / 2**20:6.0f} MiB ({median['convert'] / bounded:4.2f}x; above the "
                f"narrow file: {above:4.2f}x)"
            )
            source.unlink()
    del table


if __name__ == "__main__":
    main()
