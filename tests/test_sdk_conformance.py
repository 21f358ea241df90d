"""Our wire dict against the official ``sdvm`` SDK's, both ways (needs Python >= 3.12)."""

import sys

import pytest
from helpers import assert_same_samples, exact
from hypothesis import given
from strategies import samples

from sdvm_hf import MultipleChoiceSample

pytestmark = pytest.mark.slow

if sys.version_info < (3, 12):
    pytest.skip(
        "the sdvm SDK needs Python >= 3.12; CI runs these under 3.12", allow_module_level=True
    )
sdvm_types = pytest.importorskip(
    "sdvm.types", reason="install the 'sdvm' extra: pip install -e '.[sdvm]'"
)


def sdk_twin(sample: MultipleChoiceSample) -> object:
    """The SDK's own sample with the same fields and stage blocks."""
    cls = {
        "MultipleChoiceSample": sdvm_types.MultipleChoiceSample,
        "MultipleChoiceCompletionSample": sdvm_types.MultipleChoiceCompletionSample,
        "MultipleChoiceQuestionAnswerSample": sdvm_types.MultipleChoiceQuestionAnswerSample,
    }[type(sample).__name__]
    twin = cls(
        context=sample.context,
        choices=list(sample.choices),
        answer_index=sample.answer_index,
        style=sample.style,
        extra=dict(sample.extra),
    )
    for key in ("audit", "fix", "reaudit"):
        setattr(twin, key, getattr(sample, key))
    return twin


@given(samples())
def test_sdk_serialize_of_our_sample_equals_the_sdk_sample(sample: MultipleChoiceSample) -> None:
    ours = sdvm_types.serialize([sample])[0]
    theirs = sdvm_types.serialize([sdk_twin(sample)])[0]
    assert exact(ours) == exact(theirs)


@given(samples())
def test_sdk_to_dict_decodes_to_an_equal_sample_of_the_same_class(
    sample: MultipleChoiceSample,
) -> None:
    twin = sdk_twin(sample)
    decoded = MultipleChoiceSample.from_dict(twin.to_dict())  # type: ignore[attr-defined,unused-ignore]
    assert_same_samples([decoded], [sample])
    sdk_decoded = sdvm_types.DataSample.from_dict(sample.to_dict())
    assert type(sdk_decoded).__name__ == type(decoded).__name__
    assert exact(sdk_decoded.to_dict()) == exact(sample.to_dict())


def test_generic_sdk_sample_decodes_to_the_specific_class() -> None:
    twin = sdvm_types.MultipleChoiceSample(
        context="Q?", choices=["a", "b"], answer_index=0, style="qa"
    )
    assert (
        type(MultipleChoiceSample.from_dict(twin.to_dict())).__name__
        == "MultipleChoiceQuestionAnswerSample"
    )
