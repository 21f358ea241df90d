"""``sdvm-hf audit | fix | refine``: a sample file through the SDVM models and back."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from sdvm_hf.cli._common import add_command, print_summary
from sdvm_hf.cli._names import MAX_BATCH, STAGES, preset_names
from sdvm_hf.errors import InputError

HELP = {
    "audit": "rate every sample with sdvm-audit-1",
    "fix": "fix samples with sdvm-fix-1",
    "refine": "audit, fix and reaudit in one call",
}


def add_commands(commands: Any) -> None:
    """Add ``audit``, ``fix`` and ``refine``."""
    for stage in STAGES:
        command = add_command(
            commands,
            stage,
            HELP[stage],
            f"""export SDVM_API_KEY=...   # read from the environment, never printed or written
  sdvm-hf {stage} out/hellaswag.parquet -o out/hellaswag.{stage}.parquet --dataset hellaswag

An interrupted run (Ctrl-C, no credits, a network failure) resumes where it stopped: rerun
the same command. Finished batches wait in OUT.parts/ and are reused only when they still
hold exactly their rows. A stop sends no new request but waits for the answers already
requested (a second Ctrl-C stops at once); one run at a time per output (OUT.lock).""",
        )
        command.add_argument("file", type=Path, help="a sample file (.parquet or .jsonl)")
        command.add_argument(
            "-o", "--output", type=Path, required=True, help="the sample Parquet file to write"
        )
        command.add_argument(
            "--base-url", help="the service address (default: $SDVM_BASE_URL, else the SDK's)"
        )
        command.add_argument(
            "--dataset",
            choices=sorted(preset_names()),
            help="use this dataset's default conventions",
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
        command.add_argument(
            "--concurrency",
            type=int,
            default=4,
            help="requests in flight at once (default: 4)",
        )
        command.set_defaults(run=_run, stage=stage)


def _run(args: argparse.Namespace) -> int:
    from sdvm_hf.files import read_samples
    from sdvm_hf.jobs import check_output
    from sdvm_hf.presets.registry import PRESETS
    from sdvm_hf.service.roundtrip import Retry, run_stage
    from sdvm_hf.summary import summarize

    if not args.verbose:  # one line per request is noise; -v shows them
        logging.getLogger("httpx").setLevel(logging.WARNING)
    conventions = args.conventions
    if conventions is None and args.dataset:
        conventions = PRESETS[args.dataset].conventions
    if check_output(args.output, [args.file]) != "parquet":
        raise InputError(f"{args.output}: the output is Parquet; name it .parquet")
    try:
        result = run_stage(
            read_samples(args.file),
            args.stage,
            args.output,
            api_key=os.environ.get("SDVM_API_KEY", ""),
            base_url=args.base_url or None,
            conventions=conventions,
            batch_size=args.batch_size,
            concurrency=args.concurrency,
            retry=Retry() if args.retry is None else args.retry,
        )
    except KeyboardInterrupt as stop:
        parts = args.output.with_name(args.output.name + ".parts")
        kept = f"finished batches are kept in {parts}, " if parts.is_dir() else ""
        print(
            f"sdvm-hf {args.stage}: {str(stop) or 'interrupted'}; {kept}rerun the same command "
            "to resume",
            file=sys.stderr,
        )
        # Ctrl-C is a plain KeyboardInterrupt; SIGTERM is the command's own subclass of it
        return 130 if type(stop) is KeyboardInterrupt else 143
    print_summary(summarize(result.table))
    return 0
