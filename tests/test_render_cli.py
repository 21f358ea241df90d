"""``sdvm-hf render``: a converted sample file to AI2's request-dump layout."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from sdvm_hf import load, write_jsonl
from sdvm_hf.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "olmes"


def dump(folder: Path) -> list[str]:
    with gzip.open(folder / "requests.jsonl.gz", "rt", encoding="utf-8") as file:
        return file.read().splitlines()


def test_render_a_converted_file_with_shots_and_a_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = FIXTURES / "hellaswag" / "rc_5shot"
    converted = tmp_path / "hellaswag.parquet"
    files = ["--data-files", str(fixture / "rows.parquet"), "--split", "validation"]
    assert main(["convert", "hellaswag", *files, "-o", str(converted)]) == 0
    out = tmp_path / "requests"
    args = ["render", str(converted), "-o", str(out), "--formulation", "olmes-rc"]
    assert main([*args, "--shots", "5", "--limit", "1000"]) == 0
    assert "8,000 requests of 1,000 documents (hellaswag)" in capsys.readouterr().out
    lines = dump(out)
    first = [line for line in lines if json.loads(line)["doc_id"] % 1_000_000 < 3]
    assert first == (fixture / "requests.jsonl").read_text(encoding="utf-8").splitlines()
    config = json.loads((out / "config.json").read_text())
    assert config["task_config"]["num_shots"] == 5
    assert config["task_config"]["fewshot_source"] == "OLMES:hellaswag"
    assert config["num_instances"] == 1000


def test_render_several_files_each_to_its_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = FIXTURES / "winogrande" / "mc_5shot"
    samples = load("winogrande", None, "validation", data_files=str(fixture / "rows.parquet"))
    write_jsonl(samples, tmp_path / "a.jsonl")
    write_jsonl(samples, tmp_path / "b.jsonl")
    args = [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "-o", str(tmp_path / "out")]
    assert (
        main(
            [
                "render",
                *args,
                "--formulation",
                "olmes-mc",
                "--shots",
                "5",
                "--dataset",
                "winogrande",
            ]
        )
        == 0
    )
    want = (fixture / "requests.jsonl").read_text(encoding="utf-8").splitlines()
    assert dump(tmp_path / "out" / "a") == want == dump(tmp_path / "out" / "b")


def test_render_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixture = FIXTURES / "winogrande" / "mc_5shot"
    samples = load("winogrande", None, "validation", data_files=str(fixture / "rows.parquet"))
    write_jsonl(samples, tmp_path / "a.jsonl")
    out = ["-o", str(tmp_path / "out"), "--formulation", "olmes-rc"]
    assert main(["render", str(tmp_path / "a.jsonl"), *out]) == 2
    assert "which dataset is it? It has no record" in capsys.readouterr().err
    assert (
        main(["render", str(tmp_path / "a.jsonl"), *out, "--dataset", "winogrande", "--shots", "9"])
        == 2
    )
    assert "OLMES:winogrande has 5 published rc examples, 9 asked" in capsys.readouterr().err
    assert main(["render", str(tmp_path / "missing.parquet"), *out]) == 2
    assert "no such file" in capsys.readouterr().err
    assert not (tmp_path / "out" / "requests.jsonl.gz").exists()
