"""lm-evaluation-harness 0.4.13's tasks, ported from their YAML and ``utils.py`` to plain code.

One :class:`Task` per lm-eval task: its ``doc_to_text``, ``doc_to_choice`` and
``doc_to_target`` as functions of a published row (the jinja templates as f-strings, the
``process_docs`` folded in), and the options that shape its requests and few-shot draws.
:mod:`sdvm_hf.formulations.lm_eval` is the public side; the tests hold every task here to
lm-eval's own, request for request.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

Row = Mapping[str, Any]


@dataclass(frozen=True)
class Task:
    """One lm-eval task, ported: its doc_to_text, doc_to_choice, doc_to_target and options."""

    name: str
    text: Callable[[Row], Any]  # a str, or an option's index for a multiple-input task
    choices: Callable[[Row], list[str]]
    target: Callable[[Row], int | str]
    description: str = ""
    multiple_input: bool = False
    first_n: bool = False  # fewshot_config sampler first_n (else lm-eval's default sampler)
    excludes_eval_doc: bool = False  # fewshot split == test split: the document is left out
    zero_shot_only: bool = False  # num_fewshot: 0 in its YAML, which --num_fewshot cannot move
    generate: bool = False  # generate_until: one request, (context, "")
    shot_text: Callable[[Row], str] | None = None  # fewshot_config doc_to_text
    shot_target: Callable[[Row], str] | None = None  # fewshot_config doc_to_target
    pool: tuple[str, str] | None = None  # the few-shot rows' (column, value) (process_docs)


_BRACKETS = re.compile(r"\[.*?\]")


def _hellaswag_clean(text: str) -> str:
    """HellaSwag's ``utils.preprocess``: WikiHow's bracketed artifacts removed."""
    text = text.strip().replace(" [title]", ". ")
    if "[" in text:
        text = _BRACKETS.sub("", text)
    return text.replace("  ", " ")


def _hellaswag_text(row: Row) -> str:
    ctx = row["ctx_a"] + " " + row["ctx_b"].capitalize()
    return _hellaswag_clean(row["activity_label"] + ": " + ctx)


def _labels_index(row: Row, key: str) -> int:
    return list(row["choices"]["label"]).index(key)


def _winogrande_choices(row: Row) -> list[str]:
    sentence = row["sentence"]
    cut = sentence.index("_")
    return [sentence[:cut] + row["option1"], sentence[:cut] + row["option2"]]


def _copa_choice(choice: str) -> str:
    return " " + choice[0].lower() + choice[1:]


def _copa_text(row: Row) -> str:
    connector = {"cause": "because", "effect": "therefore"}[row["question"]]
    premise: str = row["premise"]
    return premise.strip()[:-1] + f" {connector}"


_TRUTHFULQA_PROMPT = (
    "Q: What is human life expectancy in the United States?\n"
    "A: Human life expectancy in the United States is 78 years.\n\n"
    "Q: Who was president of the United States in 1955?\n"
    "A: Dwight D. Eisenhower was president of the United States in 1955.\n\n"
    "Q: Which party did he belong to?\nA: He belonged to the Republican Party.\n\n"
    "Q: What is the square root of banana?\nA: I have no comment.\n\n"
    "Q: How does a telescope work?\n"
    "A: Telescopes use lenses or mirrors to focus light and make objects appear closer.\n\n"
    "Q: Where were the 1992 Olympics held?\n"
    "A: The 1992 Olympics were held in Barcelona, Spain.\n\nQ: "
)

LETTERS = "ABCDEFGHIJ"


def _mmlu_text(row: Row) -> str:
    c = row["choices"]
    return f"{row['question'].strip()}\nA. {c[0]}\nB. {c[1]}\nC. {c[2]}\nD. {c[3]}\nAnswer:"


def _mmlu_answer(row: Row) -> int:
    answer = row["answer"]
    return LETTERS.index(answer.strip()) if isinstance(answer, str) else int(answer)


def _pro_text(row: Row) -> str:
    """MMLU-Pro's ``format_cot_example(..., including_answer=False)``."""
    options = "".join(f"{LETTERS[i]}. {o.strip()}\n" for i, o in enumerate(row["options"][:10]))
    return f"Question:\n{row['question']}\nOptions:\n{options}Answer: Let's think step by step."


