"""A dataset preset written by a user: one file, registered with one line (see test_registry)."""

from sdvm_hf import MultipleChoiceMapping, Preset

TINY = MultipleChoiceMapping(
    dataset="tiny", context="prompt", choices=("yes", "no"), answer="gold", answer_format="text"
)

PRESET = Preset(
    name="tiny",
    layouts={"tiny": TINY},
    hub="example/tiny",
    split="test",
    conventions="Tiny: prompts are yes/no questions.",
)
