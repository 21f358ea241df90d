"""The lm-eval formulation makes exactly the requests lm-evaluation-harness 0.4.13's tasks make.

Each task is built by lm-eval itself from its own YAML (``TaskManager``), offline, reading the
fixture files: the one override is where the data comes from, ``dataset_path: parquet`` with
``dataset_kwargs.data_files`` naming the fixture for each split the task reads (and a
``cache_dir`` in the test's folder), since the Hub is unreachable; ``dataset_name`` is
dropped with it (the file is that configuration's split). Where the fixtures hold no
few-shot split, the evaluation file stands in for it (noted per case): the draw then meets
the document itself, which exercises lm-eval's leaving it out. Everything else (templates,
``process_docs``, delimiters, description, sampler, seed 1234 shared across the documents)
is the task's own. Our side renders the published rows that ``load(...)`` gives back through
the mapping's ``encode`` (SciQ and COPA, which have no preset here: the raw rows).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from sdvm_hf import load
from sdvm_hf.formulations.lm_eval import (
    LM_EVAL_DATASETS,
    LM_EVAL_FEWSHOT_SEED,
    MMLU_PRO_CATEGORIES,
    MMLU_SUBJECTS,
    lm_eval_fewshot_rows,
    lm_eval_label,
    lm_eval_requests,
    lm_eval_task_name,
)
from sdvm_hf.presets.registry import PRESETS

FIX = Path(__file__).parent / "fixtures"
HUB_MMLU = FIX / "hub" / "cais" / "mmlu"
Row = dict[str, Any]


@dataclass(frozen=True)
class Case:
    """One lm-eval task on fixture files; ``shots`` the ``--num_fewshot`` values tried."""

    task: str
    dataset: str
    config: str | None
    files: dict[str, Path]  # lm-eval's split -> the fixture it reads
    rows: tuple[str, Path]  # our side: the split and file of the rows rendered
    pool: tuple[str, Path] | None = None  # our side: the few-shot split and file
    shots: tuple[int, ...] = (0, 2)
    raw: bool = False  # render the file's raw rows (no preset), not load + encode
    notes: str = ""
    only: dict[str, str] = field(default_factory=dict)  # MMLU: keep rows with column == value


def _cases() -> list[Case]:
    hs, arc = FIX / "hellaswag" / "validation.parquet", FIX / "arc"
    obqa, wg = FIX / "openbookqa", FIX / "winogrande"
    csqa = FIX / "commonsense_qa" / "default-validation.parquet"
    piqa, siqa = FIX / "piqa" / "default-validation.parquet", FIX / "social_i_qa"
    swag = FIX / "swag" / "regular-validation.parquet"
    tqa = FIX / "truthfulqa" / "multiple_choice-validation.parquet"
    sciq, copa = (
        FIX / "lm_eval" / "sciq-validation.parquet",
        FIX / "lm_eval" / "copa-validation.parquet",
    )
    pro, dev = FIX / "mmlu" / "mmlu_pro.parquet", FIX / "lm_eval" / "mmlu-dev.parquet"
    chal, chal_train = arc / "ARC-Challenge-test.parquet", arc / "ARC-Challenge-train.parquet"
    same = "train is the evaluation file (no train fixture)"
    return [
        Case("hellaswag", "hellaswag", None, {"validation": hs, "train": hs}, ("validation", hs), ("validation", hs), notes=same),
        Case("arc_challenge", "arc", "ARC-Challenge", {"test": chal, "train": chal_train}, ("test", chal), ("train", chal_train)),
        Case("arc_easy", "arc", "ARC-Easy", {"test": chal, "train": chal_train}, ("test", chal), ("train", chal_train), notes="ARC-Challenge rows read as ARC-Easy (same layout)"),
        Case("openbookqa", "openbookqa", "main", {"test": obqa / "main-test.parquet", "train": obqa / "main-train.parquet"}, ("test", obqa / "main-test.parquet"), ("train", obqa / "main-train.parquet")),
        Case("commonsense_qa", "commonsense_qa", None, {"validation": csqa, "train": csqa}, ("validation", csqa), ("validation", csqa), (0, 1), notes=same),
        Case("piqa", "piqa", None, {"validation": piqa, "train": piqa}, ("validation", piqa), ("validation", piqa), notes=same),
        Case("social_iqa", "social_i_qa", None, {"validation": siqa / "default-validation.parquet", "train": siqa / "default-validation.parquet"}, ("validation", siqa / "default-validation.parquet"), ("validation", siqa / "default-validation.parquet"), (0, 1), notes=same),
        Case("winogrande", "winogrande", "winogrande_xl", {"validation": wg / "winogrande_xl-validation.parquet", "train": wg / "winogrande_xl-train.parquet"}, ("validation", wg / "winogrande_xl-validation.parquet"), ("train", wg / "winogrande_xl-train.parquet")),
        Case("swag", "swag", "regular", {"validation": swag, "train": swag}, ("validation", swag), ("validation", swag), notes=same),
        Case("truthfulqa_mc1", "truthfulqa", "multiple_choice", {"validation": tqa}, ("validation", tqa), None, (0,)),
        Case("sciq", "sciq", None, {"test": sciq, "train": sciq}, ("test", sciq), ("train", sciq), raw=True, notes="its validation rows as the test split, and as train"),
        Case("copa", "copa", None, {"validation": copa, "train": copa}, ("validation", copa), ("validation", copa), raw=True, notes=same),
        *(
            Case(f"mmlu_{s}", "mmlu", config, {"test": HUB_MMLU / s / "test-00000-of-00001.parquet", "dev": dev}, ("test", FIX / "mmlu" / "cais_test.parquet"), ("dev", dev), (0, 2, 5), only={"subject": s})
            for s in ("astronomy", "virology")
            for config in (s, None)
        ),
        Case("mmlu_pro_business", "mmlu", None, {"test": pro, "validation": pro}, ("test", pro), ("test", pro), (0, 2, 5), notes="validation is the test file (no MMLU-Pro validation rows)"),
        Case("mmlu_pro_psychology", "mmlu", None, {"test": pro, "validation": pro}, ("test", pro), ("test", pro), (0, 1), raw=True, notes="raw: one of its rows has one option, which load rejects"),
    ]  # fmt: skip


CASES = _cases()


@cache
def _manager() -> Any:
    pytest.importorskip("lm_eval", reason="lm_eval is not installed: pip install lm_eval")
    from lm_eval.tasks import TaskManager

    return TaskManager()


def _lm_eval_task(name: str, files: dict[str, Path], shots: int, cache_dir: Path) -> Any:
    """lm-eval's own task, its data read from ``files``, its requests built for ``shots``."""
    from lm_eval.api.task import ConfigurableTask

    manager = _manager()
    kwargs = {"data_files": {k: str(v) for k, v in files.items()}, "cache_dir": str(cache_dir)}
    overrides = {"dataset_path": "parquet", "dataset_name": None, "dataset_kwargs": kwargs}
    config = manager._factory._load_full_config(manager.task_index[name], overrides)
    task = ConfigurableTask(config=config)
    if task.get_config("num_fewshot") != 0:  # as the evaluator does: 0 in the YAML stays 0
        task.set_config(key="num_fewshot", value=shots)
    task.set_fewshot_seed(seed=1234)
    task.build_all_requests()
    return task


