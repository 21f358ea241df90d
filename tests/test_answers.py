"""One table of answer formats: each format's decode, both encodes and its text agree."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdvm_hf.convert._answers import ANSWER_FORMATS, SPELLINGS, expected_answer


def test_every_answer_format_has_one_spelling() -> None:
    assert tuple(SPELLINGS) == ANSWER_FORMATS


ROWS = st.lists(
    st.integers(2, 26).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n - 1))),
    min_size=1,
    max_size=8,
)


@pytest.mark.parametrize("name", ANSWER_FORMATS)
@given(rows=ROWS)
def test_what_a_format_writes_it_reads_back_by_row_and_by_table(
    name: str, rows: list[tuple[int, int]]
) -> None:
    spelling = SPELLINGS[name]
    choices = [[f"c{i}" for i in range(n)] for n, _ in rows]
    labels = [[f"L{i}" for i in range(n)] for n, _ in rows]
    index = pa.array([i for _, i in rows], pa.int64())
    by_table = spelling.array(index, pa.array(choices), pa.array(labels))
    by_row = [spelling.row(i, c, lab) for (_, i), c, lab in zip(rows, choices, labels, strict=True)]
    assert by_table is not None and by_table.to_pylist() == by_row
    decoded = spelling.decode(by_table, pa.array(choices), "col", pa.array(labels))
    assert decoded.to_pylist() == [i for _, i in rows]
    for value, (_, i) in zip(by_row, rows, strict=True):
        assert spelling.read(value) in (i, None)  # a kept answer is read back, or not at all


def test_the_expected_text_names_the_range() -> None:
    assert expected_answer(pa.string(), 4, "letter") == "a letter 'A'..'D'"
    assert expected_answer(pa.int64(), 3, "one_based") == "an index 1..3"
    assert expected_answer(pa.string(), 2, "index") == "'0'..'1'"


def test_a_kept_letter_is_one_letter() -> None:
    read = SPELLINGS["letter"].read
    assert (read("C"), read(" b "), read("AB"), read("")) == (2, 1, None, None)
