"""The harness files of an export, read: the inspect_ai task file run with mockllm, eval.yaml
as inspect reads it, the Hub repository the files name, the upstream tasks file."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from test_export import refined
from test_harness import FIXTURES, HUB, ROOT, converted, generated_utils, generated_utils_at

from sdvm_hf import export, load, write_parquet
from sdvm_hf.exporter import ExportError
from sdvm_hf.exporter._harness import TASKS


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


INSPECT_RUN = """
import json, sys
from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

def answers():  # each with its usage, so mockllm counts no tokens (tiktoken's is a download)
    while True:
        output = ModelOutput.from_content("mockllm/model", "ANSWER: A")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        yield output

model = get_model("mockllm/model", custom_outputs=answers())
(log,) = eval(sys.argv[1], model=model, task_args={"config": sys.argv[2]}, log_dir=sys.argv[3],
              display="none")
samples = [[s.input, s.choices, s.target] for s in log.samples or []]
print(json.dumps({"status": log.status, "error": str(log.error), "samples": samples}))
"""
"""Runs an inspect task file with mockllm in a process of its own (inspect leaves streams
open that the suite's warnings-as-errors would fail on)."""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("preset", "config", "split", "rows", "task_config"),
    [
        ("hellaswag", None, "validation", "hellaswag/validation.parquet", "default"),
        ("mmlu", "all", "test", "mmlu/cais_test.parquet", "astronomy"),
    ],
)
def test_the_inspect_task_file_runs_on_the_moved_export(
    preset: str, config: str | None, split: str, rows: str, task_config: str, tmp_path: Path
) -> None:
    pytest.importorskip("inspect_ai")
    samples = converted(preset, config, split, FIXTURES / rows, tmp_path / "s.parquet")
    export(samples, tmp_path / "built")
    shutil.move(tmp_path / "built", tmp_path / "my-export")
    (tmp_path / "cwd").mkdir()
    task = f"{tmp_path / 'my-export/inspect/task.py'}@{preset}_sdvm"
    done = subprocess.run(
        [sys.executable, "-c", INSPECT_RUN, task, task_config, str(tmp_path / "logs")],
        cwd=tmp_path / "cwd",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    log = json.loads(done.stdout.splitlines()[-1])
    assert log["status"] == "success", log["error"]
    want = [
        [s.context, list(s.choices), "ABCDEFGHIJ"[s.answer_index]]
        for s in load(preset, config, split, data_files=str(FIXTURES / rows))
        if preset != "mmlu" or s.extra["subject"] == task_config
    ]
    assert want and log["samples"] == want


EVAL_YAML_CASES = [
    ("mmlu", "all", "test", "mmlu/cais_test.parquet"),
    ("piqa", None, "validation", "piqa/default-validation.parquet"),
    ("swag", "regular", "validation", "swag/regular-validation.parquet"),
    ("sciq", None, "validation", "sciq/default-validation.parquet"),
]


@pytest.mark.parametrize(("preset", "config", "split", "rows"), EVAL_YAML_CASES)
def test_eval_yaml_gives_inspect_the_task_files_questions(
    preset: str, config: str | None, split: str, rows: str, tmp_path: Path
) -> None:
    pytest.importorskip("inspect_ai")
    import datasets
    import yaml  # type: ignore[import-untyped]

    # inspect's own reading of a Hub eval.yaml (private: it has no public form offline)
    from inspect_ai._eval.task.hf import HFTask, _record_to_sample_hf

    samples = converted(preset, config, split, FIXTURES / rows, tmp_path / "s.parquet")
    result = export(samples, tmp_path / "out")
    tasks = yaml.safe_load((tmp_path / "out/eval.yaml").read_text(encoding="utf-8"))["tasks"]
    assert [task["config"] for task in tasks] == list(result.configs)
    module = generated_utils_at(tmp_path / "out/inspect/task.py")
    for entry in tasks:
        task = HFTask.model_validate(entry)
        data = datasets.load_dataset(str(tmp_path / "out"), task.config, split=task.split)
        for index, row in enumerate(data):
            theirs = _record_to_sample_hf(row, task.field_spec)
            mine = module.to_sample(row, index)
            assert (theirs.choices, theirs.target) == (mine.choices, mine.target)
            assert theirs.input == mine.input or preset == "sciq"  # SciQ's support is its own


def test_eval_yaml_is_written_only_where_the_layout_allows_one(tmp_path: Path) -> None:
    rows = FIXTURES / "hellaswag/validation.parquet"
    export(converted("hellaswag", None, "validation", rows, tmp_path / "s.parquet"), tmp_path / "o")
    assert (tmp_path / "o/inspect/task.py").is_file() and not (tmp_path / "o/eval.yaml").exists()


def test_the_command_names_the_hub_repo_in_the_task_files(tmp_path: Path) -> None:
    from sdvm_hf.cli.main import main

    rows = FIXTURES / "sciq/default-validation.parquet"
    source = converted("sciq", None, "validation", rows, tmp_path / "s.parquet")
    assert main(["export", str(source), "-o", str(tmp_path / "o"), "--repo-id", "me/sciq"]) == 0
    assert generated_utils(tmp_path / "o/lm_eval").REPO_ID == "me/sciq"
    inspect_file = (tmp_path / "o/inspect/task.py").read_text(encoding="utf-8")
    assert "REPO_ID: str | None = 'me/sciq'" in inspect_file


def test_tasks_read_the_folder_they_are_in_else_the_hub_repo_they_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    rows = FIXTURES / "hellaswag/validation.parquet"
    source = converted("hellaswag", None, "validation", rows, tmp_path / "s.parquet")
    export(source, tmp_path / "local")
    export(source, tmp_path / "published", repo_id="someone/hellaswag-clean")
    task = (tmp_path / "published/lm_eval/hellaswag_sdvm.yaml").read_text(encoding="utf-8")
    assert 'dataset_path: "someone/hellaswag-clean"' in task
    local = generated_utils(tmp_path / "local/lm_eval")
    loaded = local.load_export("default", version=1.0)
    assert loaded["validation"].num_rows == pq.read_metadata(rows).num_rows
    # only the task files, without the data: the Hub repository if the export names one
    shutil.copytree(tmp_path / "published/lm_eval", tmp_path / "alone/lm_eval")
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(datasets, "load_dataset", lambda *args: calls.append(args))
    generated_utils(tmp_path / "alone/lm_eval").load_export("default")
    assert calls == [("someone/hellaswag-clean", "default")]
    shutil.copytree(tmp_path / "local/lm_eval", tmp_path / "bare/lm_eval")
    with pytest.raises(FileNotFoundError, match=r"default: the export's data is not beside"):
        generated_utils(tmp_path / "bare/lm_eval").load_export("default")


def test_the_upstream_tasks_file_is_the_installed_lm_evals() -> None:
    pytest.importorskip("lm_eval")
    spec = importlib.util.spec_from_file_location("make", ROOT / "tools/make_harness_tasks.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.build() == TASKS


def test_a_repo_id_that_is_not_org_slash_name_is_refused(tmp_path: Path) -> None:
    rows = FIXTURES / "hellaswag/validation.parquet"
    source = converted("hellaswag", None, "validation", rows, tmp_path / "s.parquet")
    with pytest.raises(ExportError, match=r"repo_id must name a Hub repository as ORG/NAME.*'x'"):
        export(source, tmp_path / "o", repo_id="x")
    assert not (tmp_path / "o").exists()


def test_a_configuration_may_not_take_the_name_of_a_harness_folder(tmp_path: Path) -> None:
    rows = FIXTURES / "hellaswag/validation.parquet"
    source = converted("hellaswag", None, "validation", rows, tmp_path / "s.parquet")
    with pytest.raises(ExportError, match=r"the configuration 'lm_eval' cannot name a folder"):
        export(source, tmp_path / "o", config="lm_eval")


def test_two_splits_of_one_configuration_give_each_task_once(tmp_path: Path) -> None:
    import yaml

    hub = str(HUB / "cais/mmlu")
    parts = []
    for split in ("test", "validation"):
        write_parquet(load("mmlu", "all", split, hub=hub), tmp_path / f"{split}.parquet")
        dropped = {0: False} if split == "test" else {1: False}
        parts.append(
            refined(tmp_path / f"{split}.parquet", tmp_path / f"r-{split}.parquet", {}, dropped)
        )
    result = export(parts, tmp_path / "out", policy="drop")
    lm = tmp_path / "out/lm_eval"
    subjects = sorted(c for c in result.configs if c != "all")
    for kind in ("sdvm", "clean"):
        group = yaml.safe_load((lm / f"_mmlu_{kind}.yaml").read_text(encoding="utf-8"))
        assert group["task"] == [f"mmlu_{s}_{kind}" for s in subjects]
    exclusions = json.loads((lm / "exclusions.json").read_text(encoding="utf-8"))
    first = pq.read_table(HUB / "cais/mmlu/all/test-00000-of-00001.parquet")["subject"][0].as_py()
    assert exclusions[f"mmlu_{first}"]["test"] == [0]
    assert all(sorted(e) == ["test", "validation"] for e in exclusions.values())
    assert sum(len(rows) for e in exclusions.values() for rows in e.values()) == 2


def test_the_lm_eval_readme_says_what_is_not_as_upstream(tmp_path: Path) -> None:
    rows = FIXTURES / "winogrande/winogrande_xl-validation.parquet"
    source = converted(
        "winogrande", "winogrande_debiased", "validation", rows, tmp_path / "w.parquet"
    )
    export(source, tmp_path / "w-out")
    assert not list((tmp_path / "w-out/lm_eval").glob("*.yaml"))
    notes = (tmp_path / "w-out/lm_eval/README.md").read_text(encoding="utf-8")
    assert "- winogrande_debiased: no upstream lm-eval task reads this configuration" in notes
    mmlu = FIXTURES / "mmlu/cais_test.parquet"
    export(converted("mmlu", "all", "test", mmlu, tmp_path / "m.parquet"), tmp_path / "m-out")
    notes = (tmp_path / "m-out/lm_eval/README.md").read_text(encoding="utf-8")
    assert "- mmlu_astronomy_sdvm: fewshot_split 'dev' is null" in notes
    task = (tmp_path / "m-out/lm_eval/mmlu_astronomy_sdvm.yaml").read_text(encoding="utf-8")
    assert "fewshot_split: null" in task and "about astronomy" in task


def test_a_slice_of_a_split_gets_no_clean_task_and_says_why(tmp_path: Path) -> None:
    from sdvm_hf import export, load, write_parquet

    whole, part = tmp_path / "whole.parquet", tmp_path / "part.parquet"
    write_parquet(load("hellaswag", split="validation", bundled=True), whole)
    write_parquet(load("hellaswag", split="validation[10:50]", bundled=True), part)
    export(whole, tmp_path / "w", policy="drop")
    export(part, tmp_path / "p", policy="drop")
    assert (tmp_path / "w" / "lm_eval" / "hellaswag_clean.yaml").is_file()
    assert not (tmp_path / "p" / "lm_eval" / "hellaswag_clean.yaml").exists()
    assert (
        "would not compare like for like" in (tmp_path / "p" / "lm_eval" / "README.md").read_text()
    )
