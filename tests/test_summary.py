"""A summary built batch by batch (``Tally``) equals the summary of the whole table.

The command summarises a conversion as it streams, so every number must merge exactly:
counts, answer positions, distinct extra values, verdicts, groups and reject reasons.
"""

import itertools
import json
import re
from collections import Counter
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import samples as any_samples

from sdvm_hf import MultipleChoiceSample, Problem, summarize
from sdvm_hf.arrow.sequence import samples_to_table
from sdvm_hf.summary import Tally
from sdvm_hf.summary.tally import DISTINCT_TEXT

SUBJECTS = st.sampled_from(["anatomy", "law", "virology"])
VERDICTS = st.dictionaries(
    st.sampled_from(["complete", "grammar", "answer_correct"]),
    st.booleans() | st.integers(0, 3),
    max_size=3,
)
FIXES = st.fixed_dictionaries(
    {"changes": st.lists(st.text(max_size=3), max_size=2), "flagged": st.booleans()}
)


@st.composite
def audited(draw: st.DrawFn, struct: bool) -> MultipleChoiceSample:
    """A sample with a subject (or, as JSON extra, sometimes none) and maybe verdicts."""
    if struct:
        extra: dict[str, Any] = {"subject": draw(SUBJECTS), "ind": draw(st.integers(0, 20))}
    else:
        extra = draw(st.dictionaries(st.sampled_from(["subject", "tags"]), SUBJECTS, max_size=2))
    sample = draw(any_samples(extra=st.just(extra), blocks=False))
    return sample.model_copy(
        update={
            "audit": draw(st.none() | VERDICTS),
            "fix": draw(st.none() | FIXES),
            "reaudit": draw(st.none() | VERDICTS),
        }
    )


BASE = {
    "task_type": "multiple_choice",
    "context": "Q?",
    "choices": ["a", "b"],
    "answer_index": 0,
    "style": "qa",
}

problems = st.lists(
    st.builds(
        Problem,
        row=st.integers(0, 99),
        path=st.sampled_from([("label",), ("endings", 1), ("ctx",)]),
        expected=st.sampled_from(["an integer", "text"]),
        got=st.just("x"),
        note=st.sampled_from(["", "withheld"]),
    ),
    max_size=6,
)


@given(
    st.booleans().flatmap(lambda struct: st.lists(audited(struct), min_size=1, max_size=30)),
    st.lists(st.integers(0, 30), max_size=5),
    problems,
    st.sampled_from([None, "subject"]),
)
@pytest.mark.slow  # hypothesis at strength, or a big table
def test_a_summary_built_batch_by_batch_equals_the_whole_tables(
    samples: list[MultipleChoiceSample],
    cuts: list[int],
    rejects: list[Problem],
    group_by: str | None,
) -> None:
    table = samples_to_table(samples)
    bounds = sorted({0, len(samples), *(cut % (len(samples) + 1) for cut in cuts)})
    tally = Tally(group_by)
    for start, stop in itertools.pairwise(bounds):
        tally.add(table.slice(start, stop - start))
    for start in range(0, len(rejects), 2):  # rejects arrive in pieces too
        tally.add_rejects(rejects[start : start + 2])
    if not rejects:
        tally.add_rejects([])
    try:
        whole = summarize(table, rejects, group_by=group_by)
    except ValueError as error:  # no sample has the group key: both say so
        with pytest.raises(ValueError, match=re.escape(str(error))):
            tally.summary()
        return
    assert tally.summary().as_dict() == whole.as_dict()
    assert (tally.samples, tally.rejected) == (len(samples), len(rejects))


@pytest.mark.slow  # hypothesis at strength, or a big table
@given(st.lists(audited(struct=True), min_size=1, max_size=30), problems)
def test_a_summary_counts_what_the_samples_hold(
    samples: list[MultipleChoiceSample], rejects: list[Problem]
) -> None:
    """Against counts taken from the typed samples in plain Python."""
    summary = summarize(samples_to_table(samples), rejects)
    assert summary.rows_in == len(samples) + len(rejects)
    assert summary.by_style == dict(sorted(Counter(s.style for s in samples).items()))
    assert summary.choices == dict(sorted(Counter(len(s.choices) for s in samples).items()))
    for n, positions in summary.positions.items():
        sized = [s.answer_index for s in samples if len(s.choices) == n]
        assert positions == dict(sorted(Counter(sized).items()))
    assert summary.extra == {
        "subject": f"string ({len({s.extra['subject'] for s in samples})} distinct)",
        "ind": f"int64 ({len({s.extra['ind'] for s in samples})} distinct)",
    }
    audits = [s.audit for s in samples if s.audit is not None]
    checks = {check for audit in audits for check, v in audit.items() if isinstance(v, bool)}
    for check in checks:
        verdicts = [
            str(audit[check]).lower() for audit in audits if isinstance(audit.get(check), bool)
        ]
        assert summary.verdicts["audit"][check] == dict(sorted(Counter(verdicts).items()))
    assert summary.group_by == "subject"
    for name, group in summary.groups.items():
        members = [s for s in samples if s.extra["subject"] == name]
        assert group.samples == len(members)
        assert group.audited == sum(s.audit is not None for s in members)
        assert group.fixed == sum(bool(s.fix and s.fix["changes"]) for s in members)
        assert group.flagged == sum(bool(s.fix and s.fix["flagged"]) for s in members)
        for check, count in group.failing.items():
            assert count == sum(
                s.audit is not None and s.audit.get(check) is False for s in members
            )
    assert summary.total.samples == len(samples)


