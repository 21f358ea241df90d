"""The harness files of an export, run: lm-eval's dummy model logs the requests they make.

Each ``<task>_sdvm`` task of an export must make the requests the upstream task makes on the
source rows (read here from the fixtures through lm-eval's own task file, ``include:``d, with
``dataset_path: parquet``); after a fix it shows the fixed text, and a ``_clean`` task leaves
out exactly the rows of its exclusion list.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow.parquet as pq
import pytest
from test_export import refined

from sdvm_hf import export, load, write_parquet
from sdvm_hf.exporter._harness import TASKS

FIXTURES = Path(__file__).parent / "fixtures"
HUB = FIXTURES / "hub"
ROOT = Path(__file__).parent.parent

# (preset, config, split, the source rows, the upstream tasks that read them)
CASES = [
    ("hellaswag", None, "validation", "hellaswag/validation.parquet", ["hellaswag"]),
    ("arc", "ARC-Challenge", "test", "arc/ARC-Challenge-test.parquet", ["arc_challenge"]),
    ("openbookqa", "main", "test", "openbookqa/main-test.parquet", ["openbookqa"]),
    (
        "commonsense_qa",
        None,
        "validation",
        "commonsense_qa/default-validation.parquet",
        ["commonsense_qa"],
    ),
    ("piqa", None, "validation", "piqa/default-validation.parquet", ["piqa"]),
    ("social_i_qa", None, "validation", "social_i_qa/default-validation.parquet", ["social_iqa"]),
    (
        "winogrande",
        "winogrande_xl",
        "validation",
        "winogrande/winogrande_xl-validation.parquet",
        ["winogrande"],
    ),
    ("swag", "regular", "validation", "swag/regular-validation.parquet", ["swag"]),
    (
        "truthfulqa",
        "multiple_choice",
        "validation",
        "truthfulqa/multiple_choice-validation.parquet",
        ["truthfulqa_mc1", "truthfulqa_mc2"],
    ),
    ("sciq", None, "validation", "sciq/default-validation.parquet", ["sciq"]),
    ("copa", "copa", "validation", "copa/copa-validation.parquet", ["copa"]),
]


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@cache
def upstream_yaml(task: str) -> Path:
    """lm-eval's own task file of ``task`` (its index is built once: hundreds of files)."""
    from lm_eval.tasks import TaskManager

    path = TaskManager().task_index[task].yaml_path
    assert path is not None
    return Path(path)


def reference(folder: Path, task: str, include: Path, data: dict[str, Path]) -> str:
    """A task ``<include's name>_ref`` in ``folder``: the task file ``include`` (``task``'s,
    or one of an export) reading ``data`` (split: Parquet file) instead of its dataset.
    """
    name = f"{include.stem}_ref"
    config: dict[str, Any] = {
        "include": str(include),
        "task": name,
        "dataset_path": "parquet",
        "dataset_name": None,
        "dataset_kwargs": {"data_files": {split: str(path) for split, path in data.items()}},
        "tag": [],
    }
    for key in ("training_split", "validation_split", "test_split", "fewshot_split"):
        value = TASKS["tasks"][task].get(key)
        if value is not None and value not in data:
            config[key] = None
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.yaml").write_text(json.dumps(config), encoding="utf-8")
    return name


def requests(tasks: list[str], include: list[Path], **options: Any) -> dict[str, list[Any]]:
    """Each task's logged requests under lm-eval's dummy model: doc, target, arguments

    (a group's are its tasks').
    """
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=[str(p) for p in include], include_defaults=False)
    results = simple_evaluate(
        model="dummy", tasks=tasks, task_manager=manager, log_samples=True, **options
    )
    assert results is not None
    return {
        task: [(s["doc_id"], s["target"], s["arguments"]) for s in sorted(logged, key=doc_id)]
        for task, logged in results["samples"].items()
    }


def doc_id(sample: dict[str, Any]) -> int:
    return int(sample["doc_id"])


