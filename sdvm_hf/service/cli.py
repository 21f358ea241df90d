"""``sdvm-hf audit | fix | refine``: a sample file through the SDVM models and back."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from sdvm_hf.convert import hellaswag, mmlu
from sdvm_hf.service.roundtrip import MAX_BATCH, STAGES, Retry, run_stage

CONVENTIONS = {"hellaswag": hellaswag.CONVENTIONS, "mmlu": mmlu.CONVENTIONS}
"""The default ``conventions`` text per dataset."""

HELP = {
    "audit": "rate every sample with sdvm-audit-1",
    "fix": "fix samples with sdvm-fix-1",
    "refine": "audit, fix and reaudit in one call",
}


def add_service_commands(commands: Any) -> None:
    """Add the audit, fix and refine subcommands to the ``sdvm-hf`` parser."""
    for stage in STAGES:
        command = commands.add_parser(
            stage,
            help=HELP[stage],
            formatter_class=argparse.RawDescriptionHelpFormatter,
            epilog=f"""example:
  export SDVM_API_KEY=...   # read from the environment, never printed or written
  sdvm-hf {stage} out/hellaswag.parquet -o out/hellaswag.{stage}.parquet --dataset hellaswag

An interrupted run resumes where it stopped: rerun the same command.""",
        )
        command.add_argument("file", type=Path, help="a sample file (.parquet or .jsonl)")
        command.add_argument(
            "-o", "--output", type=Path, required=True, help="the sample Parquet file to write"
        )
        command.add_argument("--base-url", help="the service address (default: the SDK's)")
        command.add_argument(
            "--dataset", choices=sorted(CONVENTIONS), help="use this dataset's default conventions"
        )
        command.add_argument(
            "--conventions", help="what formatting is by design (overrides --dataset's)"
        )
        command.add_argument(
            "--batch-size",
            type=int,
            default=MAX_BATCH,
            help=f"samples per request, at most {MAX_BATCH}",
        )
        command.set_defaults(run=_run, stage=stage)


def conventions_for(dataset: str | None, override: str | None) -> str | None:
    """The conventions text: the override, else the dataset's default, else none."""
    if override is not None:
        return override
    return CONVENTIONS.get(dataset or "")


def _run(args: argparse.Namespace) -> int:
    from sdvm_hf.io import read_samples
    from sdvm_hf.stats import summarize

    result = run_stage(
        read_samples(args.file),
        args.stage,
        args.output,
        api_key=os.environ.get("SDVM_API_KEY", ""),
        base_url=args.base_url,
        conventions=conventions_for(args.dataset, args.conventions),
        batch_size=args.batch_size,
        retry=Retry(),
    )
    print("\n".join(summarize(result.table).lines()))
    return 0
