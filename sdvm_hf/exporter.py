"""The way back: sample files to the benchmark's own published layout, as a Hub dataset folder.

Each sample file's record (see :mod:`sdvm_hf.record`) says which dataset, layout,
configuration and split it came from; each row goes back through the inverse half of that
layout's mapping (:meth:`~sdvm_hf.MultipleChoiceMapping.encode`), then the preset's ``follow``
rule keeps its derived columns consistent with a fixed context, choice or answer, and the
published features type it. An unchanged file comes back as its source, value for value.

The folder::

    README.md                         the card: configs, features, provenance, counts
    <config>/<split>-00000-of-00001.parquet
    export-record.jsonl               one line per input row: status, reason, changed columns
    sdvm_hf-export.json               the totals, and the mark of an earlier export

Policies: ``replace`` (every row, fixed text where a fix changed it), ``drop`` (the rows whose
final verdict passes and whose fix is not flagged, as the file holds them), ``original`` (the
source rows unchanged, for annotation-only releases).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf.convert._encode import EncodeError
from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.convert.preset import Preset
from sdvm_hf.files import read_samples
from sdvm_hf.presets.registry import PRESETS
from sdvm_hf.record import Record, arrow_schema, read_record
from sdvm_hf.samples import MultipleChoiceSample
from sdvm_hf.sources._split import parse_split

__all__ = ["POLICIES", "ExportError", "Exported", "Policy", "export"]

Policy = Literal["replace", "drop", "original"]
POLICIES: tuple[Policy, ...] = ("replace", "drop", "original")

MANIFEST = "sdvm_hf-export.json"
"""The file that marks a folder as an export (``--overwrite`` replaces only such a folder)."""
ROW_RECORD = "export-record.jsonl"
"""One line per input row, beside the data (the card's ``configs`` do not load it)."""


class ExportError(ValueError):
    """Samples that cannot go back to their published layout, and why."""


@dataclass
class Tally:
    """Rows in and what became of them, for one split or all."""

    rows_in: int = 0
    kept: int = 0
    replaced: int = 0
    dropped: int = 0

    def add(self, status: str) -> None:
        self.rows_in += 1
        setattr(self, status, getattr(self, status) + 1)

    def as_dict(self) -> dict[str, int]:
        return {
            "rows_in": self.rows_in,
            "kept": self.kept,
            "replaced": self.replaced,
            "dropped": self.dropped,
        }


@dataclass
class Exported:
    """What :func:`export` wrote: the folder, the configurations and the counts."""

    folder: Path
    policy: Policy
    configs: dict[str, list[str]] = field(default_factory=dict)
    """Each configuration written, with its splits."""
    total: Tally = field(default_factory=Tally)
    splits: dict[str, Tally] = field(default_factory=dict)
    """The counts per ``config/split`` of the input files."""

    def totals(self) -> dict[str, Any]:
        """The totals as ``--json`` prints them; ``kept + replaced + dropped == rows_in``."""
        return {
            "folder": str(self.folder),
            "policy": self.policy,
            **self.total.as_dict(),
            "splits": {name: tally.as_dict() for name, tally in self.splits.items()},
            "configs": self.configs,
        }


@dataclass(frozen=True)
class Part:
    """One input sample file: where it came from and where it goes."""

    path: Path
    record: Record | None
    preset: Preset | None
    mapping: MultipleChoiceMapping
    """The mapping of the layout the rows are exported in."""
    layout: str
    config: str
    split: str

    @property
    def name(self) -> str:
        return f"{self.config}/{self.split}"


def export(
    samples: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    folder: str | os.PathLike[str],
    *,
    policy: Policy = "replace",
    drop_if: Iterable[str] = (),
    annotate: bool = False,
    dataset: str | None = None,
    layout: str | None = None,
    config: str | None = None,
    split: str | None = None,
    overwrite: bool = False,
) -> Exported:
    """Write sample files back in their dataset's published layout as a Hub dataset folder.

    ``samples`` are sample files from ``convert``, or their audited, fixed or refined
    versions: one per split (or configuration) of one dataset. Their records say where they
    came from; ``dataset``, ``layout``, ``config`` and ``split`` are for files without one
    (JSON Lines, or built by hand) and are checked against a record where both exist.
    ``layout`` may also name another published layout to export in (MMLU's original CSV
    files export as ``cais/mmlu`` by default). ``policy`` is ``"replace"``, ``"drop"``
    (``drop_if`` narrows the checks that drop a row to these dotted names) or
    ``"original"``; ``annotate`` adds ``sdvm_status``, ``sdvm_failing`` and
    ``original_<column>`` for each changed column. The folder is written whole or not at
    all; an existing one is refused unless it is an earlier export and ``overwrite`` is set.

    ``datasets.load_dataset(folder, config, split=split)`` reads the result with the
    published columns, order and features.
    """
    if policy not in POLICIES:
        raise ExportError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    paths = (
        [Path(samples)] if isinstance(samples, str | os.PathLike) else [Path(p) for p in samples]
    )
    if not paths:
        raise ExportError("no sample file to export")
    folder = Path(folder)
    _check_folder(folder, paths, overwrite)
    given = {"dataset": dataset, "layout": layout, "config": config, "split": split}
    parts = [_part(path, given, len(paths)) for path in paths]
    _check_parts(parts)
    checks = tuple(drop_if)
    result = Exported(folder, policy)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=_parent(folder)))
    try:
        cards: list[tuple[str, str, pa.Table]] = []
        with (staging / ROW_RECORD).open("w", encoding="utf-8") as lines:
            for part in parts:
                table, tally = _export_part(part, policy, checks, annotate, lines)
                result.splits[part.name] = tally
                for key in ("rows_in", "kept", "replaced", "dropped"):
                    setattr(result.total, key, getattr(result.total, key) + getattr(tally, key))
                for config_name, piece in _configs(part, table):
                    _write_split(staging, config_name, part.split, piece)
                    result.configs.setdefault(config_name, []).append(part.split)
                    cards.append((config_name, part.split, piece))
        (staging / "README.md").write_text(_card(parts, cards, result), encoding="utf-8")
        manifest = {"sdvm_hf": version("sdvm-hf"), "inputs": [str(p.resolve()) for p in paths]}
        (staging / MANIFEST).write_text(
            json.dumps({**manifest, **result.totals()}, indent=2) + "\n", encoding="utf-8"
        )
        _move_into_place(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return result


# -- inputs -----------------------------------------------------------------------------------


def _parent(folder: Path) -> Path:
    parent = folder.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    return parent


def _check_folder(folder: Path, inputs: list[Path], overwrite: bool) -> None:
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


def _part(path: Path, given: dict[str, str | None], count: int) -> Part:
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
        target = source_layout or mapping.name
        config = given["config"] or (record or {}).get("config") or "default"
        split = given["split"] or (record or {}).get("split") or "train"
    return Part(path, record, preset, mapping, target, config, parse_split(split).name)


def _mapping(described: dict[str, Any]) -> MultipleChoiceMapping:
    """A mapping from its record's description (the generic mapping's export)."""
    fields = dict(described)
    fields["types"] = {k: pa.type_for_alias(v) for k, v in fields.get("types", {}).items()}
    for key in ("keep", "drop", "extra_order"):
        fields[key] = tuple(fields.get(key) or ())
    for key in ("context", "choices"):
        if isinstance(fields[key], list):
            fields[key] = tuple(fields[key])
    return MultipleChoiceMapping(**fields)


def _check_parts(parts: list[Part]) -> None:
    names = {part.preset.name if part.preset else f"mapping {part.mapping.name}" for part in parts}
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
        given = stages[-1].get("input") or {}
        if not given.get("path"):
            return None  # a stage run on samples in memory: nothing to follow
        source = Path(given["path"])
        if not source.is_absolute():
            source = current.parent / source
        if source in seen or not source.is_file():
            return None
        seen.add(source)
        current, record = source, read_record(source)
    return None


# -- rows -------------------------------------------------------------------------------------


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


def _export_part(
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
    for field in schema:  # noqa: F402
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


# -- the folder -------------------------------------------------------------------------------


def _configs(part: Part, table: pa.Table) -> Iterator[tuple[str, pa.Table]]:
    """The part's configuration, and for MMLU's ``all`` one configuration per subject too."""
    yield part.config, table
    preset = part.preset
    column = preset.config_column if preset is not None else None
    if preset is None or column is None or part.config != preset.config:
        return
    if column not in table.column_names:
        return
    values = table.column(column).to_pylist()
    for value in sorted({v for v in values if isinstance(v, str)}):
        mask = pa.array([v == value for v in values])
        yield value, table.filter(mask)


def _write_split(folder: Path, config: str, split: str, table: pa.Table) -> None:
    path = folder / config / f"{split}-00000-of-00001.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def _card(parts: list[Part], written: list[tuple[str, str, pa.Table]], result: Exported) -> str:
    import datasets
    import yaml  # type: ignore[import-untyped]  # PyYAML comes with datasets

    configs: dict[str, list[tuple[str, pa.Table]]] = {}
    for config, split, table in written:
        configs.setdefault(config, []).append((split, table))
    first = parts[0]
    meta: dict[str, Any] = {
        "configs": [
            {
                "config_name": config,
                "data_files": [
                    {"split": split, "path": f"{config}/{split}-*.parquet"} for split, _ in splits
                ],
                **({"default": True} if index == 0 else {}),
            }
            for index, (config, splits) in enumerate(configs.items())
        ],
        "dataset_info": [
            {
                "config_name": config,
                "features": datasets.Features.from_arrow_schema(
                    splits[0][1].schema
                )._to_yaml_list(),
                "splits": [
                    {"name": split, "num_bytes": table.nbytes, "num_examples": table.num_rows}
                    for split, table in splits
                ],
            }
            for config, splits in configs.items()
        ],
        "license": "other",
        "tags": ["sdvm_hf"],
    }
    hub = first.preset.hub if first.preset is not None else None
    if hub:
        meta["source_datasets"] = [hub]
    sources = []
    stages: list[str] = []
    for part in parts:
        record = part.record or {}
        source = record.get("source") or {}
        if "hub" in source:
            where = f"the Hub dataset `{source['hub']}` at revision `{source.get('revision')}`"
        elif "files" in source:
            where = ", ".join(f"`{f['path']}` (sha256 `{f['sha256']}`)" for f in source["files"])
        else:
            where = "no record (named by hand)"
        steps = ["convert", *(s["stage"] for s in record.get("stages", [])[1:])]
        stages.extend(s for s in steps if s not in stages)
        sources.append(
            f"- `{part.name}` from `{part.path.name}`: {where}; stages: {' -> '.join(steps)}"
        )
    counts = result.total
    name = first.preset.name if first.preset is not None else first.mapping.name
    body = [
        f"# {name}, exported by sdvm_hf",
        "",
        f"The `{first.layout}` layout of {hub or name}, written back by sdvm_hf "
        f"{version('sdvm-hf')} with the `{result.policy}` policy after the stages "
        f"{', '.join(stages) or 'convert'}. The licence is the source dataset's.",
        "",
        f"Rows in: {counts.rows_in}; kept {counts.kept}, replaced {counts.replaced}, dropped "
        f"{counts.dropped}. `{ROW_RECORD}` says what became of each row and why.",
        "",
        "## Provenance",
        "",
        *sources,
        "",
    ]
    header = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    return f"---\n{header}---\n\n" + "\n".join(body)


def _yaml_features(features: Any) -> Any:
    return features._to_yaml_list()


def _move_into_place(staging: Path, folder: Path) -> None:
    """Put the finished folder at ``folder``, replacing an earlier export in two renames."""
    if not folder.exists():
        os.replace(staging, folder)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old.", dir=folder.resolve().parent))
    os.replace(folder, old / folder.name)
    try:
        os.replace(staging, folder)
    except BaseException:
        os.replace(old / folder.name, folder)
        raise
    finally:
        shutil.rmtree(old, ignore_errors=True)
