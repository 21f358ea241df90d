"""The front door: the top level holds what a user of the first page needs, and no more."""

import importlib
import inspect
from pathlib import Path

import pytest

import sdvm_hf

ROOT = Path(__file__).parent.parent
DOCS = "\n".join(
    path.read_text(encoding="utf-8") for path in [ROOT / "README.md", *ROOT.glob("docs/*.md")]
)

TOP_LEVEL = [
    "PRESETS",
    "Conversion",
    "ConversionError",
    "LayoutError",
    "MultipleChoiceCompletionSample",
    "MultipleChoiceMapping",
    "MultipleChoiceQuestionAnswerSample",
    "MultipleChoiceSample",
    "Preset",
    "Problem",
    "Reject",
    "Rejects",
    "SampleSequence",
    "SampleTableError",
    "StreamingSamples",
    "Summary",
    "export",
    "load",
    "load_hellaswag",
    "load_mmlu",
    "read_jsonl",
    "read_parquet",
    "read_samples",
    "render_requests",
    "shuffle_choices",
    "stream",
    "summarize",
    "write_jsonl",
    "write_parquet",
    "write_samples",
]
"""Pinned: a name joins the top level by a change to this list, never by accident."""

NAMESPACES = [
    "sdvm_hf.engines",
    "sdvm_hf.files",
    "sdvm_hf.jobs",
    "sdvm_hf.service",
    "sdvm_hf.exporter",
    "sdvm_hf.formulations",
    "sdvm_hf.record",
    "sdvm_hf.training",
    "sdvm_hf.verdicts",
]


def test_the_top_level_is_pinned_and_small() -> None:
    assert sdvm_hf.__all__ == TOP_LEVEL
    assert len(sdvm_hf.__all__) <= 30


def test_all_lists_exactly_the_public_names() -> None:
    public = {name for name in vars(sdvm_hf) if not name.startswith("_")}
    modules = {name for name in public if inspect.ismodule(getattr(sdvm_hf, name))}
    assert sorted(public - modules) == sorted(sdvm_hf.__all__)


def test_load_is_a_function_not_shadowed_by_a_subpackage() -> None:
    assert inspect.isfunction(sdvm_hf.load)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("sdvm_hf.load")


def test_every_exported_name_is_documented() -> None:
    missing = [name for name in sdvm_hf.__all__ if f"`{name}" not in DOCS]
    assert missing == []


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_each_namespace_declares_what_it_exports(namespace: str) -> None:
    module = importlib.import_module(namespace)
    assert module.__all__
    assert all(hasattr(module, name) for name in module.__all__)
