"""The sample files to export: their records, the flags checked against them, the folder."""

from __future__ import annotations

from pathlib import Path

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.exporter._types import MANIFEST, ExportError, Part, check_name
from sdvm_hf.presets.registry import PRESETS
from sdvm_hf.record import RecordError, read_record
from sdvm_hf.sources import parse_split


def parent(folder: Path) -> Path:
    parent = folder.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    return parent


def check_folder(folder: Path, inputs: list[Path], overwrite: bool) -> None:
    target = folder.resolve()
    for path in inputs:
        if path.is_dir():
            raise ExportError(f"{path} is a folder, not a file; give a sample file")
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
            raise ExportError(
                f"{folder} holds an earlier export; replace it with --overwrite (overwrite=True)"
            )


def read_part(path: Path, given: dict[str, str | None], count: int) -> Part:
    try:
        record = read_record(path)
    except RecordError as error:
        raise ExportError(str(error)) from None
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
            value, recorded = given[key], getattr(record, key)
            if key == "split" and recorded is not None:
                recorded = parse_split(recorded).name
            if key == "layout" and value is not None:
                continue  # a layout given is the one to export in
            if value is not None and recorded is not None and value != recorded:
                raise ExportError(
                    f"{path}: its record says {key} {recorded!r}, but {value!r} was given"
                )
    name = given["dataset"] or (record.dataset if record else None)
    preset = None if name is None else PRESETS.get(name)
    if name is not None and preset is None:
        raise ExportError(f"{path}: unknown dataset {name!r}; presets known: {', '.join(PRESETS)}")
    source_layout = record.layout if record else None
    if preset is not None:
        source_layout = source_layout or next(iter(preset.layouts))
        target = given["layout"] or preset.export_layouts.get(source_layout, source_layout)
        if target not in preset.layouts:
            raise ExportError(
                f"{path}: unknown {preset.name} layout {target!r}; layouts known: "
                f"{', '.join(preset.layouts)}"
            )
        mapping = preset.layouts[target]
        config = given["config"] or (record and record.config) or preset.config or "default"
        upstream = preset.publication(target).config
        if upstream is not None and not given["config"] and config == preset.config:
            config = upstream  # the preset's default is not this layout's (MMLU-Pro: default)
        split = given["split"] or (record and record.split) or preset.split
    else:
        if record is None or record.mapping is None:
            raise ExportError(f"{path}: its record names no dataset and no mapping")
        try:
            mapping = MultipleChoiceMapping.from_description(record.mapping)
        except (TypeError, ValueError, KeyError) as error:
            raise ExportError(f"{path}: its record's mapping cannot be read: {error}") from None
        target = source_layout or mapping.dataset
        config = given["config"] or record.config or mapping.dataset  # the name a harness asks
        split = given["split"] or record.split or "train"
    split = parse_split(split).name
    return Part(
        path,
        record,
        preset,
        mapping,
        target,
        check_name("configuration", config, path),
        check_name("split", split, path),
    )


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