def converted(preset: str, config: str | None, split: str, rows: Path, out: Path) -> Path:
    write_parquet(load(preset, config, split, data_files=str(rows)), out)
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "config", "split", "rows", "tasks"), CASES)
def test_an_identity_export_makes_the_upstream_requests(
    preset: str,
    config: str | None,
    split: str,
    rows: str,
    tasks: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    samples = converted(preset, config, split, FIXTURES / rows, tmp_path / "s.parquet")
    export(samples, tmp_path / "built")
    shutil.move(tmp_path / "built", tmp_path / "moved")  # the tasks follow the folder
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    refs = [
        reference(tmp_path / "ref", t, upstream_yaml(t), {split: FIXTURES / rows}) for t in tasks
    ]
    got = requests(
        [f"{t}_sdvm" for t in tasks] + refs, [tmp_path / "moved/lm_eval", tmp_path / "ref"]
    )
    for task, ref in zip(tasks, refs, strict=True):
        assert got[ref] and got[f"{task}_sdvm"] == got[ref]


@pytest.mark.slow
def test_an_mmlu_export_gives_each_subject_its_task_and_the_mmlu_sdvm_group(
    tmp_path: Path,
) -> None:
    samples = converted(
        "mmlu", "all", "test", FIXTURES / "mmlu/cais_test.parquet", tmp_path / "s.parquet"
    )
    result = export(samples, tmp_path / "out")
    subjects = sorted(c for c in result.configs if c != "all")
    group = (tmp_path / "out/lm_eval/_mmlu_sdvm.yaml").read_text(encoding="utf-8")
    assert subjects and all(f'"mmlu_{s}_sdvm"' in group for s in subjects)
    refs = [
        reference(
            tmp_path / "ref",
            f"mmlu_{s}",
            upstream_yaml(f"mmlu_{s}"),
            {"test": HUB / "cais/mmlu" / s / "test-00000-of-00001.parquet"},
        )
        for s in subjects
    ]
    got = requests(["mmlu_sdvm", *refs], [tmp_path / "out/lm_eval", tmp_path / "ref"])
    for subject, ref in zip(subjects, refs, strict=True):
        assert got[ref] and got[f"mmlu_{subject}_sdvm"] == got[ref]


@pytest.mark.slow
def test_an_mmlu_pro_export_puts_its_rejected_row_back_or_excludes_it(tmp_path: Path) -> None:
    from sdvm_hf.cli.main import main

    rows = FIXTURES / "mmlu/mmlu_pro.parquet"  # row 6 has one option: rejected, kept in a file
    convert = ["convert", "mmlu", "--data-files", str(rows), "--on-error", "skip"]
    assert main([*convert, "-o", str(tmp_path / "s.parquet")]) == 0
    export(tmp_path / "s.parquet", tmp_path / "all")  # the rejected row back in its place
    export(tmp_path / "s.parquet", tmp_path / "drop", policy="drop")  # left out
    categories = sorted({c.replace(" ", "_") for c in pq.read_table(rows)["category"].to_pylist()})
    tasks = [f"mmlu_pro_{c}" for c in categories]
    data = {"test": rows}
    refs = [reference(tmp_path / "ref", t, upstream_yaml(t), data) for t in tasks]
    drop = tmp_path / "drop/lm_eval"
    clean = [reference(tmp_path / "ref", t, drop / f"{t}_clean.yaml", data) for t in tasks]
    exclusions = json.loads((drop / "exclusions.json").read_text(encoding="utf-8"))
    assert exclusions == {t: {"test": [6]} for t in tasks}
    # 0-shot: the export has no validation split, MMLU-Pro's few-shot split
    got = requests(
        [f"{t}_sdvm" for t in tasks] + refs + clean,
        [tmp_path / "all/lm_eval", tmp_path / "ref"],
        num_fewshot=0,
    )
    left = requests([f"{t}_sdvm" for t in tasks], [drop], num_fewshot=0)
    gone = pq.read_table(rows)["category"][6].as_py().replace(" ", "_")
    for task, ref, cleaned in zip(tasks, refs, clean, strict=True):
        assert got[ref] and got[f"{task}_sdvm"] == got[ref]
        mine = [r[1:] for r in got[cleaned]]
        assert mine == [r[1:] for r in left[f"{task}_sdvm"]]  # like for like
        assert len(mine) == len(got[ref]) - (task == f"mmlu_pro_{gone}")
        assert all(request in [r[1:] for r in got[ref]] for request in mine)


def test_rejected_rows_with_no_file_of_them_leave_no_clean_task(tmp_path: Path) -> None:
    rows = FIXTURES / "mmlu/mmlu_pro.parquet"
    loaded = load("mmlu", None, "test", layout="mmlu_pro", data_files=str(rows), on_error="skip")
    write_parquet(loaded, tmp_path / "s.parquet")  # from memory: no rejects file
    export(tmp_path / "s.parquet", tmp_path / "out", policy="drop")
    notes = (tmp_path / "out/lm_eval/README.md").read_text(encoding="utf-8")
    assert not list((tmp_path / "out/lm_eval").glob("*_clean.yaml"))
    assert list((tmp_path / "out/lm_eval").glob("mmlu_pro_*_sdvm.yaml"))
    assert "rejected 1 rows and kept no file of them" in notes


@pytest.mark.slow
def test_a_refined_export_shows_the_fixed_text_and_nothing_else(tmp_path: Path) -> None:
    rows = FIXTURES / "hellaswag/validation.parquet"
    source = converted("hellaswag", None, "validation", rows, tmp_path / "s.parquet")
    first = load("hellaswag", None, "validation", data_files=str(rows))[0]
    fixed = {0: {"context": first.context + " slowly"}}
    export(refined(source, tmp_path / "r.parquet", fixed), tmp_path / "out")
    ref = reference(tmp_path / "ref", "hellaswag", upstream_yaml("hellaswag"), {"validation": rows})
    got = requests(["hellaswag_sdvm", ref], [tmp_path / "out/lm_eval", tmp_path / "ref"])
    mine, theirs = got["hellaswag_sdvm"], got[ref]
    assert mine[1:] == theirs[1:] and len(mine) == len(theirs) > 1
    contexts = {context for context, _ in mine[0][2]}  # (context, continuation) each
    assert len(contexts) == 1 and contexts.pop().endswith(" slowly")
    assert mine[0][2] != theirs[0][2]


def positions_in_subject(rows: Path, dropped: list[int], subject: str) -> list[int]:
    """The positions of the ``dropped`` rows of ``rows`` within the rows of ``subject``."""
    subjects = pq.read_table(rows).column("subject").to_pylist()
    mine = [row for row, value in enumerate(subjects) if value == subject]
    return [mine.index(row) for row in dropped if row in mine]


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["hellaswag", "mmlu"])
def test_a_clean_task_leaves_out_exactly_the_exclusion_list(preset: str, tmp_path: Path) -> None:
    rows = FIXTURES / (
        "hellaswag/validation.parquet" if preset == "hellaswag" else "mmlu/cais_test.parquet"
    )
    split = "validation" if preset == "hellaswag" else "test"
    source = converted(preset, None, split, rows, tmp_path / "s.parquet")
    dropped = [1, 2, 5]
    audited = refined(source, tmp_path / "r.parquet", {}, verdicts=dict.fromkeys(dropped, False))
    result = export(audited, tmp_path / "out", policy="drop")
    lm = tmp_path / "out/lm_eval"
    exclusions = json.loads((lm / "exclusions.json").read_text(encoding="utf-8"))
    if preset == "hellaswag":
        data = {"hellaswag": {split: rows}}
        assert exclusions == {"hellaswag": {split: dropped}}
    else:
        subjects = sorted(c for c in result.configs if c != "all")
        data = {
            f"mmlu_{s}": {split: HUB / "cais/mmlu" / s / "test-00000-of-00001.parquet"}
            for s in subjects
        }
        assert exclusions == {
            f"mmlu_{s}": {split: positions_in_subject(rows, dropped, s)} for s in subjects
        }
    tasks = sorted(data)
    upstream = [reference(tmp_path / "ref", t, upstream_yaml(t), data[t]) for t in tasks]
    clean = [reference(tmp_path / "ref", t, lm / f"{t}_clean.yaml", data[t]) for t in tasks]
    got = requests([f"{t}_sdvm" for t in tasks] + upstream + clean, [lm, tmp_path / "ref"])
    for task, before, after in zip(tasks, upstream, clean, strict=True):
        left_out = set(exclusions[task][split])
        want = [request[1:] for request in got[before] if request[0] not in left_out]
        assert [request[1:] for request in got[after]] == want
        assert [request[1:] for request in got[f"{task}_sdvm"]] == want  # like for like
        assert len(want) == len(got[before]) - len(left_out)