def test_distinct_values_are_counted_across_many_batches() -> None:
    """More distinct values than a merge holds at once: each batch repeats and adds some."""
    tally = Tally()
    sample = {**BASE}
    for batch in range(40):
        values = [batch * 500 + i for i in range(1000)]  # half of each batch seen before
        table = samples_to_table(
            [
                MultipleChoiceSample.from_dict({**sample, "ind": v, "subject": f"s{v % 7}"})
                for v in values
            ]
        )
        tally.add(table)
    summary = tally.summary()
    assert summary.extra == {"ind": "int64 (20,500 distinct)", "subject": "string (7 distinct)"}
    assert sum(group.samples for group in summary.groups.values()) == 40_000


def test_a_json_extra_is_described_by_how_many_samples_have_each_key() -> None:
    rows: list[dict[str, Any]] = [{"subject": "law", "tags": ["x"]}, {"subject": 3}, {"tags": "y"}]
    table = samples_to_table([MultipleChoiceSample.from_dict({**BASE, **row}) for row in rows])
    assert table.schema.field("extra").type == pa.string()  # mixed types: a JSON column
    tally = Tally()
    tally.add(table.slice(0, 1))
    tally.add(table.slice(1))
    assert tally.summary().extra == {
        "subject": "json (2 of 3 samples)",
        "tags": "json (2 of 3 samples)",
    }


def test_tables_with_different_extra_types_are_refused() -> None:
    sample = {**BASE}
    tally = Tally()
    tally.add(samples_to_table([MultipleChoiceSample.from_dict({**sample, "ind": 1})]))
    other = samples_to_table([MultipleChoiceSample.from_dict({**sample, "ind": "1"})])
    with pytest.raises(
        ValueError, match=r"one extra type; expected struct<ind: int64>, got struct<ind: string>"
    ):
        tally.add(other)


def test_an_unknown_group_key_is_named_with_the_keys_there_are() -> None:
    sample = {**BASE}
    tally = Tally("topic")
    tally.add(samples_to_table([MultipleChoiceSample.from_dict({**sample, "subject": "law"})]))
    with pytest.raises(ValueError, match=r"group by 'topic': expected an extra key \('subject'\)"):
        tally.summary()


def test_an_empty_tally_summarises_nothing() -> None:
    summary = Tally().summary()
    assert (summary.samples, summary.rows_in, summary.choices, summary.groups) == (0, None, {}, {})
    assert json.dumps(summary.as_dict())  # still plain data


def test_an_empty_batch_changes_nothing() -> None:
    sample = MultipleChoiceSample.from_dict({**BASE, "answer_index": 1, "subject": "law"})
    table = samples_to_table([sample])
    tally = Tally()
    tally.add(table.slice(0, 0))
    tally.add(table)
    tally.add(table.slice(1, 0))
    assert tally.summary().as_dict() == summarize(table).as_dict()


def _texts(values: list[str], ind: int = 0) -> pa.Table:
    return samples_to_table(
        [
            MultipleChoiceSample.from_dict({**BASE, "ind": ind + n, "subject": value})
            for n, value in enumerate(values)
        ]
    )


@pytest.mark.parametrize(
    ("distinct", "said"),
    [
        (DISTINCT_TEXT, f"{DISTINCT_TEXT:,} distinct"),
        (DISTINCT_TEXT + 1, "more than 1,000 distinct"),
    ],
)
def test_a_text_key_is_counted_exactly_up_to_the_bound(distinct: int, said: str) -> None:
    values = [f"text {n % distinct}" for n in range(3 * DISTINCT_TEXT)]
    table = _texts(values)
    assert summarize(table).extra["subject"] == f"string ({said})"
    tally = Tally()
    for offset in range(0, table.num_rows, 700):  # the same, batch by batch
        tally.add(table.slice(offset, 700))
    assert tally.summary().extra == summarize(table).extra
    assert tally.summary().extra["ind"] == f"int64 ({3 * DISTINCT_TEXT:,} distinct)"  # exact


def test_past_the_bound_no_text_is_hashed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    tally = Tally()
    tally.add(_texts([f"long text {n}" for n in range(DISTINCT_TEXT + 1)]))
    hashed: list[int] = []
    unique = pc.unique

    def counting(values: Any, *args: Any, **kwargs: Any) -> Any:
        hashed.append(len(values))
        return unique(values, *args, **kwargs)

    monkeypatch.setattr(pc, "unique", counting)
    tally.add(_texts([f"more text {n}" for n in range(500)], ind=10_000))
    assert hashed and all(n <= 500 for n in hashed) and len(hashed) == 1  # "ind" only
    assert tally.summary().extra["subject"] == "string (more than 1,000 distinct)"
