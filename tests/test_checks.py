"""Every boolean of every block is counted, nested dicts by dotted name, per block and group.

The expected counts are taken here straight from the blocks, with a walk of their own; the
blocks are drawn in any shape (nested, missing, with non-boolean leaves), so nothing depends
on the keys the local stand-in happens to write.
"""

import itertools
import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdvm_hf import MultipleChoiceSample
from sdvm_hf.arrow.sequence import samples_to_table
from sdvm_hf.summary import BAD_WHEN_TRUE, Tally, flatten_block, summarize

KEYS = st.sampled_from(["ok", "checks", "grammatical", "single_correct_answer", "flagged", "n"])
LEAVES = st.booleans() | st.integers(0, 3) | st.text(max_size=2) | st.none()
VALUES = st.recursive(
    LEAVES | st.lists(st.booleans(), max_size=2),
    lambda inner: st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=6,
)
BLOCK = st.none() | st.dictionaries(KEYS, VALUES, max_size=4)


def leaves(block: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every leaf of a block by dotted name (an empty dict is a leaf)."""
    for key, value in block.items():
        if isinstance(value, dict) and value:
            yield from leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def bad(block: str, check: str, value: bool) -> bool:
    return value if (block, check) in BAD_WHEN_TRUE else not value


@st.composite
def samples(draw: st.DrawFn) -> list[MultipleChoiceSample]:
    count = draw(st.integers(1, 25))
    out = []
    for i in range(count):
        sample = MultipleChoiceSample(
            context=f"Q{i}?",
            choices=["a", "b", "c"],
            answer_index=i % 3,
            style="qa",
            extra={"subject": draw(st.sampled_from(["law", "art", "math"]))},
        )
        update = {block: draw(BLOCK) for block in ("audit", "fix", "reaudit")}
        out.append(sample.model_copy(update=update))
    return out


@pytest.mark.slow  # hypothesis at strength, or a big table
@settings(max_examples=60, deadline=None)
@given(samples(), st.lists(st.integers(0, 25), max_size=3))
def test_every_boolean_leaf_is_counted_per_block_and_group(
    drawn: list[MultipleChoiceSample], cuts: list[int]
) -> None:
    table = samples_to_table(drawn)
    tally = Tally(examples=3)
    bounds = sorted({0, len(drawn), *(c % (len(drawn) + 1) for c in cuts)})
    for start, stop in itertools.pairwise(bounds):
        tally.add(table.slice(start, stop - start))
    summary = tally.summary()
    assert summary.as_dict() == summarize(table, examples=3).as_dict()  # any batches

    for block in ("audit", "fix", "reaudit"):
        carrying = [s for s in drawn if getattr(s, block) is not None]
        assert summary.total.carrying.get(block, 0) == len(carrying)
        verdicts: dict[str, Counter[str]] = {}
        others: dict[str, None] = {}
        for sample in carrying:
            for name, value in leaves(getattr(sample, block)):
                if isinstance(value, bool):
                    verdicts.setdefault(name, Counter())[str(value).lower()] += 1
                else:
                    others.setdefault(name)
        want = {name: dict(sorted(c.items())) for name, c in verdicts.items()}
        assert summary.verdicts.get(block, {}) == want
        assert summary.others.get(block, []) == list(others)
        for group_name, group in [("", summary.total), *summary.groups.items()]:
            members = [s for s in carrying if not group_name or s.extra["subject"] == group_name]
            for name in verdicts:
                expected = sum(
                    value is not None and bad(block, name, value)
                    for s in members
                    for value in [dict(leaves(getattr(s, block))).get(name)]
                    if isinstance(value, bool) or value is None
                )
                assert group.checks[block][name] == expected, (block, name, group_name)
        for name, rows in summary.examples.get(block, {}).items():
            failing = [
                row
                for row, s in enumerate(drawn)
                if getattr(s, block) is not None
                and isinstance(v := dict(leaves(getattr(s, block))).get(name), bool)
                and bad(block, name, v)
            ]
            assert set(rows) <= set(failing) and len(rows) == min(3, len(failing))
    # the audit block's checks are also each group's "failing", as before
    assert summary.total.failing == summary.total.checks.get("audit", {})
    assert json.loads(json.dumps(summary.as_dict()))["total"]["carrying"] == {
        b: n for b, n in summary.total.carrying.items()
    }


def test_a_nested_verdict_is_counted_by_dotted_name_and_other_leaves_are_listed() -> None:
    audit = {"ok": False, "checks": {"grammatical": False, "single_correct_answer": True}}
    plain = MultipleChoiceSample(context="Q?", choices=["a", "b"], answer_index=0, style="qa")
    samples = [
        plain.model_copy(update={"audit": audit, "fix": {"changes": ["x"], "flagged": True}}),
        plain.model_copy(update={"audit": {"ok": True, "checks": {"grammatical": True}}}),
        plain,  # no blocks at all
    ]
    summary = summarize(samples_to_table(samples))
    assert summary.verdicts["audit"] == {
        "ok": {"false": 1, "true": 1},
        "checks.grammatical": {"false": 1, "true": 1},
        "checks.single_correct_answer": {"true": 1},
    }
    assert summary.total.checks == {
        "audit": {"ok": 1, "checks.grammatical": 1, "checks.single_correct_answer": 0},
        "fix": {"flagged": 1},  # flagged true is the bad outcome
    }
    assert summary.others == {"fix": ["changes"]}
    assert summary.examples == {
        "audit": {"ok": [0], "checks.grammatical": [0]},
        "fix": {"flagged": [0]},
    }
    assert summary.fixed_examples == [0] and summary.total.fixed == 1
    lines = "\n".join(summary.lines())
    assert "  checks.grammatical: false: 1, true: 1 (50.0% bad)" in lines
    assert "not checks: changes" in lines


def test_flatten_block_walks_nested_dicts_only() -> None:
    assert flatten_block({"a": {"b": {"c": False}}, "d": [True], "e": {}, "f": None}) == (
        {"a.b.c": False},
        ["d", "e", "f"],
    )


def test_examples_are_the_same_rows_whatever_the_batches_and_spread_out() -> None:
    plain = MultipleChoiceSample(context="Q?", choices=["a", "b"], answer_index=0, style="qa")
    samples = [plain.model_copy(update={"audit": {"ok": i % 2 == 0}}) for i in range(400)]
    table = samples_to_table(samples)
    whole = summarize(table).examples["audit"]["ok"]
    tally = Tally()
    for start in range(0, 400, 37):
        tally.add(table.slice(start, 37))
    assert tally.summary().examples["audit"]["ok"] == whole
    assert len(whole) == 5 and all(row % 2 == 1 for row in whole)
    assert whole != [1, 3, 5, 7, 9] and max(whole) > 100  # not merely the first failing rows
