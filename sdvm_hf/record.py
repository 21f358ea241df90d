"""A sample file's record of where it came from, kept in its Parquet key-value metadata.

``convert`` writes it; ``audit``, ``fix`` and ``refine`` carry it to their output with one
more stage; ``export`` reads it to give the benchmark back in its published layout with no
flags. It is JSON under the key :data:`RECORD_KEY`::

    {"format": 1, "sdvm_hf": "0.3.0",
     "dataset": "hellaswag", "layout": "hellaswag", "config": null, "split": "validation",
     "source": {"hub": "Rowan/hellaswag", "revision": "refs/convert/parquet"}
               or {"files": [{"path": "/abs/file.jsonl", "sha256": "...", "bytes": 123}]},
     "features": {...},            # the source's Hugging Face features, where it had them
     "schema": "...",              # the source's Arrow schema (IPC, base64)
     "mapping": {...},             # the mapping's description (its fields)
     "stages": [{"stage": "convert", "rows": 10042},
                {"stage": "refine", "input": {"path": "hellaswag.parquet", "rows": 10042}}],
     "rejects": {"path": "hellaswag.rejects.jsonl", "count": 0}}

A JSON Lines sample file has no metadata, so no record: ``export`` then takes ``--dataset``.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf._atomic import block_signals_in_this_thread

__all__ = [
    "HF_METADATA",
    "RECORD_KEY",
    "Record",
    "arrow_schema",
    "arrow_schema_text",
    "file_entries_in_background",
    "file_entry",
    "hf_features",
    "original_path",
    "read_record",
    "relative_to",
    "staged",
    "with_stage",
]

RECORD_KEY = b"sdvm_hf.record"
"""The Parquet key-value metadata key of the record."""

Record = dict[str, Any]
"""A record, as JSON."""


def read_record(path: str | os.PathLike[str]) -> Record | None:
    """The record of the Parquet sample file at ``path``; ``None`` if it has none."""
    if not str(path).endswith(".parquet"):
        return None
    text = (pq.read_metadata(path).metadata or {}).get(RECORD_KEY)
    if text is None:
        return None
    record = json.loads(text)
    if not isinstance(record, dict):
        raise ValueError(f"{path}: its {RECORD_KEY.decode()} metadata is not a JSON object")
    return record


def metadata(record: Record) -> dict[bytes, bytes]:
    """The key-value metadata that holds ``record``."""
    return {RECORD_KEY: json.dumps(record, ensure_ascii=False).encode()}


def with_record(schema: pa.Schema, record: Record | None) -> pa.Schema:
    """``schema`` carrying ``record`` (unchanged when there is none)."""
    if record is None:
        return schema
    return schema.with_metadata({**(schema.metadata or {}), **metadata(record)})


def with_stage(record: Record, stage: str, input_path: str | os.PathLike[str], rows: int) -> Record:
    """``record`` with one more stage: ``stage`` read ``input_path`` (``rows`` samples)."""
    entry = {"stage": stage, "input": {"path": str(Path(input_path).resolve()), "rows": rows}}
    return {**record, "stages": [*record.get("stages", []), entry]}


def file_entry(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A source file as the record names it: its absolute path, size and SHA-256."""
    import hashlib  # here: a load that writes no record never needs it

    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return {
        "path": str(Path(path).resolve()),
        "bytes": os.path.getsize(path),
        "sha256": digest.hexdigest(),
    }


def file_entries_in_background(
    paths: Sequence[str | os.PathLike[str]],
) -> Callable[[], list[dict[str, Any]]]:
    """Start :func:`file_entry` of each path in a thread now; the function returned waits.

    SHA-256 runs at about 0.9 GB/s and ``hashlib`` releases the GIL on large blocks, so a
    loader starts hashing its source files as it starts reading them and the conversion
    runs beside it: the record asks for the entries (waiting only for what is left) when a
    sample file is written. An error (a file gone) is raised to the caller that waits.
    """
    paths = list(paths)
    entries: list[dict[str, Any]] = []
    failure: list[BaseException] = []

    def run() -> None:
        block_signals_in_this_thread()  # Ctrl-C and SIGTERM stay the main thread's
        try:
            entries.extend(file_entry(path) for path in paths)
        except BaseException as error:  # handed to the waiting caller
            failure.append(error)

    thread = threading.Thread(target=run, name="sdvm_hf-hash", daemon=True)
    thread.start()

    def wait() -> list[dict[str, Any]]:
        thread.join()
        if failure:
            raise failure[0]
        return [dict(entry) for entry in entries]

    return wait


def arrow_schema_text(schema: pa.Schema) -> str:
    """The source's Arrow schema as the record keeps it: its IPC form, base64, no metadata.

    It types the export of a source without Hugging Face features (JSON Lines, CSV).
    """
    return base64.b64encode(schema.remove_metadata().serialize().to_pybytes()).decode()


def arrow_schema(text: str) -> pa.Schema:
    """The schema :func:`arrow_schema_text` kept."""
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text)))


HF_METADATA = b"huggingface"
"""The schema metadata key under which ``datasets`` keeps a table's features."""


def hf_features(schema: pa.Schema) -> dict[str, Any] | None:
    """The ``datasets`` features (as a dict) a schema carries in its metadata, or ``None``."""
    raw = (schema.metadata or {}).get(HF_METADATA)
    if raw is None:
        return None
    features = json.loads(raw).get("info", {}).get("features")
    return None if features is None else dict(features)


def staged(
    metadata: dict[bytes, bytes] | None, stage: str, input_path: str | None, rows: int
) -> dict[bytes, bytes] | None:
    """A stage output's key-value metadata: its input's, the record with one more stage.

    ``input_path`` is the file the stage read (``None`` when its samples came from memory:
    the stage is recorded without an input, so ``export`` cannot follow it back).
    """
    if not metadata or RECORD_KEY not in metadata:
        return metadata
    record = json.loads(metadata[RECORD_KEY])
    if input_path is not None and os.path.isfile(input_path):
        record = with_stage(record, stage, input_path, rows)
    else:
        record = {**record, "stages": [*record.get("stages", []), {"stage": stage, "input": None}]}
    return {**metadata, RECORD_KEY: json.dumps(record, ensure_ascii=False).encode()}


def relative_to(path: str | os.PathLike[str], name: str) -> Path:
    """``name`` as a record gives it: absolute, or relative to the folder of the file ``path``."""
    target = Path(name)
    return target if target.is_absolute() else Path(os.path.normpath(Path(path).parent / target))


def original_path(record: Mapping[str, Any] | None, path: str | os.PathLike[str]) -> Path | None:
    """The file a stage output came from: its record's last stage's ``input.path``.

    A relative path is relative to the folder of ``path`` (the output); ``None`` when the
    record names no input (a converted file, or no record).

    >>> record = {"stages": [{"stage": "convert"}, {"stage": "refine",
    ...           "input": {"path": "mmlu.parquet", "rows": 10}}]}
    >>> original_path(record, "out/mmlu.refine.parquet")
    PosixPath('out/mmlu.parquet')
    """
    stages = (record or {}).get("stages") or []
    last = stages[-1] if stages and isinstance(stages[-1], Mapping) else {}
    source = last.get("input")
    if not isinstance(source, Mapping) or not isinstance(source.get("path"), str):
        return None
    return relative_to(path, source["path"])
