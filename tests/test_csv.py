"""CSV sources are read exactly, or refused naming the file."""

import csv
from pathlib import Path

import pytest

from sdvm_hf import MultipleChoiceMapping, load, load_mmlu, stream

MAPPING = MultipleChoiceMapping(
    dataset="exam",
    context="question",
    choices=("A", "B", "C", "D"),
    answer="answer",
    answer_format="letter",
)


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(rows)
    return path


def multiline_rows(n: int) -> list[list[str]]:
    return [
        [
            f'Question {i}, with a comma\nand a "quoted" second line',
            f"a{i}\nb",
            "B, b",
            "C",
            "D",
            "ABCD"[i % 4],
        ]
        for i in range(n)
    ]


@pytest.mark.parametrize("streaming", [False, True])
def test_quoted_line_breaks_load_exactly_in_a_file_larger_than_a_block(
    tmp_path: Path, streaming: bool
) -> None:
    rows = multiline_rows(20_000)
    path = write_csv(tmp_path / "big_test.csv", rows)
    assert path.stat().st_size > 1 << 20  # pyarrow reads in 1 MiB blocks
    samples = list((stream if streaming else load)("mmlu", data_files=path, split="test"))
    assert [(s.context, list(s.choices), s.answer_index) for s in samples] == [
        (r[0], r[1:5], "ABCD".index(r[5])) for r in rows
    ]


@pytest.mark.parametrize("streaming", [False, True])
def test_a_row_longer_than_a_block_is_read_whole_among_short_ones(
    tmp_path: Path, streaming: bool
) -> None:
    rows = multiline_rows(30_000)  # over 1 MiB before the long row, and after it
    rows[15_000][0] = "a long question, " * 200_000  # 3.4 MB: pyarrow's blocks are 1 MiB
    path = write_csv(tmp_path / "long_test.csv", rows)
    samples = (stream if streaming else load)("mmlu", data_files=path, split="test")
    assert [(s.context, list(s.choices), s.answer_index) for s in samples] == [
        (r[0], r[1:5], "ABCD".index(r[5])) for r in rows
    ]


def test_a_headerless_file_whose_first_answer_is_a_letter_is_still_headerless(
    tmp_path: Path,
) -> None:
    rows = [["What is first?", "A", "B", "C", "D", "A"], ["Then?", "w", "x", "y", "z", "B"]]
    path = write_csv(tmp_path / "letters_dev.csv", rows)
    samples = load_mmlu(data_files=path, split="dev")
    assert [s.context for s in samples] == ["What is first?", "Then?"]
    assert samples[0].extra == {"subject": "letters"}


def test_a_header_row_of_known_column_names_is_a_header(tmp_path: Path) -> None:
    rows = [["question", "A", "B", "C", "D", "answer"], ["Q?", "a", "b", "c", "d", "C"]]
    samples = load_mmlu(data_files=write_csv(tmp_path / "x.csv", rows), split="test")
    assert [(s.context, s.answer_index) for s in samples] == [("Q?", 2)]


def test_a_generic_csv_always_has_a_header(tmp_path: Path) -> None:
    rows = [["question", "A", "B", "C", "D", "answer", "id"], ["Q?", "a", "b", "c", "d", "B", "01"]]
    samples = load(MAPPING, data_files=write_csv(tmp_path / "g.csv", rows))
    assert samples[0].extra == {"id": "01"}  # text stays text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", r"bad\.csv: the CSV file is empty"),
        ("Qu\xe9stion,A,B,C,D,A\n".encode("latin-1"), r"bad\.csv: not UTF-8 text"),
        (
            ("q,a,b,c,d,A\n" * 5_000 + "Qu\xe9,a,b,c,d,A\n").encode("latin-1"),
            r"bad\.csv: .*invalid UTF8",
        ),
        (
            b"q1,a,b,c,d,A\nq2,a,b,c,d,A,extra,more\n",
            r"bad\.csv: CSV parse error: Expected 6 columns, got 8",
        ),
    ],
    ids=["empty", "latin-1 first line", "latin-1 later", "ragged"],
)
@pytest.mark.parametrize("streaming", [False, True])
def test_unreadable_csv_is_refused_naming_the_file(
    tmp_path: Path, content: bytes, message: str, streaming: bool
) -> None:
    (tmp_path / "bad.csv").write_bytes(content)
    with pytest.raises(ValueError, match=message):
        list((stream if streaming else load)("mmlu", data_files=tmp_path / "bad.csv", split="test"))
