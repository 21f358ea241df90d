"""JSON Lines files read with ``pyarrow.json``, a few megabytes of lines at a time.

A file is cut into blocks of whole lines, each parsed on its own (one pyarrow thread a
block, several blocks at once: :func:`~sdvm_hf.sources._ahead.in_order`), and every block
gets the types the whole file gives, as ``pyarrow.json.read_json`` of the file infers them:
a column null at first takes its later type, integers that meet decimals become doubles, a
key first seen late is added. Read whole (:func:`read_jsonl`), the blocks parsed once are
kept and only those whose types differ from the file's are parsed again; streamed
(:func:`jsonl_blocks`), a first pass finds the file's types and the second parses each block
in them, holding a few blocks at a time.

A reader that can start again (a conversion writing to a temporary file, reading inside
:func:`sdvm_hf._restart.restartable`) gets one pass instead: the first block's types are
taken as the file's, and a later block that does not fit them raises
:class:`~sdvm_hf._restart.StartAgain` before it is given, so the reader runs again with the
two passes. Files whose types hold from their first block (most) are parsed once.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import zlib
from collections.abc import Iterator
from contextlib import closing
from typing import IO, TYPE_CHECKING

import pyarrow as pa

from sdvm_hf._restart import StartAgain, guess, may_restart
from sdvm_hf.errors import InputError
from sdvm_hf.sources._ahead import in_order

if TYPE_CHECKING:  # pyarrow.json is imported by the first JSON read
    import pyarrow.json as paj

__all__ = ["jsonl_blocks", "read_jsonl", "read_options"]

BLOCK_BYTES = 8 << 20
"""Bytes of JSON Lines parsed at a time (whole lines: a longer line makes a longer block)."""

STREAMED = 1
"""Blocks a stream parses at once, beside its reader: one thread parses JSON Lines faster
than the conversion and the Parquet writer behind it take them (1M HellaSwag rows: 2.3 s
against the writer's 3.4 s), and a second one only takes a core from the writer (the
command of the same rows took 5.2 s with two, 4.8 s with one, on two cores)."""

Block = tuple[int, "pa.Buffer | bytes"]
"""Where a block of whole lines starts in the file's text (a byte offset), and its lines."""


def read_options(size: int = 0) -> paj.ReadOptions:
    """How JSON text of ``size`` bytes is parsed: in one chunk (of 4 MB at least), one thread.

    pyarrow's default 1 MB blocks fail on a longer line. One chunk a block of ours, so that its
    columns are single arrays the conversion reads as they are (two chunks a block made it
    copy the extra columns to line them up). One pyarrow thread a parse: pyarrow 26's threaded
    JSON reader crashed the process (a segfault) on a column whose type changes within a
    block, and gave a different error on each run. Blocks parsed in threads of our own are
    each a reader of their own.
    """
    import pyarrow.json as paj

    return paj.ReadOptions(block_size=max(4 << 20, size + 1), use_threads=False)


def named(file: str, error: Exception | str) -> InputError:
    """An error reading ``file``, naming it."""
    return InputError(f"{file}: {error}")


def line_blocks(file: str) -> Iterator[Block]:
    """``file`` about :data:`BLOCK_BYTES` of whole lines at a time, with where each starts.

    A plain file's blocks are read-only maps of it (no copy: copying 1.2 GB of lines into
    fresh memory took a second); a ``.gz`` file is decompressed a block
    at a time. A file that cannot be read (a truncated ``.gz``) is named.
    """
    try:
        yield from (_gz_blocks(file) if file.endswith(".gz") else _mapped_blocks(file))
    except (OSError, EOFError, zlib.error, pa.ArrowException) as error:
        raise named(file, error) from None


def _mapped_blocks(file: str) -> Iterator[Block]:
    """Each block its own read-only map of the file, unmapped when its lines are let go.

    A stream so holds the pages of the blocks in flight, not of the file read so far.
    """
    with open(file, "rb") as raw:
        descriptor = raw.fileno()
        size, start = os.fstat(descriptor).st_size, 0
        while start < size:
            stop = _line_end(descriptor, start, min(start + BLOCK_BYTES, size), size)
            base = start - start % mmap.ALLOCATIONGRANULARITY
            window = mmap.mmap(descriptor, stop - base, offset=base, access=mmap.ACCESS_READ)
            yield start, pa.py_buffer(memoryview(window)[start - base :])
            start = stop


