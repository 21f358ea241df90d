"""MMLU end to end, in any known layout: load, convert, write Parquet + wire JSON Lines,
summarise; optionally audit, fix or refine with SDVM.

    python recipes/mmlu.py                                    # the bundled test slice, offline
    python recipes/mmlu.py --hub --split validation
    python recipes/mmlu.py --data-files ../mmlu/data/test/*.csv   # the original CSV files
"""

from __future__ import annotations

import argparse

from _recipe import run

from sdvm_hf import SampleSequence, load_mmlu
from sdvm_hf.convert.mmlu import CONVENTIONS


def load(args: argparse.Namespace) -> SampleSequence:
    bundled = not args.hub and not args.data_files
    return load_mmlu(
        "all", args.split, bundled=bundled, data_files=args.data_files, on_error=args.on_error
    )


if __name__ == "__main__":
    run("mmlu", load, CONVENTIONS, default_split="test")
