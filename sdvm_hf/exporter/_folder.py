"""The Hub dataset folder: one folder per configuration, the card, and the move into place."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sdvm_hf.exporter._layout import with_hf_features
from sdvm_hf.exporter._types import MANIFEST, ROW_RECORD, Exported, ExportError, Part
from sdvm_hf.record import hf_features


def configs(part: Part, table: pa.Table, values: list[str]) -> Iterator[tuple[str, pa.Table]]:
    """The part's configuration, and for MMLU's ``all`` one per subject too.

    ``values`` are the subjects of the rows before any was dropped: a subject whose rows were
    all dropped gives a table of no rows, so the export names it as not written.
    """
    yield part.config, table
    column = part.preset.config_column if part.preset is not None else None
    for value in values if column is not None else []:
        match = pc.fill_null(pc.equal(table.column(column), value), False)
        yield value, table.filter(match)


@dataclass(frozen=True)
class Piece:
    """A split of one configuration, as it is written."""

    config: str
    split: str
    table: pa.Table
    whole: bool
    """The part's whole table, not a configuration cut from it (see :func:`split_bytes`)."""
    source: Path
    """The sample file it comes from."""


def check_one_file_per_split(pieces: list[Piece]) -> None:
    """``ExportError`` when two input files give one configuration's split."""
    written: dict[tuple[str, str], Path] = {}
    for piece in pieces:
        if (piece.config, piece.split) in written:
            raise ExportError(
                f"{written[piece.config, piece.split]} and {piece.source} both give "
                f"{piece.config}/{piece.split} (MMLU's 'all' rows also go to one configuration "
                "per subject): export them separately"
            )
        written[piece.config, piece.split] = piece.source


def same_columns_per_config(pieces: list[Piece]) -> list[Piece]:
    """The pieces, each configuration's splits with the same columns in the same order.

    ``--annotate`` adds ``original_<column>`` only for columns a split's fixes changed, so
    one split may have ``original_ctx`` and another not; ``datasets.load_dataset`` reads a
    configuration's splits in one set of features, so a column a split lacks is added to it
    as nulls (no original to give: nothing was changed there).
    """
    fields: dict[str, dict[str, pa.Field]] = {}
    features: dict[str, dict[str, Any]] = {}
    for piece in pieces:
        known = fields.setdefault(piece.config, {})
        for field in piece.table.schema:
            known.setdefault(field.name, field)
        features.setdefault(piece.config, {}).update(hf_features(piece.table.schema) or {})
    aligned = []
    for piece in pieces:
        table = piece.table
        for name, field in fields[piece.config].items():
            if name not in table.column_names:
                table = table.append_column(field, pa.nulls(table.num_rows, field.type))
        order = list(fields[piece.config])
        if table.column_names != order:
            table = table.select(order)
        known = features[piece.config]
        if known and hf_features(table.schema) != known:  # the features of every column
            table = with_hf_features(table, {name: known[name] for name in order if name in known})
        aligned.append(piece if table is piece.table else replace(piece, table=table))
    return aligned


def write_split(folder: Path, config: str, split: str, table: pa.Table) -> None:
    path = folder / config / f"{split}-00000-of-00001.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def card(parts: list[Part], written: list[tuple[str, str, pa.Table, int]], result: Exported) -> str:
    """The README: YAML (configs, features, sizes in bytes), provenance and counts.

    ``written`` holds each configuration, split, table and its size (see :mod:`._size`).
    """
    from datasets import DatasetInfo, Features, SplitDict, SplitInfo
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard, DatasetCardData

    configs: dict[str, list[tuple[str, pa.Table, int]]] = {}
    for config, split, table, size in written:
        configs.setdefault(config, []).append((split, table, size))
    first = parts[0]
    # every input's own source and licence (MMLU-Pro's beside cais/mmlu's in one export)
    published = [p.preset.publication(p.layout) for p in parts if p.preset is not None]
    hubs = list(dict.fromkeys(p.hub for p in published))
    licences = list(dict.fromkeys(p.licence for p in published))
    layouts = list(dict.fromkeys(f"`{p.layout}`" for p in parts))
    hub = ", ".join(hubs) or None
    data = DatasetCardData(
        license=licences[0] if len(licences) == 1 else ("other" if licences else "unknown"),
        tags=["sdvm_hf"],
        source_datasets=hubs or None,
    )
    MetadataConfigs(
        {
            config: {
                "data_files": [
                    {"split": split, "path": f"{config}/{split}-*.parquet"}
                    for split, _, _ in splits
                ],
                **({"default": True} if index == 0 else {}),
            }
            for index, (config, splits) in enumerate(configs.items())
        }
    ).to_dataset_card_data(data)
    infos = {}
    for config, splits in configs.items():
        named = SplitDict()
        for split, table, size in splits:
            named.add(SplitInfo(name=split, num_bytes=size, num_examples=table.num_rows))
        infos[config] = DatasetInfo(
            features=Features.from_arrow_schema(splits[0][1].schema),
            splits=named,
            dataset_size=sum(size for _, _, size in splits),
        )
    DatasetInfosDict(infos).to_dataset_card_data(data)
    sources = []
    stages: list[str] = []
    for part in parts:
        record = part.record
        where = "no record (named by hand)" if record is None else record.provenance()
        steps = ["convert"] if record is None else record.steps()
        stages.extend(s for s in steps if s not in stages)
        sources.append(
            f"- `{part.name}` from `{part.path.name}`: {where}; stages: {' -> '.join(steps)}"
        )
    shuffled = [
        f"`{part.name}` (seed {part.record.shuffle.get('seed')})"
        for part in parts
        if part.record is not None and part.record.shuffle is not None
    ]
    order = (
        "they are published in the source's own order"
        if result.policy == "original"
        else "they are published in the shuffled order, the answer following its choice"
    )
    counts = result.total
    name = first.preset.name if first.preset is not None else first.mapping.dataset
    body = [
        f"# {name}, exported by sdvm_hf",
        "",
        f"The {' and '.join(layouts)} layout of {hub or name}, written back by sdvm_hf "
        f"{version('sdvm-hf')} with the `{result.policy}` policy after the stages "
        f"{', '.join(stages) or 'convert'}. The licence is the source dataset's.",
        "",
        f"Rows: {counts.describe(result.policy)}. `{ROW_RECORD}` says what became of each "
        "row and why.",
        *(
            [
                "",
                f"Not written, no row being left: {', '.join(result.not_written)} "
                "(`datasets` cannot load a split of no rows).",
            ]
            if result.not_written
            else []
        ),
        *(
            ["", f"The choices of {', '.join(shuffled)} were shuffled at conversion: {order}."]
            if shuffled
            else []
        ),
        *(["", *(f"Note: {note}." for note in result.notes)] if result.notes else []),
        "",
        "## Provenance",
        "",
        *sources,
        "",
    ]
    return str(DatasetCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(body)))