def _line_end(descriptor: int, start: int, stop: int, size: int) -> int:
    """Where the block from ``start`` ends, ``stop`` at most if a line ends before it.

    After the last line break before ``stop``, else after the first one past it (a line
    longer than a block), else at the end of the file.
    """
    tail = 1 << 16
    at = stop
    while at > start:  # the last break before stop, read back a little at a time
        low = max(start, at - tail)
        found = os.pread(descriptor, at - low, low).rfind(b"\n")
        if found >= 0:
            return low + found + 1
        at = low
    at = stop
    while at < size:  # a line longer than a block: to its end
        found = os.pread(descriptor, min(tail, size - at), at).find(b"\n")
        if found >= 0:
            return at + found + 1
        at += tail
    return size


def _gz_blocks(file: str) -> Iterator[Block]:
    offset, rest = 0, b""
    with _gz_open(file, "rb") as text:
        while data := text.read(BLOCK_BYTES):
            data = rest + data if rest else data
            cut = data.rfind(b"\n") + 1
            if not cut:  # no line ends yet: a line longer than a block
                rest = data
                continue
            block, rest = data[:cut], data[cut:]
            yield offset, block
            offset += cut
    if rest:
        yield offset, rest


def _line_at(file: str, offset: int) -> int:
    """The number of the line that starts at ``offset`` of the file's text (for messages)."""
    breaks, read = 0, 0
    opener = _gz_open if file.endswith(".gz") else open
    with opener(file, "rb") as text:
        while read < offset and (data := text.read(min(BLOCK_BYTES, offset - read))):
            breaks += data.count(b"\n")
            read += len(data)
    return breaks + 1


def _gz_open(file: str, mode: str) -> IO[bytes]:
    import gzip

    return gzip.open(file, mode)  # type: ignore[return-value]


def _lines(file: str, block: Block) -> tuple[int, int]:
    """The numbers of a block's first and last lines."""
    offset, data = block
    if not data:  # a block not held: read again
        data = next(lines for start, lines in line_blocks(file) if start == offset)
    lines = bytes(data)
    first = _line_at(file, offset)
    return first, first + lines.count(b"\n") - lines.endswith(b"\n")


def _not_json(first: int, lines: bytes) -> int | None:
    """The number of the first line of ``lines`` that is not JSON (pyarrow says a block's row)."""
    for number, line in enumerate(lines.split(b"\n"), start=first):
        try:
            if line.strip():
                json.loads(line)
        except ValueError:
            return number
    return None


_FIRST_VALUE = re.compile(rb"[^ \t\r\n]")


def _refuse_null_first(file: str, block: Block) -> None:
    """Refuse a block whose first value is ``null``, naming its line.

    pyarrow 26's reader kills the process on such a block (a ``null`` line first, blank lines
    before it or not); a ``null`` line after the first value reads as a row of nulls.
    """
    data = block[1]
    found = _FIRST_VALUE.search(data)
    if found is None or bytes(data[found.start() : found.start() + 4]) != b"null":
        return
    first, _ = _lines(file, block)
    line = first + bytes(data[: found.start()]).count(b"\n")
    raise named(file, f"line {line} is null, not a JSON object (a row)")


def _parsed(file: str, block: Block, schema: pa.Schema | None = None) -> pa.Table:
    import pyarrow.json as paj

    options = paj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error")
    data = block[1]
    _refuse_null_first(file, block)
    try:
        return paj.read_json(
            pa.BufferReader(data), read_options=read_options(len(data)), parse_options=options
        )
    except pa.ArrowException as error:
        first, last = _lines(file, block)
        bad = _not_json(first, bytes(data))
        if bad is not None:
            raise named(file, f"line {bad} is not JSON: {error}") from None
        raise named(file, f"lines {first} to {last}: {error}") from None


_EMPTY = "Empty JSON file"


