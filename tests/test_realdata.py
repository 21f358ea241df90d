"""Integration checks on the real splits in ../shared/realdata, when a checkout has them.

The project's own tests never need these files; CI has them beside the clone.
"""

import csv as csv_module
import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sdvm_hf import (
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    load_hellaswag,
    load_mmlu,
)
from sdvm_hf.cli import main

REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "realdata"
pytestmark = pytest.mark.skipif(
    not REAL.is_dir(), reason="../shared/realdata is not beside this checkout"
)


def test_hellaswag_validation_from_the_hub_parquet_and_the_original_jsonl(tmp_path: Path) -> None:
    hub_file = REAL / "hellaswag" / "hub_validation.parquet"
    samples = load_hellaswag(data_files=hub_file)
    source = pq.read_table(hub_file)
    assert len(samples) == 10_042
    assert all(type(s) is MultipleChoiceCompletionSample for s in samples)
    assert [s.context for s in samples] == source.column("ctx").to_pylist()
    assert [str(s.answer_index) for s in samples] == source.column("label").to_pylist()
    plain = tmp_path / "rowanz_val.jsonl"
    with gzip.open(REAL / "hellaswag" / "rowanz_val.jsonl.gz", "rt", encoding="utf-8") as packed:
        plain.write_text(packed.read(), encoding="utf-8")
    assert list(load_hellaswag(data_files=plain)) == list(samples)
    assert list(load_hellaswag(data_files=REAL / "hellaswag" / "rowanz_val.jsonl.gz")) == list(
        samples
    )


def test_hellaswag_ind_is_not_unique_so_the_round_trip_carries_its_own_row_id() -> None:
    inds = pq.read_table(REAL / "hellaswag" / "hub_validation.parquet").column("ind").to_pylist()
    assert len(inds) - len(set(inds)) == 433


def test_mmlu_test_and_the_original_csv_files_agree() -> None:
    hub = load_mmlu(data_files=REAL / "mmlu" / "hub_all_test.parquet")
    assert len(hub) == 14_042
    assert all(
        type(s) is MultipleChoiceQuestionAnswerSample and list(s.extra) == ["subject"] for s in hub
    )
    assert len({s.extra["subject"] for s in hub}) == 57
    csv = load_mmlu(data_files=str(REAL / "mmlu" / "hendrycks_csv" / "test" / "*.csv"))
    assert [(s.context, s.choices, s.answer_index, s.extra) for s in csv] == [
        (s.context, s.choices, s.answer_index, s.extra) for s in hub
    ]


def test_mmlu_pro_gives_12027_samples_and_5_rejects() -> None:
    samples = load_mmlu(data_files=REAL / "mmlu_pro" / "test.parquet", on_error="skip")
    assert (len(samples), len(samples.rejects)) == (12_027, 5)
    assert {r.column for r in samples.rejects} == {"options"}
    assert all(len(r.original["options"]) == 1 for r in samples.rejects)


