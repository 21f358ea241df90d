"""HellaSwag end to end: load, convert, write Parquet + wire JSON Lines, summarise; optionally
audit, fix or refine with SDVM.

    python recipes/hellaswag.py                    # the bundled validation slice, offline
    python recipes/hellaswag.py --hub --split train
    SDVM_API_KEY=... python recipes/hellaswag.py --refine
"""

from __future__ import annotations

import argparse

from _recipe import run

from sdvm_hf import SampleSequence, load_hellaswag
from sdvm_hf.convert.hellaswag import CONVENTIONS


def load(args: argparse.Namespace) -> SampleSequence:
    bundled = not args.hub and not args.data_files
    return load_hellaswag(
        args.split, bundled=bundled, data_files=args.data_files, on_error=args.on_error
    )


if __name__ == "__main__":
    run("hellaswag", load, CONVENTIONS, default_split="validation")
