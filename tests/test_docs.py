"""The command reference in docs/cli.md is what the parsers say, and the docs link to it."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_docs_cli_md_is_generated_from_the_parsers() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_cli_docs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_the_readme_links_every_page_of_the_docs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pages = sorted(path.name for path in (ROOT / "docs").glob("*.md"))
    assert [page for page in pages if f"docs/{page}" not in readme] == []


def test_the_readme_stays_a_first_page() -> None:
    assert (ROOT / "README.md").read_text(encoding="utf-8").count("\n") <= 150


def test_docs_api_md_is_generated_from_the_docstrings() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_api_docs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
