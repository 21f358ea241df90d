"""Peak memory of exporting refined HellaSwag rows, against pq.read_table + pq.write_table.

HellaSwag's ``hub_validation.parquet`` is replicated to ``--rows`` rows and converted once to
a sample file; a *refined* file is made from it in Arrow, as the tests make one by hand (the
service is not needed): every row audited, one row in ten failing a check, one in twenty
with a fixed context (a word added to its end, which lm-eval reads in ``ctx_b``), each fixed
row reaudited as passing, and a ``refine`` stage in its record (with the content hash of what
it read, so ``--policy original`` and ``--annotate`` trust the convert output). Each case is a
fresh subprocess reporting its peak RSS (``resource.getrusage``): ``export`` of the refined
file under the default policy, ``drop`` with ``annotate``, and ``original``; the floor is
``pq.write_table(pq.read_table(refined), ...)`` of the same file, in its own subprocess. The
issue's target: each at most 1.5x the floor.

    python benchmarks/export_memory.py [--rows 1000000] [--repeats 1] [--realdata DIR]
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
from _data import options, replicated

from sdvm_hf import load, write_parquet
from sdvm_hf.record import content_hash, read_record

CASES = {
    "replace": {},
    "drop --annotate": {"policy": "drop", "annotate": True},
    "original": {"policy": "original"},
}
"""Each export measured: its name and ``export``'s options."""

_CHILD = """
import json, resource, shutil, sys
path, how, out = sys.argv[1], sys.argv[2], sys.argv[3]
if how == "floor":
    import pyarrow.parquet as pq
    pq.write_table(pq.read_table(path), out + ".floor.parquet")
else:
    from sdvm_hf import export
    export(path, out, overwrite=True, **json.loads(how))
    shutil.rmtree(out)
print(json.dumps({"peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def refined_file(samples: Path, out: Path) -> Path:
    """``samples`` audited, fixed and reaudited as a refine stage's output, built in Arrow."""
    table = pq.read_table(samples)
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
    source = pq.read_table(samples)
    stage = record.with_stage("refine", samples, table.num_rows, input_hash=content_hash(source))
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = folder / "source.parquet"
        pq.write_table(
            replicated(args.realdata, "hellaswag/hub_validation.parquet", args.rows), source
        )
        samples = folder / "samples.parquet"
        write_parquet(load("hellaswag", data_files=str(source)), samples)
        refined = refined_file(samples, folder / "refined.parquet")
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
