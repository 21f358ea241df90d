"""Summaries of a sample table: what a conversion gave, what a file holds, what the audit said.

Besides the counts, a summary tests each choices-count's answer positions against uniform
(:mod:`.stats`, a chi-square test without scipy) and breaks the samples down by a group column
(``subject``, ``activity_label``, or any extra key; :mod:`.groups`) with, for an audited file,
the share of each group failing each check of each block (:mod:`.checks`), fixed, and flagged.

Every number is computed once, by :class:`Tally` (:mod:`.tally`), into a :class:`Summary`
(:mod:`.result`), so its text lines, its JSON and the HTML report (:mod:`sdvm_hf.render`) can
never disagree.
"""

from sdvm_hf.summary.checks import BAD_WHEN_TRUE, flatten_block, reads_bad
from sdvm_hf.summary.examples import EXAMPLES
from sdvm_hf.summary.groups import GROUP_COLUMNS, MISSING, REST, TOP_GROUPS, Group
from sdvm_hf.summary.result import Summary
from sdvm_hf.summary.stats import (
    ALPHA,
    MIN_EXPECTED,
    PositionBias,
    bias_verdict,
    chi_square_sf,
    position_bias,
)
from sdvm_hf.summary.tally import ORDER_KEY, Tally, reject_reasons, summarize

__all__ = [
    "ALPHA",
    "BAD_WHEN_TRUE",
    "EXAMPLES",
    "GROUP_COLUMNS",
    "MIN_EXPECTED",
    "MISSING",
    "ORDER_KEY",
    "REST",
    "TOP_GROUPS",
    "Group",
    "PositionBias",
    "Summary",
    "Tally",
    "bias_verdict",
    "chi_square_sf",
    "flatten_block",
    "position_bias",
    "reads_bad",
    "reject_reasons",
    "summarize",
]