def _lm_eval_side(task: Any) -> list[list[tuple[str, str]]]:
    """The task's requests, document by document (a generation request as ``(ctx, "")``)."""
    docs: dict[int, list[tuple[str, str]]] = {}
    for instance in task.instances:
        context, second = instance.arguments
        if instance.request_type == "generate_until":
            assert isinstance(second, dict)
            second = ""
        docs.setdefault(instance.doc_id, []).append((context, second))
    return [docs[i] for i in sorted(docs)]


def _gold(task: Any, doc: Row) -> int:
    """The gold index as lm-eval's ``process_results`` reads it (a letter for MMLU-Pro)."""
    if task.OUTPUT_TYPE == "generate_until":
        return "ABCDEFGHIJ".index(task.doc_to_target(doc))
    gold = task.doc_to_text(doc) if task.multiple_input else task.doc_to_target(doc)
    return gold if isinstance(gold, int) else task.doc_to_choice(doc).index(gold)


def published(case: Case, split: str, path: Path, *, narrow: bool = True) -> list[Row]:
    """The rows we render: the published rows ``load`` gives back, or the file's raw rows.

    ``narrow``: only the rows of the case's MMLU subject or MMLU-Pro category (lm-eval's
    ``dataset_name`` or ``process_docs``); the few-shot pool is left whole, for
    :func:`lm_eval_fewshot_rows` to narrow.
    """
    if case.raw:
        rows: list[Row] = pq.read_table(path).to_pylist()
    else:
        samples = load(case.dataset, case.config, split, data_files=path, on_error="skip")
        preset = PRESETS[case.dataset]
        mapping = preset.mapping(pq.read_schema(path).names)
        rows = []
        for sample in samples:
            row = mapping.encode(sample)
            if preset.follow is not None:
                preset.follow(row, sample)
            rows.append(row)
    if not narrow:
        return rows
    if case.task.startswith("mmlu_pro_"):
        category = case.task.removeprefix("mmlu_pro_").replace("_", " ")
        rows = [r for r in rows if r["category"] == category]
    return [r for r in rows if all(r[k] == v for k, v in case.only.items())]