def _unify(schema: pa.Schema, other: pa.Schema) -> pa.Schema:
    """The two blocks' types unified as pyarrow's reader unifies a file's blocks.

    Beyond ``unify_schemas``' permissive promotion, a column of timestamps that meets other
    text, or timestamps of another unit, becomes text, as the reader makes it.
    """
    texts = {
        field.name
        for field in other
        if field.name in schema.names
        and (types := (field.type, schema.field(field.name).type))[0] != types[1]
        and any(pa.types.is_timestamp(t) for t in types)
        and all(pa.types.is_timestamp(t) or pa.types.is_string(t) for t in types)
    }

    def as_text(fields: pa.Schema) -> pa.Schema:
        return pa.schema(f.with_type(pa.string()) if f.name in texts else f for f in fields)

    return pa.unify_schemas([as_text(schema), as_text(other)], promote_options="permissive")


def _file_schema(file: str, schemas: Iterator[tuple[Block, pa.Schema]]) -> pa.Schema:
    """The blocks' types unified in order; the error names the lines that do not fit."""
    schema: pa.Schema | None = None
    for block, found in schemas:
        try:
            schema = found if schema is None else _unify(schema, found)
        except pa.ArrowException as error:
            first, last = _lines(file, block)
            raise named(file, f"lines {first} to {last}: {error}") from None
    if schema is None:
        raise named(file, ValueError(_EMPTY))
    return schema


def jsonl_schema(file: str) -> pa.Schema:
    """The column types of the whole file, as ``read_json`` infers them (a few blocks held)."""
    return _file_schema(
        file, in_order(lambda block: (block, _parsed(file, block).schema), line_blocks(file))
    )


def jsonl_blocks(file: str) -> Iterator[pa.Table]:
    """A JSON Lines file a block at a time, every block in the file's types.

    The types come from a first pass over the file (:func:`jsonl_schema`), so a key first
    seen on the last line, or a column null until then, gives the table the whole file gives.
    Read where it may restart (:func:`~sdvm_hf._restart.may_restart`), they are the first
    block's, checked on every block.
    """
    if may_restart():
        yield from _first_types(file)
        return
    schema = jsonl_schema(file)
    yield from in_order(lambda block: _parsed(file, block, schema), line_blocks(file), STREAMED)


def _first_types(file: str) -> Iterator[pa.Table]:
    """Each block parsed once, in the first block's types, which the file's must then be.

    A block whose own types unify with the first's into the first's (a column null in it)
    is parsed again in them, as the two passes would parse it; one whose types would widen
    the file's asks the reader to start again (:class:`~sdvm_hf._restart.StartAgain`).
    """
    schema: pa.Schema | None = None
    parsed = in_order(lambda block: (block, _parsed(file, block)), line_blocks(file), STREAMED)
    with guess(), closing(parsed):  # checked only at the end; no parse left running
        for block, table in parsed:
            if schema is None:
                schema = table.schema
            elif table.schema != schema:
                try:
                    fits = _unify(schema, table.schema) == schema
                except pa.ArrowException:
                    fits = False
                if not fits:
                    raise StartAgain(f"{file}: a block's types are not its first block's")
                table = _parsed(file, block, schema)
            yield table
        if schema is None:  # as the first pass says it
            raise named(file, ValueError(_EMPTY))


def read_jsonl(file: str) -> pa.Table:
    """A JSON Lines file whole, in the types ``read_json`` of the file gives.

    Each block is parsed once; a block whose own types are not the file's (a column null
    in it but not in another) is parsed again in the file's types, its lines read again.
    """
    parsed = list(in_order(lambda block: (block[0], _parsed(file, block)), line_blocks(file)))
    schema = _file_schema(file, (((offset, b""), table.schema) for offset, table in parsed))
    again = {offset for offset, table in parsed if table.schema != schema}
    if not again:
        return pa.concat_tables([table for _, table in parsed])
    redone = in_order(
        lambda block: (block[0], _parsed(file, block, schema)),
        (block for block in line_blocks(file) if block[0] in again),
    )
    fresh = dict(redone)
    return pa.concat_tables([fresh.get(offset, table) for offset, table in parsed])
