"""The round trip's column-wise join against its per-row rules, on random and corrupted answers.

The column-wise check (:func:`checked_columns`) may pass a batch only when the per-row rules
(:func:`join_rows`, each answer decoded into a sample) pass it too, and must then give the
very columns they give; it passes every batch they pass but for a few forms no JSON answer
has (a tuple, a mapping that is not a dict) or that it leaves to them on purpose (an
integral float answer, a missing style, a block whose text opens many brackets). Whatever
it says, :func:`join` gives what the per-row rules give: the same columns or the same error.
No stand-in and no SDK needed (but for the last test, which compares with the SDK's types).
"""

from __future__ import annotations

import json
import math
import sys
import types
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest
from helpers import exact
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from strategies import json_objects, samples

from sdvm_hf import load_hellaswag, load_mmlu
from sdvm_hf.arrow._codec import changeable_columns, json_text
from sdvm_hf.arrow.sequence import SampleSequence, concatenate_samples, samples_to_table
from sdvm_hf.service import ServiceError
from sdvm_hf.service._join import (
    MAX_BRACKETS,
    Sent,
    by_row,
    checked_columns,
    join,
    join_rows,
    row_key,
    wire_batch,
)

STAGES = ("audit", "fix", "refine")


def _audited(table: pa.Table) -> pa.Table:
    """``table`` with an audit block on every other row (a file audited before)."""
    texts = [json_text({"grammar": i % 3 == 0}) if i % 2 else None for i in range(len(table))]
    return table.set_column(table.schema.get_field_index("audit"), "audit", pa.array(texts))


def _tables() -> dict[str, pa.Table]:
    hellaswag = load_hellaswag(bundled=True).table.slice(0, 12)
    mmlu = load_mmlu("astronomy", bundled=True).table.slice(0, 12)
    mixed = concatenate_samples(SampleSequence(hellaswag.slice(0, 6)), SampleSequence(mmlu))
    return {
        "hellaswag": hellaswag,
        "mmlu": mmlu,
        "mixed extras": mixed.table,  # a struct extra with extra_missing
        "audited before": _audited(hellaswag),
    }


TABLES = _tables()


def sent_of(table: pa.Table, start: int = 40) -> Sent:
    return wire_batch(table, start, row_key(table.schema.field("extra").type))


def answered(sent: Sent, stage: str, draw: st.DrawFn) -> list[dict[str, Any]]:
    """Well-formed answers to ``sent``, through JSON as the SDK hands them over."""
    out = []
    for item in sent.wire:
        answer = dict(item)
        if stage in ("audit", "refine"):
            answer["audit"] = draw(json_objects)
        if stage in ("fix", "refine"):
            if draw(st.booleans()):
                answer["context"] = draw(st.text(min_size=1).filter(str.strip))
            if draw(st.booleans()):
                answer["choices"] = draw(st.lists(st.text(), min_size=2, max_size=5))
            answer["answer_index"] = draw(st.integers(0, len(answer["choices"]) - 1))
            answer["fix"] = draw(json_objects)
        if stage == "refine":
            answer["reaudit"] = draw(st.none() | json_objects)
        out.append(answer)
    back: list[dict[str, Any]] = json.loads(json.dumps(out))
    return back


def _nested(depth: int) -> dict[str, Any]:
    """A block of ``depth`` nested objects (the block itself the first)."""
    block: dict[str, Any] = {}
    for _ in range(depth - 1):
        block = {"in": block}
    return block


Corruption = Callable[[dict[str, Any], dict[str, Any]], None]
"""Change an answer in place, given the wire dict it answers."""


def _set(key: str, value: Any) -> Corruption:
    return lambda answer, sent: answer.__setitem__(key, value)


def _drop(key: str) -> Corruption:
    return lambda answer, sent: answer.pop(key, None)


def _extra_key(answer: dict[str, Any], sent: dict[str, Any]) -> str | None:
    reserved = {"task_type", "context", "choices", "answer_index", "style", "audit", "fix"}
    keys = [k for k in sent if k not in reserved | {"reaudit"} and not k.startswith("sdvm_hf_")]
    return keys[0] if keys else None


def _extra(change: Callable[[Any], Any]) -> Corruption:
    def corrupt(answer: dict[str, Any], sent: dict[str, Any]) -> None:
        key = _extra_key(answer, sent)
        if key is not None:
            answer[key] = change(answer[key])

    return corrupt


def _other_style(answer: dict[str, Any], sent: dict[str, Any]) -> None:
    answer["style"] = "qa" if sent["style"] == "continuation" else "continuation"


