"""The harness files of an export: lm-eval tasks that read it, and their ``_clean`` twins.

For each configuration written and each upstream lm-eval task that reads it (the export's
``lm_eval_tasks.json``, rebuilt from the installed lm-eval by ``tools/make_harness_tasks.py``),
``lm_eval/<task>_sdvm.yaml`` is the upstream task (prompt, ``process_docs``, choices, target,
metrics, few-shot split) with two changes: it reads the export, through ``utils.load_export``
(the folder above it wherever it is, else the Hub repository ``repo_id``), and a split the
export does not have is ``null``. MMLU's subjects are grouped in ``mmlu_sdvm``. Under the
drop policy, ``lm_eval/<task>_clean.yaml`` reads the upstream dataset and leaves out the rows
``exclusions.json`` lists: by their *position in their upstream split* (HellaSwag's ``ind``
is not unique), which is their row in the sample file when it was converted whole and in
order, with no rejected row; MMLU's subject configurations count within the subject.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from sdvm_hf.exporter._inspect import write_inspect
from sdvm_hf.exporter._rejected import first_row, rejected_rows
from sdvm_hf.exporter._types import ROW_RECORD, Exported, ExportError, Part
from sdvm_hf.sources import parse_split

__all__ = ["HARNESS", "TASKS", "Harness", "upstream_tasks", "write_harness", "write_lm_eval"]

HARNESS = "lm_eval"
"""The folder of the export that holds the lm-eval task files."""
TASKS: dict[str, Any] = json.loads(
    Path(__file__).with_name("lm_eval_tasks.json").read_text(encoding="utf-8")
)
"""``{"lm_eval": version, "tasks": {name: the upstream task's merged YAML}}``."""

_BY_CONFIG: dict[str, dict[str, tuple[str, ...]]] = {
    "hellaswag": {"default": ("hellaswag",)},
    "arc": {"ARC-Easy": ("arc_easy",), "ARC-Challenge": ("arc_challenge",)},
    "openbookqa": {"main": ("openbookqa",)},
    "commonsense_qa": {"default": ("commonsense_qa",)},
    "piqa": {"default": ("piqa",), "plain_text": ("piqa",)},
    "social_i_qa": {"default": ("social_iqa",)},
    "winogrande": {"winogrande_xl": ("winogrande",)},
    "swag": {"regular": ("swag",)},
    "truthfulqa": {"multiple_choice": ("truthfulqa_mc1", "truthfulqa_mc2")},
    "sciq": {"default": ("sciq",)},
    "copa": {"copa": ("copa",)},
}
"""The upstream tasks that read each preset's configuration (MMLU's are by subject)."""
REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*")
"""What ``repo_id`` may be: ``ORG/NAME``."""
_SPLITS = ("training_split", "validation_split", "test_split", "fewshot_split")
_GROUPS = {
    "mmlu": [{"metric": "acc", "weight_by_size": True}],
    "mmlu_pro": [
        {
            "aggregation": "mean",
            "metric": "exact_match",
            "weight_by_size": True,
            "filter_list": "custom-extract",
        }
    ],
}
"""The upstream groups the export's tasks are grouped as, with their aggregate metrics."""


@dataclass(frozen=True)
class _Function:
    """A ``!function utils.<name>`` value of a task file."""

    name: str


@dataclass
class Harness:
    """What :func:`write_lm_eval` wrote, and what it could not write and why."""

    tasks: list[str] = field(default_factory=list)
    """The task and group names, ``hellaswag_sdvm``, ``mmlu_sdvm``, ``hellaswag_clean``..."""
    notes: list[str] = field(default_factory=list)


def upstream_tasks(part: Part, config: str, data: Sequence[Path] = ()) -> list[str]:
    """The upstream lm-eval tasks that read ``config`` of the part's layout; none if unknown.

    MMLU-Pro's are one per category among the rows (``data``, the Parquet files written).
    """
    preset = part.preset.name if part.preset is not None else None
    known = TASKS["tasks"]
    if preset == "mmlu" and part.layout == "cais":
        return [f"mmlu_{config}"] if f"mmlu_{config}" in known else []
    if preset == "mmlu" and part.layout == "mmlu_pro":
        read = [pq.read_table(path, columns=["category"]).column(0).to_pylist() for path in data]
        categories = {category for values in read for category in values}
        names = [f"mmlu_pro_{c.replace(' ', '_')}" for c in categories if isinstance(c, str)]
        return sorted(name for name in names if name in known)
    return list(_BY_CONFIG.get(preset or "", {}).get(config, ()))


def write_lm_eval(
    folder: Path, name: str, parts: list[Part], result: Exported, repo_id: str | None
) -> Harness:
    """Write ``folder/lm_eval/``: the ``_sdvm`` tasks, with ``drop`` the ``_clean`` ones.

    ``name`` is the folder's own name (``folder`` may be where it is built), which the tasks
    give as their ``dataset_path`` unless the export names its Hub repository ``repo_id``.
    """
    done = Harness()
    out = folder / HARNESS
    out.mkdir()
    functions: dict[str, str] = {"load_export": ""}
    clean = result.policy == "drop"
    dropped = _dropped(folder / ROW_RECORD) if clean else {}
    exclusions: dict[str, dict[str, list[int]]] = {}
    grouped: dict[str, list[str]] = {}
    plans: dict[str, tuple[str, list[Part]]] = {}  # each task: its configuration, parts
    for part in parts:
        for config, splits in result.configs.items():
            if config != part.config and not _cut_from(part, config):
                continue
            data = [folder / config / f"{split}-00000-of-00001.parquet" for split in splits]
            for task in upstream_tasks(part, config, data):
                plans.setdefault(task, (config, []))[1].append(part)
    served = {config for config, _ in plans.values()}
    for config in result.configs:
        if config not in served and not (parts[0].preset and config == parts[0].preset.config):
            done.notes.append(f"{config}: no upstream lm-eval task reads this configuration")
    for task, (config, owners) in plans.items():
        upstream, splits = TASKS["tasks"][task], result.configs[config]
        mine = _sdvm(upstream, task, config, splits, repo_id or name, functions)
        if mine.get("test_split") is None and mine.get("validation_split") is None:
            done.notes.append(f"{task}: the export has none of its splits ({config})")
            continue
        missing = [key for key in _SPLITS if upstream.get(key) and mine[key] is None]
        done.notes += [f"{task}_sdvm: {k} {upstream[k]!r} is null" for k in missing]
        _write(out / f"{task}_sdvm.yaml", mine)
        done.tasks.append(f"{task}_sdvm")
        family = next((g for g in ("mmlu_pro", "mmlu") if task.startswith(f"{g}_")), None)
        if family is not None:
            grouped.setdefault(family, []).append(task)
        if not clean:
            continue
        why = next((w for p in owners if (w := _exclude(p, config, dropped, task, exclusions))), "")
        if why:
            exclusions.pop(task, None)
            done.notes.append(f"{task}_clean: not written: {why}")
            continue
        _write(out / f"{task}_clean.yaml", _clean(upstream, task, functions))
        done.tasks.append(f"{task}_clean")
    for family, members in grouped.items():
        for kind in ("sdvm", "clean") if clean else ("sdvm",):
            names = [f"{m}_{kind}" for m in members if f"{m}_{kind}" in done.tasks]
            if names:
                group: dict[str, Any] = {"group": f"{family}_{kind}", "task": names}
                group |= {"aggregate_metric_list": _GROUPS[family], "metadata": {"version": 2}}
                _write(out / f"_{family}_{kind}.yaml", group)
                done.tasks.append(f"{family}_{kind}")
    if clean:
        (out / "exclusions.json").write_text(json.dumps(exclusions, indent=1) + "\n", "utf-8")
    (out / "utils.py").write_text(_utils(functions, repo_id), encoding="utf-8")
    (out / "README.md").write_text(_readme(done, clean), encoding="utf-8")
    return done


def write_harness(
    folder: Path, name: str, parts: list[Part], result: Exported, repo_id: str | None
) -> Harness:
    """Write the export's harness files into ``folder``.

    They are ``lm_eval/`` (:func:`write_lm_eval`), ``inspect/task.py`` and ``eval.yaml``
    (:func:`.write_inspect`).
    """
    if repo_id is not None and not REPO_ID.fullmatch(repo_id):
        raise ExportError(
            f"repo_id must name a Hub repository as ORG/NAME (letters, digits, '-', '_', '.'), "
            f"got {repo_id!r}"
        )
    done = write_lm_eval(folder, name, parts, result, repo_id)
    write_inspect(folder, name, parts, result, repo_id)
    return done


def _cut_from(part: Part, config: str) -> bool:
    """Whether ``config`` is one MMLU's ``all`` part also gives (a subject)."""
    return (
        part.preset is not None
        and part.preset.config_column is not None
        and (part.config == part.preset.config and config != part.config)
    )


def _sdvm(
    upstream: dict[str, Any],
    task: str,
    config: str,
    splits: list[str],
    path: str,
    functions: dict[str, str],
) -> dict[str, Any]:
    """The upstream task reading ``config`` of the export; a split it lacks is ``None``."""
    mine = {key: _functions(value, functions) for key, value in upstream.items() if key != "tag"}
    mine["task"] = f"{task}_sdvm"
    mine["dataset_path"], mine["dataset_name"] = path, config
    mine["custom_dataset"] = _Function("load_export")
    mine["dataset_kwargs"] = {"sdvm_hf_config": config}
    for key in _SPLITS:
        if key in mine and mine[key] not in splits:
            mine[key] = None
    return mine


def _clean(upstream: dict[str, Any], task: str, functions: dict[str, str]) -> dict[str, Any]:
    """The upstream task, leaving out the rows of its exclusion list."""
    mine = {key: _functions(value, functions) for key, value in upstream.items() if key != "tag"}
    mine["task"] = f"{task}_clean"
    then = mine.get("process_docs")
    functions[f"{task}_clean"] = f"excluding({task!r}, {then.name if then else None})"
    mine["process_docs"] = _Function(f"{task}_clean")
    return mine


def _functions(value: Any, functions: dict[str, str]) -> Any:
    """``value`` with each upstream ``{"!function": ref}`` a :class:`_Function` of utils.py."""
    if isinstance(value, dict):
        if set(value) == {"!function"}:
            ref = value["!function"]
            name = ref.removeprefix("lm_eval.tasks.").replace(".", "_")
            functions[name] = f"upstream({ref!r})"
            return _Function(name)
        return {key: _functions(item, functions) for key, item in value.items()}
    if isinstance(value, list):
        return [_functions(item, functions) for item in value]
    return value


def _dropped(record: Path) -> dict[tuple[str, str], list[int]]:
    """The rows the export dropped, by ``(config, split)``: their places in the split.

    A place counts the rows rejected at conversion among the samples (the record numbers
    them so where their file is known, and gives them lines of their own).
    """
    found: dict[tuple[str, str], list[int]] = {}
    with record.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if row["status"] == "dropped":
                found.setdefault((row["config"], row["split"]), []).append(row["row"])
    return found


def _exclude(
    part: Part,
    config: str,
    dropped: dict[tuple[str, str], list[int]],
    task: str,
    exclusions: dict[str, dict[str, list[int]]],
) -> str:
    """Add ``task``'s exclusion list; or say why the rows cannot be placed upstream.

    The rows left out are those the policy dropped and those the conversion rejected (the
    drop policy leaves them out too), each at its place in the upstream split: the sample
    file's rows with the rejected ones back among them, from the slice's first row.
    """
    try:
        rejected = rejected_rows(part)
        first = first_row(part)
    except ExportError as error:
        return str(error)
    split = part.record.split if part.record is not None else None
    if split is not None and parse_split(split).sliced:  # like for like: the whole split only
        return (
            f"{part.path.name} holds a slice of its split ({split!r}), and the upstream task "
            "runs on the whole split: the two would not compare like for like"
        )
    if len(rejected.positions) != len(rejected.rows):
        return (
            f"{part.path.name}: its conversion rejected {len(rejected.rows):,} rows and kept no "
            "file of them (written from memory), so its rows' upstream places are not known"
        )
    samples = pq.read_metadata(part.path).num_rows
    places = np.setdiff1d(np.arange(samples + len(rejected.rows)), rejected.positions)
    rows = dropped.get((part.config, part.split), [])
    gone = sorted({*rows, *rejected.positions})  # the record's rows are places already
    if config != part.config:  # a subject cut from MMLU's 'all': counted within it
        if first and gone:
            return f"{part.path.name} is a slice of its split: a subject's places are not known"
        column = part.preset.config_column if part.preset is not None else None
        extra = pq.read_table(part.path, columns=["extra"]).column("extra").combine_chunks()
        values: list[Any] = [None] * (samples + len(rejected.rows))
        for place, value in zip(places.tolist(), extra.field(column).to_pylist(), strict=True):
            values[place] = value
        for place, row in zip(rejected.positions, rejected.rows, strict=True):
            values[place] = row.get(column or "")
        rank = {place: n for n, place in enumerate(p for p, v in enumerate(values) if v == config)}
        gone = [rank[place] for place in gone if place in rank]
    exclusions.setdefault(task, {})[part.split] = [first + place for place in gone]
    return ""


def _yaml_lines(value: dict[str, Any], indent: str = "") -> list[str]:
    """``value`` as block YAML: dicts as blocks, other values as JSON (which YAML reads)."""
    lines = []
    for key, item in value.items():
        if isinstance(item, _Function):
            lines.append(f"{indent}{key}: !function utils.{item.name}")
        elif isinstance(item, dict) and item:
            lines += [f"{indent}{key}:", *_yaml_lines(item, indent + "  ")]
        elif isinstance(item, list) and any(isinstance(i, dict) for i in item):
            lines.append(f"{indent}{key}:")
            for entry in item:
                inner = _yaml_lines(entry, indent + "    ")
                lines += [f"{indent}  - {inner[0].lstrip()}", *inner[1:]]
        else:
            lines.append(f"{indent}{key}: {json.dumps(item, ensure_ascii=False)}")
    return lines


def _write(path: Path, config: dict[str, Any]) -> None:
    head = f"# Written by sdvm_hf export from lm-eval {TASKS['lm_eval']}'s task; see utils.py.\n"
    path.write_text(head + "\n".join(_yaml_lines(config)) + "\n", encoding="utf-8")


def _utils(functions: dict[str, str], repo_id: str | None) -> str:
    """``utils.py``: :mod:`._harness_utils` with the names the task files use."""
    text = Path(__file__).with_name("_harness_utils.py").read_text(encoding="utf-8")
    lines = ["", "# -- the names this export's task files use --", f"REPO_ID = {repo_id!r}"]
    upstream = sorted(n for n, f in functions.items() if f.startswith("upstream("))
    lines += [f"{name} = {functions[name]}" for name in upstream]
    lines += [f"{n} = {f}" for n, f in sorted(functions.items()) if f.startswith("excluding(")]
    return text + "\n".join(lines) + "\n"


def _readme(done: Harness, clean: bool) -> str:
    """The folder's README: its tasks, how to run them, and what was not written."""
    lines = [
        "# lm-eval tasks of this export",
        "",
        f"Written by sdvm_hf from lm-eval {TASKS['lm_eval']}'s own tasks. Run from any folder:",
        "",
        "```sh",
        f"lm_eval --model hf --model_args pretrained=MODEL --include_path FOLDER/{HARNESS} "
        f"--tasks {','.join(t for t in done.tasks if t.endswith('_sdvm'))}",
        "```",
        "",
        "- `<task>_sdvm`: the upstream task, reading this export (the folder above this one, "
        "wherever it is; else the Hub repository utils.REPO_ID).",
    ]
    if clean:
        lines.append(
            "- `<task>_clean`: the upstream task on the upstream dataset, leaving out the rows "
            "that exclusions.json lists by their position in their split (0-based): compare "
            "`<task>,<task>_clean,<task>_sdvm`."
        )
    lines += ["", "Tasks: " + (", ".join(f"`{t}`" for t in done.tasks) or "none")]
    if any(note.endswith(" is null") for note in done.notes):
        lines += [
            "",
            "A split the export lacks is null in its tasks: with few-shot examples, lm-eval "
            "then draws them from the evaluated split; export the few-shot split too (MMLU's "
            "`dev`, MMLU-Pro's `validation`) to keep upstream's.",
        ]
    if done.notes:
        lines += ["", "Notes:", "", *(f"- {note}" for note in done.notes)]
    return "\n".join(lines) + "\n"
