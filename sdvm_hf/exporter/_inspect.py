"""The inspect_ai files of an export: a task file, and the Hub's ``eval.yaml``.

``inspect/task.py`` is :mod:`._inspect_task` with the export's layout, first configuration
and its evaluated split, and Hub repository filled in: one multiple-choice task, any
configuration and split through ``-T config=... -T split=...``. ``eval.yaml`` (read by
``inspect eval hf/ORG/NAME``) maps each configuration's columns to inspect's fields with no
code, so it is written only for the layouts whose question, choices and answer are columns
as they are: MMLU (``cais/mmlu``), MMLU-Pro, PIQA, SWAG and SciQ (HellaSwag's and Social
IQa's string labels, ARC's labelled choices or Winogrande's blank are not).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sdvm_hf.exporter._types import Exported, Part

__all__ = ["EVAL_YAML", "INSPECT", "LAYOUTS", "eval_fields", "task_name", "write_inspect"]

INSPECT = "inspect"
"""The folder of the export that holds the inspect_ai task file."""
EVAL_YAML = "eval.yaml"
LAYOUTS = (
    "hellaswag",
    "arc",
    "openbookqa",
    "commonsense_qa",
    "piqa",
    "social_i_qa",
    "winogrande",
    "swag",
    "truthfulqa",
    "sciq",
    "copa",
    "cais",
    "mmlu_pro",
)
"""The layouts the task file reads (MMLU's others, such as ``lukaemon``, are not yet)."""

_FIELDS: dict[str, dict[str, Any]] = {
    "cais": {"input": "question", "choices": "choices", "target": "answer"},
    "mmlu_pro": {"input": "question", "choices": "options", "target": "answer_index"},
    "piqa": {"input": "goal", "choices": ["sol1", "sol2"], "target": "label"},
    "swag": {
        "input": "startphrase",
        "choices": ["ending0", "ending1", "ending2", "ending3"],
        "target": "label",
    },
    "sciq": {
        "input": "question",
        "choices": ["distractor1", "distractor2", "distractor3", "correct_answer"],
        "target": "literal:D",
    },
}
"""``eval.yaml``'s ``field_spec`` of each layout it can describe."""


def eval_fields(layout: str) -> dict[str, Any] | None:
    """The ``field_spec`` of ``layout`` in ``eval.yaml``; ``None`` where it cannot be one."""
    return _FIELDS.get(layout)


def _evaluated(splits: list[str]) -> str:
    """The split a benchmark is evaluated on: ``test``, else ``validation``, else the first."""
    return next((s for s in ("test", "validation") if s in splits), splits[0])


def write_inspect(
    folder: Path, name: str, parts: list[Part], result: Exported, repo_id: str | None
) -> list[str]:
    """Write ``inspect/task.py`` and, where the layout allows one, ``eval.yaml``.

    Returns the files written, relative to ``folder``; none for a layout not in
    :data:`LAYOUTS` (a mapping of its own, or one of MMLU's other layouts).
    """
    layout = parts[0].layout
    if layout not in LAYOUTS or not result.configs:
        return []
    config, splits = next(iter(result.configs.items()))
    values = {
        "LAYOUT": layout,
        "CONFIG": config,
        "SPLIT": _evaluated(splits),
    }
    text = Path(__file__).with_name("_inspect_task.py").read_text(encoding="utf-8")
    if text.count("\ndef sdvm(") != 1:
        raise AssertionError("_inspect_task.py: no task function sdvm to name")
    for key, value in values.items():
        line = f'{key} = "{_default(key)}"\n'
        if text.count(line) != 1:
            raise AssertionError(f"_inspect_task.py: no line {line!r} to fill in")
        text = text.replace(line, f"{key} = {value!r}\n")
    text = text.replace("REPO_ID: str | None = None\n", f"REPO_ID: str | None = {repo_id!r}\n")
    # the task's name, as inspect lists it (it reads the name from the file, not by running it)
    text = text.replace("\ndef sdvm(", f"\ndef {task_name(parts[0])}(")
    (folder / INSPECT).mkdir()
    (folder / INSPECT / "task.py").write_text(text, encoding="utf-8")
    written = [f"{INSPECT}/task.py"]
    fields = eval_fields(layout)
    if fields is not None:
        (folder / EVAL_YAML).write_text(_eval_yaml(name, result, fields, layout), "utf-8")
        written.append(EVAL_YAML)
    return written


def task_name(part: Part) -> str:
    """The inspect task's name: ``hellaswag_sdvm``, ``mmlu_sdvm``, ``mmlu_pro_sdvm``...

    Named by the dataset, not by the folder, so it stays when the folder is moved.
    """
    if part.layout == "mmlu_pro":
        return "mmlu_pro_sdvm"
    name = part.preset.name if part.preset is not None else part.mapping.dataset
    plain = "".join(c if c.isalnum() else "_" for c in name).strip("_") or "export"
    return f"{'_' if plain[0].isdigit() else ''}{plain}_sdvm"


def _default(key: str) -> str:
    return {"LAYOUT": "hellaswag", "CONFIG": "default", "SPLIT": "validation"}[key]


def _eval_yaml(name: str, result: Exported, fields: dict[str, Any], layout: str) -> str:
    """``eval.yaml``: one task per configuration, on its evaluated split."""
    lines = [
        "# Written by sdvm_hf export: `inspect eval hf/ORG/NAME --model MODEL` reads it.",
        f"name: {json.dumps(name)}",
        "tasks:",
    ]
    for config, splits in result.configs.items():
        lines += [
            f"  - id: {json.dumps(config)}",
            f"    config: {json.dumps(config)}",
            f"    split: {json.dumps(_evaluated(splits))}",
            f"    field_spec: {json.dumps(fields)}",
        ]
        if layout == "sciq":
            lines.append("    shuffle_choices: true")
        lines += [
            '    solvers: [{"name": "multiple_choice"}]',
            '    scorers: [{"name": "choice"}]',
        ]
    return "\n".join(lines) + "\n"
