import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sdvm_hf import read_parquet
from sdvm_hf.arrow.sequence import samples_to_table
from sdvm_hf.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


def test_convert_the_bundled_slice_prints_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "hellaswag.parquet"
    assert main(["convert", "hellaswag", "--bundled", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert (
        "rows in:      296" in printed
        and "samples out:  296" in printed
        and "rejects:      0" in printed
    )
    assert "answer position (4 choices): 0: 23%, 1: 26%, 2: 30%, 3: 21%" in printed
    assert len(read_parquet(out)) == 296


def test_convert_with_skip_writes_rejects_beside_the_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pro.jsonl"
    code = main(
        [
            "convert",
            "mmlu",
            "--data-files",
            str(FIXTURES / "mmlu" / "mmlu_pro.parquet"),
            "--on-error",
            "skip",
            "-o",
            str(out),
            "--json",
        ]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["rows_in"], summary["samples"]) == (8, 7)
    assert summary["rejects"] == {"options: too_few_choices": 1}  # the stable category
    assert summary["choices"] == {"2": 1, "9": 1, "10": 5}
    assert len(out.read_text().splitlines()) == 7
    (reject,) = [
        json.loads(line) for line in (tmp_path / "pro.rejects.jsonl").read_text().splitlines()
    ]
    assert (
        reject["row"] == 6
        and reject["column"] == "options"
        and len(reject["original"]["options"]) == 1
    )


def test_convert_stops_at_a_bad_row_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "convert",
            "mmlu",
            "--data-files",
            str(FIXTURES / "mmlu" / "mmlu_pro.parquet"),
            "-o",
            str(tmp_path / "x.parquet"),
        ]
    )
    assert code == 2
    assert (
        "sdvm-hf convert: mmlu-pro test row 6, column 'options': expected at least two choices"
        in capsys.readouterr().err
    )
    assert not (tmp_path / "x.parquet").exists()


def test_convert_generic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "arc.jsonl"
    source.write_text(
        '{"question": "Which is a metal?", "A": "iron", "B": "wood", "answerKey": "A", "id": "q1"}\n'
    )
    out = tmp_path / "arc.parquet"
    args = [
        "convert",
        "generic",
        "--data-files",
        str(source),
        "--context",
        "question",
        "--choices",
        "A",
        "B",
        "--answer",
        "answerKey",
        "--answer-format",
        "letter",
        "-o",
        str(out),
    ]
    assert main(args) == 0
    (sample,) = read_parquet(out)
    assert (
        sample.choices == ["iron", "wood"] and sample.extra == {"id": "q1"} and sample.style == "qa"
    )


GENERIC_AS_PRESETS = [
    (
        "arc",
        "arc/ARC-Challenge-test.parquet",
        "--context question --choices choices.text --answer answerKey --answer-format label "
        "--labels choices.label --keep choices.label",
    ),
    (
        "social_i_qa",
        "social_i_qa/default-validation.parquet",
        "--context context question --choices answerA answerB answerC --answer label "
        "--answer-format one_based --keep context question label --rename context=situation",
    ),
    (
        "winogrande",
        "winogrande/winogrande_xl-validation.parquet",
        "--context sentence --blank _ --choices option1 option2 --answer answer "
        "--answer-format one_based --keep sentence option1 option2 answer --style continuation",
    ),
    (
        "truthfulqa",
        "truthfulqa/multiple_choice-validation.parquet",
        "--context question --choices mc1_targets.choices --answer mc1_targets.labels "
        "--answer-format one_hot",
    ),
    (
        "sciq",
        "sciq/default-validation.parquet",
        "--context question --choices distractor1 distractor2 distractor3 correct_answer "
        "--answer correct_answer --answer-format text",
    ),
    (
        "copa",
        "copa/copa-validation.parquet",
        "--context premise --choices choice1 choice2 --answer label",
    ),
]


@pytest.mark.parametrize(("name", "file", "flags"), GENERIC_AS_PRESETS)
def test_convert_generic_says_what_each_preset_says(
    name: str, file: str, flags: str, tmp_path: Path
) -> None:
    out = {kind: tmp_path / f"{kind}.parquet" for kind in ("generic", "preset")}
    source = ["--data-files", str(FIXTURES / file), "--split", "validation"]
    assert main(["convert", "generic", *source, *flags.split(), "-o", str(out["generic"])]) == 0
    assert main(["convert", name, *source, "-o", str(out["preset"])]) == 0
    generic, preset = (pq.read_table(path) for path in out.values())
    assert generic.equals(preset) and generic.num_rows > 0


