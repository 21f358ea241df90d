"""The two OLMES shapes of a document: cloze (rc) and lettered (mc), and what a rule returns."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from sdvm_hf._wire import LETTERS
from sdvm_hf.formulations._request import RenderError

__all__ = ["LETTERS", "Build", "Rendered", "Row", "cloze", "lettered", "mc_query", "with_id"]


Row = Mapping[str, Any]


class Rendered(NamedTuple):
    """One row rendered: the dump's document, its pairs, the correct choice, its own id."""

    doc: dict[str, Any]
    pairs: list[tuple[str, str]]
    label: int
    native_id: Any
    task: str | None = None
    """The row's own task, where one rendering spans several (MMLU's ``all`` in lm-eval:
    ``mmlu_<subject>``); ``None``: the rendering's."""


Build = Callable[[Row, int, "str | None"], Rendered]


def mc_query(stem: str, choices: Sequence[str], where: str = "") -> str:
    """``stem`` with one `` A. text`` line per choice and ``Answer:``; at most 26 choices."""
    if len(choices) > len(LETTERS):
        raise RenderError(
            f"{where or 'a row'}: the mc formulation letters at most {len(LETTERS)} choices, "
            f"got {len(choices)}"
        )
    lines = "".join(f"\n {LETTERS[i]}. {choice}" for i, choice in enumerate(choices))
    return f"{stem}{lines}\nAnswer:"


def cloze(head: Mapping[str, Any], query: str, choices: Sequence[str], gold: int) -> Rendered:
    """The rc rendering: ``query`` then ``" " + choice``; the doc is ``head`` + query, choices."""
    doc = {**head, "query": query, "choices": list(choices), "gold": gold}
    return Rendered(doc, [(query, " " + choice) for choice in choices], gold, None)


def lettered(
    head: Mapping[str, Any], stem: str, choices: Sequence[str], gold: int, where: str = ""
) -> Rendered:
    """The mc rendering: the lettered query, then ``" A"``, ``" B"``, ..."""
    query = mc_query(stem, choices, where)
    letters = list(LETTERS[: len(choices)])
    doc = {**head, "query": query, "choices": letters, "gold": gold}
    return Rendered(doc, [(query, " " + letter) for letter in letters], gold, None)


def with_id(rendered: Rendered, native_id: Any) -> Rendered:
    """``rendered`` with the row's own id (made anew: ``_replace`` costs a rendering 10%)."""
    return Rendered(rendered.doc, rendered.pairs, rendered.label, native_id, rendered.task)
