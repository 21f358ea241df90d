"""The render's two ways back to published rows give the same rows, whatever a fix changed.

Samples held as Arrow tables go back a batch at a time (``published_table``), the rows that
form cannot give exactly (a derived column to follow) one by one;
samples with no table go back one by one. Hypothesis changes real fixture rows as a fix
would (the answer, the context, a choice) and both ways must give the same rows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdvm_hf import load
from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.formulations._source import Source, open_source

FIX = Path(__file__).parent / "fixtures"

PRESET_FILES = {  # every preset, on fixture rows in its published layout
    "hellaswag": ("hellaswag", None, FIX / "hellaswag" / "validation.parquet"),
    "arc": ("arc", "ARC-Challenge", FIX / "arc" / "ARC-Challenge-test.parquet"),
    "openbookqa": ("openbookqa", "main", FIX / "openbookqa" / "main-test.parquet"),
    "commonsense_qa": (
        "commonsense_qa",
        None,
        FIX / "commonsense_qa" / "default-validation.parquet",
    ),
    "piqa": ("piqa", None, FIX / "piqa" / "default-validation.parquet"),
    "social_i_qa": ("social_i_qa", None, FIX / "social_i_qa" / "default-validation.parquet"),
    "winogrande": (
        "winogrande",
        "winogrande_xl",
        FIX / "winogrande" / "winogrande_xl-validation.parquet",
    ),
    "swag": ("swag", "regular", FIX / "swag" / "regular-validation.parquet"),
    "truthfulqa": (
        "truthfulqa",
        "multiple_choice",
        FIX / "truthfulqa" / "multiple_choice-validation.parquet",
    ),
    "mmlu": ("mmlu", None, FIX / "mmlu" / "cais_test.parquet"),
    "mmlu_pro": ("mmlu", None, FIX / "mmlu" / "mmlu_pro.parquet"),
    "sciq": ("sciq", None, FIX / "lm_eval" / "sciq-validation.parquet"),
    "copa": ("copa", None, FIX / "lm_eval" / "copa-validation.parquet"),
}


def _load(name: str) -> SampleSequence:
    dataset, config, path = PRESET_FILES[name]
    return load(dataset, config, data_files=str(path), on_error="skip")


def _changed(samples: SampleSequence, picks: list[tuple[int, str]]) -> SampleSequence:
    """``samples`` with some rows changed as a fix changes them: answer, context or a choice."""
    table = samples.table
    count = table.num_rows
    index = np.asarray(table.column("answer_index")).copy()
    contexts = table.column("context").to_pylist()
    choices = table.column("choices").to_pylist()
    for row, change in picks:
        row %= count
        if change == "answer":
            index[row] = (index[row] + 1) % len(choices[row])
        elif change == "context":
            contexts[row] = contexts[row] + " (fixed)"
        elif change == "choice":
            choices[row][index[row]] = choices[row][index[row]] + " (fixed)"
        else:  # the context's start: HellaSwag's both parts change
            contexts[row] = "Fixed: " + contexts[row] + " now"
    columns = {
        "answer_index": pa.array(index, table.schema.field("answer_index").type),
        "context": pa.array(contexts, table.schema.field("context").type),
        "choices": pa.array(choices, table.schema.field("choices").type),
    }
    for name, values in columns.items():
        table = table.set_column(table.schema.get_field_index(name), name, values)
    changed = SampleSequence(table, source=samples.source)
    changed.provenance = samples.provenance
    return changed


def _both(samples: SampleSequence) -> tuple[Source, Source]:
    by_table = open_source(samples, None, None, None)
    by_row = open_source(samples, None, None, None)
    by_row.tables = None  # the row form for every row
    return by_table, by_row


@pytest.mark.parametrize("name", sorted(PRESET_FILES))
def test_an_unchanged_file_gives_the_same_rows_both_ways(name: str) -> None:
    by_table, by_row = _both(_load(name))
    assert by_table.tables is not None
    assert list(by_table.rows()) == list(by_row.rows())


@pytest.mark.parametrize("name", sorted(PRESET_FILES))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    picks=st.lists(
        st.tuples(st.integers(0, 10_000), st.sampled_from(["answer", "context", "choice", "both"])),
        min_size=1,
        max_size=6,
    )
)
def test_rows_a_fix_changed_give_the_same_rows_both_ways(
    name: str, picks: list[tuple[int, str]]
) -> None:
    by_table, by_row = _both(_changed(_load(name), picks))
    assert list(by_table.rows()) == list(by_row.rows())
