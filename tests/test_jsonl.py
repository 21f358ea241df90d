import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from sdvm_hf import (
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
    read_jsonl,
    write_jsonl,
)

SAMPLES = [
    MultipleChoiceCompletionSample(
        context="A man sits. he", choices=["a", "b"], answer_index=1, extra={"ind": 5}
    ),
    MultipleChoiceQuestionAnswerSample(
        context="¿Dónde?", choices=["aquí", "allí"], answer_index=0, audit={"ok": True}
    ),
]


def test_each_line_is_one_wire_dict_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "wire.jsonl"
    assert write_jsonl(SAMPLES, path) == 2
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [sample.to_dict() for sample in SAMPLES]
    assert "¿Dónde?" in lines[1]
    assert list(read_jsonl(path)) == SAMPLES


def test_a_service_response_file_reads_back_as_typed_samples(tmp_path: Path) -> None:
    path = tmp_path / "returned.jsonl"
    path.write_text(
        '{"task_type": "multiple_choice", "context": "Q?", "choices": ["a", "b"], "answer_index": 0, '
        '"style": "qa", "subject": "x", "audit": {"grammar": true}, "fix": null}\n\n',
        encoding="utf-8",
    )
    (sample,) = list(read_jsonl(path))
    assert type(sample) is MultipleChoiceQuestionAnswerSample
    assert (
        sample.extra == {"subject": "x"}
        and sample.audit == {"grammar": True}
        and sample.fix is None
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"bad.jsonl, line 2: Expecting property name"),
        (
            '{"task_type": "multiple_choice", "context": "", "choices": ["a", "b"], "answer_index": 0}',
            r"(?s)bad.jsonl, line 2: .*context must be a non-empty string",
        ),
    ],
)
def test_a_bad_line_names_the_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(SAMPLES[0].to_dict()) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_jsonl(path)


def test_a_failed_write_leaves_the_previous_file(tmp_path: Path) -> None:
    path = tmp_path / "wire.jsonl"
    write_jsonl(SAMPLES, path)

    def broken() -> Iterator[MultipleChoiceSample]:
        yield SAMPLES[0]
        raise RuntimeError("source died")

    with pytest.raises(RuntimeError, match="source died"):
        write_jsonl(broken(), path)
    assert list(read_jsonl(path)) == SAMPLES
    assert [p.name for p in tmp_path.iterdir()] == ["wire.jsonl"]
