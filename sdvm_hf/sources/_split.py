"""Split specs as ``datasets`` writes them: ``"validation"``, ``"validation[:100]"``.

A spec names one split and optionally a slice of it, in rows or in percent
(``"test[10%:20%]"``, rounded to the closest row, as ``datasets`` does). It is parsed by
``datasets.ReadInstruction.from_spec`` and resolved by its ``to_absolute``, so a slice means
here exactly what it means to ``datasets.load_dataset``; only a spec joining several splits
(``"train+test"``) is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

_ACCEPTED = (
    "one split name, optionally sliced as datasets does: 'validation', 'validation[:100]', "
    "'test[10%:20%]', 'train[-50:]'"
)

_UNBOUNDED = 2**62
"""A length standing in for "not known yet" when the slice does not depend on it."""


@dataclass(frozen=True)
class SplitSpec:
    """A parsed split spec: the split's name and the slice asked for, if any."""

    spec: str
    """The spec as given."""
    name: str
    """The split's name (``"validation"`` for ``"validation[:100]"``)."""
    sliced: bool
    """Whether the spec asks for a part of the split."""
    needs_length: bool
    """Whether the slice depends on the split's length (percent or negative bounds)."""

    def bounds(self, length: int | None) -> tuple[int, int | None]:
        """The rows ``[start, stop)`` of a split of ``length`` rows (``stop`` ``None``: to the end).

        ``length`` may be ``None`` when :attr:`needs_length` is false.
        """
        if not self.sliced:
            return 0, length
        import datasets

        if length is None and self.needs_length:
            raise ValueError(f"split {self.spec!r}: the slice needs the split's length")
        total = _UNBOUNDED if length is None else length
        instruction = datasets.ReadInstruction.from_spec(self.spec)
        try:
            (absolute,) = instruction.to_absolute({self.name: total})
        except ValueError as error:
            raise ValueError(f"split {self.spec!r} on {length} rows: {error}") from None
        stop = None if length is None and absolute.to == _UNBOUNDED else absolute.to
        if stop is not None and absolute.from_ >= stop:
            raise self.empty(length)
        return absolute.from_, stop

    def empty(self, length: int | None) -> ValueError:
        """The error for a slice that selects no row (``datasets`` refuses it too)."""
        rows = "" if length is None else f" of the {length:,}"
        return ValueError(f"split {self.spec!r} selects no rows{rows} in {self.name!r}")


def parse_split(spec: str) -> SplitSpec:
    """Parse a split spec, or ``ValueError`` naming it and saying what is accepted.

    >>> parse_split("test[10%:20%]").name, parse_split("validation").sliced
    ('test', False)
    """
    import datasets

    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"split {spec!r} is not a split spec; give {_ACCEPTED}")
    try:
        instruction = datasets.ReadInstruction.from_spec(spec)
    except (ValueError, AssertionError, TypeError) as error:
        raise ValueError(
            f"split {spec!r} is not a split spec ({error}); give {_ACCEPTED}"
        ) from None
    parts = instruction._relative_instructions
    if len(parts) != 1:
        raise ValueError(f"split {spec!r} joins {len(parts)} splits; give {_ACCEPTED}")
    (part,) = parts
    sliced = "[" in spec
    needs_length = sliced and (
        part.unit == "%"
        or (part.from_ is not None and part.from_ < 0)
        or (part.to is not None and part.to < 0)
    )
    return SplitSpec(spec, part.splitname, sliced, needs_length)