def test_convert_generic_drops_and_unnests(tmp_path: Path) -> None:
    out = tmp_path / "aux.parquet"
    fixture = str(FIXTURES / "mmlu" / "auxiliary_train.parquet")
    args = ["convert", "generic", "--data-files", fixture, "--unnest", "train", "--drop", "subject"]
    flags = ["--context", "question", "--choices", "choices", "--answer", "answer"]
    assert main([*args, *flags, "-o", str(out)]) == 0
    samples = read_parquet(out)
    assert len(samples) > 0 and all(s.extra == {} for s in samples)


def test_convert_generic_refuses_a_rename_without_a_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = str(FIXTURES / "social_i_qa" / "default-validation.parquet")
    args = ["convert", "generic", "--data-files", fixture, "--context", "context", "question"]
    flags = ["--choices", "answerA", "answerB", "--answer", "label", "--rename", "context"]
    assert main([*args, *flags, "-o", str(tmp_path / "x.parquet")]) != 0
    assert "--rename takes COLUMN=KEY, got 'context'" in capsys.readouterr().err


def test_inspect_summarises_classes_choices_positions_extra_and_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sdvm_hf import MultipleChoiceQuestionAnswerSample, write_parquet

    samples = [
        MultipleChoiceQuestionAnswerSample(
            context=f"Q{i}?",
            choices=["a", "b", "c"][: 2 + i % 2],
            answer_index=i % 2,
            extra={"subject": "s"},
            audit={"complete": i % 3 == 0, "score": 0.5},
        )
        for i in range(6)
    ]
    path = tmp_path / "audited.parquet"
    write_parquet(samples, path)
    assert main(["inspect", str(path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["samples"] == 6
    assert summary["by_class"] == {"MultipleChoiceQuestionAnswerSample": 6}
    assert summary["by_style"] == {"qa": 6}
    assert summary["choices"] == {"2": 3, "3": 3}
    assert summary["answer_positions"] == {"2": {"0": 3}, "3": {"1": 3}}
    assert summary["extra"] == {"subject": "string (1 distinct)"}
    assert summary["verdicts"] == {"audit": {"complete": {"false": 4, "true": 2}}}


def test_validate_accepts_a_good_file_and_lists_the_problems_of_a_bad_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.parquet"
    assert main(["convert", "mmlu", "--bundled", "-o", str(good)]) == 0
    capsys.readouterr()
    assert main(["validate", str(good)]) == 0
    assert "285 valid samples" in capsys.readouterr().out
    table = read_parquet(good).table
    bad_answers = pa.array([9, *table.column("answer_index").to_pylist()[1:]], pa.int64())
    pq.write_table(table.set_column(4, "answer_index", bad_answers), tmp_path / "bad.parquet")
    assert main(["validate", str(tmp_path / "bad.parquet")]) == 1
    out = capsys.readouterr().out
    assert (
        "1 problems in 285 rows" in out
        and "row 0, column 'answer_index': expected 0..3 for 4 choices, got 9" in out
    )


def test_validate_jsonl_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "wire.jsonl"
    path.write_text(
        '{"task_type": "multiple_choice", "context": "Q?", "choices": ["a"], "answer_index": 0}\n'
    )
    assert main(["validate", str(path)]) == 1
    assert "line 1:" in capsys.readouterr().out


def test_validate_a_file_that_is_not_a_sample_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(FIXTURES / "mmlu" / "cais_test.parquet")]) == 2
    assert "is not a sample table: missing column 'task_type'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["convert", "inspect", "validate", "audit", "fix", "refine"])
def test_every_subcommand_has_help_with_an_example(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert f"sdvm-hf {command}" in capsys.readouterr().out.split("example")[-1]


def test_python_dash_m_runs_the_command(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sdvm_hf", "inspect", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (
        done.returncode == 0
        and "summarise a sample file" not in done.stderr
        and "sdvm-hf inspect" in done.stdout
    )


def test_an_empty_sample_list_makes_an_empty_sample_table() -> None:
    table = samples_to_table([])
    assert table.num_rows == 0 and table.schema.field("extra").type == pa.string()
