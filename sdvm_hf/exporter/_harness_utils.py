"""lm-eval's helpers for the tasks of this export, written by ``sdvm_hf`` (``sdvm-hf export``).

This file is copied into every export as ``lm_eval/utils.py``, with the names its task files
use defined at its end; it imports nothing of ``sdvm_hf``. A task ``<task>_sdvm`` reads the
export's data through :func:`load_export`: the folder above this file while the data is there
(wherever the folder was moved), else the Hub repository the export was published to. A task
``<task>_clean`` reads the upstream dataset and leaves out the rows ``exclusions.json`` lists
by their position in their split (:func:`excluding`). An upstream function (HellaSwag's
``process_docs``, COPA's ``doc_to_text``, ...) is lm-eval's own, imported from the installed
``lm_eval`` when first called (:func:`upstream`), never copied.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FOLDER = HERE.parent
REPO_ID: str | None = None
"""The Hub dataset repository the export was published to (``--repo-id``), if named."""


def load_export(sdvm_hf_config: str, **_: Any) -> Any:
    """The export's configuration ``sdvm_hf_config`` as a ``DatasetDict``.

    lm-eval's ``custom_dataset``: it is called with the task's metadata too, ignored here.
    """
    import datasets

    if (FOLDER / "README.md").is_file() and (FOLDER / sdvm_hf_config).is_dir():
        return datasets.load_dataset(str(FOLDER), sdvm_hf_config)
    if REPO_ID is not None:
        return datasets.load_dataset(REPO_ID, sdvm_hf_config)
    raise FileNotFoundError(
        f"{FOLDER / sdvm_hf_config}: the export's data is not beside its lm_eval folder "
        f"{HERE}, and the export names no Hub repository (sdvm-hf export --repo-id ORG/NAME)"
    )


def upstream(name: str) -> Callable[..., Any]:
    """lm-eval's own function ``name``, imported when first called.

    ``name`` is its module and name: ``lm_eval.tasks.hellaswag.utils.process_docs``.
    """
    module, _, attribute = name.rpartition(".")

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), attribute)(*args, **kwargs)

    call.__name__ = call.__qualname__ = attribute
    return call


@cache
def exclusions() -> dict[str, dict[str, list[int]]]:
    """``exclusions.json``: per upstream task and split, the positions of the rows left out."""
    path = HERE / "exclusions.json"
    if not path.is_file():
        return {}
    found: dict[str, dict[str, list[int]]] = json.loads(path.read_text(encoding="utf-8"))
    return found


def excluding(task: str, then: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    """A ``process_docs`` that leaves out the rows of ``task``'s exclusion list, then ``then``."""

    def process_docs(dataset: Any) -> Any:
        if dataset.split is None:
            raise ValueError(f"{task}_clean: a dataset with no split name; cannot find its rows")
        left_out = set(exclusions().get(task, {}).get(str(dataset.split), []))
        if left_out:
            dataset = dataset.filter(lambda _, row: row not in left_out, with_indices=True)
        return dataset if then is None else then(dataset)

    return process_docs
