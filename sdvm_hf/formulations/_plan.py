r"""What one rendering does to each row: the rule, the few-shot prefix, the task's names.

OLMES' few-shot examples are its published ones where the dataset has them (the first
``shots`` of ``OLMES:<name>``, as the 5-shot dumps render them: ``olmes_shots.json``), else
``random.Random(seed).sample`` of the training split's rows, the same for every document (as
OLMES draws them for each document from a generator seeded alike); they precede each
document's own context, ``"\\n\\n"`` apart. The lm-eval formulation is the contract of
``sdvm_hf.formulations.lm_eval`` (its own module, imported when asked for).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from sdvm_hf.errors import InputError
from sdvm_hf.formulations._columnar import TableBuild
from sdvm_hf.formulations._request import UNCONDITIONAL_OFFSET, RenderError
from sdvm_hf.formulations._shapes import Build, Rendered
from sdvm_hf.formulations._source import Source
from sdvm_hf.formulations.olmes import OlmesRule, rule_for
from sdvm_hf.formulations.template import Template

__all__ = ["Plan", "plan_for", "published_shots"]


NATIVE_ID = {"arc": "id", "openbookqa": "id", "commonsense_qa": "id", "hellaswag": "ind"}
"""The column holding a row's own id, where a dataset has one (else its position)."""


@cache
def published_shots() -> dict[str, dict[str, list[str]]]:
    """OLMES' published few-shot examples by source, as the 5-shot dumps render them."""
    text = resources.files("sdvm_hf.formulations").joinpath("olmes_shots.json").read_text("utf-8")
    shots: dict[str, dict[str, list[str]]] = json.loads(text)
    return shots


@dataclass(frozen=True)
class Plan:
    """How each row becomes a document: its builder, the prefix, the task's name."""

    task_name: str
    build: Build
    prefix: Callable[[Mapping[str, Any]], str]
    unconditional: bool
    formulation: str
    rule: OlmesRule | None
    fewshot_source: str | None
    table_build: TableBuild | None = None
    """The builder's table form, where the rendering can use it (no row's own prefix)."""
    fixed_prefix: str = ""
    """The prefix of every context, where ``table_build`` is given."""

    def render(self, row: Mapping[str, Any], position: int, source: Source) -> Rendered:
        """The document of ``row`` (at ``position``), the few-shot prefix before each context."""
        try:
            rendered = self.build(row, position, source.config)
        except (RenderError, KeyError, TypeError, ValueError) as error:
            raise self._error(error, row, position, source) from None
        prefix = self.prefix(row)
        if prefix:
            pairs = [(prefix + context, continuation) for context, continuation in rendered.pairs]
            rendered = rendered._replace(pairs=pairs)
        return rendered

    def _error(
        self, error: Exception, row: Mapping[str, Any], position: int, source: Source
    ) -> RenderError:
        """What a rule's error says of the row, with where it is."""
        where = f"{source.name} ({source.dataset or 'rows'} {source.split or ''}".rstrip() + ")"
        if isinstance(error, RenderError):
            return RenderError(f"{where}: {error}")
        if isinstance(error, KeyError):
            return RenderError(
                f"{where} row {position}: no column {error} (the {source.dataset} "
                f"{self.formulation} rule reads it); columns: {', '.join(row)}"
            )
        return RenderError(
            f"{where} row {position}: the {source.dataset} {self.formulation} rule cannot "
            f"read this row ({type(error).__name__}: {error}); columns: {', '.join(row)}"
        )

    def config_json(
        self, source: Source, *, shots: int, limit: int | None, seed: int, count: int
    ) -> dict[str, Any]:
        """The dump's ``config.json``: what ``OEEvalTask`` reads (``primary_metric``) and more."""
        rule, short = self.rule, self.formulation.removeprefix("olmes-")
        metric = "acc_raw" if short == "mc" else "acc_per_char"
        if self.formulation == "lm-eval":
            metric = "acc"  # lm-eval's multiple-choice tasks report acc (and acc_norm)
        if rule is not None:
            metric = rule.primary_metric.get(short, metric)
        task_config = {
            "task_name": self.task_name,
            "task_core": self.task_name.split(":")[0],
            "dataset_path": rule.dataset_path if rule else source.dataset,
            "dataset_name": rule.dataset_name(source.config) if rule else source.config,
            "native_id_field": rule.native_id_field.get(short) if rule else None,
            "primary_metric": metric,
            "split": source.split,
            "num_shots": shots,
            "fewshot_source": self.fewshot_source,
            "limit": limit,
            "random_subsample_seed": 1234,
            "fewshot_seed": seed,
            "context_kwargs": {},
            "generation_kwargs": {},
            "metric_kwargs": {"uncond_docid_offset": UNCONDITIONAL_OFFSET}
            if self.unconditional
            else {},
            "version": 0,
            "metadata": {"formulation": self.formulation, "rendered_by": "sdvm_hf"},
        }
        return {"task_name": self.task_name, "task_config": task_config, "num_instances": count}


