"""Issue #27, point 8: ``inspect`` and ``report`` are linear in a row's extra keys."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from sdvm_hf import load_hellaswag
from sdvm_hf.cli import main
from sdvm_hf.files import read_samples, write_parquet

pytestmark = pytest.mark.slow  # scale and subprocess checks: the full run, not the one-minute loop

KEYS = 20_000


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One HellaSwag row with 20,000 extra keys (about 300 KB), as JSON Lines and Parquet."""
    folder = tmp_path_factory.mktemp("wide")
    row = load_hellaswag(bundled=True)[0].to_dict()
    row.update({f"key_{n}": n for n in range(KEYS)})
    lines = folder / "wide.jsonl"
    lines.write_text(json.dumps(row) + "\n", encoding="utf-8")
    parquet = folder / "wide.parquet"
    write_parquet(read_samples(lines), parquet)
    return {"jsonl": lines, "parquet": parquet}


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("command", ["inspect", "report"])
def test_a_row_with_20000_extra_keys_takes_seconds(
    wide: dict[str, Path],
    kind: str,
    command: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = [command, str(wide[kind])]
    if command == "report":
        args += ["-o", str(tmp_path / "wide.html")]
    start = time.perf_counter()
    assert main(args) == 0
    took = time.perf_counter() - start
    assert took < 20, f"{command} of {kind}: {took:.1f}s (was over 120 s before)"
    if command == "inspect":
        assert "key_19999" in capsys.readouterr().out
