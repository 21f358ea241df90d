"""shuffle_choices: the answer text stays the correct one, reproducibly, and the position
table shows the bias before and after; rows whose choices refer to each other stay put."""

from pathlib import Path

import pyarrow as pa
import pytest

from sdvm_hf import MultipleChoiceSample, load_mmlu, read_samples, summarize, write_parquet
from sdvm_hf.arrow.sequence import samples_to_table
from sdvm_hf.cli import main
from sdvm_hf.report import build_report, report_html
from sdvm_hf.shuffle import ORDER_KEY, refers_to_other_choices, shuffle_choices, shuffle_table


def first_is_right(
    count: int, extra: dict[str, object] | None = None
) -> list[MultipleChoiceSample]:
    """Like TruthfulQA's published order: the correct answer first in every row."""
    return [
        MultipleChoiceSample(
            context=f"Question {i}?",
            choices=[f"right {i}", f"wrong {i}", f"false {i}", f"no {i}"],
            answer_index=0,
            style="qa",
            extra=extra if extra is not None else {"n": i},
        )
        for i in range(count)
    ]


def assert_same_questions(
    before: list[MultipleChoiceSample], after: list[MultipleChoiceSample]
) -> None:
    assert len(before) == len(after)
    for old, new in zip(before, after, strict=True):
        assert new.context == old.context
        assert new.choices[new.answer_index] == old.choices[old.answer_index]  # still the answer
        order = new.extra[ORDER_KEY]
        if order is None:
            assert new.choices == old.choices and new.answer_index == old.answer_index
        else:
            assert [old.choices[i] for i in order] == new.choices  # the order leads back
            assert sorted(order) == list(range(len(old.choices)))
        assert {k: v for k, v in new.extra.items() if k != ORDER_KEY} == old.extra


@pytest.mark.parametrize("extra", [None, {"tags": ["x"], "n": None}], ids=["struct", "json"])
def test_the_answer_text_stays_the_correct_one(extra: dict[str, object] | None) -> None:
    samples = first_is_right(200, extra)
    shuffled = shuffle_choices(samples, seed=11)
    assert_same_questions(samples, list(shuffled))
    assert len({s.answer_index for s in shuffled}) == 4  # the answers moved


def test_bundled_mmlu_keeps_every_answer() -> None:
    samples = load_mmlu(bundled=True)
    assert_same_questions(list(samples), list(shuffle_choices(samples, seed=0)))


def test_the_same_seed_gives_the_same_order_whatever_the_batches() -> None:
    table = samples_to_table(first_is_right(100))
    once, _ = shuffle_table(table, 5)
    assert once.equals(shuffle_table(table, 5)[0])
    pieces = [shuffle_table(table.slice(start, 30), 5)[0] for start in range(0, 100, 30)]
    assert pa.concat_tables(pieces).equals(once)
    other, _ = shuffle_table(table, 6)
    assert not other.equals(once)


def test_shuffling_twice_still_leads_back_to_the_first_order() -> None:
    samples = first_is_right(30)
    twice = shuffle_choices(shuffle_choices(samples, seed=1), seed=2)
    assert_same_questions(samples, list(twice))


def test_rows_whose_choices_refer_to_each_other_stay_in_place_and_are_counted() -> None:
    samples = first_is_right(40)
    samples[3] = samples[3].model_copy(
        update={"choices": ["red", "blue", "green", "All of the above"], "answer_index": 3}
    )
    samples[7] = samples[7].model_copy(update={"choices": ["a", "b", "both a and b", "neither"]})
    table, kept = shuffle_table(samples_to_table(samples), 9)
    assert kept == 2
    shuffled = read_back(table)
    for row in (3, 7):
        assert shuffled[row].choices == samples[row].choices
        assert shuffled[row].extra[ORDER_KEY] is None
    summary = summarize(table)
    assert summary.left_in_place == 2
    assert summary.positions_before == {4: {0: 39, 1: 0, 2: 0, 3: 1}}
    assert sum(summary.positions[4].values()) == 40


def read_back(table: pa.Table) -> list[MultipleChoiceSample]:
    from sdvm_hf import SampleSequence

    return list(SampleSequence(table))


@pytest.mark.parametrize(
    ("choices", "refers"),
    [
        (["red", "All of the above"], True),
        (["red", "none of these"], True),
        (["x", "Both A and B"], True),
        (["x", "A, B and C"], True),
        (["x", "(a) and (c)"], True),
        (["x", "answers a and b"], True),
        (["a cat and a dog", "above the clouds"], False),
        (["I and II only", "III only"], False),  # statements of the question, not choices
        (["both hands", "either way"], False),
    ],
)
def test_choices_that_refer_to_each_other(choices: list[str], refers: bool) -> None:
    assert refers_to_other_choices(choices) is refers


def test_the_position_bias_is_gone_and_the_summary_shows_before_and_after(tmp_path: Path) -> None:
    samples = first_is_right(400)
    assert summarize(samples_to_table(samples)).bias[4].biased
    path = tmp_path / "shuffled.parquet"
    write_parquet(shuffle_choices(samples, seed=3), path)
    report = build_report(path)
    summary = report.summary
    assert summary.positions_before == {4: {0: 400, 1: 0, 2: 0, 3: 0}}
    assert not summary.bias[4].biased and summary.left_in_place == 0
    assert "  before the shuffle (4 choices): 0: 100%, 1: 0%, 2: 0%, 3: 0%" in summary.lines()
    html = report_html(report)
    assert "shuffle-note" in html and "before shuffle" in html


def test_a_seed_must_be_an_int() -> None:
    with pytest.raises(TypeError, match=r"shuffle seed: expected an int, got bool True"):
        shuffle_choices(first_is_right(2), seed=True)


def test_convert_shuffles_with_a_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain, shuffled = tmp_path / "plain.parquet", tmp_path / "shuffled.parquet"
    assert main(["convert", "mmlu", "--bundled", "-o", str(plain), "--quiet"]) == 0
    args = [
        "convert",
        "mmlu",
        "--bundled",
        "-o",
        str(shuffled),
        "--quiet",
        "--shuffle-choices",
        "4",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "before the shuffle (4 choices)" in out
    assert_same_questions(list(read_samples(plain)), list(read_samples(shuffled)))
    again = tmp_path / "again.parquet"
    assert main([*args[:4], str(again), *args[5:]]) == 0
    assert read_samples(again).table.equals(read_samples(shuffled).table)


def test_a_letter_that_spells_the_answer_in_extra_follows_it_when_the_choices_move() -> None:
    from pathlib import Path

    from sdvm_hf import load, shuffle_choices

    pro = Path(__file__).parent / "fixtures" / "mmlu" / "mmlu_pro.parquet"
    samples = load("mmlu", split="test", data_files=pro, on_error="skip")
    assert all(s.extra["answer"] == "ABCDEFGHIJ"[s.answer_index] for s in samples)
    shuffled = shuffle_choices(samples, 3)
    moved = [s for s, t in zip(samples, shuffled, strict=True) if s.answer_index != t.answer_index]
    assert moved  # the answer moved in some rows, and its letter with it in every row
    assert all(s.extra["answer"] == "ABCDEFGHIJ"[s.answer_index] for s in shuffled)
