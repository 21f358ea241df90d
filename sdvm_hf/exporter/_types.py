"""What an export is about: one input file (a part), the counts, the error."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.convert.preset import Preset
from sdvm_hf.errors import InputError
from sdvm_hf.record import Record

__all__ = [
    "MANIFEST",
    "ROW_RECORD",
    "Counts",
    "ExportError",
    "Exported",
    "Part",
    "check_name",
]


MANIFEST = "sdvm_hf-export.json"
"""The file that marks a folder as an export (``--overwrite`` replaces only such a folder)."""
ROW_RECORD = "export-record.jsonl"
"""One line per input row, beside the data (the card's ``configs`` do not load it)."""


class ExportError(InputError):
    """Samples that cannot go back to their published layout, and why."""


PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
"""What a configuration, split or subject may be to name a folder or file of the export: no
path, no space, no dot first (so never ``..``)."""

RESERVED = frozenset({"README.md", MANIFEST, ROW_RECORD, "lm_eval", "inspect", "eval.yaml"})
"""The names of the export's own files at its top, which no configuration may take."""


def check_name(kind: str, value: str, where: object) -> str:
    """``value`` if it can name a configuration or split folder of the export; else refused.

    >>> check_name("configuration", "ARC-Easy", "a.parquet")
    'ARC-Easy'
    """
    too_long = isinstance(value, str) and len(value.encode()) > 200  # a file name's limit: 255
    if (
        not isinstance(value, str)
        or not PLAIN_NAME.fullmatch(value)
        or value in RESERVED
        or too_long
    ):
        raise ExportError(
            f"{where}: the {kind} {value!r} cannot name a folder of the export (letters, "
            "digits, '_', '-' and '.' only, not '.' first, at most 200 bytes, and not one of "
            f"the export's own files: {', '.join(sorted(RESERVED))})"
        )
    return value


@dataclass
class Counts:
    """Rows in and what became of them, for one split or all."""

    rows_in: int = 0
    """The source's rows: ``kept + replaced + dropped + rejected``."""
    kept: int = 0
    replaced: int = 0
    dropped: int = 0
    rejected: int = 0
    """Source rows the conversion left out (never audited): published as they were by
    ``replace`` and ``original``, left out by ``drop``."""
    unpublished: int = 0
    """Of the ``rejected``, those ``replace`` and ``original`` could not publish: their rows
    were never written to a file (``write_parquet`` of a load), or the export's layout is not
    the one they were read in."""
    refused: int = 0
    """Fixes the layout cannot express (counted in ``kept``: the row stays as it was, and
    the export record says why)."""

    def merge(self, other: Counts) -> None:
        """Add ``other``'s counts to these (a split's to the totals)."""
        for item in fields(self):
            setattr(self, item.name, getattr(self, item.name) + getattr(other, item.name))

    def as_dict(self) -> dict[str, int]:
        return {
            "rows_in": self.rows_in,
            "kept": self.kept,
            "replaced": self.replaced,
            "dropped": self.dropped,
            "rejected": self.rejected,
            "unpublished": self.unpublished,
            "refused": self.refused,
        }

    def describe(self, policy: str) -> str:
        """The counts in one sentence, as the command's last line and the card say them.

        >>> Counts(12, 9, 1, 0, 2, 0, 1).describe("replace")
        '12 rows in; kept 9, replaced 1, dropped 0, rejected at conversion 2 (published as they were); 1 fix refused (kept as it was, export-record.jsonl says why)'
        """  # noqa: E501
        text = (
            f"{self.rows_in:,} rows in; kept {self.kept:,}, replaced {self.replaced:,}, "
            f"dropped {self.dropped:,}"
        )
        if self.rejected:
            fate = "left out" if policy == "drop" else "published as they were"
            if policy != "drop" and self.unpublished:
                fate = f"{self.unpublished:,} not published: no file or another layout holds them"
            text += f", rejected at conversion {self.rejected:,} ({fate})"
        if self.refused:
            fixes = (
                "1 fix refused (kept as it was"
                if self.refused == 1
                else (f"{self.refused:,} fixes refused (kept as they were")
            )
            text += f"; {fixes}, {ROW_RECORD} says why)"
        return text


@dataclass
class Exported:
    """What :func:`export` wrote: the folder, the configurations and the counts."""

    folder: Path
    policy: str
    """The policy's name (:mod:`.policy`)."""
    configs: dict[str, list[str]] = field(default_factory=dict)
    """Each configuration written, with its splits."""
    total: Counts = field(default_factory=Counts)
    splits: dict[str, Counts] = field(default_factory=dict)
    """The counts per ``config/split`` of the input files."""
    not_written: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What the counts cannot say, one line a split (the command prints them, the card has
    them)."""
    """Each ``config/split`` left with no row (every row dropped, or an empty input): not
    written, because ``datasets.load_dataset`` cannot read a split of no rows."""

    def totals(self) -> dict[str, Any]:
        """The totals as ``--json`` prints them; ``kept + replaced + dropped == rows_in``."""
        return {
            "folder": str(self.folder),
            "policy": self.policy,
            **self.total.as_dict(),
            "splits": {name: tally.as_dict() for name, tally in self.splits.items()},
            "configs": self.configs,
            "not_written": self.not_written,
            "notes": self.notes,
        }


@dataclass(frozen=True)
class Part:
    """One input sample file: where it came from and where it goes."""

    path: Path
    record: Record | None
    preset: Preset | None
    mapping: MultipleChoiceMapping
    """The mapping of the layout the rows are exported in."""
    layout: str
    config: str
    split: str

    @property
    def name(self) -> str:
        return f"{self.config}/{self.split}"
