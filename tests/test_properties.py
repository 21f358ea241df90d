import io

import pyarrow.parquet as pq
import pytest
from helpers import assert_same_samples
from hypothesis import given
from hypothesis import strategies as st
from strategies import samples, uniform_batches

from sdvm_hf import MultipleChoiceSample, SampleSequence
from sdvm_hf.arrow.sequence import samples_to_table, table_to_samples

pytestmark = pytest.mark.slow


@given(samples())
def test_sample_to_wire_dict_and_back_is_exact(sample: MultipleChoiceSample) -> None:
    assert_same_samples([MultipleChoiceSample.from_dict(sample.to_dict())], [sample])
    assert_same_samples([type(sample).from_dict(sample.to_dict())], [sample])


@given(st.lists(samples(), min_size=1, max_size=3))
def test_samples_to_parquet_and_back_is_exact(batch: list[MultipleChoiceSample]) -> None:
    buffer = io.BytesIO()  # in memory: write_parquet and read_parquet add only the file
    pq.write_table(samples_to_table(batch), buffer)
    buffer.seek(0)
    assert_same_samples(list(SampleSequence(pq.read_table(buffer))), batch)


@given(uniform_batches())
def test_uniform_extras_round_trip_exactly_through_a_struct_column(
    batch: list[MultipleChoiceSample],
) -> None:
    table = samples_to_table(batch)
    assert_same_samples(table_to_samples(table), batch)
