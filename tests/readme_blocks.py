"""Run the code blocks of a README as a reader would: in order, in one folder, as written.

A block is a fenced ``python`` or ``sh`` block. The line before its fence may hold a marker,
an HTML comment a reader does not see rendered:

- ``<!-- test: skip (why) -->``: not run (the install and test commands, which CI runs);
- ``<!-- test: needs MODULE -->``: run only when ``MODULE`` imports (``torch``, ``sdvm``, ``ray``);
- ``<!-- test: hub -->``: run with the Hub ids served by the local Hub-layout fixture
  (``SDVM_HF_HUB_MIRROR``);
- ``<!-- test: service -->``: run against the local SDVM stand-in (``SDVM_BASE_URL``).

Python blocks share one namespace; shell blocks run with ``bash -eo pipefail``. The folder
has ``.venv``, ``recipes`` and ``tests`` linked in, so ``.venv/bin/sdvm-hf``,
``recipes/x.py`` and the fixtures' paths run as written from a checkout.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FENCE = re.compile(
    r"(?:<!-- test: (?P<marker>[^>]*?) -->\n)?```(?P<lang>python|sh)\n(?P<code>.*?)```", re.S
)


@dataclass(frozen=True)
class Block:
    """One fenced block: where it starts, its language, its marker and its code."""

    line: int
    lang: str
    marker: str
    code: str

    def skip_reason(self, available: set[str]) -> str | None:
        """Why this block is not run here (``None`` when it runs)."""
        if self.marker.startswith("skip"):
            return self.marker
        if self.marker.startswith("needs "):
            module = self.marker.removeprefix("needs ").strip()
            if importlib.util.find_spec(module) is None:
                return f"{module} is not installed"
        if self.marker in ("hub", "service") and self.marker not in available:
            return f"no {self.marker} stand-in here"
        return None


def blocks(text: str) -> list[Block]:
    """Every python and sh block of ``text``, in order."""
    return [
        Block(
            line=text[: match.start("code")].count("\n"),
            lang=match["lang"],
            marker=(match["marker"] or "").strip(),
            code=match["code"],
        )
        for match in FENCE.finditer(text)
    ]


class BlockFailed(AssertionError):
    """A README block did not run as written."""


def run_blocks(
    text: str,
    folder: Path,
    root: Path,
    env: dict[str, str] | None = None,
    available: set[str] = frozenset(),  # type: ignore[assignment]
    name: str = "README.md",
) -> list[tuple[Block, str]]:
    """Run every block of ``text`` in ``folder``; return the blocks skipped and why.

    Raises :class:`BlockFailed` naming the file (``name``) and line of the first block that fails.
    """
    for shared in ("recipes", "tests"):
        link = folder / shared
        if not link.exists():
            link.symlink_to(root / shared)
    venv = folder / ".venv"
    if not venv.exists():
        venv.symlink_to(Path(sys.prefix))
    environment = {**os.environ, **(env or {})}
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment['PATH']}"
    namespace: dict[str, Any] = {"__name__": "__readme__"}
    skipped = []
    cwd = os.getcwd()
    saved = {key: os.environ.get(key) for key in environment}
    os.chdir(folder)
    os.environ.update(environment)
    try:
        for block in blocks(text):
            reason = block.skip_reason(set(available))
            if reason is not None:
                skipped.append((block, reason))
                continue
            _run(block, namespace, environment, name)
    finally:
        os.chdir(cwd)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return skipped


def _run(block: Block, namespace: dict[str, Any], environment: dict[str, str], name: str) -> None:
    if block.lang == "python":
        try:
            exec(compile(block.code, f"{name}:{block.line + 1}", "exec"), namespace)
        except BaseException as error:
            raise BlockFailed(f"{name} line {block.line + 1}: {error!r}") from error
        return
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", block.code],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if done.returncode != 0:
        raise BlockFailed(
            f"{name} line {block.line + 1}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        )