def plan_for(
    source: Source,
    formulation: str,
    shots: int,
    seed: int,
    shot_source: Source | None,
    template: Template | None,
) -> Plan:
    """The plan of one rendering; :class:`RenderError` when it cannot be made."""
    dataset = source.dataset
    if formulation == "lm-eval":
        return _lm_eval_plan(source, shots, seed, shot_source)
    short = formulation.removeprefix("olmes-")
    rule: OlmesRule | None = None
    if template is not None:
        build, task = template.build(short), template.task_name
        unconditional, published = template.unconditional and short == "rc", None
    else:
        if dataset is None and source.mapping is not None:
            raise RenderError(
                f"{source.mapping.dataset}: a mapping of one's own has no {formulation} rule; "
                "give a Template (template=) that says its query, choices and answer"
            )
        if dataset is None:
            raise RenderError(
                f"{source.name}: which dataset is it? It has no record: name it (dataset=, "
                "--dataset) or give a Template"
            )
        rule = rule_for(dataset, short)
        build, task = rule.build(short), rule.task(source.config)
        unconditional = rule.unconditional and short == "rc"
        published = rule.fewshot_source(source.config)
    task_name = task if short == "rc" else f"{task}:mc"
    texts: list[str] = []
    used = None
    if shots:
        if shot_source is not None:
            texts, used = _drawn(source, shot_source, build, shots, seed), None
        elif published is not None:
            available = published_shots().get(published, {}).get(short, [])
            if shots > len(available):
                raise RenderError(
                    f"{dataset}: {published} has {len(available)} published {short} examples, "
                    f"{shots} asked; give a training split to draw from (shot_samples=, "
                    "--shots-from)"
                )
            texts, used = available[:shots], published
        else:
            raise RenderError(
                f"{dataset or source.name}: shots={shots} needs examples: OLMES publishes none "
                "for it, so give its training split (shot_samples=, --shots-from)"
            )
    joined = "".join(text + "\n\n" for text in texts)
    describe = rule.description if rule is not None else None
    config = source.config

    def prefix(row: Mapping[str, Any]) -> str:
        return (describe(row, config) if describe is not None else "") + joined

    table_build = None
    if rule is not None and short == "rc" and describe is None:
        table_build = rule.rc_table
    return Plan(
        task_name, build, prefix, unconditional, formulation, rule, used, table_build, joined
    )


def _drawn(source: Source, shot_source: Source, build: Build, k: int, seed: int) -> list[str]:
    """``k`` examples drawn from the training split with ``random.Random(seed)``, rendered."""
    if shot_source.name == source.name or (
        shot_source.split is not None and shot_source.split == source.split
    ):
        raise RenderError(
            f"{shot_source.name}: few-shot examples come from another split than the rows "
            f"rendered ({source.split or source.name}); give the training split"
        )
    count = shot_source.count()
    if k > count:
        raise RenderError(f"{shot_source.name}: {k} shots asked, it has {count} rows")
    picked = random.Random(seed).sample(range(count), k)
    wanted = {position: order for order, position in enumerate(picked)}
    texts: list[str] = [""] * k
    for position, row in enumerate(shot_source.rows()):
        if position in wanted:
            rendered = build(row, position, shot_source.config)
            texts[wanted[position]] = "".join(rendered.pairs[rendered.label])
    return texts


def _lm_eval_plan(source: Source, shots: int, seed: int, shot_source: Source | None) -> Plan:
    """The lm-eval formulation through ``sdvm_hf.formulations.lm_eval`` (its contract)."""
    from sdvm_hf.formulations import lm_eval as module  # its tables, when asked for

    dataset, config = source.dataset, source.config
    if dataset is None or dataset not in module.LM_EVAL_DATASETS:
        raise RenderError(
            f"{dataset or source.name}: no lm-eval rule for this dataset; lm-eval rules: "
            f"{', '.join(sorted(module.LM_EVAL_DATASETS))}"
        )
    pool: list[Mapping[str, Any]] = []
    if shots:
        if shot_source is None:
            raise RenderError(f"{dataset}: shots={shots} needs its training split (--shots-from)")
        pool = list(shot_source.rows())
    # lm-eval keeps one Random(1234) per task and draws each document's shots from it in
    # order: one per task here too (MMLU's 'all' renders many tasks)
    draws: dict[str, random.Random] = {}
    column = NATIVE_ID.get(dataset)

    def build(row: Mapping[str, Any], position: int, config: str | None) -> Rendered:
        task = str(module.lm_eval_task_name(dataset, config, row=row))
        shot_rows: Sequence[Mapping[str, Any]] = ()
        if shots:
            rnd = draws.setdefault(task, random.Random(module.LM_EVAL_FEWSHOT_SEED))
            shot_rows = module.lm_eval_fewshot_rows(
                dataset, config, pool, shots, exclude=row, rnd=rnd
            )
        pairs = [tuple(pair) for pair in module.lm_eval_requests(dataset, config, row, shot_rows)]
        if any(continuation == "" for _, continuation in pairs):
            raise RenderError(
                f"lm-eval's {task} generates its answer (generate_until): it makes no "
                "loglikelihood request per choice to render"
            )
        label = int(module.lm_eval_label(dataset, config, row))
        native = row[column] if column is not None else position
        return Rendered(dict(row), [(str(c), str(t)) for c, t in pairs], label, native, task)

    try:
        task = str(module.lm_eval_task_name(dataset, config))
    except InputError:  # MMLU's 'all': each row names its subject's task; the group, mmlu
        task = dataset
    return Plan(task, build, lambda row: "", False, "lm-eval", None, None)