def _first_choice(value: Any) -> Corruption:
    def corrupt(answer: dict[str, Any], sent: dict[str, Any]) -> None:
        answer["choices"] = [value, *answer["choices"][1:]]

    return corrupt


CORRUPTIONS: dict[str, Corruption] = {
    "context empty": _set("context", ""),
    "context blank": _set("context", " \t\n"),
    "context only a file separator": _set("context", "\x1c"),  # str.isspace() is true
    "context not a str": _set("context", 7),
    "context null": _set("context", None),
    "context missing": _drop("context"),
    "context with a lone surrogate": _set("context", "a \ud800 b"),
    "context changed": _set("context", "Another context."),
    "choices one": _set("choices", ["only"]),
    "choices none": _set("choices", []),
    "choices a str": _set("choices", "ab"),
    "choices null": _set("choices", None),
    "choices missing": _drop("choices"),
    "a choice not a str": _first_choice(3),
    "a choice null": _first_choice(None),
    "a choice with a lone surrogate": _first_choice("\udfff"),
    "choices changed": _set("choices", ["one", "two"]),
    "answer a bool": _set("answer_index", True),
    "answer a non-integral float": _set("answer_index", 0.5),
    "answer negative": _set("answer_index", -1),
    "answer out of range": _set("answer_index", 99),
    "answer huge": _set("answer_index", 2**70),
    "answer a str": _set("answer_index", "1"),
    "answer null": _set("answer_index", None),
    "answer missing": _drop("answer_index"),
    "answer changed": lambda a, s: a.__setitem__("answer_index", (a["answer_index"] + 1) % 2),
    "style the other": _other_style,
    "style unknown": _set("style", "essay"),
    "style null": _set("style", None),
    "task type other": _set("task_type", "text"),
    "task type missing": _drop("task_type"),
    "extra key added": _set("stub_added", True),
    "extra key removed": lambda a, s: a.pop(_extra_key(a, s) or "", None),
    "extra value changed": _extra(lambda value: [value]),
    "extra value of another type, equal": _extra(lambda v: float(v) if type(v) is int else v),
    "block a str": _set("audit", "passed"),
    "block a list": _set("audit", [1, 2]),
    "block null": _set("audit", None),
    "block with NaN": _set("audit", {"score": math.nan}),
    "block with infinity": _set("fix", {"score": -math.inf}),
    "block with a lone surrogate": _set("audit", {"note": "\ud83d"}),
    "block with a lone surrogate key": _set("audit", {"\udc00": 1}),
    "block with an int key": _set("audit", {1: True}),
    "block with a tuple": _set("reaudit", {"changes": ("a", "b")}),
    "block with a set": _set("audit", {"changes": {"a"}}),
    "block nested 32 deep": _set("audit", _nested(32)),
    "block nested 33 deep": _set("audit", _nested(33)),
}
LENIENT: dict[str, Corruption] = {
    "answer an integral float": lambda a, s: a.__setitem__("answer_index", a["answer_index"] * 1.0),
    "choices a tuple": lambda a, s: a.__setitem__("choices", tuple(a["choices"])),
    "style missing": _drop("style"),
    "block a mapping proxy": _set("audit", types.MappingProxyType({"grammar": True})),
    "block with brackets in its text": _set("audit", {"note": "[" * (MAX_BRACKETS + 1)}),
}
"""Answers the per-row rules pass that the column-wise check leaves to them."""


@st.composite
def batches(draw: st.DrawFn) -> tuple[Sent, list[dict[str, Any]], str, list[str]]:
    """A batch sent, its answers (some corrupted), the stage, and the corruptions made."""
    if draw(st.booleans()):
        table = TABLES[draw(st.sampled_from(sorted(TABLES)))]
    else:
        table = samples_to_table(draw(st.lists(samples(), min_size=1, max_size=4)))
    try:
        sent = sent_of(table)
    except ServiceError:  # a JSON extra holding the row key: its own test below
        reject()
    stage = draw(st.sampled_from(STAGES))
    answers = answered(sent, stage, draw)
    every = sorted({**CORRUPTIONS, **LENIENT})
    drawn = draw(st.lists(st.sampled_from(every), max_size=draw(st.sampled_from([0, 1, 1, 3]))))
    names = []
    for name in drawn:
        row = draw(st.integers(0, len(answers) - 1))
        changed = dict(answers[row])  # corruptions set or drop top-level keys only
        try:  # a corruption that reads a field an earlier one removed or nulled is not made
            {**CORRUPTIONS, **LENIENT}[name](changed, sent.wire[row])
        except (KeyError, TypeError, IndexError):
            continue
        answers[row] = changed
        names.append(name)
    if any(_most_brackets(answer) > MAX_BRACKETS for answer in answers):
        names.append("block with brackets in its text")  # drawn text may hold them too
    return sent, answers, stage, names


