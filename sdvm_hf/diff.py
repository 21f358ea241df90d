"""What a stage changed: word-level differences between a sample before and after.

A stage (``fix``, ``refine``) keeps every row in order, so row ``i`` of its output is row
``i`` of its input. :func:`diff_samples` compares one pair: the context word by word, each
choice that changed, and the answer when it moved. :func:`diff_files` walks two sample files
side by side; ``sdvm-hf diff`` prints it and the HTML report shows the same differences.
"""

from __future__ import annotations

import difflib
import itertools
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import pyarrow as pa

from sdvm_hf._wire import letter
from sdvm_hf.arrow import canonical, checked_table, decode
from sdvm_hf.errors import InputError
from sdvm_hf.files import format_of, iter_jsonl, iter_parquet, parquet_batches
from sdvm_hf.samples import MultipleChoiceSample
from sdvm_hf.verdicts import failing
from sdvm_hf.verdicts import is_flagged as fix_is_flagged

__all__ = [
    "Only",
    "SampleDiff",
    "diff_files",
    "diff_samples",
    "is_failing",
    "samples_at",
    "word_diff",
]

Op = Literal["same", "del", "ins"]
"""A piece of a word diff: kept, only before, only after."""

Only = Literal["changed", "failing", "flagged", "all"]
"""Which rows :func:`diff_files` yields."""

_TOKENS = re.compile(r"\s+|\w+|[^\w\s]")


def word_diff(before: str, after: str) -> list[tuple[Op, str]]:
    """The pieces of ``before`` and ``after``: words, spaces and punctuation kept or changed.

    >>> word_diff("the cat  sat", "the dog sat")
    [('same', 'the '), ('del', 'cat  '), ('ins', 'dog '), ('same', 'sat')]
    """
    a, b = _TOKENS.findall(before), _TOKENS.findall(after)
    pieces: list[tuple[Op, str]] = []

    def put(op: Op, tokens: list[str]) -> None:
        text = "".join(tokens)
        if not text:
            return
        if pieces and pieces[-1][0] == op:
            pieces[-1] = (op, pieces[-1][1] + text)
        else:
            pieces.append((op, text))

    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            put("same", a[i1:i2])
        else:
            put("del", a[i1:i2])
            put("ins", b[j1:j2])
    return _merge_words(pieces)


def _merge_words(pieces: list[tuple[Op, str]]) -> list[tuple[Op, str]]:
    """Fold a space kept between two replacements into both.

    ``[-a b-]{+c d+}`` reads better than ``[-a-]{+c+} [-b-]{+d+}``.
    """
    out: list[tuple[Op, str]] = []
    for op, text in pieces:
        out.append((op, text))
        # ... del ins SPACE del ins: fold the last five into one del and one ins
        if len(out) >= 5 and [o for o, _ in out[-5:]] == ["del", "ins", "same", "del", "ins"]:
            (_, d1), (_, i1), (_, space), (_, d2), (_, i2) = out[-5:]
            if space.isspace():
                del out[-5:]
                out += [("del", d1 + space + d2), ("ins", i1 + space + i2)]
    return out


@dataclass(frozen=True)
class SampleDiff:
    """One row before and after a stage, and what changed."""

    row: int
    """The row in both files (0-based)."""
    before: MultipleChoiceSample
    after: MultipleChoiceSample
    context: list[tuple[Op, str]] | None = None
    """The context's word diff, or ``None`` when unchanged."""
    choices: dict[int, list[tuple[Op, str]]] = field(default_factory=dict)
    """Each changed choice's word diff, by position (when the count of choices is unchanged)."""
    answer_moved: bool = False
    """Whether the answer is a different position or a different text."""

    @property
    def answer_position_moved(self) -> bool:
        """Whether the answer is another position (not only its text changed)."""
        return self.before.answer_index != self.after.answer_index

    @property
    def changed(self) -> bool:
        """Whether the context, the choices or the answer differ."""
        return (
            self.context is not None
            or self.before.choices != self.after.choices
            or self.answer_moved
        )

    def lines(self) -> list[str]:
        """The difference as text: ``[-removed-]`` and ``{+added+}``, as ``git --word-diff``."""
        out = [f"row {self.row}{_verdict_note(self.after)}"]
        if self.context is not None:
            out.append(f"  context: {_plain(self.context)}")
        if len(self.before.choices) == len(self.after.choices):
            for position, pieces in self.choices.items():
                out.append(f"  choice {letter(position)}: {_plain(pieces)}")
        else:
            out.append(f"  choices before: {self.before.choices}")
            out.append(f"  choices after:  {self.after.choices}")
        if self.answer_moved:
            same = "" if self.answer_position_moved else " (the same position, its text changed)"
            out.append(f"  answer: {answer_text(self.before)} -> {answer_text(self.after)}{same}")
        if not self.changed:
            out.append("  (unchanged)")
        return out


def answer_text(sample: MultipleChoiceSample) -> str:
    """``B "Paris"``: the answer's letter and text."""
    return f'{letter(sample.answer_index)} "{sample.choices[sample.answer_index]}"'


def _plain(pieces: list[tuple[Op, str]]) -> str:
    marks = {"same": "{}", "del": "[-{}-]", "ins": "{{+{}+}}"}
    return "".join(marks[op].format(text) for op, text in pieces)


