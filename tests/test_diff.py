"""Word-level diffs of a sample before and after a stage, and ``sdvm-hf diff``."""

import itertools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdvm_hf import MultipleChoiceSample, write_parquet
from sdvm_hf.cli import main
from sdvm_hf.diff import diff_files, diff_samples, word_diff
from sdvm_hf.files import write_jsonl

WORDS = st.lists(st.sampled_from(["the", "cat", "dog", " ", "  ", ",", "sat", "Über", "."]))


@given(WORDS.map("".join), WORDS.map("".join))
def test_a_word_diff_holds_both_texts(before: str, after: str) -> None:
    pieces = word_diff(before, after)
    assert "".join(text for op, text in pieces if op != "ins") == before
    assert "".join(text for op, text in pieces if op != "del") == after
    assert all(text for _, text in pieces)
    assert all(a[0] != b[0] for a, b in itertools.pairwise(pieces))  # merged runs


def test_a_word_diff_changes_words_not_letters() -> None:
    assert word_diff("a big red dog", "a small blue dog") == [
        ("same", "a "),
        ("del", "big red"),
        ("ins", "small blue"),
        ("same", " dog"),
    ]
    assert word_diff("same", "same") == [("same", "same")]


def sample(i: int, **update: object) -> MultipleChoiceSample:
    base = MultipleChoiceSample(
        context=f"Question  {i} is here?",
        choices=["red", "green", "blue", "all of the above"],
        answer_index=i % 4,
        style="qa",
        extra={"n": i},
    )
    return base.model_copy(update=update)


def pairs() -> tuple[list[MultipleChoiceSample], list[MultipleChoiceSample]]:
    """Twelve rows; the stage changed rows 1 (context), 4 (a choice), 7 (the answer moved)."""
    before = [sample(i) for i in range(12)]
    after = []
    for i, old in enumerate(before):
        update: dict[str, object] = {
            "audit": {"ok": i % 3 != 0, "checks": {"grammatical": i != 1}},
            "fix": {"changes": [], "flagged": i == 9, "attempts": 1},
        }
        if i == 1:
            update["context"] = "Question 1 is there?"
            update["fix"] = {"changes": ["spaces"], "flagged": False, "attempts": 1}
            update["reaudit"] = {"ok": True, "checks": {"grammatical": True}}
        if i == 4:
            update["choices"] = ["red", "dark green", "blue", "all of the above"]
        if i == 7:
            update["answer_index"] = (old.answer_index + 1) % 4
        after.append(old.model_copy(update=update))
    return before, after


def test_diff_samples_names_the_context_choices_and_answer() -> None:
    before, after = pairs()
    context = diff_samples(before[1], after[1], 1)
    assert context.changed and context.choices == {} and not context.answer_moved
    assert context.context == [
        ("same", "Question"),
        ("del", "  "),
        ("ins", " "),
        ("same", "1 is "),
        ("del", "here"),
        ("ins", "there"),
        ("same", "?"),
    ]
    choice = diff_samples(before[4], after[4], 4)
    assert choice.context is None and list(choice.choices) == [1]
    assert "  choice B: {+dark +}green" in choice.lines()
    moved = diff_samples(before[7], after[7], 7)
    assert moved.answer_moved and 'answer: D "all of the above" -> A "red"' in moved.lines()[-1]
    assert not diff_samples(before[2], after[2]).changed


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_diff_files_keeps_the_rows_asked_for(tmp_path: Path, suffix: str) -> None:
    before, after = pairs()
    old, new = tmp_path / f"before{suffix}", tmp_path / f"after{suffix}"
    (write_parquet if suffix == ".parquet" else write_jsonl)(before, old)
    (write_parquet if suffix == ".parquet" else write_jsonl)(after, new)
    assert [d.row for d in diff_files(old, new)] == [1, 4, 7]
    assert [d.row for d in diff_files(old, new, limit=2)] == [1, 4]
    # the last verdict: row 1's reaudit passes although its audit failed
    assert [d.row for d in diff_files(old, new, only="failing")] == [0, 3, 6, 9]
    assert [d.row for d in diff_files(old, new, only="flagged")] == [9]
    assert len(list(diff_files(old, new, only="all"))) == 12


def test_diff_files_refuses_files_of_different_lengths(tmp_path: Path) -> None:
    before, after = pairs()
    write_parquet(before, tmp_path / "b.parquet")
    write_parquet(after[:10], tmp_path / "a.parquet")
    with pytest.raises(
        ValueError, match=r"as many rows .* got more in .*b\.parquet: .*a\.parquet ends at row 10"
    ):
        list(diff_files(tmp_path / "b.parquet", tmp_path / "a.parquet", only="all"))
    with pytest.raises(ValueError, match=r"diff limit: expected 0 or more, got -1"):
        list(diff_files(tmp_path / "b.parquet", tmp_path / "a.parquet", limit=-1))


def test_the_diff_command_prints_word_diffs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before, after = pairs()
    write_parquet(before, tmp_path / "b.parquet")
    write_parquet(after, tmp_path / "a.parquet")
    assert main(["diff", str(tmp_path / "b.parquet"), str(tmp_path / "a.parquet")]) == 0
    out = capsys.readouterr().out
    assert "row 1\n  context: Question[-  -]{+ +}1 is [-here-]{+there+}?" in out
    assert "row 4 (failing ok)\n  choice B: {+dark +}green" not in out  # 4 % 3 != 0
    assert "row 4\n  choice B: {+dark +}green" in out
    assert 'row 7\n  answer: D "all of the above" -> A "red"' in out
    assert out.endswith("\n3 changed rows shown\n")
    assert (
        main(
            ["diff", str(tmp_path / "b.parquet"), str(tmp_path / "a.parquet"), "--only", "flagged"]
        )
        == 0
    )
    assert capsys.readouterr().out.startswith("row 9 (failing ok, fix.flagged)")
    assert main(["diff", str(tmp_path / "b.parquet"), str(tmp_path / "nope.parquet")]) == 2
    assert "sdvm-hf diff: no such file:" in capsys.readouterr().err
