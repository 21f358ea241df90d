"""Filters and options that cannot silently do nothing."""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sdvm_hf import LayoutError, load, load_hellaswag, load_mmlu, stream
from sdvm_hf.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
CAIS = FIXTURES / "mmlu" / "cais_test.parquet"


@pytest.mark.parametrize("streaming", [False, True])
def test_an_unknown_subject_is_an_error_listing_the_subjects_seen(streaming: bool) -> None:
    with pytest.raises(
        ValueError,
        match=r"mmlu: no row has subject='astronomyy'; subject values seen: astronomy, virology",
    ):
        list((stream if streaming else load)("mmlu", "astronomyy", data_files=CAIS))


def test_the_command_exits_non_zero_on_an_unknown_subject(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["convert", "mmlu", "--subject", "astronomyy", "--data-files", str(CAIS)]
    assert main([*argv, "-o", str(tmp_path / "out.parquet")]) == 2
    assert "no row has subject='astronomyy'" in capsys.readouterr().err
    assert not (tmp_path / "out.parquet").exists()


def test_a_subject_filter_on_a_source_without_subjects_is_an_error() -> None:
    with pytest.raises(
        LayoutError, match=r"mmlu: the source has no 'subject' column, so subject='biology'"
    ):
        load_mmlu("biology", data_files=FIXTURES / "mmlu" / "mmlu_pro.parquet")


def test_a_subject_keeps_its_rows_and_their_row_numbers_in_the_file(tmp_path: Path) -> None:
    table = pq.read_table(CAIS)
    answers = table.column("answer").to_pylist()
    answers[8] = 7  # a virology row, the third of its subject
    path = tmp_path / "mmlu.parquet"
    pq.write_table(table.set_column(3, "answer", pa.array(answers, pa.int64())), path)
    virology = load_mmlu("virology", data_files=path, on_error="skip")
    assert len(virology) == 5 and {s.extra["subject"] for s in virology} == {"virology"}
    assert [r.row for r in virology.rejects] == [8]
    with pytest.raises(ValueError, match=r"mmlu test row 8, column 'answer'"):
        load_mmlu("virology", data_files=path)
    streamed = stream("mmlu", "virology", data_files=path, on_error="skip")
    assert len(list(streamed)) == 5 and [r.row for r in streamed.rejects] == [8]


def test_bundled_with_data_files_is_refused() -> None:
    with pytest.raises(ValueError, match=r"give bundled=True or data_files, not both"):
        load_hellaswag(bundled=True, data_files=FIXTURES / "hellaswag" / "validation.parquet")
