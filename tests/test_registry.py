"""A new dataset is one new file plus one registry line: the loader, command and recipes find it."""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tiny_preset

from sdvm_hf import PRESETS, MultipleChoiceQuestionAnswerSample, load, read_parquet
from sdvm_hf.cli import main

ROOT = Path(__file__).parent.parent


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setitem(PRESETS, "tiny", tiny_preset.PRESET)  # the one registry line
    rows = {
        "prompt": ["Is water wet?", "Is fire cold?", "Is ice hot?"],
        "yes": ["yes"] * 3,
        "no": ["no"] * 3,
        "gold": ["yes", "no", "maybe"],
        "id": [1, 2, 3],
    }
    path = tmp_path / "tiny.parquet"
    pq.write_table(pa.table(rows), path)
    return path


def test_a_registered_preset_loads_through_the_loader(tiny: Path) -> None:
    samples = load(PRESETS["tiny"], data_files=tiny, on_error="skip")
    assert [(s.context, s.answer_index, s.extra) for s in samples] == [
        ("Is water wet?", 0, {"id": 1}),
        ("Is fire cold?", 1, {"id": 2}),
    ]
    assert all(type(s) is MultipleChoiceQuestionAnswerSample for s in samples)
    assert [(r.row, r.column) for r in samples.rejects] == [(2, "gold")]


def test_a_registered_preset_converts_through_the_command(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.parquet"
    argv = ["convert", "tiny", "--data-files", str(tiny), "--on-error", "skip", "-o", str(out)]
    assert main(argv) == 0
    assert "rows in:      3" in capsys.readouterr().out
    assert len(read_parquet(out)) == 2 and (tmp_path / "out.rejects.jsonl").exists()


def test_a_registered_preset_runs_through_a_recipe(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "recipes"))
    monkeypatch.chdir(tmp_path)
    import _recipe

    samples = _recipe.run("tiny", ["--data-files", str(tiny)])
    assert len(samples) == 2 and len(samples.rejects) == 1
    assert len(read_parquet(tmp_path / "out" / "tiny-test.parquet")) == 2


def test_a_registered_preset_lends_its_conventions_to_the_service_commands(
    tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    assert "tiny" in capsys.readouterr().out