def _verdict_note(sample: MultipleChoiceSample) -> str:
    found = failing(sample.audit, sample.fix, sample.reaudit)
    return f" (failing {', '.join(found.names)})" if found.names else ""


def diff_samples(
    before: MultipleChoiceSample, after: MultipleChoiceSample, row: int = 0
) -> SampleDiff:
    """What changed from ``before`` to ``after`` (the same row before and after a stage)."""
    context = None if before.context == after.context else word_diff(before.context, after.context)
    choices = {}
    if len(before.choices) == len(after.choices):
        choices = {
            i: word_diff(old, new)
            for i, (old, new) in enumerate(zip(before.choices, after.choices, strict=True))
            if old != new
        }
    moved = before.answer_index != after.answer_index or (
        before.choices[before.answer_index] != after.choices[after.answer_index]
    )
    return SampleDiff(row, before, after, context, choices, moved)


def failing_checks(sample: MultipleChoiceSample) -> list[str]:
    """The checks the sample fails, by their one spelling (see :mod:`sdvm_hf.verdicts`).

    Its final verdict's bad checks (the ``reaudit`` when it holds a check, else the
    ``audit``), then ``fix.flagged`` when its fix is flagged: the rows ``export --policy drop``
    drops, and the names its ``sdvm_failing`` lists.
    """
    return failing(sample.audit, sample.fix, sample.reaudit).names


def is_failing(sample: MultipleChoiceSample) -> bool:
    """Whether the sample fails a check (see :func:`failing_checks`)."""
    return bool(failing_checks(sample))


def is_flagged(sample: MultipleChoiceSample) -> bool:
    """Whether the fix flagged the sample (``fix.flagged`` true)."""
    return fix_is_flagged(sample.fix)


def iter_file(path: str | os.PathLike[str]) -> Iterator[MultipleChoiceSample]:
    """A sample file's samples in order, a batch at a time."""
    return iter_parquet(path) if format_of(path) == "parquet" else iter_jsonl(path)


def samples_at(
    path: str | os.PathLike[str], rows: Iterable[int]
) -> tuple[dict[int, MultipleChoiceSample], int]:
    """The samples at ``rows`` of a sample file, and how many rows the file has.

    A Parquet file is read a batch at a time and only the rows asked for become samples.
    """
    wanted = sorted(set(rows))
    found: dict[int, MultipleChoiceSample] = {}
    if format_of(path) != "parquet":
        total = 0
        chosen = set(wanted)
        for total, sample in enumerate(iter_jsonl(path), 1):
            if total - 1 in chosen:
                found[total - 1] = sample
        return found, total
    first = 0
    for batch in parquet_batches(path, _ROWS):
        table = canonical(batch)
        stop = first + table.num_rows
        here = [row for row in wanted if first <= row < stop]
        if here:
            picked = table.take(pa.array([row - first for row in here], pa.int64()))
            found.update(zip(here, decode(checked_table(picked, str(path))), strict=True))
        first = stop
    return found, first


_ROWS = 65_536
"""Rows read at a time by :func:`samples_at`."""


def diff_files(
    before: str | os.PathLike[str],
    after: str | os.PathLike[str],
    *,
    only: Only = "changed",
    limit: int | None = None,
) -> Iterator[SampleDiff]:
    """Each row of ``after`` against the same row of ``before``, in order.

    ``only`` keeps the rows that ``changed`` (default), whose last verdict is ``failing``,
    that the fix ``flagged``, or ``all``; ``limit`` stops after that many. The files must
    have as many rows: a stage keeps every row.
    """
    if limit is not None and limit < 0:
        raise InputError(f"diff limit: expected 0 or more, got {limit}")
    if only not in ("changed", "failing", "flagged", "all"):
        raise InputError(f"diff only: expected changed, failing, flagged or all, got {only!r}")
    shown = 0
    pairs = itertools.zip_longest(iter_file(before), iter_file(after))
    for row, (old, new) in enumerate(pairs):
        if limit is not None and shown >= limit:
            return
        if old is None or new is None:
            longer, shorter = (after, before) if old is None else (before, after)
            raise InputError(
                f"diff: expected {before} and {after} to have as many rows (a stage keeps "
                f"every row), got more in {longer}: {shorter} ends at row {row}"
            )
        if _own(old.extra) != _own(new.extra):
            raise InputError(
                f"diff: {before} and {after} are not one file before and after a stage: row "
                f"{row}'s extra differs (a stage keeps every row's extra as it was; expected "
                f"{_short(old.extra)}, got {_short(new.extra)})"
            )
        found = diff_samples(old, new, row)
        if _kept(found, only):
            shown += 1
            yield found


_ORDER_KEY = "sdvm_hf_choice_order"
"""What a shuffle adds to extra (``sdvm_hf.summary.tally.ORDER_KEY``): not a row's own."""


def _own(extra: dict[str, object]) -> dict[str, object]:
    return {key: value for key, value in extra.items() if key != _ORDER_KEY}


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:120] + "..."


def _kept(found: SampleDiff, only: Only) -> bool:
    if only == "changed":
        return found.changed
    if only == "failing":
        return is_failing(found.after)
    if only == "flagged":
        return is_flagged(found.after)
    return True
