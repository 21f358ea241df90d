"""Issue #28: the eager load and the command on every file layout, against both floors.

HellaSwag (1M rows of ``hub_validation.parquet``) and MMLU (1.4M rows of ``hub_all_test``),
replicated into a temporary folder in the layouts real files have: Parquet of one row group,
of ~10k-row groups (HellaSwag's 10,042: its split as one group, as the Hub's conversions
write them), of 1,000-row groups (``datasets``' default); and each dataset's text layout, as
its authors publish it: HellaSwag's original JSON Lines (``rowanz_val.jsonl.gz``'s lines) and
MMLU's headerless CSV files (``hendrycks_csv/test``, every subject's lines, one file).

Each run is a fresh process, timed whole (wall time, start-up included); every round runs
each floor and each case once, alternately; medians of ``--repeats`` rounds:

- the eager floor: pyarrow's own reader of the whole file + ``pq.write_table``
  (``pq.read_table``; ``pyarrow.json.read_json``; ``pyarrow.csv.read_csv`` with the options
  a correct read of these files needs: the column names, every column text, quoted line
  breaks, as ``sdvm_hf`` reads them);
- the streamed floor: pyarrow's own streaming reader + ``pq.ParquetWriter``, batch by batch
  (``ParquetFile.iter_batches``; ``pyarrow.json.open_json``; ``pyarrow.csv.open_csv``);
- ``load``: ``write_parquet(load(NAME, data_files=F), OUT)``, against the eager floor
  (target <= 1.15x);
- ``convert``: ``sdvm-hf convert NAME --data-files F -o OUT`` (samples, rejects, summary),
  against the streamed floor (target <= 1.10x).

    python benchmarks/layouts.py [--realdata ../shared/realdata] [--repeats 5] [--quick]
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
from _data import PEAK, REALDATA, replicated

MMLU_CSV_NAMES = ["question", "A", "B", "C", "D", "answer"]

_PEAK = PEAK + "\nimport json, sys\nprint(json.dumps({'peak': peak_bytes()}), file=sys.stderr)"
_CSV_OPTIONS = (
    "import pyarrow as pa, pyarrow.csv as pacsv\n"
    f"names = {MMLU_CSV_NAMES!r}\n"
    "read = pacsv.ReadOptions(column_names=names)\n"
    "parse = pacsv.ParseOptions(newlines_in_values=True)\n"
    "convert = pacsv.ConvertOptions(column_types={{n: pa.string() for n in names}}, "
    "strings_can_be_null=False)\n"
)
_STREAM_TO = (
    "\nwriter = None\nfor batch in batches:\n"
    "    writer = writer or pq.ParquetWriter({out!r}, batch.schema)\n"
    "    writer.write_batch(batch)\nwriter.close()"
)
FLOORS = {
    (
        "eager",
        "parquet",
    ): "import pyarrow.parquet as pq\npq.write_table(pq.read_table({f!r}), {out!r})",
    ("eager", "jsonl"): (
        "import pyarrow.json as pajson, pyarrow.parquet as pq\n"
        "pq.write_table(pajson.read_json({f!r}), {out!r})"
    ),
    ("eager", "csv"): (
        "import pyarrow.parquet as pq\n" + _CSV_OPTIONS + "pq.write_table(pacsv.read_csv({f!r}, "
        "read_options=read, parse_options=parse, convert_options=convert), {out!r})"
    ),
    ("streamed", "parquet"): (
        "import pyarrow.parquet as pq\nbatches = pq.ParquetFile({f!r}).iter_batches()" + _STREAM_TO
    ),
    ("streamed", "jsonl"): (
        "import pyarrow.json as pajson, pyarrow.parquet as pq\nbatches = pajson.open_json({f!r})"
        + _STREAM_TO
    ),
    ("streamed", "csv"): (
        "import pyarrow.parquet as pq\n" + _CSV_OPTIONS + "batches = pacsv.open_csv({f!r}, "
        "read_options=read, parse_options=parse, convert_options=convert)" + _STREAM_TO
    ),
}
CASES = {
    "load": (
        "from sdvm_hf import load, write_parquet\n"
        "write_parquet(load({name!r}, data_files={f!r}), {out!r})"
    ),
    "convert": (
        "from sdvm_hf.cli import main\n"
        "code = main(['convert', {name!r}, '--data-files', {f!r}, '-o', {out!r}, '--quiet'])"
        "\nassert code == 0, code"
    ),
}
AGAINST = {"load": ("eager", 1.15), "convert": ("streamed", 1.10)}


def _timed(code: str) -> tuple[float, int]:
    """Wall seconds of a fresh process running ``code``, and its peak RSS in bytes."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code + _PEAK], check=True, capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    return seconds, int(json.loads(done.stderr.strip().splitlines()[-1])["peak"])


