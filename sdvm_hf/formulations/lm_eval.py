r"""The requests lm-evaluation-harness 0.4.13's own tasks make, from a published row.

Each supported task's YAML templates and ``utils.py`` are ported to plain string code (no
jinja, no ``datasets``, no torch), and :func:`lm_eval_requests` gives exactly the
``(context, continuation)`` pairs that ``task.build_all_requests()`` makes for one document:
the task's ``process_docs``, its ``description``, ``target_delimiter`` (``" "``),
``fewshot_delimiter`` (``"\n\n"``) and the few-shot turns
(``question + " " + answer + "\n\n"``). A multiple-input task (Winogrande) gives one
context per option with one shared continuation. MMLU-Pro's lm-eval task is generative
(``generate_until``): its one request is ``(context, "")``, the prompt to generate from.

The row is the source's own columns as the Hub publishes them (what
``MultipleChoiceMapping.encode`` gives back for a sample), so a fixed sample's text flows
into the prompt. :func:`lm_eval_fewshot_rows` picks the few-shot rows as lm-eval's sampler
does for ``--num_fewshot K``: the first K of the few-shot split (MMLU, MMLU-Pro), or a draw
from one ``random.Random(1234)`` that the task shares across its documents, in order.

>>> row = {"goal": "Open a jar.", "sol1": "Twist the lid.", "sol2": "Eat it.", "label": 0}
>>> for context, continuation in lm_eval_requests("piqa", None, row):
...     print(repr(context), repr(continuation))
'Question: Open a jar.\nAnswer:' ' Twist the lid.'
'Question: Open a jar.\nAnswer:' ' Eat it.'
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from sdvm_hf.errors import InputError
from sdvm_hf.formulations._lm_eval_tasks import LETTERS, TASKS, Task, mmlu_task

__all__ = [
    "LM_EVAL_DATASETS",
    "LM_EVAL_FEWSHOT_SEED",
    "MMLU_PRO_CATEGORIES",
    "MMLU_SUBJECTS",
    "lm_eval_fewshot_rows",
    "lm_eval_label",
    "lm_eval_requests",
    "lm_eval_task_name",
]

Row = Mapping[str, Any]

LM_EVAL_FEWSHOT_SEED = 1234
"""lm-eval's default ``--fewshot_random_seed``: the seed of a task's one few-shot sampler."""

_SUBJECT_NAMES = """
abstract_algebra anatomy astronomy business_ethics clinical_knowledge college_biology
college_chemistry college_computer_science college_mathematics college_medicine college_physics
computer_security conceptual_physics econometrics electrical_engineering elementary_mathematics
formal_logic global_facts high_school_biology high_school_chemistry high_school_computer_science
high_school_european_history high_school_geography high_school_government_and_politics
high_school_macroeconomics high_school_mathematics high_school_microeconomics high_school_physics
high_school_psychology high_school_statistics high_school_us_history high_school_world_history
human_aging human_sexuality international_law jurisprudence logical_fallacies machine_learning
management marketing medical_genetics miscellaneous moral_disputes moral_scenarios nutrition
philosophy prehistory professional_accounting professional_law professional_medicine
professional_psychology public_relations security_studies sociology us_foreign_policy virology
world_religions
"""
_CATEGORY_NAMES = """
biology business chemistry computer_science economics engineering health history law math other
philosophy physics psychology
"""

MMLU_SUBJECTS: tuple[str, ...] = tuple(_SUBJECT_NAMES.split())
"""The 57 ``cais/mmlu`` subjects, each an lm-eval task ``mmlu_<subject>``."""

MMLU_PRO_CATEGORIES: tuple[str, ...] = tuple(_CATEGORY_NAMES.split())
"""MMLU-Pro's 14 categories as lm-eval names its tasks (``mmlu_pro_<category>``); the rows'
``category`` spells ``computer_science`` with a space."""

_SIMPLE: dict[str, dict[str | None, str]] = {
    "hellaswag": {None: "hellaswag", "default": "hellaswag"},
    "arc": {None: "arc_challenge", "ARC-Challenge": "arc_challenge", "ARC-Easy": "arc_easy"},
    "openbookqa": {None: "openbookqa", "main": "openbookqa", "additional": "openbookqa"},
    "commonsense_qa": {None: "commonsense_qa", "default": "commonsense_qa"},
    "piqa": {None: "piqa", "default": "piqa", "plain_text": "piqa"},
    "social_i_qa": {None: "social_iqa", "default": "social_iqa"},
    "winogrande": {
        None: "winogrande",
        **{f"winogrande_{s}": "winogrande" for s in ("xs", "s", "m", "l", "xl", "debiased")},
    },
    "swag": {None: "swag", "regular": "swag"},
    "truthfulqa": {None: "truthfulqa_mc1", "multiple_choice": "truthfulqa_mc1"},
    "sciq": {None: "sciq", "default": "sciq"},
    "copa": {None: "copa", "default": "copa", "copa": "copa"},
}

LM_EVAL_DATASETS: frozenset[str] = frozenset({*_SIMPLE, "mmlu"})
"""The presets whose rows :func:`lm_eval_requests` renders as lm-eval's tasks do."""


