"""A file refined by the local stand-in service, exported with each policy.

The stand-in fails ``grammar`` where a context has a doubled space and its fix collapses the
spaces; ``complete`` fails for a qa context that does not end in ``?``. So the rows to replace
and to drop are known from the source alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from sdvm_hf import PRESETS, export, load, read_samples, write_parquet
from sdvm_hf.record import read_record

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.version_info < (3, 12), reason="the sdvm SDK needs Python >= 3.12"),
]

FIXTURES = Path(__file__).parent / "fixtures"


def refine(source: Path, out: Path, dataset: str) -> Path:
    pytest.importorskip("sdvm", reason="install the 'sdvm' extra: pip install -e '.[sdvm]'")
    from service_stub import stub_stage

    stub_stage(read_samples(source), "refine", out, PRESETS[dataset].conventions)
    return out


def exported(folder: Path, config: str, split: str) -> pa.Table:
    (path,) = (folder / config).glob(f"{split}-*.parquet")
    return pq.read_table(path)


def doubled_hellaswag(tmp_path: Path) -> tuple[Path, list[int]]:
    """The HellaSwag fixture with a doubled space in ``ctx_a`` (and so ``ctx``) of some rows."""
    table = pq.read_table(FIXTURES / "hellaswag" / "validation.parquet")
    rows = table.to_pylist()
    hit = [i for i, row in enumerate(rows) if i % 3 == 0 and " " in row["ctx_a"]]
    for i in hit:
        row = rows[i]
        row["ctx_a"] = row["ctx_a"].replace(" ", "  ", 1)
        row["ctx"] = f"{row['ctx_a']} {row['ctx_b']}" if row["ctx_b"] else row["ctx_a"]
    path = tmp_path / "hellaswag.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    return path, hit


@pytest.mark.parametrize("policy", ["replace", "drop", "original"])
def test_a_refined_hellaswag_exports_with_each_policy(policy: str, tmp_path: Path) -> None:
    source, hit = doubled_hellaswag(tmp_path)
    write_parquet(load("hellaswag", data_files=str(source)), tmp_path / "s.parquet")
    refined = refine(tmp_path / "s.parquet", tmp_path / "r.parquet", "hellaswag")
    record = read_record(refined)
    assert record is not None and [s.stage for s in record.stages] == ["convert", "refine"]
    done = export(refined, tmp_path / "out", policy=policy, annotate=True)
    table = exported(tmp_path / "out", "default", "validation")
    rows = table.to_pylist()
    original = pq.read_table(source).to_pylist()
    assert all(
        r["ctx"] == (f"{r['ctx_a']} {r['ctx_b']}" if r["ctx_b"] else r["ctx_a"]) for r in rows
    )
    assert [r["sdvm_status"] for r in rows] == [
        "replaced" if i in hit else "kept" for i in range(len(original))
    ]
    if policy == "original":
        published = [{k: v for k, v in r.items() if k in original[0]} for r in rows]
        assert published == original
        assert done.total.kept == len(original)
    else:
        for i, row in enumerate(rows):
            if i in hit:
                assert "  " not in row["ctx"] and row["original_ctx"] == original[i]["ctx"]
                assert row["ctx_b"] == original[i]["ctx_b"]
            else:
                assert row["ctx"] == original[i]["ctx"] and row["original_ctx"] is None
        assert (done.total.replaced, done.total.dropped) == (len(hit), 0)


def test_a_refined_mmlu_drops_the_rows_whose_final_verdict_fails(tmp_path: Path) -> None:
    fixture = FIXTURES / "mmlu" / "cais_test.parquet"
    write_parquet(load("mmlu", data_files=str(fixture)), tmp_path / "s.parquet")
    refined = refine(tmp_path / "s.parquet", tmp_path / "r.parquet", "mmlu")
    done = export(refined, tmp_path / "out", policy="drop")
    questions = pq.read_table(fixture).column("question")
    passing = pc.ends_with(pc.utf8_rtrim_whitespace(questions), "?")
    want = questions.filter(passing).to_pylist()
    got = exported(tmp_path / "out", "all", "test")
    assert got.column("question").to_pylist() == want
    assert done.total.dropped == len(questions) - len(want) > 0
    assert done.total.kept + done.total.replaced + done.total.dropped == done.total.rows_in
    narrowed = export(refined, tmp_path / "narrow", policy="drop", drop_if=["answer_in_range"])
    assert narrowed.total.dropped == 0
