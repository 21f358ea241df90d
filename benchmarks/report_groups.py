"""A 1M-row refined file reported grouped by a per-row key: time and size of the report.

The issue's case: grouped by a key with a value per row, the report took 4 minutes and wrote
325 MB (every group listed, once per sort order). Now the largest groups are listed and the
rest summed, in one table. The file is the bundled MMLU slice repeated to ROWS, each row with
its own ``id`` and nested ``audit``/``fix``/``reaudit`` blocks. The floor is a plain pyarrow
pass over the same file: read it and count the values of the group key and of each block
column (``pc.value_counts``). Figures are medians; the budget is absolute (under 15 s and
2 MB, HTML and JSON alike).

With ``distinct``, every audit block differs (a per-row ``score``), so every block text is
parsed: the worst case for the summary, which parses each distinct text once.

    python benchmarks/report_groups.py [ROWS] [distinct]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from _timing import medians, report

from sdvm_hf import load_mmlu
from sdvm_hf.report import build_report, write_report


def refined_file(rows: int, path: Path, distinct: bool = False) -> None:
    seed = load_mmlu(bundled=True).table
    table = pa.concat_tables([seed] * (rows // seed.num_rows + 1)).slice(0, rows).combine_chunks()
    extra = table.column("extra").combine_chunks()
    ids = pa.array([f"q{i}" for i in range(rows)])
    struct = pa.StructArray.from_arrays(
        [*extra.flatten(), ids], names=[*(f.name for f in extra.type), "id"]
    )
    table = table.set_column(table.schema.get_field_index("extra"), "extra", struct)
    kinds = []
    for i in range(7):
        checks = {"grammatical": i % 3 != 0, "single_correct_answer": i % 5 != 0}
        kinds.append(
            (
                json.dumps({"ok": all(checks.values()), "checks": checks, "score": 0.5}),
                json.dumps({"changes": ["x"] if i % 3 == 0 else [], "flagged": i == 6}),
                json.dumps({"ok": True, "checks": {"grammatical": True}}),
            )
        )
    for column, index in (("audit", 0), ("fix", 1), ("reaudit", 2)):
        values = pa.array(
            [kinds[i % 7][index] for i in range(rows)], table.schema.field(column).type
        )
        table = table.set_column(table.schema.get_field_index(column), column, values)
    pq.write_table(table, path)


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    distinct = sys.argv[2:3] == ["distinct"]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "refined.parquet"
        refined_file(rows, path, distinct)
        html, js = Path(folder) / "r.html", Path(folder) / "r.json"

        def floor() -> object:
            table = pq.read_table(path)
            ids = pc.struct_field(table.column("extra"), "id")
            return [pc.value_counts(ids)] + [
                pc.value_counts(table.column(c)) for c in ("audit", "fix", "reaudit")
            ]

        def work() -> object:
            built = build_report(path, group_by="id")
            write_report(built, html)
            write_report(built, js)
            return built

        start = time.perf_counter()
        work()
        once = time.perf_counter() - start
        floor_s, work_s = medians(floor, work, repeats=3)
        blocks = "distinct blocks" if distinct else "repeated blocks"
        report(f"report of {rows:,} rows by a per-row key, {blocks}", floor_s, work_s)
        print(
            f"first run {once:.1f} s; median {work_s:.1f} s (budget < 15 s: "
            f"{'met' if work_s < 15 else 'MISSED'})"
        )
        for name, file in (("HTML", html), ("JSON", js)):
            size = file.stat().st_size
            print(
                f"{name} {size / 1e6:.2f} MB (budget < 2 MB: {'met' if size < 2e6 else 'MISSED'})"
            )


if __name__ == "__main__":
    main()
