"""A shuffled PyTorch ``DataLoader`` epoch over ``load(...)`` against the same epoch over a list.

HellaSwag validation (10,042 real rows, ``hub_validation.parquet``) loaded with
``load("hellaswag", data_files=...)``; one epoch is
``DataLoader(ds, batch_size=32, shuffle=True, collate_fn=lambda b: b)`` iterated to the end.
The ``SampleSequence`` fetches each batch with ``__getitems__`` (one Arrow ``take``, one
decoding pass). Two floors, measured alternately with it in the same run (medians):

- the list's one-time decode counted: ``list(samples)`` then the same epoch over the list
  (what a user who wants a fast epoch does first);
- the list's decode not counted: the epoch alone over a list decoded beforehand (pure
  Python indexing: no table is read at all, so no lazy sequence can come near it).

Also printed: the same epoch fetching row by row (``__getitems__`` hidden), as before it.

    python benchmarks/dataloader_epoch.py [--realdata ../shared/realdata] [--repeats 5]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from _data import options
from _timing import medians, report
from torch import Generator
from torch.utils.data import DataLoader

from sdvm_hf import load
from sdvm_hf.samples import MultipleChoiceSample


class RowByRow(Sequence[MultipleChoiceSample]):
    """The sequence without ``__getitems__``: the DataLoader indexes it one row at a time."""

    def __init__(self, samples: Sequence[MultipleChoiceSample]) -> None:
        self.samples = samples

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index: Any) -> Any:
        return self.samples[index]


def epoch(dataset: Sequence[MultipleChoiceSample]) -> int:
    """One shuffled epoch in batches of 32; the number of samples seen."""
    generator = Generator()
    generator.manual_seed(0)
    loader = DataLoader(
        dataset,
        batch_size=32,
        shuffle=True,
        collate_fn=lambda batch: batch,
        generator=generator,
    )
    return sum(len(batch) for batch in loader)


def main() -> None:
    args = options(__doc__.splitlines()[0], repeats=5).parse_args()
    path = args.realdata / "hellaswag" / "hub_validation.parquet"
    samples = load("hellaswag", split="validation", data_files=str(path))
    decoded = list(samples)  # also imports the sample types, outside every timing
    assert epoch(samples) == epoch(decoded) == len(decoded) == 10_042

    def decode_then_epoch() -> int:
        return epoch(list(samples))

    print(f"HellaSwag validation, {len(samples):,} samples, batches of 32, shuffled")
    floor, work = medians(decode_then_epoch, lambda: epoch(samples), args.repeats)
    report("load(...) vs list(samples) + epoch", floor, work, target=1.5)
    floor, work = medians(lambda: epoch(decoded), lambda: epoch(samples), args.repeats)
    report("load(...) vs epoch over a ready list", floor, work)
    floor, work = medians(decode_then_epoch, lambda: epoch(RowByRow(samples)), args.repeats)
    report("row by row vs list(samples) + epoch", floor, work)


if __name__ == "__main__":
    main()
