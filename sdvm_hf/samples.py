"""The multiple-choice sample types and their SDVM wire dict.

This module is the bottom layer: it knows pydantic and the wire format, nothing of Arrow or
``datasets``. A sample that exists is a valid sample.

>>> s = MultipleChoiceSample(context="What is 2 + 2?", choices=["3", "4"], answer_index=1,
...                          style="qa", extra={"subject": "arithmetic"})
>>> type(s).__name__, type(MultipleChoiceSample.from_dict(s.to_dict())).__name__
('MultipleChoiceSample', 'MultipleChoiceQuestionAnswerSample')
>>> s.to_dict()["subject"]
'arithmetic'
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, SkipValidation, field_validator

from sdvm_hf._frozen import FrozenDict, FrozenList, freeze_json, hashable, text_problem
from sdvm_hf._wire import (
    BLOCKS,
    RESERVED_KEYS,
    STYLES,
    TASK_TYPE,
    Style,
    answer_range,
    describe,
    reserved_key,
    style_problem,
)

__all__ = [
    "MultipleChoiceCompletionSample",
    "MultipleChoiceQuestionAnswerSample",
    "MultipleChoiceSample",
]


def _json_object(value: object, name: str) -> FrozenDict:
    if isinstance(value, Mapping) and not isinstance(value, dict):
        value = dict(value)
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be a dict, got {describe(value)}")
    frozen: FrozenDict = freeze_json(value, (name,))
    return frozen


class MultipleChoiceSample(BaseModel):
    """A single-answer multiple-choice item: a context, its choices and the correct one.

    ``style`` is ``"continuation"`` (default) when the context is a sentence stem the answer
    continues (HellaSwag), ``"qa"`` when it is a complete question (MMLU). Decoding a wire
    dict returns the specific class for its style.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    context: str
    """The stem or question; never empty or whitespace only."""
    choices: SkipValidation[list[str]]
    """At least two choices, each a str (read-only)."""
    answer_index: int
    """Position of the one correct choice in ``choices``."""
    style: Style = "continuation"
    """``"continuation"`` for a sentence stem, ``"qa"`` for a complete question."""
    extra: SkipValidation[dict[str, Any]] = FrozenDict()
    """Every other column of the source, JSON-compatible, flattened into the wire dict; a
    read-only deep copy of what was passed in (it compares equal to a plain dict)."""
    audit: SkipValidation[dict[str, Any] | None] = None
    """The verdict of ``sdvm-audit-1`` (before the fix, on a refined sample); opaque."""
    fix: SkipValidation[dict[str, Any] | None] = None
    """What ``sdvm-fix-1`` did; opaque."""
    reaudit: SkipValidation[dict[str, Any] | None] = None
    """The verdict after the fix; opaque."""

    _fixed_style: ClassVar[str | None] = None

    @field_validator("context", mode="before")
    @classmethod
    def _check_context(cls, value: object) -> str:
        if not isinstance(value, str):
            raise ValueError(f"context must be a str, got {describe(value)}")
        if not value.strip():
            raise ValueError(f"context must be a non-empty string, got {value!r}")
        problem = text_problem(value)
        if problem:
            raise ValueError(f"context {problem}")
        return value

    @field_validator("choices", mode="before")
    @classmethod
    def _check_choices(cls, value: object) -> list[str]:
        if not isinstance(value, list | tuple):
            raise ValueError(f"choices must be a list of str, got {describe(value)}")
        if len(value) < 2:
            raise ValueError(
                f"choices must have at least two items, got {len(value)}: {list(value)!r}"
            )
        for i, choice in enumerate(value):
            if not isinstance(choice, str):
                raise ValueError(f"choices[{i}] must be a str, got {describe(choice)}")
            problem = text_problem(choice)
            if problem:
                raise ValueError(f"choices[{i}] {problem}")
        return FrozenList(value)

    @field_validator("answer_index", mode="before")
    @classmethod
    def _check_answer_type(cls, value: object) -> int:
        if isinstance(value, bool):
            raise ValueError(f"answer_index must be an int, got {describe(value)}")
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError(f"answer_index must be an int, got non-integral {value!r}")
            return int(value)
        try:
            return operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            raise ValueError(f"answer_index must be an int, got {describe(value)}") from None

    @field_validator("answer_index")
    @classmethod
    def _check_answer_range(cls, value: int, info: Any) -> int:
        choices = info.data.get("choices")
        if choices is not None and not 0 <= value < len(choices):
            raise ValueError(f"answer_index must be in {answer_range(len(choices))}, got {value}")
        return value

    @field_validator("style", mode="before")
    @classmethod
    def _check_style(cls, value: object) -> str:
        problem = style_problem(value)
        if problem:
            raise ValueError(problem)
        if cls._fixed_style is not None and value != cls._fixed_style:
            other = _CLASS_BY_STYLE[str(value)].__name__
            raise ValueError(
                f"{cls.__name__} is always style={cls._fixed_style!r}, got {value!r}; "
                f"use {other} instead"
            )
        return str(value)

    @field_validator("extra", mode="before")
    @classmethod
    def _check_extra(cls, value: object) -> dict[str, Any]:
        extra = _json_object(value, "extra")
        key = reserved_key(extra)
        if key is not None:
            raise ValueError(
                f"extra key {key!r} is reserved by the wire format "
                f"({', '.join(sorted(RESERVED_KEYS))}); rename the key"
            )
        return extra

    @field_validator("audit", "fix", "reaudit", mode="before")
    @classmethod
    def _check_stage(cls, value: object, info: Any) -> dict[str, Any] | None:
        return None if value is None else _json_object(value, str(info.field_name))

    def __hash__(self) -> int:
        """By value, like ``==``: equal samples hash equal."""
        return hash((type(self), *(hashable(value) for value in self.__dict__.values())))

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with ``update`` applied, validated again (an invalid update raises).

        ``deep`` is accepted for pydantic's signature; the fields are read-only, so a copy
        shares them safely.
        """
        if not update:
            return self
        return type(self)(**{**self.__dict__, **update})

    def to_dict(self) -> dict[str, Any]:
        """The SDVM wire dict: core keys, ``extra`` flattened in, stage blocks when present."""
        out: dict[str, Any] = {
            "task_type": TASK_TYPE,
            "context": self.context,
            "choices": list(self.choices),
            "answer_index": self.answer_index,
            "style": self.style,
        }
        out.update(self.extra)
        for key in BLOCKS:
            block = getattr(self, key)
            if block is not None:
                out[key] = block
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Self:
        """Decode a wire dict, returning the specific class for its ``style``.

        Called on :class:`MultipleChoiceSample` it dispatches on ``style``; called on a
        specific class it returns that class or refuses a dict of the other style. Keys that
        are not reserved go to ``extra``; ``null`` stage blocks are dropped.
        """
        if not isinstance(d, Mapping):
            raise ValueError(f"a wire sample must be a dict, got {describe(d)}")
        task_type = d.get("task_type")
        if task_type != TASK_TYPE:
            raise ValueError(f"task_type must be {TASK_TYPE!r}, got {task_type!r}")
        missing = [key for key in ("context", "choices", "answer_index") if key not in d]
        if missing:
            raise ValueError(f"wire sample is missing {', '.join(map(repr, missing))}")
        style = d.get("style", "continuation")
        target: type[MultipleChoiceSample] = cls
        if cls is MultipleChoiceSample and style in STYLES:
            target = _CLASS_BY_STYLE[style]
        stages = {key: d[key] for key in BLOCKS if d.get(key) is not None}
        sample = target(
            context=d["context"],
            choices=d["choices"],
            answer_index=d["answer_index"],
            style=style,
            extra={key: value for key, value in d.items() if key not in RESERVED_KEYS},
            **stages,
        )
        return sample  # type: ignore[return-value]


class MultipleChoiceCompletionSample(MultipleChoiceSample):
    """A multiple-choice item whose context is a sentence stem the answer continues.

    The stem ends mid-sentence by design, so it is never judged for completeness.
    Always ``style="continuation"``.
    """

    style: Style = "continuation"
    _fixed_style: ClassVar[str | None] = "continuation"


class MultipleChoiceQuestionAnswerSample(MultipleChoiceSample):
    """A multiple-choice item whose context is a complete question; always ``style="qa"``.

    A truncated or malformed question is a defect, so completeness is judged.
    """

    style: Style = "qa"
    _fixed_style: ClassVar[str | None] = "qa"


_CLASS_BY_STYLE: dict[str, type[MultipleChoiceSample]] = {
    "continuation": MultipleChoiceCompletionSample,
    "qa": MultipleChoiceQuestionAnswerSample,
}


def class_for_style(style: str) -> type[MultipleChoiceSample]:
    """The specific sample class for ``style`` (what decoding returns)."""
    problem = style_problem(style)
    if problem:
        raise ValueError(problem)
    return _CLASS_BY_STYLE[style]
