import re
from typing import Any

import pytest
from pydantic import ValidationError

from sdvm_hf import (
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
)

STEM = {
    "context": "A woman applies mascara. she",
    "choices": ["applies it to her lashes.", "drives off.", "mixes a bowl.", "exits."],
    "answer_index": 0,
}
QUESTION = {
    "context": "What is the capital of France?",
    "choices": ["Berlin", "Paris", "Madrid", "Rome"],
    "answer_index": 1,
}


def test_seed_page_examples_build_with_the_documented_styles() -> None:
    assert MultipleChoiceCompletionSample(**STEM).style == "continuation"
    assert MultipleChoiceQuestionAnswerSample(**QUESTION).style == "qa"
    assert MultipleChoiceSample(**STEM).style == "continuation"
    assert MultipleChoiceSample(**QUESTION, style="qa").style == "qa"


def test_tuple_choices_are_stored_as_a_list() -> None:
    sample = MultipleChoiceSample(context="c", choices=("a", "b"), answer_index=1)
    assert sample.choices == ["a", "b"]


def test_numpy_style_integers_and_integral_floats_are_accepted_as_int() -> None:
    class Index:
        def __index__(self) -> int:
            return 1

    assert (
        MultipleChoiceSample(context="c", choices=["a", "b"], answer_index=Index()).answer_index
        == 1
    )
    sample = MultipleChoiceSample(context="c", choices=["a", "b"], answer_index=1.0)
    assert type(sample.answer_index) is int


REFUSALS: list[tuple[type[MultipleChoiceSample], dict[str, Any], str]] = [
    (MultipleChoiceSample, {"context": ""}, "context must be a non-empty string, got ''"),
    (
        MultipleChoiceSample,
        {"context": " \t\n"},
        r"context must be a non-empty string, got ' \\t\\n'",
    ),
    (MultipleChoiceSample, {"context": None}, "context must be a str, got NoneType None"),
    (MultipleChoiceSample, {"context": 7}, "context must be a str, got int 7"),
    (
        MultipleChoiceSample,
        {"choices": ["only"]},
        r"choices must have at least two items, got 1: \['only'\]",
    ),
    (MultipleChoiceSample, {"choices": []}, r"choices must have at least two items, got 0: \[\]"),
    (MultipleChoiceSample, {"choices": "ab"}, "choices must be a list of str, got str 'ab'"),
    (MultipleChoiceSample, {"choices": ["a", 2]}, r"choices\[1\] must be a str, got int 2"),
    (
        MultipleChoiceSample,
        {"choices": ["a", None]},
        r"choices\[1\] must be a str, got NoneType None",
    ),
    (
        MultipleChoiceSample,
        {"answer_index": 4},
        r"answer_index must be in 0\.\.3 for 4 choices, got 4",
    ),
    (
        MultipleChoiceSample,
        {"answer_index": -1},
        r"answer_index must be in 0\.\.3 for 4 choices, got -1",
    ),
    (MultipleChoiceSample, {"answer_index": True}, "answer_index must be an int, got bool True"),
    (
        MultipleChoiceSample,
        {"answer_index": 1.5},
        "answer_index must be an int, got non-integral 1.5",
    ),
    (MultipleChoiceSample, {"answer_index": "1"}, "answer_index must be an int, got str '1'"),
    (
        MultipleChoiceSample,
        {"style": "cloze"},
        "style must be 'continuation' or 'qa', got str 'cloze'",
    ),
    (
        MultipleChoiceSample,
        {"style": None},
        "style must be 'continuation' or 'qa', got NoneType None",
    ),
    (
        MultipleChoiceCompletionSample,
        {"style": "qa"},
        "MultipleChoiceCompletionSample is always style='continuation', got 'qa'; "
        "use MultipleChoiceQuestionAnswerSample instead",
    ),
    (
        MultipleChoiceQuestionAnswerSample,
        {"style": "continuation"},
        "MultipleChoiceQuestionAnswerSample is always style='qa', got 'continuation'; "
        "use MultipleChoiceCompletionSample instead",
    ),
    (
        MultipleChoiceSample,
        {"extra": {"context": "x"}},
        "extra key 'context' is reserved by the wire format",
    ),
    (MultipleChoiceSample, {"extra": {"audit": {}}}, "extra key 'audit' is reserved"),
    (
        MultipleChoiceSample,
        {"extra": {"when": object()}},
        r"extra\.when must be JSON-compatible .*got object",
    ),
    (
        MultipleChoiceSample,
        {"extra": {"t": (1, 2)}},
        r"extra\.t must be JSON-compatible .*got tuple \(1, 2\)",
    ),
    (
        MultipleChoiceSample,
        {"extra": {"n": [1, {2: 3}]}},
        r"extra\.n\[1\] has a key int 2; JSON keys are str",
    ),
    (
        MultipleChoiceSample,
        {"extra": {"x": float("nan")}},
        r"extra\.x is nan, which JSON cannot carry",
    ),
    (MultipleChoiceSample, {"extra": ["subject"]}, r"extra must be a dict, got list \['subject'\]"),
    (MultipleChoiceSample, {"audit": "pass"}, "audit must be a dict, got str 'pass'"),
    (MultipleChoiceSample, {"fix": {"changes": {1}}}, r"fix\.changes must be JSON-compatible"),
    (MultipleChoiceSample, {"unknown": 1}, "Extra inputs are not permitted"),
]


