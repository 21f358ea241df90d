"""The recipes run end to end as a user would run them: as scripts, offline."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sdvm_hf import read_jsonl, read_parquet

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent
FIXTURES = Path(__file__).parent / "fixtures"


def recipe(
    name: str, *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "HF_DATASETS_CACHE": str(cwd / "hf-cache"),
        "HF_HUB_OFFLINE": "1",
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, str(ROOT / "recipes" / name), *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_hellaswag_recipe_writes_parquet_and_wire_jsonl_from_the_bundled_slice(
    tmp_path: Path,
) -> None:
    done = recipe("hellaswag.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "rows in:      296" in done.stdout and "samples out:  296" in done.stdout
    parquet, wire = (
        tmp_path / "out" / "hellaswag-validation.parquet",
        tmp_path / "out" / "hellaswag-validation.jsonl",
    )
    assert list(read_parquet(parquet)) == list(read_jsonl(wire))
    assert json.loads(wire.read_text().splitlines()[0])["style"] == "continuation"


def test_mmlu_recipe_reports_rejects_by_reason_and_writes_them(tmp_path: Path) -> None:
    done = recipe(
        "mmlu.py", "--data-files", str(FIXTURES / "mmlu" / "mmlu_pro.parquet"), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "rejects:      1\n  1  options: too_few_choices (fewer than two choices)" in done.stdout
    assert "answer position (10 choices)" in done.stdout
    assert len((tmp_path / "out" / "mmlu-test.rejects.jsonl").read_text().splitlines()) == 1
    assert len(read_parquet(tmp_path / "out" / "mmlu-test.parquet")) == 7


def test_the_preset_recipe_runs_any_preset_and_reports_withheld_rows(tmp_path: Path) -> None:
    fixtures = FIXTURES / "winogrande"
    done = recipe(
        "preset.py",
        "winogrande",
        "--data-files",
        str(fixtures / "winogrande_xl-test.parquet"),
        "--split",
        "test",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "samples out:  0" in done.stdout and "withheld" in done.stdout
    assert "no sample file was written" in done.stdout
    answered = recipe(
        "preset.py",
        "winogrande",
        "--data-files",
        str(fixtures / "winogrande_xl-train.parquet"),
        "--split",
        "train",
        cwd=tmp_path,
    )
    assert answered.returncode == 0, answered.stderr
    samples = read_parquet(tmp_path / "out" / "winogrande-train.parquet")
    assert list(samples) == list(read_jsonl(tmp_path / "out" / "winogrande-train.jsonl"))
    assert len(samples) == 4 and {s.style for s in samples} == {"continuation"}
    unknown = recipe("preset.py", "nope", cwd=tmp_path)
    assert unknown.returncode != 0 and "NAME is one of hellaswag, mmlu, arc" in unknown.stderr


def test_map_pipeline_recipe_reads_back_as_typed_samples(tmp_path: Path) -> None:
    done = recipe(
        "map_pipeline.py", "--out", str(tmp_path / "map.parquet"), "--num-proc", "2", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "96 ActivityNet rows -> 96 typed samples" in done.stdout and "0 rejected" in done.stdout
    assert all(
        s.extra["source_id"].startswith("activitynet")
        for s in read_parquet(tmp_path / "map.parquet")
    )


@pytest.mark.skipif(
    sys.version_info < (3, 12), reason="the sdvm SDK needs Python >= 3.12; CI runs this under 3.12"
)
def test_hellaswag_recipe_refines_through_the_service(tmp_path: Path) -> None:
    pytest.importorskip("sdvm", reason="install the 'sdvm' extra")
    from service_stub import StubService

    with StubService() as stub:
        done = recipe(
            "hellaswag.py",
            "--refine",
            "--base-url",
            stub.url,
            cwd=tmp_path,
            env={"SDVM_API_KEY": stub.key},
        )
    assert done.returncode == 0, done.stderr
    assert stub.key not in done.stdout + done.stderr
    assert sorted(r["size"] for r in stub.requests) == [96, 100, 100]  # sent concurrently
    assert "HellaSwag: each context is a sentence stem" in stub.requests[0]["conventions"]
    assert "refine: conventions: hellaswag's defaults (as given;" in done.stderr
    refined = read_parquet(tmp_path / "out" / "hellaswag-validation.refine.parquet")
    assert len(refined) == 296 and all(s.reaudit is not None for s in refined)
    assert "reaudit:" in done.stdout


@pytest.mark.parametrize("name", ["hellaswag.py", "mmlu.py", "map_pipeline.py"])
def test_help_writes_no_file(name: str, tmp_path: Path) -> None:
    done = recipe(name, "--help", cwd=tmp_path)
    assert done.returncode == 0 and "usage:" in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--data-files", "missing.parquet"],
            "recipes/mmlu.py: no such data file: missing.parquet",
        ),
        (
            ["--data-files", str(FIXTURES / "hellaswag" / "validation.parquet")],
            "recipes/mmlu.py: unknown mmlu layout: columns seen: ind, activity_label",
        ),
    ],
)
def test_recipe_user_errors_are_one_line_without_a_traceback(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = recipe("mmlu.py", *args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith(message)
    assert "Traceback" not in done.stderr


def test_a_recipe_whose_every_row_is_rejected_says_so_and_writes_no_sample_file(
    tmp_path: Path,
) -> None:
    source = tmp_path / "anatomy_test.csv"
    source.write_text("What?,a,b,c,d,E\nWho?,a,b,c,d,F\n", encoding="utf-8")
    done = recipe("mmlu.py", "--data-files", str(source), "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "every one of the 2 rows was rejected (see out/mmlu-test.rejects.jsonl); "
        "no sample file was written"
    )
    assert "samples out:  0" in done.stdout and "rejects:      2" in done.stdout
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == ["mmlu-test.rejects.jsonl"]
    assert len((tmp_path / "out" / "mmlu-test.rejects.jsonl").read_text().splitlines()) == 2