def sources(realdata: Path, folder: Path, quick: bool) -> list[tuple[str, str, str, Path]]:
    """Every (dataset, layout name, kind, file) made in ``folder``."""
    made = []
    for name, file, rows in (
        ("hellaswag", "hellaswag/hub_validation.parquet", 100_000 if quick else 1_000_000),
        ("mmlu", "mmlu/hub_all_test.parquet", 140_000 if quick else 1_400_000),
    ):
        table = replicated(realdata, file, rows)
        groups = [(f"{rows:,}-row group", rows), ("10,042-row groups", 10_042)]
        groups.append(("1,000-row groups", 1_000))
        for label, size in groups:
            path = folder / f"{name}-{size}.parquet"
            pq.write_table(table, path, row_group_size=size)
            made.append((name, f"Parquet, {label}", "parquet", path))
        del table
        if name == "hellaswag":
            path = folder / "hellaswag_val.jsonl"  # the original lines, repeated to the size
            with gzip.open(realdata / "hellaswag" / "rowanz_val.jsonl.gz", "rb") as raw:
                lines = raw.read().splitlines(keepends=True)
            with open(path, "wb") as out:
                out.writelines(itertools.islice(itertools.cycle(lines), rows))
            made.append((name, "JSON Lines (rowanz)", "jsonl", path))
        else:
            path = folder / "high_school_physics_test.csv"  # a subject's name, as MMLU's files
            csvs = sorted((realdata / "mmlu" / "hendrycks_csv" / "test").glob("*.csv"))
            text = b"".join(csv.read_bytes() for csv in csvs)
            copies = -(-rows // text.count(b"\n"))  # about the size: quoted breaks count too
            path.write_bytes(text * copies)
            made.append((name, "CSV (hendrycks, headerless)", "csv", path))
    return made


def measure(realdata: Path, repeats: int, quick: bool) -> None:
    """Print every layout's floors and cases, medians of ``repeats`` alternating rounds."""
    print(f"== file layouts (benchmarks/layouts.py): fresh processes, medians of {repeats}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, label, kind, path in sources(realdata, folder, quick):
            out = str(folder / "out.parquet")
            codes = {
                floor: FLOORS[(floor, kind)].format(f=str(path), out=out)
                for floor in ("eager", "streamed")
            }
            codes.update(
                {case: code.format(name=name, f=str(path), out=out) for case, code in CASES.items()}
            )
            _timed(codes["eager"])  # warms the file cache
            seconds: dict[str, list[float]] = {run: [] for run in codes}
            peaks: dict[str, list[float]] = {run: [] for run in codes}
            for _ in range(repeats):
                for run, code in codes.items():
                    wall, peak = _timed(code)
                    seconds[run].append(wall)
                    peaks[run].append(peak)
            median = {run: statistics.median(values) for run, values in seconds.items()}
            print(
                f"{name}, {label} ({path.stat().st_size / 2**20:,.0f} MiB): eager floor "
                f"{median['eager']:.2f} s, streamed floor {median['streamed']:.2f} s "
                f"(load average {os.getloadavg()[0]:.1f})",
                flush=True,
            )
            for case, (floor, target) in AGAINST.items():
                ratio = median[case] / median[floor]
                memory = statistics.median(peaks[case]) / statistics.median(peaks[floor])
                print(
                    f"  {case:<8} {median[case]:6.2f} s  {ratio:5.2f}x the {floor} floor "
                    f"(target <= {target}x: {'met' if ratio <= target else 'MISSED'}), peak "
                    f"{statistics.median(peaks[case]) / 2**20:,.0f} MiB ({memory:.2f}x)",
                    flush=True,
                )
            path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--realdata", type=Path, default=REALDATA)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="100k/140k rows, one repeat")
    args = parser.parse_args()
    measure(args.realdata, 1 if args.quick else args.repeats, args.quick)


if __name__ == "__main__":
    main()