STAGING = "sdvm_hf-staging-"
"""Part of the name of the hidden folder an export is built in, beside its folder."""


def staging_folder(folder: Path) -> Path:
    """A new hidden folder beside ``folder`` to build the export in."""
    prefix = f".{folder.name}.{STAGING}"
    return Path(tempfile.mkdtemp(prefix=prefix, dir=folder.resolve().parent))


def clean_stale(folder: Path) -> list[Path]:
    """Remove the hidden folders earlier exports of ``folder`` left (killed with ``kill -9``).

    Call it holding the folder's lock: no other export of it is running, so every such
    folder is an earlier run's, never finished.
    """
    stale = sorted(folder.resolve().parent.glob(f".{folder.name}.{STAGING}*"))
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
    return stale


def written_files(staging: Path) -> list[str]:
    """Every file the export wrote, relative to its folder (the manifest keeps the list)."""
    return sorted(p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file())


def _earlier_files(folder: Path) -> set[str] | None:
    """The files the earlier export at ``folder`` wrote, as its manifest lists them."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if isinstance(files, list) and all(isinstance(f, str) for f in files):
        return set(files)
    return None  # an export from before the list: its files are told by their names


def _ours(relative: str, earlier: set[str] | None) -> bool:
    if earlier is not None:
        return relative in earlier
    name = Path(relative)
    if len(name.parts) == 1:
        return relative in ("README.md", MANIFEST, ROW_RECORD)
    return len(name.parts) == 2 and name.suffix == ".parquet" and "-of-" in name.name


def _folders_of_ours(folder: Path, earlier: set[str] | None) -> set[str]:
    """The folders that hold a file the earlier export wrote (the others are the user's)."""
    if earlier is not None:
        return {parent.as_posix() for name in earlier for parent in Path(name).parents} - {"."}
    return {  # an export from before the list: data files one level down, told by name
        entry.name
        for entry in folder.iterdir()
        if entry.is_dir()
        and any(_ours(f"{entry.name}/{f.name}", None) for f in entry.iterdir() if f.is_file())
    }


def carry_over(folder: Path, staging: Path) -> list[str]:
    """Move what the earlier export at ``folder`` did not write into ``staging``.

    ``.git``, ``.gitattributes``, a user's notes: ``--overwrite`` replaces an export, never
    what was put beside it. A file of theirs at a path the new export writes is refused.
    """
    earlier = _earlier_files(folder)
    holding = _folders_of_ours(folder, earlier)
    kept: list[str] = []
    for top, folders, files in os.walk(folder):  # top down, never into a folder kept whole
        here = Path(top).relative_to(folder)
        for name in sorted(folders):
            relative = (here / name).as_posix()
            if name.startswith(".git") or relative not in holding:
                kept.append(relative)
        folders[:] = sorted(n for n in folders if (here / n).as_posix() not in kept)
        for name in sorted(files):
            relative = (here / name).as_posix()
            if name.startswith(".git") or not _ours(relative, earlier):
                kept.append(relative)
    for relative in kept:
        target = staging / relative
        if target.exists():
            raise ExportError(
                f"{folder}: --overwrite would replace {relative}, which the earlier export did "
                "not write; move it away first"
            )
    for relative in kept:
        (staging / relative).parent.mkdir(parents=True, exist_ok=True)
        os.replace(folder / relative, staging / relative)
    return kept


def move_into_place(staging: Path, folder: Path) -> None:
    """Put the finished folder at ``folder``, replacing an earlier export in two renames."""
    if not folder.exists():
        os.replace(staging, folder)
        return
    old = staging_folder(folder)
    os.replace(folder, old / folder.name)
    try:
        os.replace(staging, folder)
    except BaseException:
        os.replace(old / folder.name, folder)
        raise
    finally:
        shutil.rmtree(old, ignore_errors=True)
