"""One reading of a verdict: diff, export, the summary and the report agree on every block shape.

``sdvm-hf diff --only failing`` lists the rows ``export --policy drop`` drops, and names the
same checks its ``sdvm_failing`` lists, whatever the audit, fix and reaudit blocks hold: nested
checks, no checks, an empty reaudit, a flagged fix, numbers and text beside the booleans.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdvm_hf import export, load, read_samples, write_parquet
from sdvm_hf.arrow.sequence import samples_to_table
from sdvm_hf.cli import main
from sdvm_hf.diff import diff_files, failing_checks
from sdvm_hf.record import read_record
from sdvm_hf.summary import summarize
from sdvm_hf.verdicts import FLAGGED, check_name, failing, final_block

ROWS = 8

LEAVES = st.booleans() | st.integers(0, 3) | st.text(max_size=3) | st.none() | st.just([True])
NAMES = st.sampled_from(["ok", "grammatical", "checks", "single_correct_answer", "flagged"])
VERDICT = st.recursive(
    st.dictionaries(NAMES, LEAVES, max_size=3),
    lambda inner: st.dictionaries(NAMES, inner | LEAVES, max_size=3),
    max_leaves=6,
)
"""A verdict block: nested dicts of booleans, numbers, text, lists and nulls; or empty."""

FIX = st.none() | st.fixed_dictionaries(
    {"changes": st.just([]), "attempts": st.integers(0, 2)},
    optional={"flagged": st.booleans() | st.none()},
)
BLOCKS = st.tuples(st.none() | VERDICT, FIX, st.none() | st.just({}) | VERDICT)
"""(audit, fix, reaudit) of one row; the reaudit is ``{}`` often, the case decided once."""


def test_an_empty_reaudit_leaves_the_audit_standing() -> None:
    audit = {"checks": {"grammatical": False}}
    assert final_block(audit, {}) == ("audit", audit)
    assert final_block(audit, {"score": 0.5}) == ("audit", audit)  # no check: says nothing
    assert final_block(audit, {"checks": {"grammatical": True}})[0] == "reaudit"  # type: ignore[index]
    assert failing(audit, {"flagged": True}, {}).names == ["checks.grammatical", FLAGGED]
    assert failing(audit, None, {"checks": {"grammatical": True}}).names == []


def test_a_check_has_one_name_in_both_verdicts_and_the_fix_is_named_by_its_block() -> None:
    assert check_name("audit", "checks.x") == check_name("reaudit", "checks.x") == "checks.x"
    assert check_name("fix", "flagged") == FLAGGED


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("verdicts") / "hellaswag.parquet"
    write_parquet(load("hellaswag", split=f"validation[:{ROWS}]", bundled=True), path)
    return path


def refined(source: Path, out: Path, blocks: list[tuple[Any, Any, Any]]) -> Path:
    """``source`` with these blocks on its rows, as a refine stage's output (text unchanged)."""
    rows = [
        sample.model_copy(update={"audit": audit, "fix": fix, "reaudit": reaudit})
        for sample, (audit, fix, reaudit) in zip(read_samples(source), blocks, strict=True)
    ]
    write_parquet(rows, out)
    record = read_record(source)
    assert record is not None
    metadata = record.with_stage("refine", source, len(rows)).metadata()
    pq.write_table(pq.read_table(out).replace_schema_metadata(metadata), out)
    return out


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(BLOCKS, min_size=ROWS, max_size=ROWS))
def test_diff_failing_and_export_drop_agree_row_for_row_and_name_for_name(
    converted: Path, tmp_path_factory: pytest.TempPathFactory, blocks: list[Any]
) -> None:
    folder = tmp_path_factory.mktemp("agree")
    after = refined(converted, folder / "refined.parquet", blocks)
    listed = {
        found.row: failing_checks(found.after)
        for found in diff_files(converted, after, only="failing")
    }
    export(after, folder / "out", policy="drop", annotate=True)
    kept = pq.read_table(next((folder / "out").rglob("*.parquet"))).to_pylist()
    kept_rows = [row for row in range(ROWS) if row not in listed]
    if not kept_rows:  # nothing left: export refuses an empty split, so check the rule only
        assert all(failing(*b).names for b in blocks)
        return
    assert [row["ind"] for row in kept] == [
        read_samples(converted)[row].extra["ind"] for row in kept_rows
    ]
    assert all(row["sdvm_failing"] == [] for row in kept)
    lines = [
        json.loads(line)
        for line in (folder / "out" / "export-record.jsonl").read_text("utf-8").splitlines()
    ]
    dropped = {line["row"]: line["failing"] for line in lines if line["status"] == "dropped"}
    assert dropped == listed


def test_the_command_line_diff_names_the_checks_the_export_dropped_for(
    converted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    audit = {"checks": {"grammatical": False}, "ok": True}
    blocks: list[tuple[Any, Any, Any]] = [(audit, {"changes": [], "flagged": False}, {})] + [
        (None, None, None)
    ] * (ROWS - 1)
    after = refined(converted, tmp_path / "r.parquet", blocks)
    assert main(["diff", str(converted), str(after), "--only", "failing"]) == 0
    assert capsys.readouterr().out.startswith("row 0 (failing checks.grammatical)")
    export(after, tmp_path / "out", policy="drop")
    line = json.loads((tmp_path / "out" / "export-record.jsonl").read_text("utf-8").split("\n")[0])
    assert (line["status"], line["failing"]) == ("dropped", ["checks.grammatical"])


def test_the_summary_spells_the_fix_flag_as_diff_and_export_do(converted: Path) -> None:
    blocks = [({"ok": True}, {"changes": [], "flagged": True}, {"ok": True})] * ROWS
    samples = [
        s.model_copy(update={"audit": a, "fix": f, "reaudit": r})
        for s, (a, f, r) in zip(read_samples(converted), blocks, strict=True)
    ]
    lines = summarize(samples_to_table(samples)).lines()
    assert f"  {FLAGGED}: true: {ROWS} (100.0% bad)" in lines
