"""Loaders on the fixtures and the bundled slices; the Hub path checked by its arguments."""

from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sdvm_hf
from sdvm_hf import (
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    SampleSequence,
    StreamingSamples,
    load,
    load_hellaswag,
    load_mmlu,
    read_parquet,
    stream,
)
from sdvm_hf.presets.hellaswag import HELLASWAG
from sdvm_hf.presets.mmlu import MMLU_LAYOUTS

FIXTURES = Path(__file__).parent / "fixtures"
MMLU = FIXTURES / "mmlu"


def test_bundled_hellaswag_loads_offline() -> None:
    samples = load_hellaswag(bundled=True)
    assert isinstance(samples, SampleSequence)
    assert len(samples) == 296
    assert all(type(sample) is MultipleChoiceCompletionSample for sample in samples)
    source = pq.read_table(Path(sdvm_hf.__file__).parent / "data" / "hellaswag_validation.parquet")
    assert [s.context for s in samples] == source.column("ctx").to_pylist()
    assert [str(s.answer_index) for s in samples] == source.column("label").to_pylist()


def test_bundled_mmlu_holds_every_subject() -> None:
    samples = load_mmlu(bundled=True)
    assert len(samples) == 285
    assert len({sample.extra["subject"] for sample in samples}) == 57
    assert all(type(sample) is MultipleChoiceQuestionAnswerSample for sample in samples)


def test_bundled_slices_hold_one_split_each() -> None:
    with pytest.raises(
        ValueError,
        match="the bundled hellaswag slice holds the 'validation' split only, got split='train'",
    ):
        load_hellaswag("train", bundled=True)


def test_hub_parquet_and_original_jsonl_give_equal_samples() -> None:
    hub = load_hellaswag(data_files=FIXTURES / "hellaswag" / "validation.parquet")
    original = load_hellaswag(data_files=str(FIXTURES / "hellaswag" / "validation.jsonl"))
    assert len(hub) == 12
    assert list(hub) == list(original)
    assert hub.table.schema == original.table.schema


def test_the_hellaswag_test_split_says_its_labels_are_withheld() -> None:
    with pytest.raises(
        sdvm_hf.LayoutError,
        match=r"hellaswag test: column 'label' is missing; .*labels are withheld",
    ):
        load_hellaswag("test", data_files=str(FIXTURES / "hellaswag" / "test.jsonl"))
    skipped = load_hellaswag(
        "test", data_files=str(FIXTURES / "hellaswag" / "test.parquet"), on_error="skip"
    )
    assert len(skipped) == 0 and [r.row for r in skipped.rejects] == [0, 1]


@pytest.mark.parametrize(
    ("files", "count", "extra"),
    [
        (MMLU / "cais_test.parquet", 12, {"subject": "astronomy"}),
        (MMLU / "lukaemon.parquet", 6, {}),
        (MMLU / "global_mmlu.parquet", 6, None),
        (MMLU / "mmlu_redux.parquet", 6, None),
        (MMLU / "auxiliary_train.parquet", 6, {"subject": ""}),
        (MMLU / "mmmlu.csv", 6, {"Unnamed: 0": "0", "Subject": "abstract_algebra"}),
        (str(MMLU / "hendrycks" / "*.csv"), 5 + 22, {"subject": "abstract_algebra"}),
    ],
)
def test_every_mmlu_layout_loads_from_local_files(
    files: Any, count: int, extra: dict[str, Any] | None
) -> None:
    samples = load_mmlu(data_files=files)
    assert len(samples) == count
    assert all(type(sample) is MultipleChoiceQuestionAnswerSample for sample in samples)
    if extra is not None:
        assert samples[0].extra == extra


def test_layouts_with_the_same_rows_give_the_same_questions_and_answers() -> None:
    core = [
        (s.context, s.choices, s.answer_index)
        for s in load_mmlu(data_files=MMLU / "lukaemon.parquet")
    ]
    for name in (
        "global_mmlu.parquet",
        "mmlu_redux.parquet",
        "auxiliary_train.parquet",
        "mmmlu.csv",
    ):
        assert [
            (s.context, s.choices, s.answer_index) for s in load_mmlu(data_files=MMLU / name)
        ] == core


def test_hendrycks_csv_keeps_a_stray_quote_and_numeric_looking_choices_as_text() -> None:
    samples = load_mmlu(data_files=MMLU / "hendrycks", layout="hendrycks_csv")
    medicine = [s for s in samples if s.extra["subject"] == "college_medicine"]
    assert medicine[5].context.endswith('Will to Truth?"')
    algebra = [s for s in samples if s.extra["subject"] == "abstract_algebra"]
    assert all(isinstance(choice, str) for s in algebra for choice in s.choices)
    assert algebra[0].choices == ["0", "1", "2", "3"]


