"""The rules checked otherwise than line for line: SciQ and COPA on published rows, the
OLMES-shaped rules no dump checks, a template of one's own, and the lm-eval hook's contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdvm_hf import load
from sdvm_hf.formulations import Template, render_requests

FIXTURES = Path(__file__).parent / "fixtures" / "olmes"


def expected(folder: Path) -> list[str]:
    return (folder / "requests.jsonl").read_text(encoding="utf-8").splitlines()


def hellaswag_samples() -> Any:
    folder = FIXTURES / "hellaswag" / "rc_0shot"
    return load("hellaswag", None, "validation", data_files=str(folder / "rows.parquet"))


# -- SciQ and COPA: their rules on the published rows themselves ------------------------------


def test_sciq_rules_give_the_dumps_documents() -> None:
    rows = json.loads((FIXTURES / "sciq" / "rc_0shot" / "rows.json").read_text())
    lines = [r.line() for r in render_requests(rows, "olmes-rc", dataset="sciq")]
    assert lines == expected(FIXTURES / "sciq" / "rc_0shot")
    mc = list(render_requests(rows, "olmes-mc", dataset="sciq"))
    for request, line in zip(mc, expected(FIXTURES / "sciq" / "mc_5shot"), strict=True):
        want = json.loads(line)  # its 5 shots are drawn from a train split not in the wheel
        assert request.doc == want["doc"]
        assert want["request"]["context"].endswith("\n\n" + request.context)
        assert (request.continuation, request.label) == (
            want["request"]["continuation"],
            want["label"],
        )


def test_copa_joins_premise_and_choice_with_because_or_therefore() -> None:
    rows = json.loads((FIXTURES / "copa_rows.json").read_text())
    assert rows[0]["premise"] == "The man turned on the faucet." and rows[0]["question"] == "effect"
    requests = list(render_requests(rows, "olmes-rc", dataset="copa"))
    assert [(r.context, r.continuation) for r in requests[:2]] == [
        ("The man turned on the faucet therefore", " the toilet filled with water."),
        ("The man turned on the faucet therefore", " water flowed from the spout."),
    ]
    assert requests[0].label == rows[0]["label"] and requests[0].native_id == rows[0]["idx"]
    cause = next(row for row in rows if row["question"] == "cause")
    causes = [r for r in requests if r.doc["id"] == cause["idx"]]
    assert causes[0].context == cause["premise"][:-1] + " because"


UNVERIFIED = [  # OLMES-style rules with no dump to check them against: their shapes
    ("swag", "regular", "validation", "swag/regular-validation.parquet", "{context}", ""),
    (
        "truthfulqa",
        "multiple_choice",
        "validation",
        "truthfulqa/multiple_choice-validation.parquet",
        "Question: {context}",
        "\nAnswer:",
    ),
    (
        "mmlu",
        "astronomy",
        "test",
        "mmlu/cais_test.parquet",
        "The following are multiple choice questions (with answers) about astronomy.\n\n"
        "Question: {context}",
        "\nAnswer:",
    ),
]


@pytest.mark.parametrize(("dataset", "config", "split", "file", "stem", "tail"), UNVERIFIED)
def test_the_rules_no_dump_checks_render_in_the_olmes_shapes(
    dataset: str, config: str, split: str, file: str, stem: str, tail: str
) -> None:
    samples = load(dataset, config, split, data_files=str(FIXTURES.parent / file))
    rc = [r for r in render_requests(samples, "olmes-rc") if not r.unconditional]
    mc = list(render_requests(samples, "olmes-mc"))
    assert len(rc) == len(mc) == sum(len(sample.choices) for sample in samples)
    at = 0
    for doc_id, sample in enumerate(samples):
        query = stem.format(context=sample.context.strip())
        mine = rc[at : at + len(sample.choices)]
        assert [(r.context, r.continuation) for r in mine] == [
            (query + tail, " " + choice) for choice in sample.choices
        ]
        letters = mc[at : at + len(sample.choices)]
        assert letters[0].context.startswith(query + "\n") and letters[0].context.endswith(
            f"\n {'ABCDEFGH'[len(sample.choices) - 1]}. {sample.choices[-1]}\nAnswer:"
        )
        assert {(r.doc_id, r.label) for r in mine + letters} == {(doc_id, sample.answer_index)}
        at += len(sample.choices)


# -- a template of one's own ------------------------------------------------------------------


def test_a_template_renders_rows_of_ones_own() -> None:
    rows = [{"q": "2+2?", "options": ["4", "5", "6"], "answer": 0, "key": "q1"}]
    template = Template(
        lambda row: ("Question: " + row["q"], row["options"], row["answer"]),
        task_name="sums",
        native_id="key",
    )
    rc = list(render_requests(rows, "olmes-rc", dataset="sums", template=template))
    assert [(r.context, r.continuation) for r in rc] == [
        ("Question: 2+2?\nAnswer:", " 4"),
        ("Question: 2+2?\nAnswer:", " 5"),
        ("Question: 2+2?\nAnswer:", " 6"),
    ]
    mc = list(render_requests(rows, "olmes-mc", dataset="sums", template=template))
    assert mc[0].context == "Question: 2+2?\n A. 4\n B. 5\n C. 6\nAnswer:"
    assert [r.continuation for r in mc] == [" A", " B", " C"]
    assert {(r.task_name, r.native_id, r.label) for r in mc} == {("sums:mc", "q1", 0)}


def test_a_fix_the_layout_cannot_express_renders_as_export_publishes_it() -> None:
    from sdvm_hf import load_hellaswag

    samples = list(load_hellaswag("validation[:40]", bundled=True))
    both = next(i for i, s in enumerate(samples) if s.extra["ctx_b"])  # two context parts
    fixed = [
        s.model_copy(update={"context": "Meanwhile, " + s.context.upper()}) if i == both else s
        for i, s in enumerate(samples)
    ]
    before = [
        r for r in render_requests(samples, "olmes-rc", dataset="hellaswag") if r.doc_id == both
    ]
    after = [r for r in render_requests(fixed, "olmes-rc", dataset="hellaswag") if r.doc_id == both]
    assert [r.context for r in after] == [r.context for r in before]  # the row as it was
    one = [
        s.model_copy(update={"context": s.context + " then"}) if i == both else s
        for i, s in enumerate(samples)
    ]
    changed = [r for r in render_requests(one, "olmes-rc", dataset="hellaswag") if r.doc_id == both]
    assert changed[0].context.endswith(" then")  # one part changed: the fixed text renders


def test_lm_eval_names_each_mmlu_rows_own_task_and_refuses_generation_tasks(
    tmp_path: Path,
) -> None:
    from sdvm_hf import load_mmlu
    from sdvm_hf.formulations import RenderError, write_requests

    requests = list(render_requests(load_mmlu(bundled=True), "lm-eval"))  # config 'all'
    tasks = {r.task_name for r in requests}
    assert len(tasks) > 1 and all(t.startswith("mmlu_") for t in tasks)
    fixture = Path(__file__).parent / "fixtures" / "mmlu" / "mmlu_pro.parquet"
    pro = load("mmlu", split="test", data_files=fixture, on_error="skip")
    with pytest.raises(RenderError, match=r"lm-eval's mmlu_pro_\w+ generates its answer"):
        write_requests(pro, tmp_path / "pro", "lm-eval")
    assert not (tmp_path / "pro").exists()  # a failed render leaves no empty folder


def test_an_output_that_is_a_file_and_a_mapping_without_a_template_are_named(
    tmp_path: Path,
) -> None:
    from sdvm_hf import MultipleChoiceMapping
    from sdvm_hf.formulations import RenderError, write_requests

    (tmp_path / "file").write_text("x")
    with pytest.raises(RenderError, match=r"file exists and is not a folder"):
        write_requests(hellaswag_samples(), tmp_path / "file", "olmes-rc")
    source = tmp_path / "mine.jsonl"
    source.write_text(json.dumps({"q": "2+2?", "a": "4", "b": "5", "label": 0}) + "\n")
    mapping = MultipleChoiceMapping(dataset="mine", context="q", choices=("a", "b"), answer="label")
    with pytest.raises(RenderError, match=r"^mine: a mapping of one's own has no olmes-rc rule"):
        list(render_requests(load(mapping, data_files=str(source)), "olmes-rc"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["[title]", "[", "]", ".", " ", "\n", "a", "B"])).map("".join))
def test_hellaswag_cleaning_is_ai2_s_two_substitutions(text: str) -> None:
    import re

    from sdvm_hf.formulations.olmes import hellaswag_clean

    reference = re.sub(r"\[.*?\]", "", re.sub(r"\.? \[title\]", ". ", text.strip()))
    assert hellaswag_clean(text) == reference.replace("  ", " ")
