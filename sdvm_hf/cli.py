"""The ``sdvm-hf`` command: convert, inspect, validate, and the SDVM audit / fix / refine trip."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from sdvm_hf.arrow.schema import canonical, check_schema
from sdvm_hf.arrow.table import SampleSequence
from sdvm_hf.arrow.validate import find_problems
from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.errors import ConversionError, LayoutError, Problem, SampleTableError
from sdvm_hf.io import read_samples, rejects_path, write_rejects, write_samples
from sdvm_hf.load.loaders import (
    SourceOptions,
    load_hellaswag,
    load_mmlu,
    load_multiple_choice,
)
from sdvm_hf.samples import MultipleChoiceSample
from sdvm_hf.service.roundtrip import ServiceError
from sdvm_hf.stats import summarize

log = logging.getLogger("sdvm_hf")

EXAMPLES = {
    "convert": """examples:
  sdvm-hf convert hellaswag --bundled -o out/hellaswag.parquet
  sdvm-hf convert hellaswag --split validation -o out/hellaswag.parquet      (from the Hub)
  sdvm-hf convert mmlu --data-files mmlu/test/*.csv --on-error skip -o out/mmlu.jsonl
  sdvm-hf convert generic --hub allenai/ai2_arc --name ARC-Easy --split test \\
      --context question --choices A B C D --answer answerKey --answer-format letter \\
      --style qa -o out/arc.parquet""",
    "inspect": "example:\n  sdvm-hf inspect out/mmlu.parquet",
    "validate": "example:\n  sdvm-hf validate out/mmlu.parquet && echo valid",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sdvm-hf",
        description="Hugging Face multiple-choice datasets as typed SDVM samples.",
        epilog="run 'sdvm-hf COMMAND --help' for each command's options and an example",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    raw = argparse.RawDescriptionHelpFormatter

    convert = commands.add_parser(
        "convert",
        help="convert a split to a sample file",
        epilog=EXAMPLES["convert"],
        formatter_class=raw,
    )
    convert.add_argument("dataset", choices=("hellaswag", "mmlu", "generic"))
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
    source.add_argument(
        "--hub",
        metavar="DATASET",
        help="a Hub dataset id (generic; hellaswag and mmlu know theirs)",
    )
    convert.add_argument(
        "--split",
        help="the split (default: validation for hellaswag, test for mmlu, train otherwise)",
    )
    convert.add_argument("--name", help="the Hub configuration (generic)")
    convert.add_argument("--subject", default="all", help="mmlu: the subject (default: all)")
    convert.add_argument("--layout", help="mmlu: the layout, when the columns do not tell")
    convert.add_argument("--revision", help="the Hub revision")
    convert.add_argument("--cache-dir", help="the datasets cache folder")
    convert.add_argument("--context", help="generic: the context column")
    convert.add_argument(
        "--choices", nargs="+", help="generic: one list column, or one column per choice"
    )
    convert.add_argument("--answer", help="generic: the answer column")
    convert.add_argument("--answer-format", choices=("index", "letter", "text"), default="index")
    convert.add_argument(
        "--style",
        choices=("qa", "continuation"),
        default="qa",
        help="generic: qa (questions) or continuation (stems)",
    )
    convert.add_argument(
        "-o",
        "--output",
        required=True,
        type=Path,
        help="the sample file to write (.parquet or .jsonl)",
    )
    convert.add_argument(
        "--format", choices=("parquet", "jsonl"), help="default: from the output's extension"
    )
    convert.add_argument(
        "--on-error",
        choices=("raise", "skip"),
        default="raise",
        help="stop at the first bad row, or skip and report every one (default: raise)",
    )
    convert.add_argument("--json", action="store_true", help="print the summary as JSON")

    inspect = commands.add_parser(
        "inspect", help="summarise a sample file", epilog=EXAMPLES["inspect"], formatter_class=raw
    )
    inspect.add_argument("file", type=Path)
    inspect.add_argument("--json", action="store_true", help="print the summary as JSON")

    validate = commands.add_parser(
        "validate",
        help="check every row of a sample file",
        epilog=EXAMPLES["validate"],
        formatter_class=raw,
    )
    validate.add_argument("file", type=Path)
    validate.add_argument(
        "--limit", type=int, default=20, help="how many problems to list (default: 20)"
    )

    from sdvm_hf.service.cli import add_service_commands

    add_service_commands(commands)
    return parser


def _mapping(args: argparse.Namespace) -> MultipleChoiceMapping:
    missing = [flag for flag in ("context", "choices", "answer") if not getattr(args, flag)]
    if missing:
        raise SystemExit(f"sdvm-hf convert generic: give --{', --'.join(missing)}")
    choices = args.choices[0] if len(args.choices) == 1 else tuple(args.choices)
    return MultipleChoiceMapping(
        name=args.hub or "dataset",
        context=args.context,
        choices=choices,
        answer=args.answer,
        answer_format=args.answer_format,
        style=args.style,
    )


def _load(args: argparse.Namespace) -> SampleSequence:
    options: SourceOptions = {
        "data_files": args.data_files,
        "revision": args.revision,
        "cache_dir": args.cache_dir,
        "on_error": args.on_error,
    }
    if args.dataset == "hellaswag":
        return load_hellaswag(args.split or "validation", bundled=args.bundled, **options)
    if args.dataset == "mmlu":
        split = args.split or "test"
        return load_mmlu(args.subject, split, layout=args.layout, bundled=args.bundled, **options)
    if args.bundled:
        raise SystemExit("sdvm-hf convert generic: --bundled is for hellaswag and mmlu")
    if not args.hub and not args.data_files:
        raise SystemExit("sdvm-hf convert generic: give --hub DATASET or --data-files PATH")
    split = args.split or "train"
    return load_multiple_choice(args.hub, _mapping(args), name=args.name, split=split, **options)


def _print_summary(summary: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary.as_dict(), indent=2, default=str))
    else:
        print("\n".join(summary.lines()))


def _convert(args: argparse.Namespace) -> int:
    samples = _load(args)
    write_samples(samples, args.output, args.format)
    log.info("wrote %s samples to %s", len(samples), args.output)
    if samples.rejects:
        write_rejects(samples.rejects, rejects_path(args.output))
        log.info("wrote %s rejects to %s", len(samples.rejects), rejects_path(args.output))
    _print_summary(summarize(samples.table, samples.rejects), args.json)
    return 0


def _inspect(args: argparse.Namespace) -> int:
    _print_summary(summarize(read_samples(args.file).table), args.json)
    return 0


def _validate(args: argparse.Namespace) -> int:
    problems: list[Problem | str] = []
    count = 0
    if args.file.suffix == ".jsonl":
        with args.file.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if line.strip():
                    count += 1
                    try:
                        MultipleChoiceSample.from_dict(json.loads(line))
                    except ValueError as error:
                        problems.append(f"line {number}: {error}".replace("\n", " "))
    else:
        table = pq.read_table(args.file)
        count = table.num_rows
        check_schema(table.schema, str(args.file))
        problems += find_problems(canonical(table))
    if problems:
        shown = min(len(problems), args.limit)
        print(f"{args.file}: {len(problems):,} problems in {count:,} rows; the first {shown}:")
        for problem in problems[: args.limit]:
            print(f"  {problem}")
        return 1
    print(f"{args.file}: {count:,} valid samples")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    handlers = {"convert": _convert, "inspect": _inspect, "validate": _validate}
    try:
        if args.command in handlers:
            return handlers[args.command](args)
        return int(args.run(args))
    except (
        ConversionError,
        LayoutError,
        SampleTableError,
        ServiceError,
        OSError,
        ValueError,
    ) as error:
        print(f"sdvm-hf {args.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
