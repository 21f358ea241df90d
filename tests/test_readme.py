"""The README runs: every python and shell block, in order, offline, as a reader would paste it."""

import importlib.util
import re
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest
from readme_blocks import BlockFailed, blocks, run_blocks

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def stand_ins(stack: ExitStack) -> tuple[dict[str, str], set[str]]:
    """The environment and the stand-ins available here (the service needs the SDK)."""
    env = {"SDVM_HF_HUB_MIRROR": str(ROOT / "tests" / "fixtures" / "hub")}
    available = {"hub"}
    if sys.version_info >= (3, 12) and importlib.util.find_spec("sdvm") is not None:
        from service_stub import StubService

        stub = stack.enter_context(StubService())
        env.update({"SDVM_API_KEY": stub.key, "SDVM_BASE_URL": stub.url})
        available.add("service")
    return env, available


DOCS = sorted((ROOT / "docs").glob("*.md"))


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("page", [ROOT / "README.md", *DOCS], ids=lambda path: path.name)
def test_every_block_of_the_readme_and_docs_runs_as_written(page: Path, tmp_path: Path) -> None:
    with ExitStack() as stack:
        env, available = stand_ins(stack)
        text = page.read_text(encoding="utf-8")
        skipped = run_blocks(text, tmp_path, ROOT, env, available, page.name)
    for block, reason in skipped:  # only what a marker says, and only for its reason
        assert (
            reason == block.marker
            or block.marker.startswith("needs ")
            or block.marker
            in (
                "hub",
                "service",
            )
        )


def test_only_the_install_and_test_commands_are_never_run() -> None:
    never = [b for b in blocks(README) if b.marker.startswith("skip")]
    assert [b.code.split()[0] for b in never] == ["python3", ".venv/bin/ruff"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("```python\nprint(undefined_name)\n```\n", r"README.md line 2: NameError"),
        ("```python\nx = 1\n```\n\n```python\nassert x == 2\n```\n", r"line 6: AssertionError"),
        ("```sh\nsdvm-hf convert nonsense -o x.parquet\n```\n", r"line 2: exit 2"),
    ],
)
def test_a_broken_block_makes_the_readme_test_fail(text: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(BlockFailed, match=message):
        run_blocks(text, tmp_path, ROOT)


def test_the_first_python_example_sits_in_the_first_30_lines() -> None:
    first = re.search(r"```python\n", README)
    assert first is not None and README[: first.start()].count("\n") <= 30
