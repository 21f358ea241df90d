"""Sources: datasets' split slicing and data_files forms, in-place local reads, progress, Hub layout."""

import io
import json
from pathlib import Path
from typing import Any

import datasets
import pyarrow.parquet as pq
import pytest

import sdvm_hf
from sdvm_hf import load, load_hellaswag, load_mmlu, stream
from sdvm_hf._progress import bar, disabled, quiet
from sdvm_hf.presets.mmlu import MMLU_LAYOUTS
from sdvm_hf.sources._split import parse_split
from sdvm_hf.sources.source import Source, load_table

FIXTURES = Path(__file__).parent / "fixtures"
MMLU = FIXTURES / "mmlu"
HELLASWAG = FIXTURES / "hellaswag"
HUB = FIXTURES / "hub"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """datasets' cache, pointed at an empty folder (datasets read its env var at import)."""
    folder = tmp_path / "hf-cache"
    monkeypatch.setenv("HF_DATASETS_CACHE", str(folder))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", folder)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return folder


def _core(samples: Any) -> list[tuple[str, list[str], int]]:
    return [(s.context, list(s.choices), s.answer_index) for s in samples]


SPECS = [
    "validation",
    "validation[:5]",
    "validation[3:7]",
    "validation[-4:]",
    "validation[25%:75%]",
    "validation[:33%]",
    "validation[10%:]",
    "validation[:-2]",
]


@pytest.mark.parametrize("spec", SPECS)
def test_a_split_spec_slices_as_datasets_does(spec: str, cache: Path, tmp_path: Path) -> None:
    files = str(HELLASWAG / "validation.parquet")
    expected = datasets.load_dataset(
        "parquet", data_files={"validation": files}, split=spec, cache_dir=str(tmp_path / "ds")
    )
    ours = load_hellaswag(spec, data_files=files)
    assert [s.extra["source_id"] for s in ours] == expected["source_id"]
    assert [s.context for s in ours] == expected["ctx"]
    streamed = stream("hellaswag", None, spec, data_files=files)
    assert _core(streamed) == _core(ours)


@pytest.mark.parametrize("spec", ["test[:3]", "test[50%:]", "test[-2:]"])
def test_slices_of_jsonl_and_csv_stream_and_load_alike(spec: str, cache: Path) -> None:
    jsonl = str(HELLASWAG / "validation.jsonl")
    whole = list(load_hellaswag("test", data_files={"test": jsonl}))
    start, stop = parse_split(spec).bounds(len(whole))
    assert stop is not None
    eager = load_hellaswag(spec, data_files={"test": jsonl})
    streamed = stream("hellaswag", None, spec, data_files={"test": jsonl})
    assert list(eager) == list(streamed) == whole[start:stop]
    csv = str(MMLU / "hendrycks" / "*.csv")
    everything = list(load_mmlu(split="test", data_files=csv))
    start, stop = parse_split(spec).bounds(len(everything))
    assert list(stream("mmlu", split=spec, data_files=csv)) == everything[start:stop]


@pytest.mark.parametrize("streaming", [False, True])
def test_a_slice_that_selects_no_rows_is_refused_as_datasets_does(streaming: bool) -> None:
    with pytest.raises(ValueError, match=r"split 'validation\[100:\]' selects no rows of the 12"):
        list(
            (stream if streaming else load)(
                "hellaswag", None, "validation[100:]", data_files=HELLASWAG / "validation.jsonl"
            )
        )


def test_bundled_slices_take_a_spec() -> None:
    whole = load_mmlu(bundled=True)
    assert list(load_mmlu(split="test[10:20]", bundled=True)) == list(whole)[10:20]
    assert len(load_hellaswag("validation[:10%]", bundled=True)) == 30  # round(29.6)


@pytest.mark.parametrize(
    "spec", ["validation[", "validation[a:b]", "validation+test", "validation[:200%]"]
)
def test_an_invalid_split_spec_is_our_error(spec: str) -> None:
    with pytest.raises(ValueError, match=r"split .* (is not a split spec|joins 2 splits)") as info:
        load_hellaswag(spec, bundled=True)
    assert "'validation[:100]'" in str(info.value) and "test[10%:20%]" in str(info.value)