def _mmlu_name(config: str | None, row: Row | None) -> str | None:
    """The MMLU task a configuration names, or the row's own subject or category."""
    if row is not None and config in (None, "all"):
        if "options" in row and "category" in row:
            return "mmlu_pro_" + str(row["category"]).replace(" ", "_")
        if "subject" in row:
            return f"mmlu_{row['subject']}"
    if config in MMLU_SUBJECTS:
        return f"mmlu_{config}"
    pro = (config or "").removeprefix("mmlu_pro_").replace(" ", "_")
    if pro in MMLU_PRO_CATEGORIES:
        return f"mmlu_pro_{pro}"
    return None


def lm_eval_task_name(dataset: str, config: str | None, *, row: Row | None = None) -> str:
    """The lm-eval task that renders ``dataset``'s configuration ``config``.

    ``arc`` ``ARC-Easy`` is ``arc_easy``; ``mmlu`` ``astronomy`` is ``mmlu_astronomy``, a
    MMLU-Pro category (``biology``, or ``mmlu_pro_philosophy`` where a ``cais/mmlu`` subject
    has the same name) is ``mmlu_pro_<category>``; with MMLU's ``all`` (or no configuration)
    the ``row``'s own ``subject`` (``cais/mmlu``) or ``category`` (MMLU-Pro) names the task.
    ``ValueError`` names the dataset, the configuration and the ones known.
    """
    if dataset == "mmlu":
        name = _mmlu_name(config, row)
        if name is not None and name in _known_mmlu():
            return name
        raise InputError(
            f"lm-eval: mmlu configuration {config!r}"
            + (f" (row subject/category: {name.split('_', 1)[1]!r})" if name else "")
            + " has no lm-eval task; known: a cais/mmlu subject ("
            + ", ".join(MMLU_SUBJECTS[:3])
            + ", ...), a MMLU-Pro category ("
            + ", ".join(MMLU_PRO_CATEGORIES)
            + "), or 'all' with a row that has a subject or category"
        )
    configs = _SIMPLE.get(dataset)
    if configs is None:
        raise InputError(
            f"lm-eval: no task renders dataset {dataset!r}; datasets known: "
            + ", ".join(sorted(LM_EVAL_DATASETS))
        )
    if config not in configs:
        raise InputError(
            f"lm-eval: {dataset} configuration {config!r} has no lm-eval task; configurations "
            "known: " + ", ".join(str(c) for c in configs)
        )
    return configs[config]


@cache
def _known_mmlu() -> frozenset[str]:
    return frozenset(
        [f"mmlu_{s}" for s in MMLU_SUBJECTS] + [f"mmlu_pro_{c}" for c in MMLU_PRO_CATEGORIES]
    )


def _task(dataset: str, config: str | None, row: Row | None) -> Task:
    name = lm_eval_task_name(dataset, config, row=row)
    return TASKS[name] if dataset != "mmlu" else mmlu_task(name)


def _shot(task: Task, row: Row) -> str:
    """One few-shot turn, as ``build_qa_turn`` writes it as plain text."""
    if task.multiple_input:  # the question is the option the answer fills in
        question: str = task.choices(row)[task.text(row)]
        answer: int | str = task.target(row)
    else:
        question = (task.shot_text or task.text)(row)
        answer = (task.shot_target or task.target)(row)
        if isinstance(answer, int) and not task.generate:
            answer = task.choices(row)[answer]
    if answer == "":  # lm-eval writes a turn with no answer as its question alone
        return question
    return f"{question} {answer}\n\n"


