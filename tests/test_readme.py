import os
import re
from pathlib import Path

import pytest

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


def test_the_first_python_example_runs_as_pasted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = re.search(r"```python\n(.*?)```", README, re.S)
    assert first is not None
    assert README[: first.end()].count("\n") <= 30, (
        "the runnable example must sit in the first 30 lines"
    )
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(compile(first.group(1), "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    assert "'task_type': 'multiple_choice'" in capsys.readouterr().out