@pytest.mark.parametrize(("cls", "change", "message"), REFUSALS)
def test_refusals_say_what_arrived_and_what_was_expected(
    cls: type[MultipleChoiceSample], change: dict[str, Any], message: str
) -> None:
    fields = {**QUESTION, **change}
    if cls is MultipleChoiceQuestionAnswerSample or "style" in change:
        fields.setdefault("style", "qa")
    with pytest.raises(ValidationError, match=message):
        cls(**fields)


def test_samples_are_immutable() -> None:
    sample = MultipleChoiceQuestionAnswerSample(**QUESTION)
    with pytest.raises(ValidationError, match="Instance is frozen"):
        sample.context = "changed"  # type: ignore[misc]


def test_samples_compare_by_value_and_class() -> None:
    a = MultipleChoiceQuestionAnswerSample(**QUESTION, extra={"subject": "geo"})
    assert a == MultipleChoiceQuestionAnswerSample(**QUESTION, extra={"subject": "geo"})
    assert a != MultipleChoiceQuestionAnswerSample(**QUESTION, extra={"subject": "bio"})
    assert a != MultipleChoiceSample(**QUESTION, style="qa", extra={"subject": "geo"})


def test_wire_dict_matches_the_documented_example_key_for_key_in_order() -> None:
    sample = MultipleChoiceQuestionAnswerSample(
        **QUESTION, extra={"subject": "geography", "source_id": "mmlu-1234"}
    )
    wire = sample.to_dict()
    assert list(wire.items()) == [
        ("task_type", "multiple_choice"),
        ("context", "What is the capital of France?"),
        ("choices", ["Berlin", "Paris", "Madrid", "Rome"]),
        ("answer_index", 1),
        ("style", "qa"),
        ("subject", "geography"),
        ("source_id", "mmlu-1234"),
    ]


def test_stage_blocks_follow_extra_and_appear_only_when_present() -> None:
    sample = MultipleChoiceCompletionSample(
        **STEM, extra={"ind": 4}, reaudit={"ok": True}, audit={"grammar": False}
    )
    assert list(sample.to_dict())[-3:] == ["ind", "audit", "reaudit"]


@pytest.mark.parametrize(
    ("style", "cls"),
    [
        ("continuation", MultipleChoiceCompletionSample),
        ("qa", MultipleChoiceQuestionAnswerSample),
        (None, MultipleChoiceCompletionSample),
    ],
)
def test_decoding_through_the_generic_class_returns_the_specific_class(
    style: str | None, cls: type[MultipleChoiceSample]
) -> None:
    wire: dict[str, Any] = {"task_type": "multiple_choice", **QUESTION}
    if style is not None:
        wire["style"] = style
    assert type(MultipleChoiceSample.from_dict(wire)) is cls


def test_decoding_puts_unknown_keys_in_extra_and_carries_stage_blocks() -> None:
    wire = {
        "task_type": "multiple_choice",
        **QUESTION,
        "style": "qa",
        "subject": "geo",
        "audit": {"ok": True},
        "fix": None,
        "n": None,
    }
    sample = MultipleChoiceSample.from_dict(wire)
    assert sample.extra == {"subject": "geo", "n": None}
    assert sample.audit == {"ok": True}
    assert sample.fix is None
    assert "fix" not in sample.to_dict()


@pytest.mark.parametrize(
    ("cls", "wire", "message"),
    [
        (
            MultipleChoiceSample,
            {"task_type": "text", "text": "x"},
            "task_type must be 'multiple_choice', got 'text'",
        ),
        (MultipleChoiceSample, {**QUESTION}, "task_type must be 'multiple_choice', got None"),
        (
            MultipleChoiceSample,
            {"task_type": "multiple_choice", "context": "c"},
            "wire sample is missing 'choices', 'answer_index'",
        ),
        (
            MultipleChoiceSample,
            {"task_type": "multiple_choice", **QUESTION, "style": "essay"},
            "style must be 'continuation' or 'qa', got str 'essay'",
        ),
        (
            MultipleChoiceCompletionSample,
            {"task_type": "multiple_choice", **QUESTION, "style": "qa"},
            "use MultipleChoiceQuestionAnswerSample instead",
        ),
        (MultipleChoiceSample, ["not", "a", "dict"], "a wire sample must be a dict, got list"),
    ],
)
def test_decoding_refusals(cls: type[MultipleChoiceSample], wire: Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message) if "(" in message else message):
        cls.from_dict(wire)


def test_specific_class_decodes_its_own_style() -> None:
    wire = {"task_type": "multiple_choice", **STEM}
    assert MultipleChoiceCompletionSample.from_dict(wire) == MultipleChoiceCompletionSample(**STEM)
