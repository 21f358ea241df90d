"""Before anything is sent: which conventions go, what is already done, what is left to pay for.

A stage's output records (under :data:`STAGE_KEY`) the stage, a content hash of the input it
read, the conventions it sent and a content hash of itself. A rerun whose output still says
exactly that sends nothing (``force`` sends again); a run that resumes counts what it will
still send; :func:`plan_stage` says all of it without sending anything (``--dry-run``).
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.record import RECORD_KEY, Record, content_hash
from sdvm_hf.service._base import Stage
from sdvm_hf.service._parts import Parts

log = logging.getLogger("sdvm_hf.service.roundtrip")

STAGE_KEY = b"sdvm_hf.stage"
"""A stage output's own account: stage, rows, input and output hashes, conventions (JSON)."""


@dataclass(frozen=True)
class Conventions:
    """The conventions a stage sends, and whose they are."""

    text: str | None
    """The text sent (``None``: none is sent)."""
    source: str
    """A dataset's name, ``"given"`` (a text of one's own) or ``"none"``."""
    why: str = ""
    """How they were chosen (``"the file's record names hellaswag"``)."""

    @property
    def digest(self) -> str | None:
        """A short hash of the text: what a part or an output records."""
        return self.text and hashlib.sha256(self.text.encode()).hexdigest()[:16]

    def describe(self) -> str:
        """One line naming what is sent: ``conventions: hellaswag's (...)`` or a loud none."""
        if self.text is None:
            return (
                "conventions: NONE are sent: the audit will judge formatting that is by design "
                f"as a defect ({self.why}); give --dataset NAME or --conventions TEXT"
            )
        whose = "your own text" if self.source == "given" else f"{self.source}'s defaults"
        return f"conventions: {whose} ({self.why}; {len(self.text)} characters)"


def record_of(samples: SampleSequence) -> Record | None:
    """The record the samples' table carries (a sample Parquet file's), if any."""
    raw = (samples.table.schema.metadata or {}).get(RECORD_KEY)
    if raw is None:
        return None
    return Record.from_json(json.loads(raw), samples.source or "the input")


def choose_conventions(samples: SampleSequence, conventions: str | None) -> Conventions:
    """The conventions to send: ``conventions`` if given (``""``: none), else the record's.

    A text equal to a dataset's defaults is named after that dataset.
    """
    from sdvm_hf.presets.registry import PRESETS

    if conventions == "":
        return Conventions(None, "none", "none asked for")
    if conventions is not None:
        for name, preset in PRESETS.items():
            if preset.conventions and preset.conventions == conventions:
                return Conventions(conventions, name, "as given")
        return Conventions(conventions, "given", "as given")
    record = record_of(samples)
    dataset = record.dataset if record is not None else None
    if dataset is None:
        why = "the input has no record" if record is None else "its record names no dataset"
        return Conventions(None, "none", why)
    found = PRESETS.get(dataset)
    if found is None or not found.conventions:
        return Conventions(None, "none", f"the record's dataset {dataset!r} has no defaults")
    return Conventions(found.conventions, dataset, f"the file's record names {dataset}")


@dataclass(frozen=True)
class Plan:
    """What a run of a stage would send (nothing is sent to make it)."""

    stage: Stage
    output: Path
    samples: int
    batches: int
    todo: tuple[int, ...]
    """The batches to send, by number."""
    to_send: int
    """The samples in those batches."""
    done: bool
    """The output is already complete for this input and these conventions: nothing is sent."""
    conventions: Conventions

    @property
    def requests(self) -> int:
        """Requests a run sends (a retry sends one more)."""
        return 0 if self.done else len(self.todo)

    def lines(self) -> list[str]:
        """The plan as a person reads it (``--dry-run`` prints it)."""
        head = f"{self.stage} of {self.samples:,} samples into {self.output}"
        if self.done:
            return [head, "already done for this input and conventions: 0 requests, 0 samples"]
        kept = self.batches - len(self.todo)
        lines = [head, self.conventions.describe()]
        if kept:
            lines.append(f"resuming: {kept} of {self.batches} batches already done")
        lines.append(
            f"would send {len(self.todo)} request(s) carrying {self.to_send:,} samples "
            "(each billed as the service bills a sample; retries add requests)"
        )
        return lines


def parts_for(output: Path, stage: Stage, batch_size: int, conventions: Conventions) -> Parts:
    """The finished batches of a run into ``output``."""
    run = {"stage": stage, "batch_size": batch_size, "conventions": conventions.digest}
    return Parts(output.with_name(output.name + ".parts"), run)


def account(stage: Stage, input_hash: str, conventions: Conventions, result: pa.Table) -> bytes:
    """What a finished output records under :data:`STAGE_KEY`."""
    value = {
        "stage": stage,
        "rows": result.num_rows,
        "input": input_hash,
        "conventions": conventions.digest,
        "output": content_hash(result),
    }
    return json.dumps(value).encode()


def already_done(output: Path, stage: Stage, input_hash: str, conventions: Conventions) -> bool:
    """Whether ``output`` is this stage's complete answer to this input, unchanged since."""
    if not output.is_file():
        return False
    try:
        raw = (pq.read_metadata(output).metadata or {}).get(STAGE_KEY)
        said: Any = json.loads(raw) if raw is not None else None
        if not isinstance(said, dict):
            return False
        expected = {"stage": stage, "input": input_hash, "conventions": conventions.digest}
        if any(said.get(key) != value for key, value in expected.items()):
            return False
        table = pq.read_table(output)
    except (OSError, ValueError, pa.ArrowException):
        return False
    return said.get("rows") == table.num_rows and said.get("output") == content_hash(table)


def plan(
    samples: SampleSequence,
    stage: Stage,
    output: Path,
    conventions: Conventions,
    batch_size: int,
    force: bool,
    input_hash: str,
) -> tuple[Plan, Parts, dict[int, pa.Table]]:
    """The plan, the parts folder, and the finished parts a run reuses."""
    parts = parts_for(output, stage, batch_size, conventions)
    starts = range(0, len(samples), batch_size)
    done = not force and already_done(output, stage, input_hash, conventions)
    tables: dict[int, pa.Table] = {}
    if not done and not force:
        for number, start in enumerate(starts):
            reused = parts.reusable(number, samples.table.slice(start, batch_size), start)
            if reused is not None:
                tables[number] = reused
    todo = tuple(n for n in range(len(starts)) if n not in tables)
    to_send = sum(min(batch_size, len(samples) - starts[n]) for n in todo)
    summary = Plan(stage, output, len(samples), len(starts), todo, to_send, done, conventions)
    return summary, parts, tables
