import tempfile
from pathlib import Path

from helpers import assert_same_samples
from hypothesis import given
from hypothesis import strategies as st
from strategies import samples, uniform_batches

from sdvm_hf import (
    MultipleChoiceSample,
    read_parquet,
    samples_to_table,
    table_to_samples,
    write_parquet,
)


@given(samples())
def test_sample_to_wire_dict_and_back_is_exact(sample: MultipleChoiceSample) -> None:
    assert_same_samples([MultipleChoiceSample.from_dict(sample.to_dict())], [sample])
    assert_same_samples([type(sample).from_dict(sample.to_dict())], [sample])


@given(st.lists(samples(), min_size=1, max_size=5))
def test_samples_to_parquet_and_back_is_exact(batch: list[MultipleChoiceSample]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "samples.parquet"
        write_parquet(batch, path)
        assert_same_samples(list(read_parquet(path)), batch)


@given(uniform_batches())
def test_uniform_extras_round_trip_exactly_through_a_struct_column(
    batch: list[MultipleChoiceSample],
) -> None:
    table = samples_to_table(batch)
    assert_same_samples(table_to_samples(table), batch)