def ours(case: Case, shots: int) -> tuple[list[list[tuple[str, str]]], list[int]]:
    rows = published(case, *case.rows)
    pool = [] if case.pool is None else published(case, *case.pool, narrow=False)
    rnd = random.Random(LM_EVAL_FEWSHOT_SEED)
    requests = []
    for row in rows:
        fewshot = lm_eval_fewshot_rows(case.dataset, case.config, pool, shots, row, rnd=rnd)
        requests.append(lm_eval_requests(case.dataset, case.config, row, fewshot))
    return requests, [lm_eval_label(case.dataset, case.config, row) for row in rows]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "shots"),
    [(case, k) for case in CASES for k in case.shots],
    ids=[f"{case.task}-{case.config}-{k}shot" for case in CASES for k in case.shots],
)
def test_requests_are_lm_eval_s_own_request_for_request(
    case: Case, shots: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    assert (
        lm_eval_task_name(case.dataset, case.config, row=published(case, *case.rows)[0])
        == case.task
    )
    files = dict(case.files)
    for column, value in case.only.items():  # the Hub's configuration: that subject's rows
        table = pq.read_table(files["dev"])
        files["dev"] = tmp_path / "dev.parquet"
        pq.write_table(table.filter(pc.equal(table.column(column), value)), files["dev"])
    task = _lm_eval_task(case.task, files, shots, tmp_path / "cache")
    want = _lm_eval_side(task)
    got, labels = ours(case, shots)
    assert want and len(got) == len(want)
    for doc, (mine, theirs) in enumerate(zip(got, want, strict=True)):
        assert mine == theirs, f"{case.task} document {doc}"
    assert labels == [_gold(task, doc) for doc in task.eval_docs]
    if shots and case.task != "truthfulqa_mc1":  # the shots are there, not an empty draw
        assert got != ours(case, 0)[0]


ASTRONOMY = {
    "question": "Why is Mars red? ",
    "subject": "astronomy",
    "choices": ["Dust", "Rust", "Paint", "Light"],
    "answer": 1,
}
PRO = {
    "question_id": 1,
    "question": "Which is a noble gas?",
    "options": ["Neon", " Iron "],
    "answer": "A",
    "answer_index": 0,
    "cot_content": "A: Let's think step by step. Neon is inert. The answer is (A).",
    "category": "computer science",
    "src": "x",
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", [f"mmlu_{s}" for s in MMLU_SUBJECTS] + [f"mmlu_pro_{c}" for c in MMLU_PRO_CATEGORIES]
)
def test_every_mmlu_task_s_description_and_rows_are_lm_eval_s(name: str) -> None:
    manager = _manager()
    config = manager._factory._load_full_config(manager.task_index[name], None)
    if name.startswith("mmlu_pro_"):
        category = config["process_docs"].keywords["subject"]  # utils.process_docs's filter
        row = {**PRO, "category": category}
        assert lm_eval_task_name("mmlu", None, row=row) == name
        named = name if category in MMLU_SUBJECTS else category  # philosophy: both have it
        assert lm_eval_task_name("mmlu", named) == name
        assert config["fewshot_config"]["sampler"] == "first_n"
    else:
        row = {**ASTRONOMY, "subject": config["dataset_name"]}
        assert lm_eval_task_name("mmlu", config["dataset_name"]) == name
        assert config["fewshot_config"] == {"sampler": "first_n"}
    context = lm_eval_requests("mmlu", None, row)[0][0]
    assert context.startswith(config["description"])
    assert context.count(config["description"]) == 1


@pytest.mark.slow
def test_the_mmlu_tasks_are_lm_eval_s_default_mmlu_and_mmlu_pro_tasks() -> None:
    folders = {("mmlu", "default"), ("tasks", "mmlu_pro")}  # lm_eval/tasks/<these>/<task>.yaml
    theirs = {
        name
        for name, entry in _manager().task_index.items()
        if entry.yaml_path is not None
        and (Path(entry.yaml_path).parent.parent.name, Path(entry.yaml_path).parent.name) in folders
        and Path(entry.yaml_path).name == f"{name}.yaml"
    }
    ours = {f"mmlu_{s}" for s in MMLU_SUBJECTS} | {f"mmlu_pro_{c}" for c in MMLU_PRO_CATEGORIES}
    assert theirs == ours


def test_the_task_names_follow_the_configurations() -> None:
    assert lm_eval_task_name("arc", "ARC-Easy") == "arc_easy"
    assert lm_eval_task_name("arc", None) == "arc_challenge"
    assert lm_eval_task_name("social_i_qa", None) == "social_iqa"
    assert lm_eval_task_name("truthfulqa", "multiple_choice") == "truthfulqa_mc1"
    assert lm_eval_task_name("winogrande", "winogrande_debiased") == "winogrande"
    assert lm_eval_task_name("mmlu", "astronomy") == "mmlu_astronomy"
    assert lm_eval_task_name("mmlu", "all", row=ASTRONOMY) == "mmlu_astronomy"
    assert lm_eval_task_name("mmlu", "all", row=PRO) == "mmlu_pro_computer_science"
    assert lm_eval_task_name("mmlu", "philosophy") == "mmlu_philosophy"  # cais/mmlu's subject
    assert lm_eval_task_name("mmlu", "mmlu_pro_philosophy") == "mmlu_pro_philosophy"
    assert lm_eval_task_name("mmlu", "computer science") == "mmlu_pro_computer_science"
    assert {lm_eval_task_name(d, None, row=ASTRONOMY) for d in LM_EVAL_DATASETS} >= {
        "hellaswag",
        "sciq",
        "copa",
        "mmlu_astronomy",
    }


def test_an_unknown_dataset_or_configuration_is_named_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"no task renders dataset 'boolq'; datasets known: arc, "):
        lm_eval_task_name("boolq", None)
    with pytest.raises(
        ValueError,
        match=r"swag configuration 'full' has no lm-eval task; configurations known: None, regular",
    ):
        lm_eval_task_name("swag", "full")
    with pytest.raises(ValueError, match=r"mmlu configuration 'astronomyy' has no lm-eval task"):
        lm_eval_task_name("mmlu", "astronomyy")
    with pytest.raises(ValueError, match=r"configuration 'all' \(row subject/category: 'astro'\)"):
        lm_eval_requests("mmlu", "all", {**ASTRONOMY, "subject": "astro"})