def _most_brackets(answer: dict[str, Any]) -> int:
    """The most lists and objects a block's JSON text opens, counting those inside strings."""
    most = 0
    for key in ("audit", "fix", "reaudit"):
        block = answer.get(key)
        if isinstance(block, dict):
            try:
                text = json.dumps(block)
            except (TypeError, ValueError):  # a corrupted block: not JSON at all
                continue
            most = max(most, text.count("[") + text.count("{"))
    return most


def outcome(make: Callable[[], dict[str, pa.Array]]) -> tuple[str, Any]:
    try:
        columns = make()
    except ServiceError as error:
        return "refused", str(error)
    return "joined", {name: (array.type, array.to_pylist()) for name, array in columns.items()}


def _exact_columns(columns: dict[str, pa.Array]) -> dict[str, tuple[pa.DataType, str]]:
    return {name: (array.type, exact(array.to_pylist())) for name, array in columns.items()}


@pytest.mark.slow  # the one-minute loop leaves it to the full run
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches())
def test_the_column_wise_check_passes_only_what_the_per_row_rules_pass(
    batch: tuple[Sent, list[dict[str, Any]], str, list[str]],
) -> None:
    sent, answers, stage, names = batch
    fast = checked_columns(sent, answers, stage)  # type: ignore[arg-type]
    try:
        reference = changeable_columns(join_rows(sent, answers, "batch 0", stage))  # type: ignore[arg-type]
    except ServiceError:
        reference = None
    if fast is not None:
        assert reference is not None, f"passed what the per-row rules refuse: {names}"
        assert _exact_columns(fast) == _exact_columns(reference)
    if not set(names) & set(LENIENT):
        assert (fast is None) == (reference is None), names
    assert outcome(lambda: join(sent, answers, "batch 0", stage)) == outcome(  # type: ignore[arg-type]
        lambda: changeable_columns(join_rows(sent, answers, "batch 0", stage))  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
@pytest.mark.parametrize("stage", STAGES)
def test_each_corruption_gets_the_per_row_verdict(name: str, stage: str) -> None:
    sent = sent_of(TABLES["mixed extras"])
    answers = [{**item, "audit": {"grammar": True}, "fix": {"changes": []}} for item in sent.wire]
    answers = json.loads(json.dumps(answers))
    CORRUPTIONS[name](answers[3], sent.wire[3])
    fast = checked_columns(sent, answers, stage)  # type: ignore[arg-type]
    try:
        join_rows(sent, answers, "batch 0", stage)  # type: ignore[arg-type]
    except ServiceError as error:
        assert fast is None
        with pytest.raises(ServiceError) as caught:
            join(sent, answers, "batch 0", stage)  # type: ignore[arg-type]
        assert str(caught.value) == str(error)
        assert str(error).startswith(f"batch 0: malformed response: row {sent.start + 3}")
    else:
        assert fast is not None


@pytest.mark.parametrize("name", sorted(LENIENT))
@pytest.mark.parametrize("stage", STAGES)
def test_what_the_column_wise_check_leaves_to_the_per_row_rules_is_joined_alike(
    name: str, stage: str
) -> None:
    sent = sent_of(TABLES["audited before"])
    answers = [{**item, "audit": {"grammar": True}, "fix": {"changes": []}} for item in sent.wire]
    answers = json.loads(json.dumps(answers))
    LENIENT[name](answers[3], sent.wire[3])
    expected = changeable_columns(join_rows(sent, answers, "batch 0", stage))  # type: ignore[arg-type]
    assert _exact_columns(join(sent, answers, "batch 0", stage)) == _exact_columns(expected)  # type: ignore[arg-type]


def test_the_faults_of_the_stand_in_are_refused_with_the_per_row_message() -> None:
    sent = sent_of(TABLES["hellaswag"], start=100)
    answers = [{**item, "audit": {"grammar": True}} for item in sent.wire]
    answers[0]["audit"] = "passed"
    with pytest.raises(
        ServiceError, match=r"row 100: [\s\S]*audit must be a dict, got str 'passed'"
    ):
        join(sent, answers, "batch 1 (rows 100..111)", "audit")
    answers[0]["audit"] = {"grammar": True}
    answers[0]["context"] += " Edited."
    with pytest.raises(
        ServiceError,
        match=r"^batch 1 \(rows 100..111\): malformed response: row 100 came back with its "
        r"context changed \(an audit only rates; fix or refine change samples\); ",
    ):
        join(sent, answers, "batch 1 (rows 100..111)", "audit")


# -- the way out: wire dicts built from columns -------------------------------------------------


@pytest.mark.slow  # the one-minute loop leaves it to the full run
@settings(max_examples=200, deadline=None)
@given(st.lists(samples(), min_size=1, max_size=5), st.integers(0, 10**6))
def test_the_wire_dicts_are_each_samples_own_with_its_row_id(batch: list[Any], start: int) -> None:
    table = samples_to_table(batch)
    key = row_key(table.schema.field("extra").type)
    if any(key in sample.extra for sample in batch):  # a JSON extra: its keys are not a type's
        with pytest.raises(ServiceError, match="extra already has the key 'sdvm_hf_row'"):
            wire_batch(table, start, key)
        return
    sent = wire_batch(table, start, key)
    for row, (sample, item) in enumerate(zip(SampleSequence(table), sent.wire, strict=True)):
        wire = sample.to_dict()
        blocks = {name: wire.pop(name) for name in ("audit", "fix", "reaudit") if name in wire}
        assert exact(item) == exact({**wire, key: start + row, **blocks})
        assert exact(sent.extras[row]) == exact(dict(sample.extra))
    assert sent.styles == [sample.style for sample in batch]


@pytest.mark.parametrize("name", sorted(TABLES))
def test_the_wire_dicts_of_real_tables(name: str) -> None:
    table = TABLES[name]
    sent = sent_of(table, start=7)
    for row, (sample, item) in enumerate(zip(SampleSequence(table), sent.wire, strict=True)):
        wire = sample.to_dict()
        blocks = {key: wire.pop(key) for key in ("audit", "fix", "reaudit") if key in wire}
        assert exact(item) == exact({**wire, sent.key: 7 + row, **blocks})


def test_a_json_extra_already_holding_the_row_key_is_refused() -> None:
    table = samples_to_table(load_hellaswag(bundled=True)[:3])
    extras = [json.dumps({"sdvm_hf_row": 1, "x": [1]}), json.dumps({"x": 1}), json.dumps({})]
    table = table.set_column(table.schema.get_field_index("extra"), "extra", pa.array(extras))
    with pytest.raises(ServiceError, match=r"^row 5: extra already has the key 'sdvm_hf_row'$"):
        wire_batch(table, 5, "sdvm_hf_row")


def test_answers_of_the_wrong_shape_are_named() -> None:
    sent = sent_of(TABLES["hellaswag"], start=0)
    answers: list[Any] = [dict(item) for item in sent.wire]
    with pytest.raises(ServiceError, match="malformed response: sent 12 samples, got 11"):
        by_row(sent, answers[1:], "batch 0")
    with pytest.raises(ServiceError, match="malformed response: sent 12 samples, got dict"):
        by_row(sent, {"data": answers}, "batch 0")
    with pytest.raises(ServiceError, match=r"an answer that is not a wire sample \(str\)"):
        by_row(sent, ["x", *answers[1:]], "batch 0")
    with pytest.raises(ServiceError, match=r"a sample without a row id of its own \(True\)"):
        by_row(sent, [{**answers[0], sent.key: True}, *answers[1:]], "batch 0")
    with pytest.raises(ServiceError, match="row 11 did not come back"):
        by_row(sent, [*answers[:11], {**answers[11], sent.key: 12}], "batch 0")
    assert by_row(sent, answers[::-1], "batch 0") == answers  # in the order sent


@pytest.mark.skipif(sys.version_info < (3, 12), reason="the sdvm SDK needs Python >= 3.12")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches())
def test_every_answer_the_sdks_sample_types_refuse_is_refused(
    batch: tuple[Sent, list[dict[str, Any]], str, list[str]],
) -> None:
    """The requests go through the SDK's low-level client: its sample types no longer see the
    answers, so the join must refuse all they would."""
    sdvm_types = pytest.importorskip("sdvm.types")
    sent, answers, stage, _ = batch
    try:
        for answer in answers:
            sdvm_types.DataSample.from_dict(answer)
    except (KeyError, TypeError, ValueError, AttributeError):
        with pytest.raises(ServiceError):
            join(sent, answers, "batch 0", stage)  # type: ignore[arg-type]