def test_convert_validate_inspect_on_the_mmlu_test_split(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mmlu.parquet"
    assert (
        main(
            [
                "convert",
                "mmlu",
                "--data-files",
                str(REAL / "mmlu" / "hub_all_test.parquet"),
                "-o",
                str(out),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["validate", str(out)]) == 0
    assert "14,042 valid samples" in capsys.readouterr().out
    assert main(["inspect", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["samples"] == 14_042 and summary["extra"] == {"subject": "string (57 distinct)"}


def csv_records(path: Path) -> int:
    with path.open(newline="", encoding="utf-8") as text:
        return sum(1 for _ in csv_module.reader(text))


HENDRYCKS = REAL / "mmlu" / "hendrycks_csv"
CSV_FILES = sorted(HENDRYCKS.glob("*/*.csv")) if REAL.is_dir() else []


@pytest.mark.parametrize("path", CSV_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_original_mmlu_csv_file_loads_alone_with_its_record_count(path: Path) -> None:
    samples = load_mmlu(data_files=path, split=path.parent.name)
    assert len(samples) == csv_records(path) and not samples.rejects
    subject = path.name.rsplit("_", 1)[0]
    assert {s.extra["subject"] for s in samples} == {subject}


@pytest.mark.parametrize("folder", ["dev", "val", "test"])
def test_every_original_mmlu_csv_folder_loads_whole(folder: str) -> None:
    files = sorted((HENDRYCKS / folder).glob("*.csv"))
    samples = load_mmlu(data_files=HENDRYCKS / folder, split=folder)
    assert len(files) == 57
    assert len(samples) == sum(map(csv_records, files)) and not samples.rejects


# -- the way back: every labelled real file exports as its source -------------------------------


def _exported(folder: Path, config: str, split: str) -> pa.Table:
    (path,) = (folder / config).glob(f"{split}-*.parquet")
    return pq.read_table(path)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "file", "split", "config"),
    [
        ("hellaswag", "hellaswag/hub_validation.parquet", "validation", "default"),
        ("hellaswag", "hellaswag/rowanz_val.jsonl.gz", "validation", "default"),
        ("mmlu", "mmlu/hub_all_test.parquet", "test", "all"),
        ("mmlu", "mmlu/hub_all_validation.parquet", "validation", "all"),
        ("mmlu", "mmlu/hub_all_dev.parquet", "dev", "all"),
        ("mmlu", "mmlu/hendrycks_csv/test", "test", "all"),
        ("mmlu", "mmlu/hendrycks_csv/val", "validation", "all"),
        ("mmlu", "mmlu/hendrycks_csv/dev", "dev", "all"),
    ],
)
def test_every_labelled_real_file_exports_as_the_hub_copy(
    name: str, file: str, split: str, config: str, tmp_path: Path
) -> None:
    from sdvm_hf import export, load, write_parquet

    write_parquet(load(name, None, split, data_files=str(REAL / file)), tmp_path / "s.parquet")
    result = export(tmp_path / "s.parquet", tmp_path / "out")
    hub = {
        "hellaswag": REAL / "hellaswag" / "hub_validation.parquet",
        "mmlu": REAL
        / "mmlu"
        / f"hub_all_{'validation' if split == 'validation' else split}.parquet",
    }[name]
    want = pq.read_table(hub)
    got = _exported(tmp_path / "out", config, split)
    assert got.schema.remove_metadata() == want.schema.remove_metadata()
    assert got.to_pylist() == want.to_pylist()
    if name == "mmlu":  # and one configuration per subject, as cais/mmlu has
        assert len(result.configs) == 58
        astronomy = _exported(tmp_path / "out", "astronomy", split)
        assert set(astronomy.column("subject").to_pylist()) == {"astronomy"}


@pytest.mark.slow
def test_mmlu_pro_exports_every_source_row_the_rejected_in_their_places(tmp_path: Path) -> None:
    from sdvm_hf import export, load, write_parquet
    from sdvm_hf.cli import main

    source = REAL / "mmlu_pro" / "test.parquet"
    # from memory (write_parquet of a load), the five rejected rows are counted, not published
    samples = load("mmlu", split="test", data_files=str(source), on_error="skip")
    write_parquet(samples, tmp_path / "s.parquet")
    result = export(tmp_path / "s.parquet", tmp_path / "out")
    rejected = {reject.row for reject in samples.rejects}
    assert len(rejected) == 5 and (result.total.rejected, result.total.unpublished) == (5, 5)
    assert result.total.rows_in == 12_032
    want = [row for i, row in enumerate(pq.read_table(source).to_pylist()) if i not in rejected]
    got = _exported(tmp_path / "out", "default", "test")  # TIGER-Lab's configuration name
    assert got.schema.remove_metadata() == pq.read_schema(source).remove_metadata()
    assert got.to_pylist() == want
    # through the command, the rejects file holds them: every source row, in its place
    argv = ["convert", "mmlu", "--data-files", str(source), "--split", "test", "--on-error"]
    assert main([*argv, "skip", "-o", str(tmp_path / "c.parquet")]) == 0
    export(tmp_path / "c.parquet", tmp_path / "whole")
    assert _exported(tmp_path / "whole", "default", "test").to_pylist() == (
        pq.read_table(source).to_pylist()
    )


@pytest.mark.slow
def test_hellaswag_ctx_joins_ctx_a_and_ctx_b_before_and_after_an_export_with_fixes(
    tmp_path: Path,
) -> None:
    import random

    from sdvm_hf import export, load, read_samples, write_parquet
    from sdvm_hf.record import read_record

    def joined(row: dict[str, str]) -> bool:
        b = row["ctx_b"]
        return row["ctx"] == (f"{row['ctx_a']} {b}" if b else row["ctx_a"])

    hub = REAL / "hellaswag" / "hub_validation.parquet"
    assert all(joined(row) for row in pq.read_table(hub).to_pylist())
    write_parquet(load("hellaswag", data_files=hub), tmp_path / "s.parquet")
    samples = read_samples(tmp_path / "s.parquet")
    pick = random.Random(15)
    edits: list[Callable[[str], str]] = [
        lambda c: c + " then",
        lambda c: "Meanwhile, " + c,
        lambda c: c.replace(" ", "  ", 1),
        lambda c: c.upper(),
        lambda c: c[: len(c) // 2],
    ]
    changed = {i: pick.choice(edits) for i in pick.sample(range(len(samples)), 2_000)}
    fixed = [
        s.model_copy(update={"context": changed[i](s.context)}) if i in changed else s
        for i, s in enumerate(samples)
    ]
    write_parquet(fixed, tmp_path / "r.parquet")
    original = read_record(tmp_path / "s.parquet")
    assert original is not None
    record = original.with_stage("fix", tmp_path / "s.parquet", len(samples))
    table = pq.read_table(tmp_path / "r.parquet")
    metadata = record.metadata()
    pq.write_table(table.replace_schema_metadata(metadata), tmp_path / "r.parquet")
    result = export(tmp_path / "r.parquet", tmp_path / "out")
    rows = _exported(tmp_path / "out", "default", "validation").to_pylist()
    assert all(joined(row) for row in rows)
    source = pq.read_table(hub).to_pylist()

    def expressible(i: int) -> bool:  # one part kept, or one part only (WikiHow)
        new, a, b = fixed[i].context, source[i]["ctx_a"], source[i]["ctx_b"]
        return (a and new.startswith(a + " ")) or (b and new.endswith(" " + b)) or not b

    edited = {i for i in changed if fixed[i].context != samples[i].context}
    refused = {i for i in edited if not expressible(i)}
    assert refused and [row["ctx"] for row in rows] == [
        samples[i].context if i in refused else s.context for i, s in enumerate(fixed)
    ]
    assert (result.total.replaced, result.total.refused) == (len(edited - refused), len(refused))
