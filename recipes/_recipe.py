"""What the dataset recipes share: their options, the files they write, the SDVM round trip.

Public API only (``sdvm_hf`` and its namespaces ``jobs`` and ``service``). A recipe names a preset of ``sdvm_hf.PRESETS``;
everything else (its Hub id, default split, bundled slice, conventions) comes from there.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from sdvm_hf import (
    PRESETS,
    SampleSequence,
    load,
    summarize,
    write_jsonl,
)
from sdvm_hf.errors import SdvmHfError
from sdvm_hf.jobs import convert_to_files
from sdvm_hf.service import run_stage


def options(name: str) -> argparse.ArgumentParser:
    preset = PRESETS[name]
    parser = argparse.ArgumentParser(
        description=f"Convert {name} to sample Parquet and wire JSON Lines, optionally through SDVM."
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--from-hub",
        action="store_true",
        help=f"load {preset.hub} from the Hugging Face Hub (default: the bundled slice)",
    )
    source.add_argument(
        "--data-files", nargs="+", help="local Parquet, JSON Lines, JSON or CSV files"
    )
    parser.add_argument("--split", default=preset.split)
    parser.add_argument(
        "--out", type=Path, default=Path("out"), help="the output folder (default: out)"
    )
    parser.add_argument("--on-error", choices=("raise", "skip"), default="skip")
    stages = parser.add_mutually_exclusive_group()
    for stage in ("audit", "fix", "refine"):
        stages.add_argument(
            f"--{stage}",
            dest="stage",
            action="store_const",
            const=stage,
            help=f"send the samples to SDVM's {stage} (needs SDVM_API_KEY)",
        )
    parser.add_argument(
        "--base-url", help="the SDVM service address (default: $SDVM_BASE_URL, else the SDK's)"
    )
    parser.add_argument(
        "--conventions",
        help="what formatting is by design (default: this dataset's; '' sends none)",
    )
    return parser


USER_ERRORS = (SdvmHfError, OSError)
"""This package's own errors (the service's among them) and the system's: anything else is a bug."""


def main(name: str, argv: Sequence[str] | None = None) -> int:
    """Run the recipe as a script: a user error is one line on stderr and exit status 2."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # the round trip's plan
    try:
        run(name, argv)
    except USER_ERRORS as error:
        print(f"recipes/{name}.py: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"recipes/{name}.py: interrupted", file=sys.stderr)
        return 130
    return 0


def run(name: str, argv: Sequence[str] | None = None) -> SampleSequence:
    args = options(name).parse_args(argv)
    preset = PRESETS[name]
    bundled = not args.from_hub and not args.data_files and preset.bundled is not None
    samples = load(
        preset,
        split=args.split,
        bundled=bundled,
        data_files=args.data_files,
        on_error=args.on_error,
    )
    stem = args.out / f"{name}-{args.split}"
    converted = convert_to_files(samples, stem.with_suffix(".parquet"))
    if converted.output is None:  # e.g. a test split whose labels are withheld
        print(
            f"every one of the {len(samples.rejects):,} rows was rejected (see "
            f"{converted.rejects}); no sample file was written"
        )
        print("\n".join(converted.summary.lines()))
        return samples
    write_jsonl(samples, stem.with_suffix(".jsonl"))
    print(f"wrote {stem}.parquet and {stem}.jsonl")
    print("\n".join(converted.summary.lines()))
    if args.stage:
        result = run_stage(
            samples,
            args.stage,
            stem.with_suffix(f".{args.stage}.parquet"),
            api_key=os.environ.get("SDVM_API_KEY", ""),
            base_url=args.base_url,
            conventions=preset.conventions if args.conventions is None else args.conventions,
        )
        print(f"wrote {stem}.{args.stage}.parquet")
        print("\n".join(summarize(result.table).lines()))
    return samples
