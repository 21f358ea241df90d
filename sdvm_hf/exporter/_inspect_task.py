"""An inspect_ai task reading this export, written by ``sdvm_hf`` (``sdvm-hf export``).

Run it from any folder, on any configuration and split of the export (an absolute path
names its task after ``@``: ``inspect eval /path/to/FOLDER/inspect/task.py@hellaswag_sdvm``)::

    inspect eval FOLDER/inspect/task.py --model openai/gpt-4o-mini -T config=CONFIG -T split=SPLIT

It reads the folder above this file while the data is there (wherever the folder was moved),
else the Hub repository the export was published to. The rows are read with ``datasets`` on
each run, not through inspect's dataset cache, so a re-export is never read stale. It
imports nothing of ``sdvm_hf``. Each row is a multiple-choice sample, solved by
``multiple_choice()`` and scored by ``choice()``; where the correct choice has a fixed place
(SciQ's last, TruthfulQA's first), the choices are shuffled with a fixed seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice

FOLDER = Path(__file__).resolve().parent.parent
LAYOUT = "hellaswag"
CONFIG = "default"
SPLIT = "validation"
REPO_ID: str | None = None

SHUFFLED = ("sciq", "truthfulqa")
"""The layouts whose correct choice has a fixed place."""


def rows(config: str, split: str) -> Any:
    """The export's ``config``/``split`` as a ``datasets.Dataset``."""
    import datasets

    if (FOLDER / "README.md").is_file() and (FOLDER / config).is_dir():
        return datasets.load_dataset(str(FOLDER), config, split=split)
    if REPO_ID is not None:
        return datasets.load_dataset(REPO_ID, config, split=split)
    raise FileNotFoundError(
        f"{FOLDER / config}: the export's data is not beside its inspect folder, and the "
        "export names no Hub repository (sdvm-hf export --repo-id ORG/NAME)"
    )


def question(row: dict[str, Any]) -> tuple[str, list[str], int]:
    """The row's question, its choices and the index of the correct one, by layout."""
    if LAYOUT == "hellaswag":
        return row["ctx"], list(row["endings"]), int(row["label"])
    if LAYOUT in ("arc", "openbookqa", "commonsense_qa"):
        labels = list(row["choices"]["label"])
        text = row["question_stem"] if LAYOUT == "openbookqa" else row["question"]
        return text, list(row["choices"]["text"]), labels.index(row["answerKey"].strip())
    if LAYOUT == "piqa":
        return row["goal"], [row["sol1"], row["sol2"]], int(row["label"])
    if LAYOUT == "social_i_qa":
        options = [row["answerA"], row["answerB"], row["answerC"]]
        return f"{row['context']} {row['question']}", options, int(row["label"]) - 1
    if LAYOUT == "winogrande":
        return row["sentence"], [row["option1"], row["option2"]], int(row["answer"]) - 1
    if LAYOUT == "swag":
        return row["startphrase"], [row[f"ending{i}"] for i in range(4)], int(row["label"])
    if LAYOUT == "truthfulqa":
        targets = row["mc1_targets"]
        return row["question"], list(targets["choices"]), list(targets["labels"]).index(1)
    if LAYOUT == "sciq":
        options = [row["distractor1"], row["distractor2"], row["distractor3"]]
        text = f"{row['support']}\n\n{row['question']}".strip()
        return text, [*options, row["correct_answer"]], 3
    if LAYOUT == "copa":
        asked = (
            "What was the cause?" if row["question"] == "cause" else "What happened as a result?"
        )
        return f"{row['premise']} {asked}", [row["choice1"], row["choice2"]], int(row["label"])
    if LAYOUT == "cais":
        return row["question"], list(row["choices"]), int(row["answer"])
    if LAYOUT == "mmlu_pro":
        return row["question"], list(row["options"]), int(row["answer_index"])
    raise ValueError(f"no inspect sample for the layout {LAYOUT!r}")


def to_sample(row: dict[str, Any], index: int) -> Sample:
    """The row as an inspect multiple-choice sample; its target is the answer's letter."""
    text, choices, answer = question(row)
    return Sample(input=text, choices=choices, target=chr(ord("A") + answer), id=index)


@task
def sdvm(config: str = CONFIG, split: str = SPLIT) -> Task:
    """The export's ``config``/``split`` as a multiple-choice task."""
    samples = [to_sample(row, index) for index, row in enumerate(rows(config, split))]
    dataset = MemoryDataset(samples, name=f"{FOLDER.name}/{config}/{split}")
    if LAYOUT in SHUFFLED:
        dataset.shuffle_choices(seed=0)
    return Task(dataset=dataset, solver=multiple_choice(), scorer=choice())
