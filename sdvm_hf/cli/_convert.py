"""``sdvm-hf convert``: a split of a known dataset, or of any source with a generic mapping."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sdvm_hf._wire import STYLES
from sdvm_hf.cli._common import add_command, print_summary, readable_input
from sdvm_hf.cli._names import ANSWER_FORMATS, FORMATS, preset_names
from sdvm_hf.errors import InputError

if TYPE_CHECKING:
    from sdvm_hf.convert.mapping import MultipleChoiceMapping
    from sdvm_hf.sources.streaming import StreamingSamples

EXAMPLE = """sdvm-hf convert hellaswag --bundled -o out/hellaswag.parquet
  sdvm-hf convert hellaswag --split validation -o out/hellaswag.parquet      (from the Hub)
  sdvm-hf convert mmlu --data-files mmlu/test/*.csv --on-error skip -o out/mmlu.jsonl
  sdvm-hf convert arc --name ARC-Easy --split test -o out/arc.parquet
  sdvm-hf convert generic --hub allenai/ai2_arc --name ARC-Easy --split test \\
      --context question --choices choices.text --answer answerKey --answer-format label \\
      --labels choices.label --style qa -o out/arc.parquet
  sdvm-hf convert generic --data-files siqa.parquet --context context question \\
      --choices answerA answerB answerC --answer label --answer-format one_based \\
      --keep context question --rename context=situation -o out/siqa.parquet"""


def add_commands(commands: Any) -> None:
    """Add ``convert``."""
    convert = add_command(commands, "convert", "convert a split to a sample file", EXAMPLE)
    convert.add_argument("dataset", choices=(*preset_names(), "generic"))
    source = convert.add_mutually_exclusive_group()
    source.add_argument(
        "--bundled", action="store_true", help="the slice shipped in the package (offline)"
    )
    source.add_argument(
        "--data-files",
        nargs="+",
        metavar="PATH",
        help="local Parquet, JSON Lines, JSON or CSV files, globs or folders",
    )
    source.add_argument("--hub", metavar="DATASET", help="generic: a Hub dataset id")
    convert.add_argument("--split", help="the split (default: the dataset's; generic: train)")
    convert.add_argument(
        "--config",
        "--name",
        "--subject",
        dest="config",
        help="the Hub configuration (mmlu: the subject; --name and --subject say the same)",
    )
    convert.add_argument("--layout", help="the layout, when the columns do not tell")
    convert.add_argument("--revision", help="the Hub revision")
    convert.add_argument("--cache-dir", help="the datasets cache folder")
    generic = convert.add_argument_group("generic mapping")
    generic.add_argument(
        "--context",
        nargs="+",
        help="the context column, or several joined with --context-join (default: a space)",
    )
    generic.add_argument("--context-join", default=" ", help="the separator of a joined context")
    generic.add_argument(
        "--choices",
        nargs="+",
        help="one list column, or one column per choice (a struct field: choices.text)",
    )
    generic.add_argument("--answer", help="the answer column")
    generic.add_argument("--answer-format", choices=ANSWER_FORMATS, default="index")
    generic.add_argument(
        "--labels", help="label: the list column the answer is matched against (choices.label)"
    )
    generic.add_argument("--blank", help="a blank in the context that the choices fill (_)")
    generic.add_argument(
        "--keep", nargs="+", default=(), metavar="COLUMN", help="used columns to keep in extra"
    )
    generic.add_argument(
        "--rename", nargs="+", default=(), metavar="COLUMN=KEY", help="extra keys to rename"
    )
    generic.add_argument(
        "--drop", nargs="+", default=(), metavar="COLUMN", help="columns to leave out of extra"
    )
    generic.add_argument(
        "--unnest", metavar="COLUMN", help="a struct column whose fields are the row"
    )
    generic.add_argument(
        "--style",
        choices=STYLES,
        default="qa",
        help="qa (questions) or continuation (stems)",
    )
    convert.add_argument(
        "-o", "--output", required=True, type=Path, help="the sample file to write"
    )
    convert.add_argument("--format", choices=FORMATS, help="default: from the output's extension")
    convert.add_argument(
        "--on-error",
        choices=("raise", "skip"),
        default="raise",
        help="stop at the first bad row, or skip and report every one (default: raise)",
    )
    convert.add_argument(
        "--shuffle-choices",
        type=int,
        metavar="SEED",
        help="shuffle each sample's choices reproducibly (a remedy for answer-position bias); "
        "the original order is kept in extra",
    )
    convert.add_argument("--json", action="store_true", help="print the summary as JSON")
    convert.add_argument("--quiet", action="store_true", help="no progress bar")
    convert.set_defaults(run=_convert)


def _mapping(args: argparse.Namespace) -> MultipleChoiceMapping:
    from sdvm_hf.convert.mapping import MultipleChoiceMapping

    missing = [flag for flag in ("context", "choices", "answer") if not getattr(args, flag)]
    if missing:
        raise InputError(f"give --{', --'.join(missing)}")
    choices = args.choices[0] if len(args.choices) == 1 else tuple(args.choices)
    context = args.context[0] if len(args.context) == 1 else tuple(args.context)
    rename = dict(_pair(item) for item in args.rename)
    return MultipleChoiceMapping(
        dataset=args.hub or "dataset",
        context=context,
        context_join=args.context_join,
        choices=choices,
        answer=args.answer,
        answer_format=args.answer_format,
        labels=args.labels,
        blank=args.blank,
        style=args.style,
        keep=tuple(args.keep),
        rename=rename,
        drop=tuple(args.drop),
        unnest=args.unnest,
    )


def _pair(item: str) -> tuple[str, str]:
    column, sep, key = item.partition("=")
    if not sep or not column or not key:
        raise InputError(f"--rename takes COLUMN=KEY, got {item!r}")
    return column, key


def _load(args: argparse.Namespace, files: list[str]) -> StreamingSamples:
    """The split as a stream: the command holds a few batches at a time, whatever its size."""
    from sdvm_hf.presets.registry import PRESETS, stream
    from sdvm_hf.sources.loaders import SourceOptions

    options: SourceOptions = {
        "data_files": files or None,  # expanded once, by the caller
        "revision": args.revision,
        "cache_dir": args.cache_dir,
        "hub": args.hub,
    }
    if args.dataset != "generic":
        if args.hub:
            raise InputError(f"--hub is for generic; {args.dataset} knows its Hub dataset")
        return stream(
            PRESETS[args.dataset],
            args.config,
            args.split,
            layout=args.layout,
            bundled=args.bundled,
            on_error=args.on_error,
            **options,
        )
    if args.bundled:
        raise InputError(f"--bundled is for {', '.join(PRESETS)}")
    if not args.hub and not args.data_files:
        raise InputError("give --hub DATASET or --data-files PATH")
    return stream(
        _mapping(args),
        args.config,
        args.split,
        on_error=args.on_error,
        **options,
    )


def _convert(args: argparse.Namespace) -> int:
    from sdvm_hf._progress import quiet
    from sdvm_hf.jobs import check_output, convert_to_files
    from sdvm_hf.presets.registry import PRESETS
    from sdvm_hf.shuffle import shuffle_choices
    from sdvm_hf.sources.source import expand

    inputs = expand(args.data_files) if args.data_files else []
    for path in inputs:
        readable_input(path, "a source file")
    check_output(args.output, inputs, args.format)
    if args.split is None and args.dataset != "generic" and not args.bundled:
        preset = PRESETS[args.dataset]
        print(
            f"sdvm-hf convert: no --split given: taking {preset.name}'s {preset.split!r} split",
            file=sys.stderr,
        )
    with quiet(args.quiet):
        samples = _load(args, inputs)
        if args.shuffle_choices is not None:
            samples = shuffle_choices(samples, args.shuffle_choices)
        converted = convert_to_files(samples, args.output, args.format)
    print_summary(converted.summary, args.json)
    if converted.output is None:
        print(
            f"sdvm-hf convert: every one of the {converted.summary.rows_in or 0:,} rows was "
            f"rejected (see {converted.rejects}); {args.output} was not written",
            file=sys.stderr,
        )
        return 1
    rejects = f" and its rejects to {converted.rejects}" if converted.rejects else ""
    print(f"sdvm-hf convert: wrote {converted.output}{rejects}", file=sys.stderr)
    return 0
