"""What a dataset preset holds: everything this package knows about one dataset.

A :class:`Preset` gathers a dataset's mapping(s), its Hub id, configuration and revision,
the audit conventions text, how its layouts are told apart, and what its files' names and
headerless CSV files mean. The loaders, the command, the recipes and the service read these
facts from the preset; nothing else in the package names a dataset.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.errors import LayoutError

if TYPE_CHECKING:
    from sdvm_hf.samples import MultipleChoiceSample

__all__ = ["Bundled", "Preset", "Publication"]


Follow = Callable[[dict[str, Any], "MultipleChoiceSample"], str | None]
"""A preset's rule for its derived columns (see :attr:`Preset.follow`)."""


@dataclass(frozen=True)
class Publication:
    """Where one layout of a dataset is published, under which licence and configuration.

    An export in that layout names this source and licence in its card, and its configuration
    as the upstream publishes it (MMLU-Pro's ``default``, not MMLU's ``all``).
    """

    hub: str
    """The Hub id of the dataset published in this layout (``TIGER-Lab/MMLU-Pro``)."""
    licence: str
    """The licence as the dataset card's ``license:`` states it (``mit``, ``cc-by-sa-4.0``,
    ``unknown`` where the card says so)."""
    config: str | None = None
    """The configuration the upstream publishes the rows under, when it is not the preset's
    (``None``: the preset's rule)."""
    columns: tuple[str, ...] = ()
    """The upstream's columns in order, where the preset knows them but not their features:
    rows exported into this layout from another must have each (``()``: not known)."""


@dataclass(frozen=True)
class Bundled:
    """A small real slice of the dataset shipped in the package (``sdvm_hf/data``)."""

    file: str
    """The file name in ``sdvm_hf/data``."""
    split: str
    """The split it was taken from."""


@dataclass(frozen=True)
class Preset:
    """One dataset: its mappings and where and how it is published."""

    name: str
    """The name the command and the registry use (``"hellaswag"``)."""
    layouts: Mapping[str, MultipleChoiceMapping]
    """Its mappings by layout name; a dataset published one way has one entry."""
    hub: str
    """The Hub dataset id (``"Rowan/hellaswag"``)."""
    split: str
    """The split loaded when none is named."""
    conventions: str
    """The default ``conventions`` text for the SDVM audit: what formatting is by design."""
    revision: str | None = None
    """The Hub revision to load, when ``main`` is not the one."""
    config: str | None = None
    """The Hub configuration loaded when none is named."""
    configs: tuple[str, ...] = ()
    """The dataset's configurations (``()``: only :attr:`config`, or ``"default"``). The Hub
    checks a configuration itself; local files cannot tell one from another (ARC-Easy and
    ARC-Challenge share a layout), so there the one named is taken as the caller's word and
    recorded, and must be one of these."""
    signatures: Sequence[tuple[str, frozenset[str]]] = ()
    """Layout detection, most specific first: a layout and the columns that identify it."""
    config_column: str | None = None
    """A column holding the configuration's name (MMLU's ``subject``): local files are
    filtered on it when a configuration is named."""
    headerless_csv: str | None = None
    """The layout of this dataset's CSV files that have no header line."""
    file_columns: Callable[[str], dict[str, str]] | None = None
    """Columns a data file's name gives its rows (MMLU's subject, from the original files)."""
    bundled: Bundled | None = None
    """The slice shipped in the package, for ``bundled=True``."""
    description: str = field(default="", compare=False)
    """One line for ``--help``."""
    features: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """The published Hugging Face features of a layout (``Features.to_dict()``), by layout
    name, where a source may lack them (JSON Lines, CSV): the export types its rows by them."""
    export_layouts: Mapping[str, str] = field(default_factory=dict)
    """A layout exported as another (MMLU's original CSV files as ``cais/mmlu``)."""
    licence: str = "unknown"
    """The licence of the preset's Hub dataset, as its card's ``license:`` states it."""
    publications: Mapping[str, Publication] = field(default_factory=dict)
    """Layouts published elsewhere than :attr:`hub` (MMLU-Pro, MMMLU, ...), by layout."""
    stale: Callable[[pa.Table], pa.Array] | None = None
    """The rows of a published table whose derived columns do not follow its context, choices
    and answer (a sample file edited by hand): they go through :attr:`follow` too."""
    follow: Follow | None = None
    """How derived columns follow a changed context, choice or answer: called with the row the
    mapping gave back and the sample, it updates the row in place and returns ``None``, or
    returns why the fix cannot be expressed in the layout (the row then keeps its original)."""

    def published_row(
        self, mapping: MultipleChoiceMapping, sample: MultipleChoiceSample
    ) -> tuple[dict[str, Any], str | None]:
        """The row ``sample`` stands for in ``mapping``'s layout, its derived columns followed.

        The inverse half (:meth:`~MultipleChoiceMapping.encode`), then :attr:`follow`; and why
        the layout cannot express the sample, or ``None``. The export publishes this row and
        the render renders it, so the two never disagree.
        """
        row = mapping.encode(sample)
        return row, self.follow(row, sample) if self.follow is not None else None

    def publication(self, layout: str) -> Publication:
        """Where the rows of ``layout`` are published: its own entry, else the preset's Hub."""
        return self.publications.get(layout) or Publication(self.hub, self.licence)

    @property
    def known_configs(self) -> tuple[str, ...]:
        """Every configuration name this preset accepts for local files."""
        return self.configs or (self.config or "default",)

    def layout_of(self, columns: Sequence[str]) -> str:
        """The name of the layout with these columns; :class:`LayoutError` if none fits."""
        if len(self.layouts) == 1 and not self.signatures:
            return next(iter(self.layouts))
        present = set(columns)
        for name, needed in self.signatures:
            if needed <= present:
                return name
        known = "; ".join(f"{name} ({', '.join(sorted(need))})" for name, need in self.signatures)
        raise LayoutError(
            f"unknown {self.name} layout: columns seen: {', '.join(columns)}; layouts known: "
            + known
        )

    def mapping(self, columns: Sequence[str], layout: str | None = None) -> MultipleChoiceMapping:
        """The mapping for ``layout`` (by name), or for the layout these columns show."""
        name = self.layout_of(columns) if layout is None else layout
        try:
            return self.layouts[name]
        except KeyError:
            raise LayoutError(
                f"unknown {self.name} layout {name!r}; layouts known: {', '.join(self.layouts)}"
            ) from None

    @property
    def column_names(self) -> frozenset[str]:
        """Every column name a layout of this dataset is known to have."""
        names = {name for _, needed in self.signatures for name in needed}
        for mapping in self.layouts.values():
            names.update(mapping.consumed)
        if self.config_column:
            names.add(self.config_column)
        return frozenset(names)

    def csv_header(self, first_row: Sequence[str]) -> Sequence[str] | None:
        """The column names of a CSV file whose first row is ``first_row``.

        A first row is a header when it holds every column that identifies one of this
        dataset's layouts, or when each of its fields is a known column name of this dataset
        (or empty, as pandas writes the index column); the names are then ``None`` (read from
        the file). Otherwise, when the dataset has headerless CSV files, the names are those
        of that layout; a header is never guessed from values.
        """
        fields = [name.strip() for name in first_row]
        if any(needed <= set(fields) for _, needed in self.signatures):
            return None
        if any(fields) and all(not name or name in self.column_names for name in fields):
            return None
        if self.headerless_csv is None:
            return None
        return self.layouts[self.headerless_csv].consumed
