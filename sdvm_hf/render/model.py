"""What a report renders: :class:`Report`, a summary and the samples behind its numbers.

The example rows of the file and, when the stage's input (the original) is known, the same
rows of it, so each example shows what the stage changed (:func:`~sdvm_hf.diff.diff_samples`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sdvm_hf.diff import SampleDiff, diff_samples
from sdvm_hf.samples import MultipleChoiceSample
from sdvm_hf.summary import Summary

__all__ = ["Report"]


@dataclass
class Report:
    """A summary and the samples behind it: what :func:`~sdvm_hf.report.build_report` reads."""

    summary: Summary
    title: str = "sample file"
    """What the page is called: the file's name."""
    samples: dict[int, MultipleChoiceSample] = field(default_factory=dict)
    """The example rows of the file, by row number."""
    originals: dict[int, MultipleChoiceSample] = field(default_factory=dict)
    """The same rows of the original (the stage's input), when it is known."""
    original: str | None = None
    """The original file the diffs are against, or ``None``."""
    rejects_from: str | None = None
    """Where the rejects were read from (the record's path, or the file beside), or ``None``."""

    def diff(self, row: int) -> SampleDiff | None:
        """The row against the original, when both are known."""
        if row not in self.samples or row not in self.originals:
            return None
        return diff_samples(self.originals[row], self.samples[row], row)

    def as_dict(self) -> dict[str, Any]:
        """The summary's plain data, with each example sample (wire dict) and its diff."""
        rows = sorted(self.samples)
        return {
            **self.summary.as_dict(),
            "original": self.original,
            "rejects_from": self.rejects_from,
            "example_samples": {str(row): _example_data(self, row) for row in rows},
        }


def _example_data(report: Report, row: int) -> dict[str, Any]:
    found = report.diff(row)
    data: dict[str, Any] = {"sample": report.samples[row].to_dict()}
    if row in report.originals:
        data["original"] = report.originals[row].to_dict()
    if found is not None:
        data["diff"] = {
            "changed": found.changed,
            "context": found.context,
            "choices": {str(i): pieces for i, pieces in found.choices.items()},
            "answer_moved": found.answer_moved,
        }
    return data
