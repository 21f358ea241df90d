"""The summary's share of a conversion, with text distinct counts bounded and exact (#19).

HellaSwag's text extras (``ctx_a``, ``ctx_b``, ``source_id``) have about a value per row:
counting every distinct one hashed and held every text. Now a text key is counted exactly up
to ``DISTINCT_TEXT`` values, then "more than ...". The floor is the conversion itself
(``load_hellaswag(data_files=F)`` of HellaSwag validation repeated to ``--rows`` rows); the
summary (``summarize`` of its table, what ``convert`` tallies batch by batch) is timed with
the bound and without it (every text hashed), alternately, medians; printed as a share of
the conversion.

    python benchmarks/summary_share.py [--realdata ../shared/realdata] [--rows 1000000]
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
from _data import options, replicated
from _timing import _once

from sdvm_hf import load_hellaswag, summarize
from sdvm_hf.summary import tally


def measure(realdata: Path, rows: int, repeats: int) -> tuple[float, dict[str, tuple[float, str]]]:
    """Median seconds of the conversion, and of the summary bounded and exact (with ctx_a's)."""
    whole = replicated(realdata, "hellaswag/hub_validation.parquet", rows)
    bound = tally.DISTINCT_TEXT
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hellaswag.parquet"
        pq.write_table(whole, path)
        table = load_hellaswag(data_files=path).table
        times: dict[str, list[float]] = {"conversion": [], "bounded": [], "exact": []}
        said: dict[str, str] = {}
        for repeat in range(repeats + 1):
            converted = _once(lambda: load_hellaswag(data_files=path))
            tally.DISTINCT_TEXT = bound
            bounded = _once(lambda: said.update(bounded=summarize(table).extra["ctx_a"]))
            tally.DISTINCT_TEXT = None  # type: ignore[assignment]
            exact = _once(lambda: said.update(exact=summarize(table).extra["ctx_a"]))
            tally.DISTINCT_TEXT = bound
            if repeat:
                times["conversion"].append(converted)
                times["bounded"].append(bounded)
                times["exact"].append(exact)
    base = statistics.median(times["conversion"])
    return base, {
        label: (statistics.median(times[label]), said[label]) for label in ("bounded", "exact")
    }


def main() -> None:
    args = options(__doc__.splitlines()[0]).parse_args()
    base, shares = measure(args.realdata, args.rows, args.repeats)
    print(f"{args.rows:,} HellaSwag rows: conversion {base * 1000:.0f} ms (median)")
    for label, (seconds, ctx_a) in shares.items():
        print(
            f"  summary, text distinct {label:<8} {seconds * 1000:7.0f} ms  "
            f"{seconds / base:6.1%} of the conversion   ctx_a: {ctx_a}"
        )


if __name__ == "__main__":
    main()
