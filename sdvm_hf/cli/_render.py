"""``sdvm-hf render``: sample files as loglikelihood requests, in AI2's request-dump layout."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

FORMULATIONS = ("olmes-rc", "olmes-mc", "lm-eval")
"""The formulations (``sdvm_hf.formulations.FORMULATIONS``; not imported: it needs pyarrow)."""


def add_commands(commands: Any) -> None:
    """Add ``render`` to the parser's subcommands."""
    command = commands.add_parser(
        "render",
        help="write sample files as loglikelihood requests (OLMES rc / mc, lm-eval)",
        description=(
            "Write sample files (from convert, audit, fix or refine; a refined file renders "
            "its fixed text) as loglikelihood requests, one (context, continuation) pair per "
            "choice, in the layout of ai2-olmo-eval's request dumps: FOLDER/requests.jsonl.gz "
            "and FOLDER/config.json, which OLMo's in-loop OEEvalTask reads as a task. With "
            "several files, each goes to FOLDER/<file name>/."
        ),
        epilog="example: sdvm-hf render out/hellaswag.refined.parquet -o hellaswag-rc "
        "--formulation olmes-rc --shots 5 --limit 1000",
    )
    command.add_argument("samples", nargs="+", metavar="SAMPLES", help="sample files")
    command.add_argument("-o", "--output", required=True, metavar="FOLDER", help="the folder")
    command.add_argument(
        "--formulation",
        required=True,
        choices=FORMULATIONS,
        help="olmes-rc: cloze, 'Question: ...\\nAnswer:' then ' ' + choice (with the "
        "unconditional 'Answer:' requests where OLMES has them); olmes-mc: ' A. text' lines, "
        "continuation ' A'; lm-eval: the lm-evaluation-harness task's requests",
    )
    command.add_argument(
        "--shots",
        type=int,
        default=0,
        metavar="K",
        help="few-shot examples: OLMES' published ones where the dataset has them, else a "
        "seeded sample of --shots-from (default: 0)",
    )
    command.add_argument(
        "--shots-from",
        type=Path,
        metavar="FILE",
        help="the training split's sample file to draw few-shot examples from",
    )
    command.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="render N rows chosen as OLMES chooses them (random.Random(1234).sample)",
    )
    command.add_argument(
        "--seed", type=int, default=1234, help="the seed of the few-shot draw (default: 1234)"
    )
    for flag, what in (
        ("--dataset", "the preset, for files without a record (JSON Lines)"),
        ("--config", "the configuration, for files without a record"),
        ("--split", "the split, for files without a record"),
    ):
        command.add_argument(flag, help=what)
    command.set_defaults(run=_render)


def _render(args: argparse.Namespace) -> int:
    from sdvm_hf.cli._common import readable_input
    from sdvm_hf.formulations import RenderError, write_requests

    for path in args.samples:
        readable_input(path)
    several = len(args.samples) > 1
    names = [Path(path).name.split(".")[0] for path in args.samples]
    if several and len(set(names)) < len(names):
        raise RenderError("several SAMPLES share a file name; render them one at a time")
    for path, name in zip(args.samples, names, strict=True):
        folder = Path(args.output) / name if several else Path(args.output)
        done = write_requests(
            path,
            folder,
            args.formulation,
            dataset=args.dataset,
            config=args.config,
            split=args.split,
            shots=args.shots,
            limit=args.limit,
            seed=args.seed,
            shot_samples=args.shots_from,
        )
        print(
            f"{path}: {done.requests:,} requests of {done.documents:,} documents "
            f"({done.task_name}) -> {done.folder}"
        )
    return 0
