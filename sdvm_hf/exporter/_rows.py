"""Each row back in its layout: the inverse half, the preset's follow rule, the policies."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from sdvm_hf.convert._encode import EncodeError
from sdvm_hf.exporter._inputs import original_file
from sdvm_hf.exporter._types import ExportError, Part, Policy, Tally
from sdvm_hf.files import read_samples
from sdvm_hf.record import arrow_schema
from sdvm_hf.samples import MultipleChoiceSample


def _publish(part: Part, sample: MultipleChoiceSample, row: int) -> tuple[dict[str, Any], str]:
    """The published row for ``sample``; and why a fix could not be expressed, or ``""``."""
    try:
        published = part.mapping.encode(sample)
    except EncodeError as error:
        raise ExportError(f"{part.path} row {row}: {error}") from None
    follow = part.preset.follow if part.preset is not None else None
    why = follow(published, sample) if follow is not None else None
    return published, why or ""


def _checks(block: Any, prefix: str = "") -> Iterator[tuple[str, bool]]:
    """Every boolean in a block, nested dicts flattened to dotted names."""
    if isinstance(block, dict):
        for key, value in block.items():
            name = f"{prefix}{key}"
            if isinstance(value, bool):
                yield name, value
            elif isinstance(value, dict):
                yield from _checks(value, name + ".")


def failing(sample: MultipleChoiceSample, only: Sequence[str] = ()) -> list[str]:
    """The checks the sample's final verdict fails, and ``fix.flagged`` if its fix is flagged.

    The final verdict is the reaudit where there is one, else the audit; a check is any
    boolean in it, nested dicts flattened to dotted names. ``only`` narrows them to these.
    """
    verdict = sample.reaudit if sample.reaudit is not None else sample.audit
    failed = [name for name, passed in _checks(verdict) if not passed]
    if isinstance(sample.fix, dict) and sample.fix.get("flagged") is True:
        failed.append("fix.flagged")
    if only:
        failed = [name for name in failed if name in only]
    return failed


def export_part(
    part: Part,
    policy: Policy,
    only: Sequence[str],
    annotate: bool,
    lines: Any,
) -> tuple[pa.Table, Tally]:
    current = read_samples(part.path)
    original_path = original_file(part.path, part.record)
    same = original_path is not None and original_path.resolve() == part.path.resolve()
    originals = None
    if original_path is not None and not same:
        originals = read_samples(original_path)
        if len(originals) != len(current):
            raise ExportError(
                f"{part.path} has {len(current)} rows, its original {original_path} "
                f"{len(originals)}: a stage must keep every row"
            )
    elif original_path is None and (policy == "original" or annotate):
        raise ExportError(
            f"{part.path}: the original rows are not found (its record names no convert "
            "output that still exists), so the original policy and --annotate cannot run"
        )
    seen_checks: set[str] = set()
    rows: list[dict[str, Any]] = []
    originals_kept: list[dict[str, Any]] = []
    statuses: list[str] = []
    failing_lists: list[list[str]] = []
    changed_columns: dict[str, None] = {}
    tally = Tally()
    for index, sample in enumerate(current):
        published, why = _publish(part, sample, index)
        before = published
        if originals is not None:
            before, _ = _publish(part, originals[index], index)
        if why:
            published = before
        changed = [c for c in published if published[c] != before.get(c)]
        for name, _ in _checks(sample.reaudit if sample.reaudit is not None else sample.audit):
            seen_checks.add(name)
        failed = failing(sample, only)
        status = "dropped" if failed else "replaced" if changed else "kept"
        counted = status
        if policy == "replace" and status == "dropped":
            counted = "replaced" if changed else "kept"
        if policy == "original":
            counted = "kept"
        tally.add(counted)
        entry = {
            "config": part.config,
            "split": part.split,
            "row": index,
            "status": counted,
            "sdvm_status": status,
            "failing": failed,
            "changed": changed,
            "reason": why,
        }
        lines.write(json.dumps(entry, ensure_ascii=False) + "\n")
        if counted == "dropped":
            continue
        chosen = before if policy == "original" else published
        rows.append(chosen)
        originals_kept.append(before)
        statuses.append(status)
        failing_lists.append(failed)
        changed_columns.update(dict.fromkeys(changed))
    unknown = [name for name in only if name not in seen_checks and name != "fix.flagged"]
    if unknown:
        raise ExportError(
            f"{part.path}: no verdict has the check {unknown[0]!r}; checks seen: "
            f"{', '.join(sorted(seen_checks)) or '(none: the file is not audited)'}"
        )
    table = _table(part, rows)
    if annotate:
        table = table.append_column("sdvm_status", pa.array(statuses, pa.string()))
        table = table.append_column("sdvm_failing", pa.array(failing_lists, pa.list_(pa.string())))
        for column in changed_columns:
            values = _table(part, originals_kept).column(column)
            table = table.append_column(f"original_{column}", values)
    return table, tally


def _features(part: Part) -> Any:
    """The published features of the part's layout, where they are known."""
    import datasets

    record = part.record or {}
    if part.layout == record.get("layout") and record.get("features"):
        return datasets.Features.from_dict(record["features"])
    if part.preset is not None and part.layout in part.preset.features:
        return datasets.Features.from_dict(dict(part.preset.features[part.layout]))
    return None


def _table(part: Part, rows: list[dict[str, Any]]) -> pa.Table:
    features = _features(part)
    record = part.record or {}
    if features is None and part.layout == record.get("layout") and record.get("schema"):
        schema = arrow_schema(record["schema"])
        _check_columns(part, rows, schema.names)
        return _typed(part, rows, schema)
    if features is None:  # a file built by hand: its rows say what they hold
        return pa.Table.from_pylist(rows)
    _check_columns(part, rows, list(features))
    return _typed(part, rows, features.arrow_schema)


def _typed(part: Part, rows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """The rows in ``schema``, column by column.

    An int given back where the layout has text (HellaSwag's label from the original JSON
    Lines, a one-based answer) is written as its digits; other values are cast.
    """
    columns = []
    for field in schema:
        values = [row.get(field.name) for row in rows]
        try:
            column = pa.array(values, field.type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
                values = [_digits(value) for value in values]
            try:
                column = pa.array(values).cast(field.type)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as error:
                raise ExportError(
                    f"{part.path}: column {field.name!r} of the {part.layout} layout: expected "
                    f"{field.type}, got values that do not convert ({error})"
                ) from None
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)


def _digits(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _check_columns(part: Part, rows: list[dict[str, Any]], names: Sequence[str]) -> None:
    wanted = set(names)
    for index, row in enumerate(rows):
        missing = [name for name in names if name not in row]
        extra = [name for name in row if name not in wanted]
        if missing or extra:
            what = (
                f"the published column {missing[0]!r} cannot be given back from the sample"
                if missing
                else f"its extra key {extra[0]!r} is not a column of the published layout"
            )
            raise ExportError(f"{part.path} row {index}: {what} ({part.layout} layout)")