def test_rows_of_a_sliced_split_keep_their_numbers() -> None:
    files = MMLU / "mmlu_pro.parquet"
    eager = load_mmlu(split="test[4:]", data_files=files, on_error="skip")
    streamed = stream("mmlu", split="test[4:]", data_files=files, on_error="skip")
    assert len(eager) == len(list(streamed)) == 3
    assert [r.row for r in eager.rejects] == [r.row for r in streamed.rejects] == [6]
    with pytest.raises(sdvm_hf.ConversionError, match="mmlu-pro test row 6, column 'options'"):
        load_mmlu(split="test[-3:]", data_files=files)


def test_data_files_as_a_dict_reads_the_entry_for_the_split() -> None:
    files: dict[str, str | Path] = {
        "validation": HELLASWAG / "validation.parquet",
        "test": str(HELLASWAG / "test.jsonl"),
    }
    assert len(load_hellaswag("validation", data_files=files)) == 12
    with pytest.raises(sdvm_hf.LayoutError, match="hellaswag test: column 'label' is missing"):
        load_hellaswag("test", data_files=files)
    with pytest.raises(
        ValueError, match=r"data_files has no entry for split 'train'; its splits: 'validation'"
    ):
        load_hellaswag("train[:5]", data_files=files)


@pytest.mark.parametrize(
    "name", ["validation.parquet", "validation.jsonl", "validation.jsonl.gz", "array.json"]
)
def test_local_files_read_as_datasets_reads_them_without_touching_its_cache(
    name: str, cache: Path, tmp_path: Path
) -> None:
    import gzip

    rows = (HELLASWAG / "validation.jsonl").read_bytes()
    if name == "validation.jsonl.gz":
        path = tmp_path / name
        path.write_bytes(gzip.compress(rows))
    elif name == "array.json":
        path = tmp_path / name
        path.write_text(json.dumps([json.loads(line) for line in rows.splitlines()]))
    else:
        path = HELLASWAG / name
    loaded = load_table(Source(split="validation", data_files=str(path)))
    samples = load_hellaswag(data_files=path)
    assert not cache.exists() or not any(cache.iterdir())
    builder = "parquet" if name.endswith("parquet") else "json"
    reference = datasets.load_dataset(
        builder, data_files=str(path), split="train", cache_dir=str(tmp_path / "ds")
    )
    assert loaded.table.schema.remove_metadata() == reference.data.table.schema.remove_metadata()
    assert loaded.table.to_pylist() == reference.data.table.to_pylist()
    assert samples.dataset.to_list() == samples.table.to_pylist()
    if builder == "json":  # the original layout: ind and label are ints
        assert str(loaded.table.schema.field("ind").type) == "int64"
        assert str(loaded.table.schema.field("label").type) == "int64"


def test_csv_and_streams_leave_the_cache_empty(cache: Path) -> None:
    load_mmlu(data_files=MMLU / "hendrycks", layout="hendrycks_csv")
    list(stream("hellaswag", data_files=HELLASWAG / "validation.jsonl"))
    list(stream("hellaswag", data_files=HELLASWAG / "validation.parquet"))
    assert not cache.exists() or not any(cache.iterdir())


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_shows_on_a_terminal_only_and_never_when_quiet() -> None:
    assert not disabled(Tty())
    assert disabled(io.StringIO())
    with quiet():
        assert disabled(Tty())
    with quiet(False):
        assert not disabled(Tty())
    datasets.disable_progress_bars()
    try:
        assert disabled(Tty())
    finally:
        datasets.enable_progress_bars()
    assert not disabled(Tty())


def test_a_bar_counts_rows_and_rate_on_a_terminal() -> None:
    stream = Tty()
    with bar(100, "converting validation", stream) as progress:
        progress.delay = 0
        progress.update(40)
        progress.refresh()
    shown = stream.getvalue()
    assert "converting validation" in shown and "40.0/100" in shown and "rows/s" in shown
    hidden = io.StringIO()
    with bar(100, "converting validation", hidden) as progress:
        progress.update(40)
    assert hidden.getvalue() == ""