def test_mmlu_subject_keeps_that_subjects_rows_of_local_files() -> None:
    samples = load_mmlu("virology", data_files=MMLU / "cais_test.parquet")
    assert len(samples) > 0 and {s.extra["subject"] for s in samples} == {"virology"}


def test_mmlu_pro_single_option_rows_are_reported_with_skip() -> None:
    samples = load_mmlu(data_files=MMLU / "mmlu_pro.parquet", on_error="skip")
    assert len(samples) == 7 and len(samples.rejects) == 1
    (reject,) = samples.rejects
    assert (reject.row, reject.column) == (6, "options")
    assert reject.expected == "at least two choices"
    assert len(reject.original["options"]) == 1
    with pytest.raises(sdvm_hf.ConversionError, match="mmlu-pro test row 6, column 'options'"):
        load_mmlu(data_files=MMLU / "mmlu_pro.parquet")


def test_an_explicit_unknown_layout_lists_the_known_ones() -> None:
    with pytest.raises(
        sdvm_hf.LayoutError,
        match="unknown mmlu layout 'mmlu_x'; layouts known: cais, auxiliary_train",
    ):
        load_mmlu(data_files=MMLU / "cais_test.parquet", layout="mmlu_x")


def test_data_files_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no files match"):
        load_mmlu(data_files=str(tmp_path / "*.parquet"))
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(
        ValueError,
        match=r"cannot tell the format of .*notes.txt: expected .parquet, .jsonl, .json or .csv",
    ):
        load_mmlu(data_files=tmp_path / "notes.txt")


def test_the_sequence_hands_over_a_dataset_for_map_pipelines(tmp_path: Path) -> None:
    samples = load_hellaswag(data_files=FIXTURES / "hellaswag" / "validation.parquet")
    dataset = samples.dataset
    assert isinstance(dataset, datasets.Dataset)
    assert dataset.features == samples.features
    short = dataset.filter(lambda row: len(row["context"]) < 60)
    short.to_parquet(str(tmp_path / "short.parquet"))
    again = read_parquet(tmp_path / "short.parquet")
    assert list(again) == [s for s in samples if len(s.context) < 60]


def test_streaming_yields_typed_samples_batch_by_batch() -> None:
    streamed = stream("mmlu", data_files=MMLU / "mmlu_pro.parquet", on_error="skip")
    assert isinstance(streamed, StreamingSamples)
    samples = list(streamed)
    assert len(samples) == 7 and [r.row for r in streamed.rejects] == [6]
    csv_stream = stream("mmlu", data_files=MMLU / "hendrycks", layout="hendrycks_csv")
    assert [s.context for s in csv_stream] == [
        s.context for s in load_mmlu(data_files=MMLU / "hendrycks", layout="hendrycks_csv")
    ]


class FakeHub:
    """Stands in for datasets.load_dataset: records the call, serves a fixture."""

    def __init__(self, fixture: Path) -> None:
        self.fixture = fixture
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        dataset = datasets.Dataset(datasets.table.InMemoryTable(pq.read_table(self.fixture)))
        return dataset.to_iterable_dataset() if kwargs.get("streaming") else dataset


def test_hellaswag_from_the_hub_reads_the_parquet_conversion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hub = FakeHub(FIXTURES / "hellaswag" / "validation.parquet")
    monkeypatch.setattr(datasets, "load_dataset", hub)
    samples = load_hellaswag(cache_dir="/tmp/c", token="hf_x")
    assert len(samples) == 12
    assert hub.calls == [
        (
            ("Rowan/hellaswag",),
            {
                "name": None,
                "split": "validation",
                "revision": "refs/convert/parquet",
                "cache_dir": "/tmp/c",
                "token": "hf_x",
            },
        )
    ]


def test_mmlu_from_the_hub_names_the_subject_config(monkeypatch: pytest.MonkeyPatch) -> None:
    hub = FakeHub(MMLU / "cais_test.parquet")
    monkeypatch.setattr(datasets, "load_dataset", hub)
    load_mmlu("astronomy", "validation", revision="abc123")
    assert hub.calls == [
        (
            ("cais/mmlu",),
            {
                "name": "astronomy",
                "split": "validation",
                "revision": "abc123",
                "cache_dir": None,
                "token": None,
            },
        )
    ]


