"""The sample files to export: their records, the flags checked against them, the folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.exporter._types import MANIFEST, ExportError, Part
from sdvm_hf.presets.registry import PRESETS
from sdvm_hf.record import Record, original_path, read_record
from sdvm_hf.sources._split import parse_split


def parent(folder: Path) -> Path:
    parent = folder.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    return parent


def check_folder(folder: Path, inputs: list[Path], overwrite: bool) -> None:
    target = folder.resolve()
    for path in inputs:
        if not path.is_file():
            raise ExportError(f"{path}: no such sample file")
        resolved = path.resolve()
        if resolved == target or target in resolved.parents:
            raise ExportError(
                f"{path} is inside the output folder {folder}; export to another folder"
            )
    if folder.exists():
        if not folder.is_dir():
            raise ExportError(f"{folder} exists and is not a folder; name a new folder")
        if not (folder / MANIFEST).is_file():
            raise ExportError(
                f"{folder} exists and is not an earlier export (no {MANIFEST}); name a new folder"
            )
        if not overwrite:
            raise ExportError(f"{folder} holds an earlier export; pass overwrite to replace it")


def read_part(path: Path, given: dict[str, str | None], count: int) -> Part:
    record = read_record(path)
    if record is None:
        if given["dataset"] is None:
            raise ExportError(
                f"{path} has no record of where it came from (a JSON Lines file, or one not "
                "written by convert): name its dataset (--dataset NAME)"
            )
        if count > 1 and given["split"] is not None:
            raise ExportError(
                "several files without a record cannot share one --split; export them one at a time"
            )
        record = None
    else:
        for key in ("dataset", "layout", "config", "split"):
            value, recorded = given[key], record.get(key)
            if key == "split" and recorded is not None:
                recorded = parse_split(recorded).name
            if key == "layout" and value is not None:
                continue  # a layout given is the one to export in
            if value is not None and recorded is not None and value != recorded:
                raise ExportError(
                    f"{path}: its record says {key} {recorded!r}, but {value!r} was given"
                )
    name = given["dataset"] or (record or {}).get("dataset")
    preset = None if name is None else PRESETS.get(name)
    if name is not None and preset is None:
        raise ExportError(f"{path}: unknown dataset {name!r}; presets known: {', '.join(PRESETS)}")
    source_layout = (record or {}).get("layout")
    if preset is not None:
        source_layout = source_layout or next(iter(preset.layouts))
        target = given["layout"] or preset.export_layouts.get(source_layout, source_layout)
        if target not in preset.layouts:
            raise ExportError(
                f"{path}: unknown {preset.name} layout {target!r}; layouts known: "
                f"{', '.join(preset.layouts)}"
            )
        mapping = preset.layouts[target]
        config = given["config"] or (record or {}).get("config") or preset.config or "default"
        split = given["split"] or (record or {}).get("split") or preset.split
    else:
        described = (record or {}).get("mapping")
        if described is None:
            raise ExportError(f"{path}: its record names no dataset and no mapping")
        mapping = _mapping(described)
        target = source_layout or mapping.dataset
        config = given["config"] or (record or {}).get("config") or "default"
        split = given["split"] or (record or {}).get("split") or "train"
    return Part(path, record, preset, mapping, target, config, parse_split(split).name)


def _mapping(described: dict[str, Any]) -> MultipleChoiceMapping:
    """A mapping from its record's description (the generic mapping's export)."""
    fields = dict(described)
    if "name" in fields:  # a record written before the label was named for what it is
        fields["dataset"] = fields.pop("name")
    fields["types"] = {k: pa.type_for_alias(v) for k, v in fields.get("types", {}).items()}
    for key in ("keep", "drop", "extra_order"):
        fields[key] = tuple(fields.get(key) or ())
    for key in ("context", "choices"):
        if isinstance(fields[key], list):
            fields[key] = tuple(fields[key])
    return MultipleChoiceMapping(**fields)


def check_parts(parts: list[Part]) -> None:
    names = {
        part.preset.name if part.preset else f"mapping {part.mapping.dataset}" for part in parts
    }
    if len(names) > 1:
        raise ExportError(
            f"the sample files come from different datasets ({', '.join(sorted(names))}); "
            "export one dataset at a time"
        )
    seen: dict[str, Path] = {}
    for part in parts:
        if part.name in seen:
            raise ExportError(
                f"{seen[part.name]} and {part.path} are both {part.name}: give one file per split"
            )
        seen[part.name] = part.path


def original_file(path: Path, record: Record | None) -> Path | None:
    """The convert output a stage output was made from, through the records' stages."""
    current, seen = path, set()
    while record is not None:
        stages = record.get("stages") or []
        if not stages or stages[-1].get("stage") == "convert":
            return current
        source = original_path(record, current)  # None: a stage run on samples in memory
        if source is None or source in seen or not source.is_file():
            return None
        seen.add(source)
        current, record = source, read_record(source)
    return None