def test_a_row_that_does_not_fit_its_task_is_a_clear_error() -> None:
    with pytest.raises(
        ValueError, match=r"lm-eval piqa: the row has no column 'sol2'; columns: goal, sol1"
    ):
        lm_eval_requests("piqa", None, {"goal": "g", "sol1": "s"})
    with pytest.raises(ValueError, match=r"lm-eval mmlu_astronomy: the row does not fit the task"):
        lm_eval_requests("mmlu", None, {**ASTRONOMY, "choices": ["a", "b"]})
    with pytest.raises(
        ValueError, match=r"mmlu_astronomy: the answer must index one of the 4 choices, got 7"
    ):
        lm_eval_label("mmlu", None, {**ASTRONOMY, "answer": 7})
    with pytest.raises(ValueError, match=r"truthfulqa_mc1 is zero-shot \(num_fewshot: 0"):
        lm_eval_requests("truthfulqa", None, {"question": "q"}, [{"question": "p"}])
    with pytest.raises(ValueError, match=r"mmlu_astronomy: 2 few-shot rows asked for, 1 available"):
        lm_eval_fewshot_rows("mmlu", "astronomy", [ASTRONOMY], 2)
    with pytest.raises(ValueError, match=r"lm-eval piqa: k must be >= 0, got -1"):
        lm_eval_fewshot_rows("piqa", None, [], -1)


def test_mmlu_pro_is_one_generation_request_with_its_chain_of_thought_shots() -> None:
    other = {**PRO, "question_id": 2, "category": "law"}
    shots = lm_eval_fewshot_rows("mmlu", None, [other, PRO, PRO], 1, PRO)
    assert shots == [PRO]  # first_n over the category's rows; the row itself is not left out
    [(context, continuation)] = lm_eval_requests("mmlu", None, PRO, shots)
    assert continuation == ""
    body = "Question:\nWhich is a noble gas?\nOptions:\nA. Neon\nB. Iron\n"
    assert context.endswith(
        f"letter choice.\n{body}Answer: Let's think step by step. Neon is inert. The answer is "
        f"(A).\n\n{body}Answer: Let's think step by step."
    )
    assert lm_eval_label("mmlu", None, {**PRO, "answer": "B"}) == 1


