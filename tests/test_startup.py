"""Start-up: ``sdvm-hf --help`` and ``import sdvm_hf`` import no heavy module (issue #19, point 3).

Each rule runs in a fresh interpreter: in this one, other tests have imported everything.
"""

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from sdvm_hf.cli import _names
from sdvm_hf.cli.main import main

HEAVY = {"pyarrow", "pydantic", "datasets"}


def _imported_after(code: str) -> set[str]:
    """The top-level modules a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport sys\nprint(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return set(done.stdout.split())


def test_building_the_parser_imports_no_pyarrow_pydantic_or_datasets() -> None:
    imported = _imported_after("from sdvm_hf.cli.main import parser; parser()")
    assert "sdvm_hf" in imported
    assert HEAVY & imported == set()


@pytest.mark.parametrize(
    "command",
    [[], ["convert"], ["inspect"], ["validate"], ["report"], ["diff"], ["audit"], ["export"]],
)
def test_help_imports_no_pyarrow_pydantic_or_datasets(command: list[str]) -> None:
    code = (
        "import contextlib, io\n"
        "from sdvm_hf.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    try:\n"
        f"        main({[*command, '--help']!r})\n"
        "    except SystemExit as done:\n"
        "        assert done.code == 0, done.code\n"
        "assert 'usage: sdvm-hf' in out.getvalue()"
    )
    assert HEAVY & _imported_after(code) == set()


def test_import_sdvm_hf_imports_only_what_a_name_needs() -> None:
    assert HEAVY & _imported_after("import sdvm_hf") == set()
    loading = _imported_after("import sdvm_hf; sdvm_hf.load; sdvm_hf.write_parquet")
    assert "pyarrow" in loading
    # the cold path builds no sample object: the pydantic models wait for the first one
    assert "pydantic" not in loading
    assert {"datasets", "ray", "torch", "pandas", "huggingface_hub"} & loading == set()
    # the readers of other formats and the writers' temporary files wait for their first use
    assert {"tempfile", "gzip", "bz2", "lzma", "shutil"} & loading == set()
    readers = _imported_after(
        "import sys, sdvm_hf; sdvm_hf.load; sdvm_hf.write_parquet\n"
        "print(' '.join(m.replace('.', '_') for m in sys.modules if m.startswith('pyarrow.')))"
    )
    assert {"pyarrow_csv", "pyarrow_json"} & readers == set()
    modules = _imported_after(
        "import sys, sdvm_hf; sdvm_hf.load; sdvm_hf.write_parquet\n"
        "print(' '.join(m.replace('.', '_') for m in sys.modules if m.startswith('sdvm_hf.')))"
    )
    assert {"sdvm_hf_exporter", "sdvm_hf_service", "sdvm_hf_report", "sdvm_hf_render"} & (
        modules
    ) == set()


def test_training_code_and_streams_import_no_torch() -> None:
    """torch stays optional: looked up in ``sys.modules``, used only when the caller has it."""
    optional = {"torch", "transformers", "tokenizers"}
    assert optional & _imported_after("import sdvm_hf.training") == set()
    code = "from sdvm_hf import stream\nassert sum(1 for _ in stream('hellaswag', bundled=True))"
    assert optional & _imported_after(code) == set()


def test_the_parser_data_is_the_modules_data() -> None:
    from sdvm_hf.convert._answers import ANSWER_FORMATS
    from sdvm_hf.exporter import POLICIES
    from sdvm_hf.files import FORMATS
    from sdvm_hf.presets.registry import PRESETS
    from sdvm_hf.service import MAX_BATCH
    from sdvm_hf.service.roundtrip import STAGES
    from sdvm_hf.summary import EXAMPLES, TOP_GROUPS

    assert tuple(PRESETS) == _names.PRESET_NAMES == _names.preset_names()
    assert _names.ANSWER_FORMATS == ANSWER_FORMATS
    assert _names.FORMATS == FORMATS
    assert (_names.TOP_GROUPS, _names.EXAMPLES) == (TOP_GROUPS, EXAMPLES)
    assert (_names.STAGES, _names.MAX_BATCH) == (STAGES, MAX_BATCH)
    assert _names.POLICIES == POLICIES


def test_version_is_read_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"sdvm-hf {version('sdvm-hf')}\n"


def test_the_lazy_top_level_still_answers_every_name() -> None:
    import sdvm_hf

    assert sdvm_hf.__version__ == version("sdvm-hf")
    assert set(sdvm_hf.__all__) <= set(dir(sdvm_hf))
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        sdvm_hf.nonexistent  # noqa: B018
    code = "from sdvm_hf import load_mmlu, summarize; print(load_mmlu.__module__, summarize)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("sdvm_hf.presets.mmlu ")


def test_a_load_written_to_parquet_builds_no_sample_model(tmp_path: Path) -> None:
    """The cold path stays in Arrow: pydantic is imported with the first sample object."""
    out = tmp_path / "out.parquet"
    code = (
        "from sdvm_hf import load_hellaswag, stream, write_parquet\n"
        f"write_parquet(load_hellaswag(bundled=True), {str(out)!r})\n"
        f"write_parquet(stream('hellaswag', bundled=True), {str(out)!r})"
    )
    assert "pydantic" not in _imported_after(code)
    assert "pydantic" in _imported_after(code + "\nnext(iter(load_hellaswag(bundled=True)))")
