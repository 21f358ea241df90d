"""``sdvm-hf audit | fix | refine``: a sample file through the SDVM models and back."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from sdvm_hf.cli._common import add_command, print_summary, readable_input
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
requested (a second Ctrl-C stops at once); one run at a time per output (OUT.lock). A rerun
of a finished run sends nothing (--force sends again); --dry-run counts what a run would
send. Without --dataset or --conventions, the dataset the file's record names gives them.
Offline: sdvm-hf serve-stub, and --base-url http://127.0.0.1:8377.""",
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
            help="use this dataset's default conventions (default: the dataset the file's "
            "record names)",
        )
        command.add_argument(
            "--conventions",
            help="what formatting is by design (overrides --dataset's; '' sends none)",
        )
        command.add_argument(
            "--dry-run",
            action="store_true",
            help="print the requests and samples a run would send, and send nothing",
        )
        command.add_argument(
            "--force",
            action="store_true",
            help="send every request again, though the output is already done",
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
    stub = add_command(
        commands,
        "serve-stub",
        "serve a local stand-in for the SDVM service, to try the round trip offline",
        """sdvm-hf serve-stub --port 8377 &
  export SDVM_BASE_URL=http://127.0.0.1:8377 SDVM_API_KEY=sk-offline
  sdvm-hf audit out/hellaswag.parquet -o out/hellaswag.audit.parquet

It answers as the service does, with deterministic verdicts and fixes (no model, no cost),
takes any key unless --key names one, and throws --fault on request.""",
    )
    from sdvm_hf.service.stub import add_options

    add_options(stub)
    stub.set_defaults(run=_serve)


def _serve(args: argparse.Namespace) -> int:
    from sdvm_hf.service.stub import serve

    return serve(args)


def _run(args: argparse.Namespace) -> int:
    from sdvm_hf.files import read_samples
    from sdvm_hf.jobs import check_output
    from sdvm_hf.presets.registry import PRESETS
    from sdvm_hf.service.roundtrip import Retry, plan_stage, run_stage
    from sdvm_hf.summary import summarize

    if not args.verbose:  # one line per request is noise; -v shows them
        logging.getLogger("httpx").setLevel(logging.WARNING)
    conventions = args.conventions
    if conventions is None and args.dataset:
        conventions = PRESETS[args.dataset].conventions or ""
    readable_input(args.file)
    if check_output(args.output, [args.file]) != "parquet":
        raise InputError(f"{args.output}: the output is Parquet; name it .parquet")
    samples = read_samples(args.file)
    if args.dry_run:
        plan = plan_stage(
            samples,
            args.stage,
            args.output,
            conventions=conventions,
            batch_size=args.batch_size,
            force=args.force,
        )
        print("\n".join(plan.lines()))
        print("dry run: nothing was sent")
        return 0
    try:
        result = run_stage(
            samples,
            args.stage,
            args.output,
            api_key=os.environ.get("SDVM_API_KEY", ""),
            base_url=args.base_url or None,
            conventions=conventions,
            batch_size=args.batch_size,
            concurrency=args.concurrency,
            retry=Retry() if args.retry is None else args.retry,
            force=args.force,
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
