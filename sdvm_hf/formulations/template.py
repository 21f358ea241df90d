r"""A formulation of one's own: a template that makes a row's query, choices and answer.

For a mapping of one's own (or to render a preset otherwise than OLMES does), a
:class:`Template` wraps a callable ``row -> (query, choices, gold)``: ``row`` is the published
row (the dataset's own columns) when the samples' mapping is known, else the sample's wire dict
(``context``, ``choices``, ``answer_index`` and its extra keys). It renders in the OLMES shapes:
``olmes-rc`` scores ``query + answer_prefix`` then ``" " + choice``; ``olmes-mc`` lists the
choices as `` A. text`` lines under ``query`` and scores ``" A"``, ``" B"``, ...

>>> template = Template(lambda row: ("Question: " + row["q"], row["options"], row["answer"]))
>>> rendered = template.build("rc")({"q": "2+2?", "options": ["4", "5"], "answer": 0}, 0, None)
>>> rendered.pairs
[('Question: 2+2?\nAnswer:', ' 4'), ('Question: 2+2?\nAnswer:', ' 5')]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sdvm_hf.formulations._request import RenderError
from sdvm_hf.formulations._shapes import Build, Rendered, cloze, lettered

__all__ = ["Template"]


@dataclass(frozen=True)
class Template:
    """A formulation given in Python: ``make(row) -> (query, choices, gold)``."""

    make: Callable[[Mapping[str, Any]], tuple[str, Sequence[str], int]]
    task_name: str = "custom"
    """The ``task_name`` of its requests (``:mc`` is added for ``olmes-mc``)."""
    answer_prefix: str = "\nAnswer:"
    """What follows the query in the rc formulation (``""`` for a sentence to continue)."""
    native_id: str | None = None
    """The row's column holding its own id; the row's position when ``None``."""
    unconditional: bool = False
    """Whether rc adds the unconditional ``Answer:`` requests (PMI)."""

    def build(self, formulation: str) -> Build:
        """The builder of ``rc`` or ``mc`` over published rows."""
        if formulation not in ("rc", "mc"):
            raise RenderError(f"a Template renders olmes-rc or olmes-mc, not {formulation!r}")

        def build(row: Mapping[str, Any], position: int, config: str | None) -> Rendered:
            query, choices, gold = self.make(row)
            if not 0 <= gold < len(choices):
                raise RenderError(
                    f"row {position}: the template's gold {gold} is not a choice "
                    f"(0..{len(choices) - 1})"
                )
            native = position if self.native_id is None else row[self.native_id]
            head = {"index": position}
            if formulation == "rc":
                built = cloze(head, query + self.answer_prefix, choices, gold)
            else:
                built = lettered(head, query, choices, gold, f"row {position}")
            return built._replace(native_id=native)

        return build
