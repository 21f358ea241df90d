"""Peak memory of exporting refined HellaSwag rows, against pq.read_table + pq.write_table.

HellaSwag's ``hub_validation.parquet`` is replicated to ``--rows`` rows and converted once to
a sample file; a *refined* file is made from it in Arrow, as the tests make one by hand (the
service is not needed): every row audited, one row in ten failing a check, one in twenty
with a fixed context (a word added to its end, which lm-eval reads in ``ctx_b``), each fixed
row reaudited as passing, and a ``refine`` stage in its record (with the content hash of what
it read, so ``--policy original`` and ``--annotate`` trust the convert output). Each case is
a fresh subprocess reporting its peak RSS (``VmHWM``; ``getrusage``'s ``ru_maxrss`` would keep
the high-water mark of this process, which held the files, across the fork): ``export`` of
the refined file under the default policy, ``drop`` with ``annotate``, and ``original``; the
floor is ``pq.write_table(pq.read_table(refined), ...)`` of the same file, in its own
subprocess. The issue's target: each at most 1.5x the floor. ``--folder`` keeps the files
(made once per size) for another run, e.g. of another checkout (``PYTHONPATH``).

    python benchmarks/export_memory.py [--rows 1000000] [--repeats 1] [--folder DIR]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from _data import PEAK, options, replicated

from sdvm_hf import stream, write_parquet
from sdvm_hf.record import content_hash, read_record

CASES = {
    "replace": {},
    "drop --annotate": {"policy": "drop", "annotate": True},
    "original": {"policy": "original"},
}
"""Each export measured: its name and ``export``'s options."""

_CHILD = (
    PEAK
    + """
import json, shutil, sys
path, how, out = sys.argv[1], sys.argv[2], sys.argv[3]
if how == "floor":
    import pyarrow.parquet as pq
    pq.write_table(pq.read_table(path), out + ".floor.parquet")
else:
    from sdvm_hf import export
    export(path, out, overwrite=True, **json.loads(how))
    shutil.rmtree(out)
print(json.dumps({"peak": peak_bytes()}))
"""
)


def refined_file(samples: Path, out: Path) -> Path:
    """``samples`` audited, fixed and reaudited as a refine stage's output, built in Arrow."""
    table = pq.read_table(samples)
    read = content_hash(table)  # what the stage read
    rows = np.arange(table.num_rows)
    fixed = pa.array(rows % 20 == 7)
    failing = pa.array(rows % 10 == 3)
    context = pc.if_else(
        fixed, pc.binary_join_element_wise(table["context"], " indeed", ""), table["context"]
    )
    passed = json.dumps({"ok": True, "checks": {"grammatical": True, "complete": True}})
    failed = json.dumps({"ok": False, "checks": {"grammatical": False, "complete": True}})
    fix = json.dumps({"changes": ["context"], "flagged": False, "attempts": 1})
    audit = pc.if_else(failing, failed, passed)
    reaudit = pc.if_else(fixed, passed, audit)
    names = table.column_names
    table = (
        table.set_column(names.index("context"), "context", context)
        .set_column(names.index("audit"), "audit", audit)
        .set_column(names.index("fix"), "fix", pc.if_else(fixed, fix, pa.scalar(None, pa.string())))
        .set_column(names.index("reaudit"), "reaudit", reaudit)
    )
    record = read_record(samples)
    assert record is not None
    stage = record.with_stage("refine", samples, table.num_rows, input_hash=read)
    pq.write_table(table.replace_schema_metadata(stage.metadata()), out)
    return out


def peak(path: Path, how: str, out: Path) -> int:
    """Peak RSS in bytes of one fresh subprocess doing ``how``."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), how, str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(json.loads(done.stdout.strip().splitlines()[-1])["peak"])


def main() -> None:
    """Make the refined file, measure the floor and each case, print the ratios."""
    parser = options(__doc__ or "", repeats=1)
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--folder", type=Path, help="keep the files here (default: a temporary)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.folder or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        refined = folder / f"refined-{args.rows}.parquet"
        if not refined.is_file():
            source = folder / "source.parquet"
            table = replicated(args.realdata, "hellaswag/hub_validation.parquet", args.rows)
            pq.write_table(table, source)
            del table
            samples = folder / f"samples-{args.rows}.parquet"
            write_parquet(stream("hellaswag", data_files=str(source)), samples)
            refined_file(samples, refined)
        floors: list[int] = []
        peaks: dict[str, list[int]] = {name: [] for name in args.cases}
        for _ in range(args.repeats):
            floors.append(peak(refined, "floor", folder / "floor"))
            for name in args.cases:
                peaks[name].append(peak(refined, json.dumps(CASES[name]), folder / "export"))
        floor = statistics.median(floors)
        print(f"floor pq.read_table + pq.write_table, {args.rows:,} rows: {floor / 2**20:,.0f} MiB")
        for name, found in peaks.items():
            ours = statistics.median(found)
            print(
                f"export {name:<16} {args.rows:>10,} rows: peak {ours / 2**20:7,.0f} MiB, "
                f"{ours / floor:4.2f}x the floor (target <= 1.5x)"
            )


if __name__ == "__main__":
    main()