def test_streaming_from_the_hub_passes_streaming(monkeypatch: pytest.MonkeyPatch) -> None:
    hub = FakeHub(MMLU / "cais_test.parquet")
    monkeypatch.setattr(datasets, "load_dataset", hub)
    samples = list(stream("mmlu"))
    assert len(samples) == 12
    ((args, kwargs),) = hub.calls
    assert args == ("cais/mmlu",) and kwargs["streaming"] is True and kwargs["name"] == "all"


def test_no_loader_ever_enables_remote_code(monkeypatch: pytest.MonkeyPatch) -> None:
    hub = FakeHub(MMLU / "cais_test.parquet")
    monkeypatch.setattr(datasets, "load_dataset", hub)
    load_mmlu()
    load(MMLU_LAYOUTS["cais"], "all", "test", hub="cais/mmlu")
    list(stream("mmlu"))
    assert hub.calls and all("trust_remote_code" not in kwargs for _, kwargs in hub.calls)


def test_the_generic_loader_maps_any_dataset(tmp_path: Path) -> None:
    import pyarrow as pa

    path = tmp_path / "piqa.jsonl"
    path.write_text(
        '{"goal": "Open a jar.", "sol1": "Twist the lid.", "sol2": "Eat the lid.", "label": 0}\n'
    )
    mapping = sdvm_hf.MultipleChoiceMapping(
        dataset="piqa", context="goal", choices=("sol1", "sol2"), answer="label", style="qa"
    )
    (sample,) = load(mapping, split="validation", data_files=path)
    assert sample.choices == ["Twist the lid.", "Eat the lid."] and sample.extra == {}
    assert (
        HELLASWAG.schema(pq.read_schema(FIXTURES / "hellaswag" / "validation.parquet"))
        .field("answer_index")
        .type
        == pa.int64()
    )


def test_an_unknown_option_is_refused_not_ignored() -> None:
    with pytest.raises(
        TypeError,
        match="unexpected option 'cache'; the options are data_files, revision, cache_dir, token",
    ):
        load_hellaswag(bundled=True, cache="/tmp")  # type: ignore[call-arg]


def test_rows_are_numbered_across_batches_eager_and_streaming(tmp_path: Path) -> None:
    fixture = pq.read_table(MMLU / "mmlu_pro.parquet")  # 8 rows, row 6 has one option
    copies = 70_000 // fixture.num_rows  # more rows than one eager or streamed batch holds
    pq.write_table(pa.concat_tables([fixture] * copies), tmp_path / "pro.parquet")
    bad = [row for row in range(copies * fixture.num_rows) if row % fixture.num_rows == 6]
    eager = load_mmlu(data_files=tmp_path / "pro.parquet", on_error="skip")
    streamed = stream("mmlu", data_files=tmp_path / "pro.parquet", on_error="skip")
    assert sum(1 for _ in streamed) == len(eager) == 7 * copies
    assert eager.rejects.rows == streamed.rejects.rows == bad


@pytest.mark.slow  # hypothesis at strength, or a big table
@pytest.mark.parametrize("name", ["out.parquet", "out.jsonl"])
def test_a_stream_is_written_batch_by_batch_and_equals_the_eager_file(
    tmp_path: Path, name: str
) -> None:
    from sdvm_hf import read_samples, write_samples

    fixture = pq.read_table(MMLU / "mmlu_pro.parquet")
    pq.write_table(pa.concat_tables([fixture] * 5_000), tmp_path / "pro.parquet")
    streamed = stream("mmlu", data_files=tmp_path / "pro.parquet", on_error="skip")
    assert write_samples(streamed, tmp_path / name) == 7 * 5_000
    eager = load_mmlu(data_files=tmp_path / "pro.parquet", on_error="skip")
    assert list(read_samples(tmp_path / name)) == list(eager)
    assert len(streamed.rejects) == 5_000


def test_a_stream_that_fails_midway_leaves_no_file(tmp_path: Path) -> None:
    from sdvm_hf import write_parquet

    fixture = pq.read_table(MMLU / "mmlu_pro.parquet")
    pq.write_table(pa.concat_tables([fixture] * 5_000), tmp_path / "pro.parquet")
    streamed = stream("mmlu", data_files=tmp_path / "pro.parquet")
    with pytest.raises(sdvm_hf.ConversionError, match=r"row 6, column 'options'"):
        write_parquet(streamed, tmp_path / "out.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pro.parquet"]
