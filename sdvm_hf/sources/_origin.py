"""Where loaded samples come from: what a loader knows, for the record a sample file keeps."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.convert.preset import Preset
from sdvm_hf.record import Record, arrow_schema_text, file_entries_in_background, hf_features
from sdvm_hf.sources.source import Source

__all__ = ["Origin"]


@dataclass
class Origin:
    """What a loader knows of where its samples come from, for the record a sample file keeps.

    The layout and the source schema are known once the first rows are read, so the record
    is built when it is asked for (by the writer of a sample file), not when loading starts.
    """

    preset: Preset | None
    source: Source
    config: str | None = None
    layout: str | None = None
    mapping: MultipleChoiceMapping | None = None
    schema: pa.Schema | None = None
    entries: Callable[[], list[dict[str, Any]]] | None = field(default=None, repr=False)
    """The source files' entries, hashed in a thread beside the conversion (local files)."""

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the hashing thread (``datasets`` pickles a stream's generator)."""
        return {**self.__dict__, "entries": None}

    def hash_files(self) -> None:
        """Start hashing the local source files in a thread (a fresh start each pass)."""
        if self.source.files is not None:
            self.entries = file_entries_in_background(self.source.files)

    def read_as(self, layout: str, mapping: MultipleChoiceMapping) -> None:
        """The layout the rows were read in and its mapping, for the record."""
        self.layout, self.mapping = layout, mapping

    def watch(self, batches: Iterator[tuple[int, pa.Table]]) -> Iterator[tuple[int, pa.Table]]:
        self.hash_files()  # the files as this pass reads them
        first = True  # the types as this pass reads them (a pass read again may differ)
        for first_row, batch in batches:
            if first:
                self.schema, first = batch.schema, False
            yield first_row, batch

    def record(self) -> Record:
        """The record of a sample file written from these samples (see :mod:`sdvm_hf.record`)."""
        from importlib.metadata import version  # on writing, not on import (start-up time)

        source = self.source
        files = source.files
        if files is not None and self.entries is None:  # samples never read: hash now
            self.hash_files()
        where: dict[str, Any] = (
            {"files": self.entries()}
            if files is not None and self.entries is not None
            else {"hub": source.path, "revision": source.revision}
        )
        features = None if self.schema is None else hf_features(self.schema)
        return Record(
            dataset=None if self.preset is None else self.preset.name,
            layout=self.layout,
            config=self.config,
            split=source.split,
            source=where,
            features=features,
            schema=None if self.schema is None else arrow_schema_text(self.schema),
            mapping=None if self.mapping is None else self.mapping.describe(),
            version=version("sdvm-hf"),
        )
