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

:class:`Record` is the one typed form of it: a loader's origin builds one, each stage adds a
:class:`Stage` (:meth:`Record.with_stage`), and every reader asks it by name (the stage's
input, the convert output, the rejects file, the published features, the card's provenance).
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf._atomic import block_signals_in_this_thread
from sdvm_hf._hash import TableHasher, table_hash
from sdvm_hf._priority import work_ahead
from sdvm_hf.errors import InputError

__all__ = [
    "HF_METADATA",
    "RECORD_FORMAT",
    "RECORD_KEY",
    "Record",
    "RecordError",
    "Stage",
    "arrow_schema",
    "arrow_schema_text",
    "content_hash",
    "content_hash_of",
    "file_entries_in_background",
    "file_entry",
    "hf_features",
    "read_record",
    "relative_to",
    "staged",
    "with_record",
]

RECORD_KEY = b"sdvm_hf.record"
"""The Parquet key-value metadata key of the record."""

RECORD_FORMAT = 1
"""The version of the record's JSON this package writes and reads; a newer one is refused."""


class RecordError(InputError):
    """A record that cannot be read: not JSON, a field of the wrong type, or too new."""


@dataclass(frozen=True)
class Stage:
    """One step a sample file went through: ``convert``, then ``audit``, ``fix`` or ``refine``."""

    stage: str
    rows: int | None = None
    """The rows the step wrote (``convert``) or read (a service stage)."""
    input: str | None = None
    """The file a service stage read (absolute, or relative to the file that holds the
    record); ``None`` for ``convert`` and for a stage run on samples in memory."""
    conventions: str | None = None
    """Whose conventions a service stage sent: a dataset's name, ``"given"`` (text of one's
    own) or ``"none"``; ``None`` in a record written before stages kept them."""
    conventions_text: str | None = None
    """The conventions text a service stage sent (``None`` when it sent none)."""
    input_hash: str | None = None
    """:func:`content_hash` of the samples a service stage read."""

    def to_json(self) -> dict[str, Any]:
        """The stage as the record's JSON keeps it."""
        if self.stage == "convert":
            return {"stage": "convert", "rows": self.rows}
        source = None if self.input is None else {"path": self.input, "rows": self.rows}
        value: dict[str, Any] = {"stage": self.stage, "input": source}
        if self.conventions is not None:
            value["conventions"] = {"from": self.conventions, "text": self.conventions_text}
        if self.input_hash is not None:
            value["input_hash"] = self.input_hash
        return value

    @classmethod
    def from_json(cls, value: Any, where: str) -> Stage:
        """A stage from the record's JSON; :class:`RecordError` naming ``where`` otherwise."""
        if not isinstance(value, Mapping) or not isinstance(value.get("stage"), str):
            raise RecordError(f"{where}: a stage is not an object with a 'stage' name: {value!r}")
        conventions, text = value.get("conventions"), None
        if conventions is not None:  # {"from": name, "text": text or null}
            if not isinstance(conventions, Mapping) or not isinstance(conventions.get("from"), str):
                raise RecordError(
                    f"{where}: stage {value['stage']!r} has bad conventions: {conventions!r}"
                )
            text = conventions.get("text")
            if text is not None and not isinstance(text, str):
                raise RecordError(
                    f"{where}: stage {value['stage']!r} has a conventions text that is not "
                    f"text: {text!r}"
                )
            conventions = conventions["from"]
        input_hash = value.get("input_hash")
        kept = {
            "conventions": conventions,
            "conventions_text": text,
            "input_hash": input_hash if isinstance(input_hash, str) else None,
        }
        source = value.get("input")
        if isinstance(source, Mapping):
            path, rows = source.get("path"), source.get("rows")
            if not isinstance(path, str) or not (rows is None or isinstance(rows, int)):
                raise RecordError(f"{where}: stage {value['stage']!r} has a bad input: {source!r}")
            return cls(value["stage"], rows, path, **kept)
        rows = value.get("rows")
        return cls(value["stage"], rows if isinstance(rows, int) else None, **kept)


_FIELDS = ("dataset", "layout", "config", "split")


@dataclass(frozen=True)
class Record:
    """What a sample file says about itself: its source, its layout, its steps.

    Written in one place (a loader's origin, then each stage), read by name. Kept as JSON
    under :data:`RECORD_KEY` in the Parquet footer (:meth:`metadata`, :meth:`read`); the
    JSON's ``"format"`` is :data:`RECORD_FORMAT`.
    """

    dataset: str | None = None
    """The preset's name; ``None`` for a mapping of one's own (see :attr:`mapping`)."""
    layout: str | None = None
    """The published layout the rows were read in (MMLU has eight)."""
    config: str | None = None
    split: str | None = None
    """The split as loaded, a slice included (``"test[:100]"``)."""
    source: Mapping[str, Any] = field(default_factory=dict)
    """``{"hub": id, "revision": rev}`` or ``{"files": [{"path", "bytes", "sha256"}, ...]}``."""
    features: Mapping[str, Any] | None = None
    """The source's Hugging Face features (as a dict), where it had them."""
    schema: str | None = None
    """The source's Arrow schema (:func:`arrow_schema_text`), for sources without features."""
    mapping: Mapping[str, Any] | None = None
    """The mapping's description (:meth:`~sdvm_hf.MultipleChoiceMapping.describe`)."""
    stages: tuple[Stage, ...] = ()
    rejects: Mapping[str, Any] | None = None
    """``{"path": file or None, "count": n}``: the rows the conversion left out."""
    version: str = ""
    """The ``sdvm_hf`` that wrote the record first."""
    shuffle: Mapping[str, Any] | None = None
    """``{"seed": n}`` when the conversion shuffled each sample's choices (``--shuffle-choices``;
    the original order is in each sample's ``extra``)."""

    # -- reading and writing ---------------------------------------------------------------

    @classmethod
    def from_json(cls, value: Any, where: str = "record") -> Record:
        """The record a JSON object holds; :class:`RecordError` naming ``where`` otherwise."""
        if not isinstance(value, Mapping):
            raise RecordError(f"{where}: its {RECORD_KEY.decode()} metadata is not a JSON object")
        version = value.get("format", RECORD_FORMAT)
        if not isinstance(version, int) or isinstance(version, bool):
            raise RecordError(f"{where}: its record's format is not a number: {version!r}")
        if version > RECORD_FORMAT:
            raise RecordError(
                f"{where}: its record is format {version!r}, newer than this sdvm_hf reads "
                f"({RECORD_FORMAT}); upgrade sdvm_hf"
            )
        names = {key: value.get(key) for key in _FIELDS}
        for key, name in names.items():
            if name is not None and not isinstance(name, str):
                raise RecordError(f"{where}: its record's {key} is not text: {name!r}")
        stages = value.get("stages") or []
        if not isinstance(stages, list):
            raise RecordError(f"{where}: its record's stages are not a list: {stages!r}")
        objects = {key: value.get(key) for key in ("source", "features", "mapping", "rejects")}
        for key, item in objects.items():
            if item is not None and not isinstance(item, Mapping):
                raise RecordError(f"{where}: its record's {key} is not an object: {item!r}")
        schema = value.get("schema")
        shuffle = value.get("shuffle")
        if shuffle is not None and not (
            isinstance(shuffle, Mapping) and isinstance(shuffle.get("seed"), int)
        ):
            raise RecordError(f"{where}: its record's shuffle is not {{'seed': int}}: {shuffle!r}")
        return cls(
            **names,
            source=objects["source"] or {},
            features=objects["features"],
            schema=schema if isinstance(schema, str) else None,
            mapping=objects["mapping"],
            stages=tuple(Stage.from_json(stage, where) for stage in stages),
            rejects=objects["rejects"],
            version=str(value.get("sdvm_hf", "")),
            shuffle=shuffle,
        )

    def to_json(self) -> dict[str, Any]:
        """The record as JSON (the form :meth:`from_json` reads)."""
        return {
            "format": RECORD_FORMAT,
            "sdvm_hf": self.version,
            **{key: getattr(self, key) for key in _FIELDS},
            "source": dict(self.source),
            "features": None if self.features is None else dict(self.features),
            "schema": self.schema,
            "mapping": None if self.mapping is None else dict(self.mapping),
            "stages": [stage.to_json() for stage in self.stages],
            "rejects": None if self.rejects is None else dict(self.rejects),
            **({} if self.shuffle is None else {"shuffle": dict(self.shuffle)}),
        }

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Record | None:
        """The record of the Parquet sample file at ``path``; ``None`` if it has none."""
        if not str(path).endswith(".parquet") or os.path.isdir(path):
            return None  # a folder of files has no one record (reading it says what it holds)
        try:
            text = (pq.read_metadata(path).metadata or {}).get(RECORD_KEY)
        except pa.ArrowInvalid as error:
            raise RecordError(f"{path} cannot be read as Parquet: {error}") from None
        if text is None:
            return None
        try:
            value = json.loads(text)
        except ValueError as error:
            raise RecordError(
                f"{path}: its {RECORD_KEY.decode()} metadata is not JSON: {error}"
            ) from None
        return cls.from_json(value, str(path))

    def metadata(self) -> dict[bytes, bytes]:
        """The key-value metadata that holds the record."""
        return {RECORD_KEY: json.dumps(self.to_json(), ensure_ascii=False).encode()}

    # -- the steps -------------------------------------------------------------------------

    def converted(
        self,
        rows: int,
        rejected: int,
        rejects: str | os.PathLike[str] | None,
        sha256: str | None = None,
    ) -> Record:
        """The record of a convert output: ``rows`` samples, ``rejected`` rows left out.

        ``sha256`` is the rejects file's, as written: an export trusts only that file.
        """
        where = None if rejects is None else str(Path(rejects).resolve())
        kept: dict[str, Any] = {"path": where, "count": rejected}
        if sha256 is not None:
            kept["sha256"] = sha256
        return replace(self, stages=(Stage("convert", rows),), rejects=kept)

    @property
    def rejects_sha256(self) -> str | None:
        """The SHA-256 of the rejects file the conversion wrote, where the record keeps it."""
        value = (self.rejects or {}).get("sha256")
        return value if isinstance(value, str) else None

    def shuffled(self, seed: int) -> Record:
        """The record of these samples with their choices shuffled by ``seed``."""
        return replace(self, shuffle={"seed": seed})

    def with_stage(
        self,
        stage: str,
        input_path: str | os.PathLike[str] | None,
        rows: int,
        **kept: str | None,
    ) -> Record:
        """The record with one more stage: ``stage`` read ``input_path`` (``rows`` samples).

        ``input_path`` ``None`` (samples from memory) records the stage without an input, so
        nothing can follow it back. ``kept`` are the :class:`Stage`'s other fields
        (``conventions``, ``conventions_text``, ``input_hash``).
        """
        path = None if input_path is None else str(Path(input_path).resolve())
        return replace(self, stages=(*self.stages, Stage(stage, rows, path, **kept)))

    # -- what it says, by name -------------------------------------------------------------

    def stage_input(self, path: str | os.PathLike[str]) -> Path | None:
        """The file the last stage read (the stage's input), for the file at ``path``.

        A relative name is relative to the folder of ``path``; ``None`` for a convert output
        or a stage run on samples in memory.

        >>> record = Record(stages=(Stage("convert", 10), Stage("refine", 10, "mmlu.parquet")))
        >>> record.stage_input("out/mmlu.refine.parquet")
        PosixPath('out/mmlu.parquet')
        """
        last = self.stages[-1] if self.stages else None
        if last is None or last.input is None:
            return None
        return relative_to(path, last.input)

    def convert_output(self, path: str | os.PathLike[str]) -> Path | None:
        """The convert output the file at ``path`` was made from, through the stages' inputs.

        ``path`` itself for a convert output; ``None`` when a stage's input is gone, has no
        record, or the trail loops.
        """
        current, seen = Path(path), set()
        record: Record | None = self
        while record is not None:
            if not record.stages or record.stages[-1].stage == "convert":
                return current
            source = record.stage_input(current)
            if source is None or source in seen or not source.is_file():
                return None
            seen.add(source)
            current, record = source, Record.read(source)
        return None

    def rejects_file(self, path: str | os.PathLike[str]) -> tuple[Path | None, int | None]:
        """Where the conversion's rejects are (relative to ``path``'s folder) and their count."""
        if self.rejects is None:
            return None, None
        name, count = self.rejects.get("path"), self.rejects.get("count")
        return (
            None if not isinstance(name, str) else relative_to(path, name),
            count if isinstance(count, int) else None,
        )

    def published_features(self, layout: str) -> Mapping[str, Any] | None:
        """The source's Hugging Face features, if the rows go back to the layout they came from."""
        return self.features if layout == self.layout and self.features else None

    def published_schema(self, layout: str) -> pa.Schema | None:
        """The source's Arrow schema, when the rows go back to the layout they came from."""
        return arrow_schema(self.schema) if layout == self.layout and self.schema else None

    def steps(self) -> list[str]:
        """The stages' names from ``convert`` on (``["convert", "refine"]``)."""
        return ["convert", *(stage.stage for stage in self.stages[1:])]

    def provenance(self) -> str:
        """Where the rows came from, as a dataset card says it.

        A Hub id and revision, or the source files by name and SHA-256 (never a local folder).
        """
        if "hub" in self.source:
            hub, revision = self.source["hub"], self.source.get("revision")
            return f"the Hub dataset `{hub}` at revision `{revision}`"
        if "files" in self.source:
            return ", ".join(
                f"`{Path(str(entry.get('path'))).name}` (sha256 `{entry.get('sha256')}`)"
                for entry in self.source["files"]
                if isinstance(entry, Mapping)
            )
        return "no record (named by hand)"


def content_hash(table: pa.Table) -> str:
    """A SHA-256 of a table's column names, types and values, however it is chunked or sliced.

    Each column's value buffers and lengths are hashed (no Python object per row): a stage
    compares it with what its output's record says it read, to send nothing twice.

    >>> t = pa.table({"x": ["a", "bc", None]})
    >>> content_hash(t) == content_hash(pa.concat_tables([t.slice(0, 1), t.slice(1)]))
    True
    >>> content_hash(t) == content_hash(pa.table({"x": ["a", "b", "c"]}))
    False
    """
    return table_hash(table)


def content_hash_of(tables: Iterable[pa.Table]) -> str:
    """:func:`content_hash` of the tables one after another, holding one at a time.

    >>> t = pa.table({"x": ["a", "bc", None]})
    >>> content_hash_of([t.slice(0, 2), t.slice(2)]) == content_hash(t)
    True
    """
    hasher = TableHasher()
    for table in tables:
        hasher.update(table)
    return hasher.hexdigest()


def read_record(path: str | os.PathLike[str]) -> Record | None:
    """The record of the Parquet sample file at ``path``; ``None`` if it has none."""
    return Record.read(path)


def with_record(schema: pa.Schema, record: Record | None) -> pa.Schema:
    """``schema`` carrying ``record`` (unchanged when there is none)."""
    if record is None:
        return schema
    return schema.with_metadata({**(schema.metadata or {}), **record.metadata()})


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

    SHA-256 runs at about 1.6 GB/s and ``hashlib`` releases the GIL on large blocks, so a
    loader hashes its source files beside its own work (an eager load once the read is
    done, a stream as it starts reading): the record asks for the entries (waiting only for
    what is left) when a sample file is written. An error (a file gone) is raised to the
    caller that waits.
    """
    paths = list(paths)
    entries: list[dict[str, Any]] = []
    failure: list[BaseException] = []

    def run() -> None:
        block_signals_in_this_thread()  # Ctrl-C and SIGTERM stay the main thread's
        work_ahead()  # the record waits for it only when the file is written: it goes last
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
    metadata: dict[bytes, bytes] | None,
    stage: str,
    input_path: str | None,
    rows: int,
    **kept: str | None,
) -> dict[bytes, bytes] | None:
    """A stage output's key-value metadata: its input's, the record with one more stage.

    ``input_path`` is the file the stage read (``None`` when its samples came from memory:
    the stage is recorded without an input, so ``export`` cannot follow it back).
    """
    if not metadata or RECORD_KEY not in metadata:
        return metadata
    record = Record.from_json(json.loads(metadata[RECORD_KEY]), input_path or "the input")
    if input_path is None or not os.path.isfile(input_path):
        input_path = None
    return {**metadata, **record.with_stage(stage, input_path, rows, **kept).metadata()}


def relative_to(path: str | os.PathLike[str], name: str) -> Path:
    """``name`` as a record gives it: absolute, or relative to the folder of the file ``path``."""
    target = Path(name)
    return target if target.is_absolute() else Path(os.path.normpath(Path(path).parent / target))
