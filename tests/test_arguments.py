"""One meaning per argument of ``load``/``stream``, checked where a source cannot check it.

A configuration of local files is the caller's word (ARC-Easy and ARC-Challenge share a
layout), so it must be one the dataset has; a split name in the config slot, source options
that name two sources, and arguments of the wrong type are refused before anything is read.
With a configuration kept by a column (MMLU's subject), a slice counts that configuration's
rows, as the Hub does: the property test checks it against ``datasets.ReadInstruction``.
"""

import json
from importlib import resources
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdvm_hf import MultipleChoiceMapping, load, load_mmlu, stream, write_parquet
from sdvm_hf.record import read_record

FIXTURES = Path(__file__).parent / "fixtures"
ARC_CHALLENGE = FIXTURES / "arc" / "ARC-Challenge-test.parquet"
HELLASWAG = FIXTURES / "hellaswag" / "validation.parquet"
BUNDLED_MMLU = resources.files("sdvm_hf") / "data" / "mmlu_test.parquet"


def test_a_configuration_of_local_files_is_recorded_as_given(tmp_path: Path) -> None:
    samples = load("arc", "ARC-Easy", data_files=ARC_CHALLENGE)
    write_parquet(samples, tmp_path / "easy.parquet")
    record = read_record(tmp_path / "easy.parquet")
    assert record is not None and record.config == "ARC-Easy"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: load("arc", "ARC-Hard", data_files=ARC_CHALLENGE),
            r"arc has no configuration 'ARC-Hard'; its configurations: ARC-Challenge, ARC-Easy",
        ),
        (
            lambda: load("hellaswag", "xyz", bundled=True),
            r"hellaswag has no configuration 'xyz'; its configurations: default",
        ),
        (
            lambda: stream("winogrande", "winogrande_xxl", data_files=HELLASWAG),
            r"its configurations: winogrande_xs, winogrande_s, .*, winogrande_debiased",
        ),
        (  # load_hellaswag's habit, (split) first, carried over to load: caught by its name
            lambda: load("hellaswag", "validation", data_files=HELLASWAG),
            r"no configuration 'validation' .* \(dataset, config, split\): to name a split, "
            r"pass split='validation'",
        ),
        (  # the Hub would say "BuilderConfig not found": said before any network
            lambda: load("mmlu", "test[:10]"),
            r"mmlu has no configuration 'test\[:10\]' \(its configurations: all, or any "
            r"subject\); .* pass split='test\[:10\]'",
        ),
    ],
)
def test_a_configuration_the_dataset_does_not_have_is_refused(call: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"bundled": True, "hub": "Rowan/hellaswag"}, r"bundled=True .*; hub= is for the Hub"),
        ({"bundled": True, "revision": "main"}, r"bundled=True .*; revision= is for the Hub"),
        ({"data_files": str(HELLASWAG), "hub": "x/y"}, r"data_files .*, hub= a Hub dataset"),
        ({"data_files": str(HELLASWAG), "revision": "v2"}, r"data_files .*, revision= a Hub"),
    ],
)
def test_options_that_name_two_sources_are_refused(options: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load("hellaswag", **options)
    with pytest.raises(ValueError, match=message):
        stream("hellaswag", **options)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: load(3), TypeError, r"dataset should be a preset's name \(one of hellaswag, "),  # type: ignore[arg-type]
        (lambda: load("mmlu", 5, bundled=True), TypeError, r"mmlu: config should be a string"),  # type: ignore[arg-type]
        (lambda: load("hellaswag", data_files=5), TypeError, r"data_files should be a path.*int"),  # type: ignore[arg-type]
        (lambda: load("hellaswag", bundled="yes"), TypeError, r"bundled should be True or"),  # type: ignore[arg-type]
        (lambda: load("hellaswag", split=" ", bundled=True), ValueError, r"names no split"),
        (  # a stream is lazy, but a misspelt option is said at the call, not at the first batch
            lambda: stream("hellaswag", bundled=True, on_error="skipp"),  # type: ignore[arg-type]
            ValueError,
            r"on_error must be 'raise' or 'skip', got 'skipp'",
        ),
        (
            lambda: stream("mmlu", "all", bundled=True, on_error=None),  # type: ignore[arg-type]
            ValueError,
            r"on_error must be 'raise' or 'skip', got None",
        ),
        (
            lambda: MultipleChoiceMapping("quiz", "q", "c", "a").for_split(5),  # type: ignore[arg-type]
            TypeError,
            r"quiz: split should be a string, got 5",
        ),
    ],
)
def test_arguments_of_the_wrong_type_are_named(call: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_a_mapping_bound_to_a_split_loads_that_split(tmp_path: Path) -> None:
    rows = [{"q": "Which?", "A": "x", "B": "y", "ans": "Z"}]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    quiz = MultipleChoiceMapping(
        dataset="quiz", context="q", choices=("A", "B"), answer="ans", answer_format="letter"
    )
    with pytest.raises(ValueError, match=r"^quiz x row 0, column 'ans'"):
        load(quiz.for_split("x"), data_files=tmp_path / "q.jsonl")
    with pytest.raises(ValueError, match=r"^quiz train row 0, column 'ans'"):
        load(quiz, data_files=tmp_path / "q.jsonl")
    with pytest.raises(ValueError, match=r"quiz mapping is not told where its rows are"):
        load(quiz)


def _interleaved(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """The bundled MMLU rows (57 subjects, 5 each) dealt so that subjects interleave."""
    table = pq.read_table(str(BUNDLED_MMLU))  # sorted by subject, five rows each
    dealt = table.take(pa.array(sorted(range(table.num_rows), key=lambda i: (i % 5, i))))
    path = tmp_path / "interleaved.parquet"
    pq.write_table(dealt, path)
    return path, dealt.to_pylist()


SPECS = st.one_of(
    st.tuples(st.integers(-6, 6), st.integers(-6, 6)).map(lambda b: f"test[{b[0]}:{b[1]}]"),
    st.tuples(st.integers(-100, 100), st.integers(-100, 100)).map(
        lambda b: f"test[{b[0]}%:{b[1]}%]"
    ),
    st.integers(-6, 6).map(lambda b: f"test[{b}:]"),
    st.integers(0, 100).map(lambda b: f"test[:{b}%]"),
)


@settings(deadline=None, max_examples=40)
@given(subject=st.sampled_from(["astronomy", "virology", "abstract_algebra"]), spec=SPECS)
def test_a_slice_counts_the_configurations_rows_as_on_the_hub(subject: str, spec: str) -> None:
    path = INTERLEAVED[0]
    mine = [row for row in INTERLEAVED[1] if row["subject"] == subject]
    try:
        (part,) = datasets.ReadInstruction.from_spec(spec).to_absolute({"test": len(mine)})
    except (ValueError, AssertionError):
        expected = None
    else:
        expected = [row["question"] for row in mine[part.from_ : part.to]] or None
    if expected is None:
        with pytest.raises(ValueError):
            load("mmlu", subject, spec, data_files=path)
        with pytest.raises(ValueError):
            list(stream("mmlu", subject, spec, data_files=path))
        return
    assert [s.context for s in load_mmlu(subject, spec, data_files=path)] == expected
    assert [s.context for s in stream("mmlu", subject, spec, data_files=path)] == expected


@pytest.fixture(autouse=True, scope="module")
def _interleaved_file(tmp_path_factory: pytest.TempPathFactory) -> None:
    INTERLEAVED[:] = _interleaved(tmp_path_factory.mktemp("mmlu"))


INTERLEAVED: list[Any] = []
