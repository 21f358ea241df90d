import json
from typing import Any

from sdvm_hf import MultipleChoiceSample


def exact(value: Any) -> str:
    """A text that differs whenever two values differ in type, order or float bits."""

    def tag(item: Any) -> Any:
        if isinstance(item, dict):
            return ["dict", [[key, tag(inner)] for key, inner in item.items()]]
        if isinstance(item, list):
            return ["list", [tag(inner) for inner in item]]
        if isinstance(item, float):
            return ["float", item.hex()]
        return [type(item).__name__, item]

    return json.dumps(tag(value), ensure_ascii=False)


def assert_same_samples(got: list[MultipleChoiceSample], want: list[MultipleChoiceSample]) -> None:
    assert [type(sample) for sample in got] == [type(sample) for sample in want]
    assert [exact(sample.to_dict()) for sample in got] == [
        exact(sample.to_dict()) for sample in want
    ]
