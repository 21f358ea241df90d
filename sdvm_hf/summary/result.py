"""What a summary holds: :class:`Summary`, every number of a table in one plain dataclass.

The numbers are computed by :class:`~sdvm_hf.summary.tally.Tally`, once, so the text lines,
the JSON and the HTML report (:mod:`sdvm_hf.render`) can never disagree. :meth:`Summary.as_dict`
is the numbers as plain data; :meth:`Summary.lines` is :func:`~sdvm_hf.render.text.summary_lines`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from sdvm_hf.summary.groups import Group
from sdvm_hf.summary.stats import ALPHA, PositionBias

__all__ = ["Summary"]


@dataclass
class Summary:
    """What a table holds, for people: counts and distributions."""

    samples: int
    by_class: dict[str, int]
    by_style: dict[str, int]
    choices: dict[int, int]
    positions: dict[int, dict[int, int]]
    extra: dict[str, str]
    verdicts: dict[str, dict[str, dict[str, int]]]
    """Per block, each boolean check (nested dicts flattened to dotted names) and how many
    samples have it ``true`` and ``false``."""
    rows_in: int | None = None
    rejects: dict[str, int] = field(default_factory=dict)
    bias: dict[int, PositionBias] = field(default_factory=dict)
    """Each choices-count's answer positions tested against uniform."""
    group_by: str | None = None
    """The extra key :attr:`groups` is by, or ``None``."""
    groups: dict[str, Group] = field(default_factory=dict)
    """Per value of :attr:`group_by`, sorted by name: the largest :data:`TOP_GROUPS` (by
    default), and the others summed as :data:`REST`."""
    total: Group = field(default_factory=Group)
    """All samples: the audit failures, fixes and flags."""
    others: dict[str, list[str]] = field(default_factory=dict)
    """Per block, the dotted names of the leaves that are not booleans (listed, not counted)."""
    group_count: int = 0
    """How many distinct values :attr:`group_by` has (``groups`` may list fewer)."""
    examples: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    """Per block and check, a few row numbers where the check reads bad (the same rows on
    every run: the lowest of a fixed hash of the row number)."""
    fixed_examples: list[int] = field(default_factory=list)
    """A few row numbers of samples the fix changed, chosen the same way."""
    positions_before: dict[int, dict[int, int]] = field(default_factory=dict)
    """For shuffled samples (see :mod:`sdvm_hf.shuffle`), each choices-count's answer
    positions before the shuffle; empty when no sample records its original order."""
    left_in_place: int = 0
    """Shuffled-file samples whose choices refer to each other and kept their order."""

    def lines(self) -> list[str]:
        """The summary as text lines (:func:`sdvm_hf.render.text.summary_lines`)."""
        # imported here: the renderer reads the numbers' modules, so it loads after them
        from sdvm_hf.render.text import summary_lines

        return summary_lines(self)

    def as_dict(self) -> dict[str, Any]:
        """The summary as JSON-compatible data."""
        return {
            "rows_in": self.rows_in,
            "samples": self.samples,
            "rejects": self.rejects,
            "by_class": self.by_class,
            "by_style": self.by_style,
            "choices": self.choices,
            "answer_positions": self.positions,
            "answer_positions_before_shuffle": self.positions_before,
            "left_in_place": self.left_in_place,
            "extra": self.extra,
            "verdicts": self.verdicts,
            "not_checks": self.others,
            "position_bias": {n: asdict(test) for n, test in self.bias.items()},
            "alpha": ALPHA,
            "group_by": self.group_by,
            "group_count": self.group_count,
            "groups": {name: group.as_dict() for name, group in self.groups.items()},
            "total": self.total.as_dict(),
            "examples": self.examples,
            "fixed_examples": self.fixed_examples,
        }