def test_a_fixed_sample_s_text_flows_into_the_requests() -> None:
    samples = load(
        "hellaswag", None, "validation", data_files=FIX / "hellaswag" / "validation.parquet"
    )
    preset = PRESETS["hellaswag"]
    mapping = preset.mapping(pq.read_schema(FIX / "hellaswag" / "validation.parquet").names)
    fixed = samples[0].model_copy(update={"context": samples[0].context + " slowly"})
    row = mapping.encode(fixed)
    assert preset.follow is not None and preset.follow(row, fixed) is None
    before = lm_eval_requests("hellaswag", None, mapping.encode(samples[0]))
    after = lm_eval_requests("hellaswag", None, row)
    assert [c for c, _ in after] == [before[0][0] + " slowly"] * len(before)
    assert [e for _, e in after] == [e for _, e in before]


def test_one_sampler_state_runs_through_a_task_s_documents() -> None:
    pool = [{"goal": f"g{i}", "sol1": "a", "sol2": "b", "label": 0} for i in range(20)]
    rnd = random.Random(LM_EVAL_FEWSHOT_SEED)
    first, second = (lm_eval_fewshot_rows("piqa", None, pool, 3, pool[0], rnd=rnd) for _ in "ab")
    assert first == lm_eval_fewshot_rows("piqa", None, pool, 3, pool[0])  # a fresh sampler
    assert second != first and pool[0] not in first + second
    assert lm_eval_fewshot_rows("truthfulqa", None, pool, 3) == []  # lm-eval ignores --num_fewshot


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "hub", "split", "overrides", "shots"),
    [
        ("mmlu_astronomy", HUB_MMLU, "test", {"fewshot_split": "validation"}, 2),
        (
            "hellaswag",
            FIX / "hub" / "Rowan" / "hellaswag",
            "validation",
            {"training_split": None},
            0,
        ),
    ],
)
def test_the_task_reading_a_hub_layout_folder_makes_the_same_requests(
    name: str,
    hub: Path,
    split: str,
    overrides: dict[str, Any],
    shots: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As tests/test_lm_eval.py builds them: ``dataset_path`` the folder, the configuration
    its own; the fixture has no MMLU ``dev`` (its ``validation`` is the few-shot split here)
    and no HellaSwag ``train`` (so no training split: zero-shot)."""
    from lm_eval.api.task import ConfigurableTask

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    manager = _manager()
    config = manager._factory._load_full_config(
        manager.task_index[name], {"dataset_path": str(hub), **overrides}
    )
    task = ConfigurableTask(config=config)
    task.set_config(key="num_fewshot", value=shots)
    task.set_fewshot_seed(seed=1234)
    task.build_all_requests()
    dataset = "mmlu" if name.startswith("mmlu") else name
    rows = list(task.dataset[split])
    pool = list(task.dataset["validation"])
    got = [
        lm_eval_requests(dataset, None, row, lm_eval_fewshot_rows(dataset, None, pool, shots, row))
        for row in rows
    ]
    assert got == _lm_eval_side(task)


DRIVEN = {  # through render_requests, the driver: a load's samples, shots from a load too
    "hellaswag": CASES[0],
    "arc_challenge": CASES[1],
    "mmlu_astronomy": next(c for c in CASES if c.task == "mmlu_astronomy" and c.config),
}


@pytest.mark.slow
@pytest.mark.parametrize("shots", [0, 2])
@pytest.mark.parametrize("name", sorted(DRIVEN))
def test_render_requests_lm_eval_makes_lm_eval_s_requests_document_for_document(
    name: str, shots: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdvm_hf.formulations import render_requests

    case = DRIVEN[name]
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    files = dict(case.files)
    for column, value in case.only.items():
        table = pq.read_table(files["dev"])
        files["dev"] = tmp_path / "dev.parquet"
        pq.write_table(table.filter(pc.equal(table.column(column), value)), files["dev"])
    want = _lm_eval_side(_lm_eval_task(case.task, files, shots, tmp_path / "cache"))
    split, path = case.rows
    samples = load(case.dataset, case.config, split, data_files=path)
    assert case.pool is not None
    pool = load(case.dataset, case.config, case.pool[0], data_files=case.pool[1])
    requests = list(
        render_requests(samples, "lm-eval", shots=shots, shot_samples=pool if shots else None)
    )
    got: dict[int, list[tuple[str, str]]] = {}
    for request in requests:
        got.setdefault(request.doc_id, []).append((request.context, request.continuation))
    assert [got[i] for i in sorted(got)] == want
    assert {r.task_name for r in requests} == {case.task}