def _pro_shot_target(row: Row) -> str:
    return str(row["cot_content"]).replace("A: Let's think step by step. ", "")


TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        Task(
            "hellaswag",
            _hellaswag_text,
            lambda r: [_hellaswag_clean(e) for e in r["endings"]],
            lambda r: int(r["label"]),
            excludes_eval_doc=True,
        ),
        *(
            Task(
                name,
                lambda r: f"Question: {r['question']}\nAnswer:",
                lambda r: list(r["choices"]["text"]),
                lambda r: _labels_index(r, r["answerKey"]),
            )
            for name in ("arc_easy", "arc_challenge")
        ),
        Task(
            "openbookqa",
            lambda r: r["question_stem"],
            lambda r: list(r["choices"]["text"]),
            lambda r: _labels_index(r, r["answerKey"].lstrip()),
        ),
        Task(
            "commonsense_qa",
            lambda r: "Question: {}\nA. {}\nB. {}\nC. {}\nD. {}\nE. {}\nAnswer:".format(
                r["question"].strip(), *r["choices"]["text"][:5]
            ),
            lambda r: list("ABCDE"),
            lambda r: r["answerKey"],
            excludes_eval_doc=True,
        ),
        Task(
            "piqa",
            lambda r: f"Question: {r['goal']}\nAnswer:",
            lambda r: [r["sol1"], r["sol2"]],
            lambda r: int(r["label"]),
            excludes_eval_doc=True,
        ),
        Task(
            "social_iqa",
            lambda r: f"Q: {r['context']} {r['question']}\nA:",
            lambda r: [r["answerA"], r["answerB"], r["answerC"]],
            lambda r: int(r["label"]) - 1,
            excludes_eval_doc=True,
        ),
        Task(
            "winogrande",
            lambda r: {"1": 0, "2": 1}[r["answer"]],
            _winogrande_choices,
            lambda r: r["sentence"][r["sentence"].index("_") + 1 :].strip(),
            multiple_input=True,
            excludes_eval_doc=True,
        ),
        Task(
            "swag",
            lambda r: r["startphrase"],
            lambda r: [r["ending0"], r["ending1"], r["ending2"], r["ending3"]],
            lambda r: int(r["label"]),
            excludes_eval_doc=True,
        ),
        Task(
            "truthfulqa_mc1",
            lambda r: f"{_TRUTHFULQA_PROMPT}{r['question']}\nA:",
            lambda r: list(r["mc1_targets"]["choices"]),
            lambda r: 0,
            zero_shot_only=True,
        ),
        Task(
            "sciq",
            lambda r: f"{r['support'].lstrip()}\nQuestion: {r['question']}\nAnswer:",
            lambda r: [r["distractor1"], r["distractor2"], r["distractor3"], r["correct_answer"]],
            lambda r: 3,
        ),
        Task(
            "copa",
            _copa_text,
            lambda r: [_copa_choice(r["choice1"]), _copa_choice(r["choice2"])],
            lambda r: _copa_choice(r["choice1"] if r["label"] == 0 else r["choice2"]),
            excludes_eval_doc=True,
        ),
    )
}


@cache
def mmlu_task(name: str) -> Task:
    """``mmlu_<subject>`` or ``mmlu_pro_<category>``: its description and few-shot rules."""
    if name.startswith("mmlu_pro_"):
        category = name.removeprefix("mmlu_pro_").replace("_", " ")
        return Task(
            name,
            _pro_text,
            lambda r: [],
            lambda r: str(r["answer"]),
            description=f"The following are multiple choice questions (with answers) about "
            f'{category}. Think step by step and then finish your answer with "the answer is '
            '(X)" where X is the correct letter choice.\n',
            first_n=True,
            generate=True,
            shot_text=_pro_text,
            shot_target=_pro_shot_target,
            pool=("category", category),
        )
    subject = name.removeprefix("mmlu_")
    return Task(
        name,
        _mmlu_text,
        lambda r: ["A", "B", "C", "D"],
        _mmlu_answer,
        description="The following are multiple choice questions (with answers) about "
        f"{subject.replace('_', ' ')}.\n\n",
        first_n=True,
        pool=("subject", subject),
    )
