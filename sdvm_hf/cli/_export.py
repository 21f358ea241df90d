"""``sdvm-hf export``: sample files back in their dataset's published layout, a Hub folder."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sdvm_hf.cli._common import readable_input
from sdvm_hf.cli._names import POLICIES


def add_commands(commands: Any) -> None:
    """Add ``export`` to the parser's subcommands."""
    command = commands.add_parser(
        "export",
        help="write sample files back in their dataset's published layout (a Hub folder)",
        description=(
            "Write sample files (from convert, audit, fix or refine; one per split) back in "
            "their dataset's published layout, as a Hugging Face dataset folder that "
            "datasets.load_dataset(FOLDER, CONFIG) reads and huggingface_hub.upload_folder "
            "publishes. Each file's record says where it came from."
        ),
        epilog="example: sdvm-hf export out/mmlu.refined.parquet -o mmlu-clean --policy drop",
    )
    command.add_argument("samples", nargs="+", metavar="SAMPLES", help="sample files")
    command.add_argument("-o", "--output", required=True, metavar="FOLDER", help="the folder")
    command.add_argument(
        "--policy",
        choices=POLICIES,
        default="replace",
        help="replace: every row, fixed text where a fix changed it (default); drop: the rows "
        "whose final verdict passes and whose fix is not flagged; original: the source rows",
    )
    command.add_argument(
        "--drop-if",
        nargs="+",
        default=(),
        metavar="CHECK",
        help="with --policy drop (or --annotate): only these checks drop a row (dotted names, "
        "e.g. checks.grammatical, fix.flagged)",
    )
    command.add_argument(
        "--annotate",
        action="store_true",
        help="add sdvm_status, sdvm_failing and original_<column> for each changed column",
    )
    for flag, what in (
        ("--dataset", "the preset, for files without a record"),
        ("--layout", "the layout to export in (default: the source's)"),
        ("--config", "the configuration, for files without a record"),
        ("--split", "the split, for files without a record"),
    ):
        command.add_argument(flag, help=what)
    command.add_argument(
        "--overwrite", action="store_true", help="replace an earlier export in FOLDER"
    )
    command.add_argument(
        "--repo-id",
        metavar="ORG/NAME",
        help="the Hub dataset repository the folder is to be published to: its lm-eval and "
        "inspect_ai task files name it, and read it where the data is not beside them",
    )
    command.add_argument("--json", action="store_true", help="print the totals as JSON")
    command.set_defaults(run=_export)


def _export(args: argparse.Namespace) -> int:
    from sdvm_hf.exporter import export

    for path in args.samples:
        readable_input(path)
    done = export(
        args.samples,
        args.output,
        policy=args.policy,
        drop_if=args.drop_if,
        annotate=args.annotate,
        dataset=args.dataset,
        layout=args.layout,
        config=args.config,
        split=args.split,
        overwrite=args.overwrite,
        repo_id=args.repo_id,
    )
    if args.json:
        print(json.dumps(done.totals(), indent=2))
    else:
        total = done.total
        print(
            f"wrote {done.folder}: {total.describe(done.policy)}; configurations "
            f"{', '.join(done.configs)}"
        )
        if done.not_written:
            print(f"not written, no row being left: {', '.join(done.not_written)}")
        for note in done.notes:
            print(f"note: {note}")
    return 0
