"""The way back: sample files to the benchmark's own published layout, as a Hub dataset folder.

Each sample file's record (see :mod:`sdvm_hf.record`) says which dataset, layout,
configuration and split it came from; each row goes back through the inverse half of that
layout's mapping (:meth:`~sdvm_hf.MultipleChoiceMapping.encode`), then the preset's ``follow``
rule keeps its derived columns consistent with a fixed context, choice or answer, and the
published features type it. An unchanged file comes back as its source, value for value.

The folder::

    README.md                         the card: configs, features, provenance, counts
    <config>/<split>-00000-of-00001.parquet
    export-record.jsonl               one line per source row: status, reason, changed columns
    sdvm_hf-export.json               the totals, and the mark of an earlier export

Policies: ``replace`` (every row, fixed text where a fix changed it), ``drop`` (the rows whose
final verdict passes and whose fix is not flagged, as the file holds them), ``original`` (the
source rows unchanged, for annotation-only releases).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterable, Sequence
from importlib.metadata import version
from pathlib import Path

import pyarrow as pa

from sdvm_hf._lock import output_lock
from sdvm_hf.exporter._folder import (
    Piece,
    card,
    carry_over,
    check_one_file_per_split,
    clean_stale,
    configs,
    move_into_place,
    same_columns_per_config,
    staging_folder,
    write_split,
    written_files,
)
from sdvm_hf.exporter._harness import write_harness
from sdvm_hf.exporter._inputs import check_folder, check_parts, parent, read_part
from sdvm_hf.exporter._rows import FAST, Method, export_part
from sdvm_hf.exporter._size import split_bytes
from sdvm_hf.exporter._types import (
    MANIFEST,
    ROW_RECORD,
    Counts,
    Exported,
    ExportError,
    Part,
)
from sdvm_hf.exporter.policy import POLICIES, Policy, policy_named

__all__ = ["POLICIES", "Counts", "ExportError", "Exported", "Policy", "export"]


def export(
    samples: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    folder: str | os.PathLike[str],
    *,
    policy: str | Policy = "replace",
    drop_if: Iterable[str] = (),
    annotate: bool = False,
    dataset: str | None = None,
    layout: str | None = None,
    config: str | None = None,
    split: str | None = None,
    overwrite: bool = False,
    repo_id: str | None = None,
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
    The folder also holds lm-eval and inspect_ai task files that read it (see
    docs/export.md); ``repo_id`` (``ORG/NAME``) names the Hub repository it is published to,
    which they read when the data is not beside them.

    ``datasets.load_dataset(folder, config, split=split)`` reads the result with the
    published columns, order and features.
    """
    return _export_with(
        FAST,
        samples,
        folder,
        policy=policy,
        drop_if=drop_if,
        annotate=annotate,
        dataset=dataset,
        layout=layout,
        config=config,
        split=split,
        overwrite=overwrite,
        repo_id=repo_id,
    )


def _export_with(
    method: Method,
    samples: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    folder: str | os.PathLike[str],
    *,
    policy: str | Policy,
    drop_if: Iterable[str],
    annotate: bool,
    dataset: str | None,
    layout: str | None,
    config: str | None,
    split: str | None,
    overwrite: bool,
    repo_id: str | None = None,
) -> Exported:
    """:func:`export` the way ``method`` says (the tests pass :data:`._rows.REFERENCE`)."""
    chosen = policy_named(policy)
    checks = (drop_if,) if isinstance(drop_if, str) else tuple(drop_if)
    if checks and not chosen.drops_failing and not annotate:
        raise ExportError(
            f"drop_if narrows the checks that drop a row: it changes what policy 'drop' drops "
            f"(and sdvm_status with annotate), and would do nothing with policy {chosen.name!r}"
        )
    paths = (
        [Path(samples)] if isinstance(samples, str | os.PathLike) else [Path(p) for p in samples]
    )
    if not paths:
        raise ExportError("no sample file to export")
    folder = Path(folder)
    given = {"dataset": dataset, "layout": layout, "config": config, "split": split}
    parent(folder)
    with output_lock(folder, ExportError):  # one export at a time into a folder
        clean_stale(folder)
        check_folder(folder, paths, overwrite)
        parts = [read_part(path, given, len(paths)) for path in paths]
        check_parts(parts)
        return _write(method, folder, paths, parts, chosen, checks, annotate, repo_id)


def _write(
    method: Method,
    folder: Path,
    paths: list[Path],
    parts: list[Part],
    chosen: Policy,
    checks: tuple[str, ...],
    annotate: bool,
    repo_id: str | None,
) -> Exported:
    """Build the export in a hidden folder beside ``folder``, then move it into place."""
    result = Exported(folder, chosen.name)
    staging = staging_folder(folder)
    kept: list[str] = []
    try:
        pieces: list[Piece] = []
        checks_seen: set[str] = set()
        with (staging / ROW_RECORD).open("wb") as lines:
            for part in parts:
                table, tally, values, seen, note = export_part(
                    part, chosen, checks, annotate, lines, method
                )
                if note:
                    result.notes.append(note)
                checks_seen |= seen
                result.splits[part.name] = tally
                result.total.merge(tally)
                for config_name, piece in configs(part, table, values):
                    if not piece.num_rows:
                        result.not_written.append(f"{config_name}/{part.split}")
                        continue
                    whole = piece is table
                    pieces.append(Piece(config_name, part.split, piece, whole, part.path))
        unknown = [name for name in checks if name not in checks_seen | {"fix.flagged"}]
        if unknown:
            raise ExportError(
                f"no verdict of any input has the check {unknown[0]!r}; checks seen: "
                f"{', '.join(sorted(checks_seen)) or '(none: no input is audited)'}"
            )
        check_one_file_per_split(pieces)
        cards: list[tuple[str, str, pa.Table, int]] = []
        for piece in same_columns_per_config(pieces):
            write_split(staging, piece.config, piece.split, piece.table)
            result.configs.setdefault(piece.config, []).append(piece.split)
            size = (
                split_bytes(piece.table, whole=piece.whole)
                if method.in_place
                else piece.table.nbytes  # the rows were copied into place
            )
            cards.append((piece.config, piece.split, piece.table, size))
        if not cards:
            raise ExportError(
                f"no row is left to publish in {', '.join(result.not_written)} (rows in: "
                f"{result.total.rows_in:,}, dropped: {result.total.dropped:,}); "
                "datasets.load_dataset cannot read a split of no rows, so nothing was written"
            )
        (staging / "README.md").write_text(card(parts, cards, result), encoding="utf-8")
        write_harness(staging, folder.name, parts, result, repo_id)
        # the inputs by name: a published folder names no local path, user or host
        manifest = {"sdvm_hf": version("sdvm-hf"), "inputs": [p.name for p in paths]}
        files = [*written_files(staging), MANIFEST]
        totals = {**result.totals(), "folder": folder.name, "files": sorted(files)}
        (staging / MANIFEST).write_text(
            json.dumps({**manifest, **totals}, indent=2) + "\n", encoding="utf-8"
        )
        if folder.exists():  # what the earlier export did not write stays: .git, notes
            kept = carry_over(folder, staging)
        move_into_place(staging, folder)
    except BaseException:
        for relative in kept:  # a failed swap gives the user's files back first
            with contextlib.suppress(OSError):
                os.replace(staging / relative, folder / relative)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return result
