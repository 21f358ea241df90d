"""The report's per-check counts, its example samples and their diffs, and the rejects that
follow a file through its stages, read back from the HTML and the JSON and compared with
what the blocks themselves say (counted here with a walk of our own)."""

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_report import Page, assert_self_contained, count

from sdvm_hf import MultipleChoiceSample, load_mmlu, read_samples, write_parquet
from sdvm_hf.cli import main
from sdvm_hf.diff import word_diff
from sdvm_hf.errors import read_category
from sdvm_hf.jobs import convert_to_files, rejects_path
from sdvm_hf.record import RECORD_KEY, Record
from sdvm_hf.report import (
    build_report,
    rejects_of,
    report_html,
    report_json,
)
from sdvm_hf.summary import BAD_WHEN_TRUE
from sdvm_hf.verdicts import check_name

FIXTURES = Path(__file__).parent / "fixtures"
BLOCKS = ("audit", "fix", "reaudit")


def leaves(block: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in block.items():
        if isinstance(value, dict) and value:
            yield from leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def bad_rows(samples: list[MultipleChoiceSample], block: str, check: str) -> list[int]:
    out = []
    for row, sample in enumerate(samples):
        value = dict(leaves(getattr(sample, block) or {})).get(check)
        if isinstance(value, bool) and value == ((block, check) in BAD_WHEN_TRUE):
            out.append(row)
    return out


def refine_by_hand(samples: list[MultipleChoiceSample]) -> list[MultipleChoiceSample]:
    """What a refine could return, in the service's nested shape: every third context fixed,
    every fifth sample's answer moved, every seventh flagged, some blocks missing."""
    out = []
    for i, sample in enumerate(samples):
        checks = {"grammatical": i % 3 != 0, "single_correct_answer": i % 4 != 1}
        audit = {"ok": all(checks.values()), "checks": checks, "score": i / 10, "notes": ["n"]}
        update: dict[str, Any] = {"audit": audit if i % 11 != 10 else None}
        changes = []
        if i % 3 == 0:
            update["context"] = sample.context.replace(" ", "  ", 1) + " (fixed)"
            changes.append("context")
        if i % 5 == 0:
            n = len(sample.choices)
            order = [*range(1, n), 0]  # rotate: the answer moves one place back
            update["choices"] = [sample.choices[j] for j in order]
            update["answer_index"] = order.index(sample.answer_index)
            changes.append("order")
        update["fix"] = {"changes": changes, "flagged": i % 7 == 0, "attempts": 1}
        if changes:
            update["reaudit"] = {"ok": i % 2 == 0, "checks": {"grammatical": True}}
        out.append(sample.model_copy(update=update))
    return out


def with_record(path: Path, record: dict[str, Any]) -> None:
    table = pq.read_table(path)
    metadata = {**(table.schema.metadata or {}), RECORD_KEY: json.dumps(record).encode()}
    pq.write_table(table.replace_schema_metadata(metadata), path)


@pytest.fixture
def stages(
    tmp_path: Path,
) -> tuple[Path, Path, list[MultipleChoiceSample], list[MultipleChoiceSample]]:
    """A converted MMLU-Pro file (with its rejects) and a refined copy one folder down whose
    record names both by relative paths."""
    source = load_mmlu(data_files=str(FIXTURES / "mmlu" / "mmlu_pro.parquet"), on_error="skip")
    converted = convert_to_files(source, tmp_path / "pro.parquet")
    assert converted.rejects is not None
    base = list(load_mmlu(bundled=True))[:60] + list(read_samples(tmp_path / "pro.parquet"))
    original = tmp_path / "pro.parquet"
    write_parquet(base, original)  # the converted file, bigger: the bundled rows and Pro's
    refined = refine_by_hand(base)
    (tmp_path / "stage").mkdir()
    out = tmp_path / "stage" / "pro.refine.parquet"
    write_parquet(refined, out)
    rejected = len(source.rejects)
    with_record(
        out,
        {
            "dataset": "mmlu",
            "stages": [
                {"stage": "convert"},
                {"stage": "refine", "input": {"path": "../pro.parquet", "rows": len(base)}},
            ],
            "rejects": {"path": "../pro.rejects.jsonl", "count": rejected},
        },
    )
    return original, out, base, refined


def test_every_check_in_the_page_and_json_matches_the_blocks(stages: Any, tmp_path: Path) -> None:
    _, out, _, refined = stages
    assert main(["report", str(out), "-o", str(tmp_path / "r.html")]) == 0
    assert main(["report", str(out), "-o", str(tmp_path / "r.json")]) == 0
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    page = Page(html)
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert_self_contained(html, page)
    for block in BLOCKS:
        carrying = [getattr(s, block) for s in refined if getattr(s, block) is not None]
        want: dict[str, dict[str, int]] = {}
        others: list[str] = []
        for value in carrying:
            for name, leaf in leaves(value):
                if isinstance(leaf, bool):
                    counts = want.setdefault(name, {})
                    counts[str(leaf).lower()] = counts.get(str(leaf).lower(), 0) + 1
                elif name not in others:
                    others.append(name)
        shown = {row[0]: (count(row[1]), count(row[2])) for row in page.body(f"verdicts-{block}")}
        assert shown == {
            check_name(block, c): (v.get("true", 0), v.get("false", 0)) for c, v in want.items()
        }
        assert data["verdicts"][block] == {c: dict(sorted(v.items())) for c, v in want.items()}
        assert data["total"]["carrying"][block] == len(carrying)
        assert data["not_checks"].get(block, []) == others
        if others:
            assert page.text_of[f"others-{block}"] == ", ".join(others)
        for check in want:  # per group: the bad outcomes, from the blocks
            for name, group in data["groups"].items():
                members = [
                    i for i, s in enumerate(refined) if s.extra.get("subject", "(missing)") == name
                ]
                bad = set(bad_rows(refined, block, check))
                assert group["checks"][block][check]["count"] == len(bad & set(members))
    assert "checks.grammatical" in data["verdicts"]["audit"]  # nested names, dotted
    assert "score" not in data["verdicts"]["audit"] and "score" in data["not_checks"]["audit"]
    # the fix block reads the right way: flagged true is the bad share
    flagged = {row[0]: row for row in page.body("verdicts-fix")}["fix.flagged"]
    assert flagged[3] == "true"
    assert flagged[4] == f"{sum(i % 7 == 0 for i in range(len(refined))) / len(refined):.1%}"


def test_the_examples_are_the_failing_samples_with_their_diffs(stages: Any) -> None:
    original, out, base, refined = stages
    report = build_report(out, examples=3)
    assert report.original == str(original)  # found through the record
    data = json.loads(report_json(report))
    page = Page(report_html(report))
    for block, checks in report.summary.examples.items():
        for check, rows in checks.items():
            failing = bad_rows(refined, block, check)
            assert set(rows) <= set(failing) and len(rows) == min(3, len(failing))
            section = next(
                id
                for id in page.text_of
                if id.startswith("ex-") and id.endswith(re.sub(r"[^\w.-]", "_", f"{block}-{check}"))
            )
            assert f"{len(failing):,} samples" in page.text_of[section]
            for row in rows:
                assert f"row {row}" in page.text_of[section]
    fixed = [i for i, s in enumerate(refined) if s.fix and s.fix["changes"]]
    assert set(report.summary.fixed_examples) <= set(fixed)
    assert len(report.summary.fixed_examples) == 3
    for row in report.summary.fixed_examples:
        entry = data["example_samples"][str(row)]
        assert entry["sample"] == json.loads(json.dumps(refined[row].to_dict()))
        assert entry["original"] == json.loads(json.dumps(base[row].to_dict()))
        diff = entry["diff"]
        assert diff["changed"]
        if row % 3 == 0:
            assert diff["context"] == [
                list(p) for p in word_diff(base[row].context, refined[row].context)
            ]
            assert "(fixed)" in "".join(t for op, t in diff["context"] if op == "ins")
        else:
            assert diff["context"] is None
        assert diff["answer_moved"] is (row % 5 == 0)
    html = report_html(report)
    assert "<ins>(fixed)</ins>" in html or "(fixed)</ins>" in html
    moved = [r for r in report.samples if r % 5 == 0 and r in report.originals]
    if moved:
        assert "The answer moved" in html


def test_the_answer_moved_is_shown_for_a_chosen_row(stages: Any, tmp_path: Path) -> None:
    _, out, base, refined = stages
    report = build_report(out, examples=50)  # every fixed sample up to 50
    row = next(r for r in report.summary.fixed_examples if r % 5 == 0)
    found = report.diff(row)
    assert found is not None and found.answer_moved
    old, new = base[row], refined[row]
    assert new.choices[new.answer_index] == old.choices[old.answer_index]
    assert new.answer_index == (old.answer_index - 1) % len(old.choices)
    assert found.lines()[-1].startswith(f"  answer: {'ABCDEFGHIJ'[old.answer_index]} ")


def test_rejects_follow_the_file_through_its_record(stages: Any, tmp_path: Path) -> None:
    original, out, _, _ = stages
    report = build_report(out)
    beside = rejects_path(original)
    assert report.rejects_from == str(original.parent / "pro.rejects.jsonl")
    rejected = sum(report.summary.rejects.values())
    assert rejected == len(beside.read_text().splitlines()) > 0
    assert report.summary.rows_in == report.summary.samples + rejected
    page = Page(report_html(report))
    assert {row[0]: count(row[1]) for row in page.body("rejects-by-reason")} == {
        read_category(c): n for c, n in report.summary.rejects.items()
    }
    assert "pro.rejects.jsonl" in page.text_of["rejects"]


def test_a_tiny_share_of_rejects_reads_below_a_tenth_of_a_percent(tmp_path: Path) -> None:
    samples = list(load_mmlu(bundled=True)) * 8  # 2,280 samples
    path = tmp_path / "big.parquet"
    write_parquet(samples, path)
    with_record(
        path, {"stages": [{"stage": "convert"}], "rejects": {"path": "gone.jsonl", "count": 2}}
    )
    report = build_report(path)
    assert report.summary.rows_in == len(samples) + 2 and report.rejects_from is None
    page = Page(report_html(report))
    assert "(<0.1%)" in page.text_of["rejects"] and "0.0%" not in page.text_of["rejects"]
    assert "which is missing" in page.body("rejects-by-reason")[0][0]
    assert page.body("rejects-by-reason")[0][2] == "<0.1%"


def test_original_is_named_or_refused(stages: Any, tmp_path: Path) -> None:
    _, out, base, _ = stages
    copy = tmp_path / "copy.parquet"
    write_parquet(base, copy)
    assert build_report(out, original=copy).original == str(copy)
    write_parquet(base[:10], tmp_path / "short.parquet")
    with pytest.raises(
        ValueError,
        match=rf"original .*short\.parquet: expected {len(base)} rows, as .*pro\.refine\.parquet has \(a stage keeps every row\), got 10",
    ):
        build_report(out, original=tmp_path / "short.parquet")
    with pytest.raises(ValueError, match=r"examples: expected 0 or more, got -1"):
        build_report(out, examples=-1)
    none = build_report(out, examples=0)
    assert none.samples == {} and "ex-fixed" not in report_html(none)


def test_the_stage_input_and_rejects_of_read_the_record() -> None:
    record = Record.from_json(
        {
            "stages": [
                {"stage": "convert"},
                {"stage": "audit", "input": {"path": "a.parquet", "rows": 3}},
            ]
        }
    )
    assert record.stage_input("out/b.parquet") == Path("out/a.parquet")
    absolute = Record.from_json(
        {"stages": [{"stage": "fix", "input": {"path": "/data/a.parquet"}}]}
    )
    assert absolute.stage_input("out/b.parquet") == Path("/data/a.parquet")
    assert Record.from_json({"stages": [{"stage": "convert"}]}).stage_input("b.parquet") is None
    rejects = Record.from_json({"rejects": {"path": "x.rejects.jsonl", "count": 5}})
    assert rejects_of(rejects, "out/b.parquet") == (
        Path("out/x.rejects.jsonl"),
        5,
    )
    assert rejects_of(None, "out/b.v1.parquet") == (rejects_path("out/b.v1.parquet"), None)
    assert rejects_of(None, "b.jsonl.gz") == (rejects_path("b.jsonl.gz"), None)


def test_the_groups_of_a_per_row_key_are_the_top_n_and_the_rest(tmp_path: Path) -> None:
    samples = [
        s.model_copy(update={"extra": {**s.extra, "id": f"q{i}"}})
        for i, s in enumerate(load_mmlu(bundled=True))
    ]
    path = tmp_path / "ids.parquet"
    write_parquet(samples, path)
    assert (
        main(
            ["report", str(path), "--group-by", "id", "--top", "20", "-o", str(tmp_path / "r.html")]
        )
        == 0
    )
    page = Page((tmp_path / "r.html").read_text(encoding="utf-8"))
    rows = page.body("groups")
    assert len(rows) == 21 and rows[-1][0] == "(the rest)"
    assert count(rows[-1][1]) == len(samples) - 20
    assert f"{len(samples)} groups" in page.text_of["by-group"]


@pytest.mark.skipif(sys.version_info < (3, 12), reason="the sdvm SDK needs Python >= 3.12")
def test_a_file_refined_by_the_stand_in_with_nested_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("sdvm", reason="install the 'sdvm' extra: pip install -e '.[sdvm]'")
    from service_stub import stub_stage

    import sdvm_hf.service.stub as service_stub

    flat_verdict = service_stub.verdict

    def nested(sample: dict[str, Any]) -> dict[str, Any]:  # the service's shape, not flat
        flat = flat_verdict(sample)
        return {"ok": all(flat.values()), "checks": flat, "model": "stub"}

    monkeypatch.setattr(service_stub, "verdict", nested)
    samples = load_mmlu(bundled=True)
    contexts = samples.table.column("context").to_pylist()
    doubled = [c.replace(" ", "  ", 1) if i % 4 == 0 else c for i, c in enumerate(contexts)]
    table = samples.table.set_column(2, "context", pa.array(doubled))
    before = tmp_path / "mmlu.parquet"
    from sdvm_hf import SampleSequence

    write_parquet(SampleSequence(table), before)
    out = tmp_path / "mmlu.refine.parquet"
    stub_stage(read_samples(before), "refine", out)
    refined = list(read_samples(out))
    assert (
        main(["report", str(out), "--original", str(before), "-o", str(tmp_path / "r.json")]) == 0
    )
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    grammar = sum(s.audit is not None and s.audit["checks"]["grammar"] is False for s in refined)
    assert grammar == sum("  " in c for c in doubled) > 0
    assert data["verdicts"]["audit"]["checks.grammar"]["false"] == grammar
    assert data["total"]["checks"]["audit"]["checks.grammar"]["count"] == grammar
    assert data["not_checks"]["audit"] == ["model"]
    reaudit = data["verdicts"]["reaudit"]["checks.grammar"]
    assert reaudit == {"true": len(refined)}  # the stand-in reaudits every sample
    assert len(data["fixed_examples"]) == 5
    for row in data["fixed_examples"]:
        entry = data["example_samples"][str(row)]
        assert "  " in doubled[row] and entry["diff"]["context"] is not None
        assert any(op == "del" and "  " in text for op, text in entry["diff"]["context"])
        assert entry["original"]["context"] == doubled[row]
