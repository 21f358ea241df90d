"""lm-evaluation-harness's own task definitions read an exported folder as they read the source.

lm_eval installs without torch and builds its documents with no model: its HellaSwag, MMLU,
ARC, SciQ and COPA tasks, pointed at the exported folder (``dataset_path``), must give the same prompts,
choices and targets as on the source, and after a fix, the fixed text.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from sdvm_hf import export, load, read_samples, write_parquet
from sdvm_hf.record import read_record

pytest.importorskip("lm_eval", reason="lm_eval is not installed: pip install lm_eval")
pytestmark = pytest.mark.slow

HUB = Path(__file__).parent / "fixtures" / "hub"

# (preset, config, split, lm_eval task, the Hub-layout copy of the source, the split it reads)
TASKS = [
    ("hellaswag", None, "validation", "hellaswag", HUB / "Rowan" / "hellaswag", "validation"),
    ("mmlu", "astronomy", "test", "mmlu_astronomy", HUB / "cais" / "mmlu", "test"),
    ("arc", "ARC-Challenge", "test", "arc_challenge", HUB / "allenai" / "ai2_arc", "test"),
    ("sciq", None, "validation", "sciq", HUB / "allenai" / "sciq", "validation"),
    ("copa", None, "validation", "copa", HUB / "aps" / "super_glue", "validation"),
]


@cache
def task_manager() -> Any:
    """lm_eval's index of its task yamls (built once: it reads hundreds of files)."""
    from lm_eval.tasks import TaskManager

    return TaskManager()


def documents(task_name: str, path: Path, split: str) -> list[tuple[Any, Any, Any]]:
    """What lm_eval's task builds from the dataset at ``path``: prompt, choices, target."""
    from lm_eval.api.task import ConfigurableTask

    manager = task_manager()
    only: dict[str, str | None] = {
        "training_split": None,
        "fewshot_split": None,
        "validation_split": split if split == "validation" else None,
        "test_split": split if split == "test" else None,  # SciQ's task names all three
    }
    config = manager._factory._load_full_config(
        manager.task_index[task_name], {"dataset_path": str(path), **only}
    )
    task = ConfigurableTask(config=config)
    docs = task.test_docs() if task.has_test_docs() else task.validation_docs()
    return [(task.doc_to_text(d), task.doc_to_choice(d), task.doc_to_target(d)) for d in docs]


@pytest.mark.parametrize(("preset", "config", "split", "task", "hub", "reads"), TASKS)
def test_lm_eval_builds_the_same_documents_from_the_export(
    preset: str,
    config: str | None,
    split: str,
    task: str,
    hub: Path,
    reads: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    write_parquet(load(preset, config, split, hub=str(hub)), tmp_path / "s.parquet")
    export(tmp_path / "s.parquet", tmp_path / "out")
    want = documents(task, hub, reads)
    assert want and documents(task, tmp_path / "out", reads) == want


def test_lm_eval_reads_a_fixed_hellaswag_context_through_ctx_a_and_ctx_b(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    hub = HUB / "Rowan" / "hellaswag"
    write_parquet(load("hellaswag", split="validation", hub=str(hub)), tmp_path / "s.parquet")
    samples = read_samples(tmp_path / "s.parquet")
    fixed = [
        samples[0].model_copy(update={"context": samples[0].context + " slowly"}),
        *samples[1:],
    ]
    write_parquet(fixed, tmp_path / "r.parquet")
    record = read_record(tmp_path / "s.parquet")
    assert record is not None
    staged = record.with_stage("fix", tmp_path / "s.parquet", len(fixed))
    table = pq.read_table(tmp_path / "r.parquet")
    pq.write_table(table.replace_schema_metadata(staged.metadata()), tmp_path / "r.parquet")
    export(tmp_path / "r.parquet", tmp_path / "out")
    before = documents("hellaswag", hub, "validation")
    after = documents("hellaswag", tmp_path / "out", "validation")
    assert after[1:] == before[1:]
    assert after[0][0].endswith(" slowly") and after[0][0] != before[0][0]


def test_lm_eval_scores_a_moved_sciq_answer_as_its_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    hub = HUB / "allenai" / "sciq"
    write_parquet(load("sciq", split="validation", hub=str(hub)), tmp_path / "s.parquet")
    samples = read_samples(tmp_path / "s.parquet")
    fixed = [samples[0].model_copy(update={"answer_index": 0}), *samples[1:]]
    write_parquet(fixed, tmp_path / "r.parquet")
    record = read_record(tmp_path / "s.parquet")
    assert record is not None
    staged = record.with_stage("fix", tmp_path / "s.parquet", len(fixed))
    table = pq.read_table(tmp_path / "r.parquet")
    pq.write_table(table.replace_schema_metadata(staged.metadata()), tmp_path / "r.parquet")
    export(tmp_path / "r.parquet", tmp_path / "out")
    before = documents("sciq", hub, "validation")
    after = documents("sciq", tmp_path / "out", "validation")
    assert after[1:] == before[1:]
    prompt, choices, target = after[0]
    assert prompt == before[0][0] and choices[target] == samples[0].choices[0]
    assert sorted(choices) == sorted(before[0][1])
