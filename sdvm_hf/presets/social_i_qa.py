"""Social IQa (``allenai/social_i_qa``) as question-answer samples.

The context joins the situation and the question about it, ``context + " " + question``
(one space, as evaluations prompt it: "Sydney walked past ... Sydney felt bad afterwards. How
would you describe Sydney?"). The choices are ``answerA``, ``answerB``, ``answerC``; ``label``
is the one-based answer as a string (``"1"``..``"3"``). Whitespace around a label is ignored,
so ``"2"`` followed by a line break is the label ``"2"``: the raw label files end each line
with one, which copies built with ``datasets`` < 1.2 kept. Both source columns of the
context stay in ``extra`` so the join can be undone: ``question`` as it is and ``context``
under the key ``situation`` (``context`` is a wire key). The Hub publishes no test split.

The Hub's ``main`` branch holds a loading script, which ``datasets`` >= 4 refuses; the Parquet
conversion lives at the revision ``refs/convert/parquet``, which is the default here.
"""

from __future__ import annotations

from typing import Literal, Unpack, overload

from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.convert.mapping import MultipleChoiceMapping, OnError
from sdvm_hf.convert.preset import Preset
from sdvm_hf.load.loaders import SourceOptions, StreamingSamples, load_preset

SOCIAL_I_QA = MultipleChoiceMapping(
    name="social_i_qa",
    context=("context", "question"),
    context_join=" ",
    choices=("answerA", "answerB", "answerC"),
    answer="label",
    answer_format="one_based",
    style="qa",
    keep=("context", "question"),
    rename={"context": "situation"},
)
"""The social_i_qa mapping: ``SOCIAL_I_QA.row``, ``.batch``, ``.table`` and ``.convert``."""

PRESET = Preset(
    name="social_i_qa",
    description="Social IQa situations and questions (allenai/social_i_qa)",
    layouts={"social_i_qa": SOCIAL_I_QA},
    hub="allenai/social_i_qa",
    # ``main`` holds a loading script, which ``datasets`` >= 4 refuses; its Parquet
    # conversion lives at this revision.
    revision="refs/convert/parquet",
    split="validation",
    conventions=(
        "Social IQa: each context is a short situation followed by one question about it, "
        "joined with a space (e.g. '... Sydney felt bad afterwards. How would you describe "
        "Sydney?'). Names stand for people of any gender; choices are short phrases, often "
        "lowercase and without a final period, by design."
    ),
)
"""Everything about social_i_qa."""


@overload
def load_social_i_qa(
    split: str = ...,
    *,
    streaming: Literal[False] = ...,
    on_error: OnError = ...,
    **options: Unpack[SourceOptions],
) -> SampleSequence: ...
@overload
def load_social_i_qa(
    split: str = ...,
    *,
    streaming: Literal[True],
    on_error: OnError = ...,
    **options: Unpack[SourceOptions],
) -> StreamingSamples: ...
@overload
def load_social_i_qa(
    split: str = ...,
    *,
    streaming: bool = ...,
    on_error: OnError = ...,
    **options: Unpack[SourceOptions],
) -> SampleSequence | StreamingSamples: ...
def load_social_i_qa(
    split: str = "validation",
    *,
    streaming: bool = False,
    on_error: OnError = "raise",
    **options: Unpack[SourceOptions],
) -> SampleSequence | StreamingSamples:
    """Social IQa as :class:`~sdvm_hf.MultipleChoiceQuestionAnswerSample` s.

    From the Hub at ``refs/convert/parquet`` unless ``revision`` says otherwise.

    See :func:`~sdvm_hf.load.loaders.load_preset` for the options (``data_files`` reads
    local copies in the Hub's layout).
    """
    return load_preset(PRESET, split=split, streaming=streaming, on_error=on_error, **options)
