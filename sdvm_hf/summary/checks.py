"""The checks of the service's blocks: which outcome is bad, and their counts, batch by batch.

A block (``audit``, ``fix``, ``reaudit``) is flattened to its boolean leaves by dotted name
(:mod:`sdvm_hf.verdicts` holds the rules: which value is bad, how a check is spelled);
:class:`CheckCounts` counts each check's verdicts, gives each check a slot (the ``bad:N``
count column the groups sum) and keeps a few example rows per check and of fixed samples.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._wire import BLOCKS
from sdvm_hf.summary.examples import Examples
from sdvm_hf.verdicts import BAD_WHEN_TRUE, flatten_block, reads_bad

__all__ = [
    "BAD_WHEN_TRUE",
    "FIXED",
    "SAMPLES",
    "CheckCounts",
    "flatten_block",
    "reads_bad",
]

SAMPLES, FIXED = "samples", "fixed"
"""The count columns every group table has; ``carry:BLOCK`` and ``bad:N`` (a check's slot)
are added as blocks and checks appear."""


class CheckCounts:
    """Every block's checks over the samples counted so far, and a few rows per check."""

    def __init__(self, examples: int) -> None:
        self._examples = examples
        self.verdicts: dict[str, dict[str, Counter[str]]] = {}
        """Per block, each check's ``"true"`` and ``"false"`` counts."""
        self.others: dict[str, dict[str, None]] = {}
        """Per block, the dotted names of the leaves that are not booleans (an ordered set)."""
        self._slots: dict[tuple[str, str], int] = {}
        self._picked: dict[tuple[str, str], Examples] = {}
        self._fixed = Examples(examples)

    def count(self, table: pa.Table, first: int) -> dict[str, pa.Array]:
        """Count every block's checks of ``table`` (whose first row is row ``first``).

        Gives the per-row counts the groups sum, by column name.

        Each distinct block text is parsed once (verdicts repeat: a few booleans); the rows
        are counted through the dictionary indices, in numpy.
        """
        rows = table.num_rows
        counts: dict[str, pa.Array] = {SAMPLES: pa.array(np.ones(rows, np.int64))}
        bad: dict[int, np.ndarray] = {}
        for block in BLOCKS:
            column = table.column(block)
            if column.null_count == len(column):
                continue
            encoded = pc.dictionary_encode(column).combine_chunks()
            texts = encoded.dictionary.to_pylist()
            index = pc.fill_null(encoded.indices, len(texts)).to_numpy(zero_copy_only=False)
            seen = np.bincount(index, minlength=len(texts) + 1)
            verdicts = self.verdicts.setdefault(block, {})
            others = self.others.setdefault(block, {})
            carried = np.zeros(len(texts) + 1, bool)  # per distinct text; the last is null
            fixed = np.zeros(len(texts) + 1, bool)
            failing: dict[int, np.ndarray] = {}
            for number, text in enumerate(texts):
                value = json.loads(text)
                if not isinstance(value, Mapping):
                    continue
                carried[number] = True
                checks, leaves = flatten_block(value)
                for check, verdict in checks.items():
                    verdicts.setdefault(check, Counter())[str(verdict).lower()] += int(seen[number])
                    slot = self._slot(block, check)
                    if reads_bad(block, check, verdict):
                        failing.setdefault(slot, np.zeros(len(texts) + 1, bool))[number] = True
                for leaf in leaves:
                    others.setdefault(leaf)
                fixed[number] = block == "fix" and bool(value.get("changes"))
            counts[f"carry:{block}"] = pa.array(carried[index].astype(np.int64))
            if block == "fix":
                per_row = fixed[index]
                counts[FIXED] = pa.array(per_row.astype(np.int64))
                self._fixed.add(first + np.flatnonzero(per_row))
            slots = {number: key for key, number in self._slots.items()}
            for slot, values in failing.items():
                per_row = values[index]
                bad[slot] = per_row
                self._picked[slots[slot]].add(first + np.flatnonzero(per_row))
        for slot, column in sorted(bad.items()):
            counts[f"bad:{slot}"] = pa.array(column.astype(np.int64))
        return counts

    def _slot(self, block: str, check: str) -> int:
        slot = self._slots.get((block, check))
        if slot is None:
            slot = self._slots[block, check] = len(self._slots)
            self._picked[block, check] = Examples(self._examples, f"{block}\x1f{check}")
        return slot

    def slots(self) -> list[tuple[str, str]]:
        """Every (block, check) seen, in the order of their slots (``bad:N`` columns)."""
        return sorted(self._slots, key=self._slots.__getitem__)

    def examples(self) -> dict[str, dict[str, list[int]]]:
        """Per block and check with any, the example rows where it reads bad."""
        examples: dict[str, dict[str, list[int]]] = {}
        for block, check in self.slots():
            if rows := self._picked[block, check].rows():
                examples.setdefault(block, {})[check] = rows
        return examples

    def fixed_examples(self) -> list[int]:
        """The example rows of samples the fix changed."""
        return self._fixed.rows()