def _bad(task: Task, row: Row, error: Exception) -> ValueError:
    if isinstance(error, KeyError):
        return ValueError(
            f"lm-eval {task.name}: the row has no column {error.args[0]!r}; "
            f"columns: {', '.join(map(str, row))}"
        )
    return ValueError(f"lm-eval {task.name}: the row does not fit the task: {error!r}")


def lm_eval_requests(
    dataset: str, config: str | None, row: Row, shots: Sequence[Row] = ()
) -> list[tuple[str, str]]:
    """The ``(context, continuation)`` pairs lm-eval's task makes for ``row``, in order.

    ``shots`` are the few-shot rows (:func:`lm_eval_fewshot_rows`), rendered after the
    task's description and before the row. ``ValueError`` for a row without the task's
    columns, and for shots given to a task that lm-eval keeps zero-shot (TruthfulQA mc1).
    """
    task = _task(dataset, config, row)
    if shots and task.zero_shot_only:
        raise InputError(f"lm-eval {task.name} is zero-shot (num_fewshot: 0 in its YAML)")
    try:
        prefix = task.description + "".join([_shot(task, shot) for shot in shots])
        if task.generate:
            return [(prefix + task.text(row), "")]
        if task.multiple_input:
            continuation = " " + str(task.target(row))
            return [(prefix + context, continuation) for context in task.choices(row)]
        context = prefix + task.text(row)
        return [(context, " " + choice) for choice in task.choices(row)]
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as error:
        raise _bad(task, row, error) from None


def lm_eval_label(dataset: str, config: str | None, row: Row) -> int:
    """The index of the correct request, as lm-eval's ``process_results`` reads the gold."""
    task = _task(dataset, config, row)
    try:
        if task.generate:
            return LETTERS.index(str(task.target(row)).strip())
        choices = task.choices(row)
        gold = task.text(row) if task.multiple_input else task.target(row)
        index = gold if isinstance(gold, int) else choices.index(gold)
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as error:
        raise _bad(task, row, error) from None
    if not 0 <= index < len(choices):
        raise InputError(
            f"lm-eval {task.name}: the answer must index one of the {len(choices)} choices, "
            f"got {index}"
        )
    return index


def lm_eval_fewshot_rows(
    dataset: str,
    config: str | None,
    rows: Sequence[Row],
    k: int,
    exclude: Row | None = None,
    *,
    rnd: random.Random | None = None,
) -> list[Row]:
    """The ``k`` rows lm-eval's sampler takes from ``rows``, the task's few-shot split.

    ``rows`` are the split lm-eval samples from (MMLU's ``dev``, MMLU-Pro's ``validation``,
    else ``train``), in order; MMLU's are narrowed to the task's subject or category, as
    its ``dataset_name`` or ``process_docs`` does. ``exclude`` is the row being evaluated:
    the tasks whose few-shot split is their evaluation split draw ``k + 1`` and leave it out.
    The default sampler draws from ``rnd``: pass one ``random.Random(LM_EVAL_FEWSHOT_SEED)``
    through a task's documents in order, as lm-eval does (a fresh one, the default, matches
    its first document only). TruthfulQA mc1 is zero-shot whatever ``k``: no rows.
    """
    task = _task(dataset, config, exclude)
    if k < 0:
        raise InputError(f"lm-eval {task.name}: k must be >= 0, got {k}")
    if k == 0 or task.zero_shot_only:
        return []
    column, value = task.pool or ("", None)  # MMLU: the subject's or category's rows
    if task.first_n:  # scanned only as far as the k-th row
        drop = exclude if task.excludes_eval_doc else None
        mine = (r for r in rows if (not column or r.get(column, value) == value) and r != drop)
        first = list(itertools.islice(mine, k))
        if len(first) < k:
            raise InputError(
                f"lm-eval {task.name}: {k} few-shot rows asked for, {len(first)} available"
            )
        return first
    pool = [r for r in rows if r.get(column, value) == value] if column else rows
    rnd = random.Random(LM_EVAL_FEWSHOT_SEED) if rnd is None else rnd
    if not task.excludes_eval_doc:
        return rnd.sample(pool, k)
    drawn = [r for r in rnd.sample(pool, k + 1) if r != exclude][:k]
    if len(drawn) < k:  # the eval row was in the pool more than once
        drawn = rnd.sample([r for r in pool if r != exclude], k)
    return drawn