def generated_utils(lm_eval_folder: Path) -> ModuleType:
    """The export's ``utils.py``, imported as lm-eval imports it (by path)."""
    return generated_utils_at(lm_eval_folder / "utils.py")


def generated_utils_at(path: Path) -> ModuleType:
    """A generated Python file of an export, imported by path."""
    spec = importlib.util.spec_from_file_location(f"export_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_lm_eval_command_runs_a_moved_export_from_any_folder(tmp_path: Path) -> None:
    rows = FIXTURES / "copa/copa-validation.parquet"
    source = converted("copa", "copa", "validation", rows, tmp_path / "s.parquet")
    export(source, tmp_path / "built")
    shutil.move(tmp_path / "built", tmp_path / "moved")
    (tmp_path / "cwd").mkdir()
    done = subprocess.run(
        [
            *(sys.executable, "-m", "lm_eval", "--model", "dummy", "--tasks", "copa_sdvm"),
            *("--include_path", str(tmp_path / "moved/lm_eval"), "--log_samples"),
            *("--output_path", str(tmp_path / "results")),
        ],
        cwd=tmp_path / "cwd",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (logged,) = (tmp_path / "results").rglob("samples_copa_sdvm_*.jsonl")
    lines = logged.read_text(encoding="utf-8").splitlines()
    assert len(lines) == pq.read_metadata(rows).num_rows