def test_the_commands_take_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sdvm_hf.cli import main

    out = tmp_path / "hs.parquet"
    assert main(["convert", "hellaswag", "--bundled", "--quiet", "-o", str(out)]) == 0
    assert main(["validate", str(out), "--quiet"]) == 0
    assert "converting" not in capsys.readouterr().err


class Recorder:
    """datasets.load_dataset, recording its arguments."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.real = datasets.load_dataset

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        return self.real(*args, **kwargs)


def test_mmlu_resolves_configuration_and_split_in_a_hub_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = Recorder()
    monkeypatch.setattr(datasets, "load_dataset", recorder)
    folder = str(HUB / "cais" / "mmlu")
    cache_dir = str(tmp_path / "c")
    astronomy = load_mmlu("astronomy", hub=folder, cache_dir=cache_dir)
    assert len(astronomy) == 6 and {s.extra["subject"] for s in astronomy} == {"astronomy"}
    assert recorder.calls[0] == (
        (folder,),
        {
            "name": "astronomy",
            "split": "test",
            "revision": None,
            "cache_dir": cache_dir,
            "token": None,
        },
    )
    validation = load_mmlu("virology", "validation[1:]", hub=folder, cache_dir=cache_dir)
    everything = load_mmlu(split="validation", hub=folder, cache_dir=cache_dir)
    assert len(everything) == 4 and len(validation) == 1
    assert validation[0] == [s for s in everything if s.extra["subject"] == "virology"][1]
    streamed = list(stream("mmlu", "astronomy", hub=folder, cache_dir=cache_dir))
    assert streamed == list(astronomy)
    with pytest.raises(ValueError, match="BuilderConfig 'nope' not found"):
        load_mmlu("nope", hub=folder, cache_dir=cache_dir)


def test_hellaswag_reads_the_parquet_conversion_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = Recorder()
    monkeypatch.setattr(datasets, "load_dataset", recorder)
    folder = str(HUB / "Rowan" / "hellaswag")
    samples = load_hellaswag("validation[2:]", hub=folder, cache_dir=str(tmp_path / "c"))
    assert [args for args, _ in recorder.calls] == [(folder,)]
    assert recorder.calls[0][1]["revision"] == "refs/convert/parquet"
    assert recorder.calls[0][1]["split"] == "validation"
    source = pq.read_table(HUB / "Rowan" / "hellaswag" / "default" / "validation" / "0000.parquet")
    assert [s.context for s in samples] == source.column("ctx").to_pylist()[2:]
    skipped = load_hellaswag("test", hub=folder, cache_dir=str(tmp_path / "c"), on_error="skip")
    assert len(skipped) == 0 and [r.row for r in skipped.rejects] == [0, 1]


def test_the_generic_loader_takes_a_hub_layout_folder_as_its_path(tmp_path: Path) -> None:
    mapping = MMLU_LAYOUTS["cais"]
    samples = load(
        mapping, "all", "test[:3]", hub=str(HUB / "cais" / "mmlu"), cache_dir=str(tmp_path)
    )
    assert _core(samples) == _core(load_mmlu(data_files=MMLU / "cais_test.parquet"))[:3]


def test_a_hub_mirror_serves_the_hub_ids_through_the_hub_code_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:

    monkeypatch.setenv("SDVM_HF_HUB_MIRROR", str(HUB))
    astronomy = load_mmlu("astronomy", split="test")
    assert len(astronomy) == 6 and {s.extra["subject"] for s in astronomy} == {"astronomy"}
    assert len(load_mmlu("virology", split="validation")) == 2
    assert len(load_hellaswag("validation")) == 12
    assert len(load("arc", "ARC-Challenge", "test")) > 0
    with pytest.raises(ValueError, match="nosuch"):
        load_mmlu("nosuch", split="test")
