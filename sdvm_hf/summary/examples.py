"""Which samples a summary shows per check: a few row numbers, the same ones on every run.

The rows with the lowest of a fixed hash of the row number (mixed with the check's name), so
the examples are spread over the file rather than its first rows, whatever the batches.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["EXAMPLES", "Examples"]

EXAMPLES = 5
"""Example samples a summary keeps per check (and of fixed samples), by default."""


_MASK = 0xFFFFFFFFFFFFFFFF


def _row_key(row: int) -> int:
    """A fixed pseudo-random key per row number (splitmix64): examples are the lowest keys.

    >>> _row_key(0) == int(_row_keys(np.array([0]))[0])
    True
    """
    z = (row + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _row_keys(rows: np.ndarray) -> np.ndarray:
    """:func:`_row_key` of many row numbers at once (uint64 arithmetic wraps as the mask)."""
    z = rows.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


class Examples:
    """Up to ``size`` row numbers: those with the lowest :func:`_row_key`.

    The row number is mixed with a hash of ``salt`` first, so each check shows its own rows.
    The same rows whatever the batches, spread over the file rather than its first rows.
    """

    def __init__(self, size: int, salt: str = "") -> None:
        self.size = size
        digest = hashlib.blake2b(salt.encode("utf-8"), digest_size=4).digest()
        self._salt = int.from_bytes(digest, "big") << 32  # each check its own spread of rows
        self._keys = np.zeros(0, np.uint64)
        self._rows = np.zeros(0, np.int64)

    def add(self, rows: np.ndarray) -> None:
        """Consider these row numbers (an int array)."""
        if self.size <= 0 or not len(rows):
            return
        keys = np.concatenate(
            [self._keys, _row_keys(rows.astype(np.uint64) ^ np.uint64(self._salt))]
        )
        rows = np.concatenate([self._rows, rows.astype(np.int64)])
        if len(keys) > self.size:
            keep = np.argpartition(keys, self.size - 1)[: self.size]
            keys, rows = keys[keep], rows[keep]
        self._keys, self._rows = keys, rows

    def rows(self) -> list[int]:
        """The row numbers kept, in order."""
        return sorted(int(row) for row in self._rows)
