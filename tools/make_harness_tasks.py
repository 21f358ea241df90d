"""Rebuild sdvm_hf/exporter/lm_eval_tasks.json from the installed lm-evaluation-harness.

The export writes, for each configuration it publishes, a copy of the upstream lm-eval task
that reads it (``hellaswag_sdvm``, ``mmlu_astronomy_sdvm``, ...). The copies are built from
this file: each upstream task's YAML with its ``include:`` chain merged (as lm-eval merges
it), and each ``!function`` named by the module lm-eval installs it as
(``{"!function": "lm_eval.tasks.hellaswag.utils.process_docs"}``), so the generated
``utils.py`` imports lm-eval's own function instead of copying it. Run from the repository
root with lm_eval installed (``pip install -e '.[dev]'``); the tests check the file against
the installed lm_eval.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

OUT = Path(__file__).parent.parent / "sdvm_hf" / "exporter" / "lm_eval_tasks.json"

SINGLE = {
    "hellaswag": "hellaswag/hellaswag.yaml",
    "arc_easy": "arc/arc_easy.yaml",
    "arc_challenge": "arc/arc_challenge.yaml",
    "openbookqa": "openbookqa/openbookqa.yaml",
    "commonsense_qa": "commonsense_qa/default.yaml",
    "piqa": "piqa/piqa.yaml",
    "social_iqa": "siqa/siqa.yaml",
    "winogrande": "winogrande/default.yaml",
    "swag": "swag/swag.yaml",
    "truthfulqa_mc1": "truthfulqa/truthfulqa_mc1.yaml",
    "truthfulqa_mc2": "truthfulqa/truthfulqa_mc2.yaml",
    "sciq": "sciq/sciq.yaml",
    "copa": "super_glue/copa/default.yaml",
}
"""The upstream task of each preset's configuration, by its YAML under ``lm_eval/tasks``."""
FAMILIES = ("mmlu/default/mmlu_*.yaml", "mmlu_pro/mmlu_pro_*.yaml")
"""MMLU's 57 subject tasks and MMLU-Pro's 14 category tasks."""


def tasks_root() -> Path:
    """The installed ``lm_eval/tasks`` folder."""
    import lm_eval.tasks

    return Path(lm_eval.tasks.__file__).parent


def load(path: Path, root: Path) -> dict[str, Any]:
    """The YAML at ``path`` with its includes merged, each ``!function`` named by module."""

    class Loader(yaml.SafeLoader):  # type: ignore[misc]
        pass

    def function(loader: yaml.SafeLoader, node: yaml.Node) -> dict[str, str]:
        spec = str(loader.construct_scalar(node))
        folder = path.parent.relative_to(root).parts
        return {"!function": ".".join(("lm_eval", "tasks", *folder, spec))}

    Loader.add_constructor("!function", function)
    config = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)
    includes = config.pop("include", None)
    merged: dict[str, Any] = {}
    for include in (
        [] if includes is None else [includes] if isinstance(includes, str) else includes
    ):
        merged.update(load(path.parent / include, root))
    merged.update(config)
    return dict(merged)


def build() -> dict[str, Any]:
    """Every upstream task the export copies, by name."""
    root = tasks_root()
    paths = {name: root / relative for name, relative in SINGLE.items()}
    for pattern in FAMILIES:
        for path in sorted(root.glob(pattern)):
            paths[path.stem] = path
    tasks = {}
    for name, path in paths.items():
        config = load(path, root)
        if config.get("task") != name:
            raise SystemExit(f"{path} defines task {config.get('task')!r}, not {name!r}")
        tasks[name] = config
    return {"lm_eval": version("lm_eval"), "tasks": tasks}


if __name__ == "__main__":
    OUT.write_text(json.dumps(build(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    sys.stdout.write(f"wrote {OUT}\n")
