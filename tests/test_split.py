"""Split specs are parsed by our code and mean what ``datasets.ReadInstruction`` says they mean.

Every form ``docs/loading.md`` lists (names, absolute and percent slices, negative bounds, the
rounding of a percent), and random specs and lengths: the same parts, the same rows, the same
refusals, word for word.
"""

import subprocess
import sys
from pathlib import Path

import datasets
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import sdvm_hf
from sdvm_hf.sources._split import _UNBOUNDED, _parts, parse_split

FIXTURES = Path(__file__).parent / "fixtures"


def _theirs(spec: str) -> list[tuple[str, int | None, int | None, str | None, str | None]]:
    instruction = datasets.ReadInstruction.from_spec(spec)
    return [
        (part.splitname, part.from_, part.to, part.unit, part.rounding)
        for part in instruction._relative_instructions
    ]


def _ours(spec: str) -> list[tuple[str, int | None, int | None, str | None, str | None]]:
    return [(part.name, part.from_, part.to, part.unit, part.rounding) for part in _parts(spec)]


def _outcome(work: object, *args: object) -> object:
    try:
        return work(*args)  # type: ignore[operator]
    except (ValueError, AssertionError, TypeError) as error:  # ours: an InputError, a ValueError
        return (ValueError if isinstance(error, ValueError) else type(error), str(error))


def _bounds_by_datasets(spec: str, length: int | None) -> tuple[int, int | None]:
    """What ``SplitSpec.bounds`` answered when it asked ``datasets`` (the code it replaces)."""
    split = parse_split(spec)
    if not split.sliced:
        return 0, length
    if length is None and split.needs_length:
        raise ValueError(f"split {spec!r}: the slice needs the split's length")
    total = _UNBOUNDED if length is None else length
    try:
        (absolute,) = datasets.ReadInstruction.from_spec(spec).to_absolute({split.name: total})
    except ValueError as error:
        raise ValueError(f"split {spec!r} on {length} rows: {error}") from None
    stop = None if length is None and absolute.to == _UNBOUNDED else absolute.to
    if stop is not None and absolute.from_ >= stop:
        raise split.empty(length)
    return absolute.from_, stop


DOCUMENTED = [
    "validation",
    "train",
    "test",
    "auxiliary_train",
    "validation[:100]",
    "validation[3:7]",
    "validation[10:]",
    "validation[:5]",
    "train[-50:]",
    "validation[:-2]",
    "validation[-4:-1]",
    "test[10%:20%]",
    "validation[25%:75%]",
    "validation[:33%]",
    "validation[10%:]",
    "validation[:10%]",
    "validation[-10%:]",
    "validation[:-10%]",
    "test[:20%](closest)",
    "test[:20%](pct1_dropremainder)",
    "test[-25%:-5%](pct1_dropremainder)",
    "validation[1_0:2_0]",
    "validation[0:0]",
    "validation[:]",
]
LENGTHS = [0, 1, 7, 12, 99, 100, 296, 1001, 14042]


@pytest.mark.parametrize("spec", DOCUMENTED)
def test_every_documented_form_parses_and_slices_as_datasets_does(spec: str) -> None:
    assert _ours(spec) == _theirs(spec)
    for length in LENGTHS:
        assert _outcome(parse_split(spec).bounds, length) == _outcome(
            _bounds_by_datasets, spec, length
        )


@pytest.mark.parametrize(
    "spec",
    [
        "validation[",
        "validation[a:b]",
        "validation[:200%]",
        "validation[5]",
        "validation[1:2](closest)",
        "validation[1%:2%](nearest)",
        "validation[1%:2%]()",
        "validation[_:]",
        "va lidation",
        "validation+test",
        "train[:10%]+test[:10%](pct1_dropremainder)",
        "validation[1.5:]",
    ],
)
def test_refusals_say_what_datasets_says(spec: str) -> None:
    assert _outcome(_ours, spec) == _outcome(_theirs, spec)


def _bound(percent: bool) -> st.SearchStrategy[str]:
    number = st.integers(-130, 130) | st.integers(-(10**7), 10**7)
    return st.one_of(
        st.just(""),
        number.map(lambda n: f"{n}%" if percent else str(n)),
    )


@st.composite
def specs(draw: st.DrawFn) -> str:
    """Random specs near the grammar: most are valid, some are one character off."""
    name = draw(st.sampled_from(["validation", "test", "a.b", "x_1", "tr ain", ""]))
    if draw(st.booleans()):
        percent = draw(st.booleans())
        start = draw(_bound(percent and draw(st.booleans())))
        stop = draw(_bound(percent))
        name += f"[{start}:{stop}]"
        if draw(st.booleans()):
            rounding = draw(st.sampled_from(["closest", "pct1_dropremainder", "", "up"]))
            name += f"({rounding})"
    if draw(st.integers(0, 9)) == 0:
        name += draw(st.sampled_from(["+test", " + test[:5%]", "]", "\n", "[1:2]"]))
    return name


@given(specs() | st.text(max_size=12), st.integers(0, 3_000_000) | st.sampled_from(LENGTHS))
@example("validation[:33%]", 296)
@example("validation[:-1]", 5)
@example("test[-99%:](pct1_dropremainder)", 150)
def test_random_specs_and_lengths_agree_with_datasets(spec: str, length: int) -> None:
    theirs = _outcome(_theirs, spec)
    assert _outcome(_ours, spec) == theirs
    if not isinstance(theirs, list):
        return
    parts = _parts(spec)
    lengths = {part.name: length for part in parts}
    absolute = _outcome(datasets.ReadInstruction.from_spec(spec).to_absolute, lengths)
    if isinstance(absolute, list):
        absolute = [(instruction.from_, instruction.to) for instruction in absolute]
    assert _outcome(lambda: [part.absolute(length) for part in parts]) == absolute
    if len(parts) == 1 and spec.strip():
        split = parse_split(spec)
        assert _outcome(split.bounds, length) == _outcome(_bounds_by_datasets, spec, length)
        if not split.needs_length:
            assert _outcome(split.bounds, None) == _outcome(_bounds_by_datasets, spec, None)


def test_a_local_load_imports_no_datasets(tmp_path: Path) -> None:
    hellaswag, mmlu = FIXTURES / "hellaswag", FIXTURES / "mmlu" / "hendrycks"
    code = f"""
import sys
import sdvm_hf
whole = sdvm_hf.load("hellaswag", data_files={str(hellaswag / "validation.parquet")!r})
part = sdvm_hf.load("hellaswag", split="validation[25%:-10%]", data_files={str(hellaswag / "validation.jsonl")!r})
stream = sdvm_hf.stream(
    "hellaswag", split="validation[-50%:]", data_files={str(hellaswag / "validation.parquet")!r},
)
mmlu = sdvm_hf.load_mmlu(split="test[:3]", data_files={str(mmlu / "*.csv")!r})
sdvm_hf.write_parquet(part, {str(tmp_path / "out.parquet")!r})
print(len(whole), len(part), len(list(stream)), len(mmlu))
assert "datasets" not in sys.modules, "datasets was imported"
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["12", "8", "6", "3"]
    assert len(sdvm_hf.read_parquet(tmp_path / "out.parquet")) == 8
