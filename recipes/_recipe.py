"""What the dataset recipes share: their options, the files they write, the SDVM round trip.

Public API only; each recipe says how to load its dataset and which conventions to send.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path

from sdvm_hf import SampleSequence, write_jsonl, write_parquet
from sdvm_hf.io import rejects_path, write_rejects
from sdvm_hf.service import run_stage
from sdvm_hf.stats import summarize


def options(name: str, default_split: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=f"Convert {name} to sample Parquet and wire JSON Lines, optionally through SDVM."
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--hub",
        action="store_true",
        help="load from the Hugging Face Hub (default: the bundled slice)",
    )
    source.add_argument(
        "--data-files", nargs="+", help="local Parquet, JSON Lines, JSON or CSV files"
    )
    parser.add_argument("--split", default=default_split)
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
    parser.add_argument("--base-url", help="the SDVM service address (default: the SDK's)")
    parser.add_argument(
        "--conventions", help="what formatting is by design (default: this dataset's)"
    )
    return parser


def run(
    name: str,
    load: Callable[[argparse.Namespace], SampleSequence],
    conventions: str,
    default_split: str,
) -> SampleSequence:
    args = options(name, default_split).parse_args()
    samples = load(args)
    stem = args.out / f"{name}-{args.split}"
    write_parquet(samples, stem.with_suffix(".parquet"))
    write_jsonl(samples, stem.with_suffix(".jsonl"))
    if samples.rejects:
        write_rejects(samples.rejects, rejects_path(stem.with_suffix(".parquet")))
    print(f"wrote {stem}.parquet and {stem}.jsonl")
    print("\n".join(summarize(samples.table, samples.rejects).lines()))
    if args.stage:
        result = run_stage(
            samples,
            args.stage,
            stem.with_suffix(f".{args.stage}.parquet"),
            api_key=os.environ.get("SDVM_API_KEY", ""),
            base_url=args.base_url,
            conventions=args.conventions or conventions,
        )
        print(f"wrote {stem}.{args.stage}.parquet")
        print("\n".join(summarize(result.table).lines()))
    return samples
