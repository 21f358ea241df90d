"""Split specs as ``datasets`` writes them: ``"validation"``, ``"validation[:100]"``.

A spec names one split and optionally a slice of it, in rows or in percent
(``"test[10%:20%]"``, rounded to the closest row, as ``datasets`` does; or
``"test[:20%](pct1_dropremainder)"``). It is parsed and resolved here by the rules of
``datasets.ReadInstruction.from_spec`` and ``to_absolute`` (the same pattern, the same bounds,
the same refusals; ``tests/test_split.py`` checks both agree on every form), so a slice means
here exactly what it means to ``datasets.load_dataset``, and a local load never imports
``datasets``. Only a spec joining several splits (``"train+test"``) is refused.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sdvm_hf.errors import InputError

_ACCEPTED = (
    "one split name, optionally sliced as datasets does: 'validation', 'validation[:100]', "
    "'test[10%:20%]', 'train[-50:]'"
)

_UNBOUNDED = 2**62
"""A length standing in for "not known yet" when the slice does not depend on it."""

_SPEC = re.compile(
    r"""
^
 (?P<split>\w+(\.\w+)*)
 (\[
    ((?P<from>-?[\d_]+)
     (?P<from_pct>%)?)?
    :
    ((?P<to>-?[\d_]+)
     (?P<to_pct>%)?)?
 \])?(\((?P<rounding>[^\)]*)\))?
$
""",
    re.X,
)
"""One split and its slice: ``datasets.arrow_reader._SUB_SPEC_RE``, character for character."""

_PLUS = re.compile(r"\s*\+\s*")
"""What joins several splits in a spec (``datasets``' ``_ADDITION_SEP_RE``)."""

_ROUNDINGS = ("closest", "pct1_dropremainder")


@dataclass(frozen=True)
class _Part:
    """One split of a spec and its slice (``datasets``' ``_RelativeInstruction``)."""

    name: str
    from_: int | None
    to: int | None
    unit: str
    rounding: str | None

    @classmethod
    def parse(cls, spec: str) -> _Part:
        found = _SPEC.match(spec)
        if not found:
            raise InputError(f"Unrecognized instruction format: {spec}")
        unit = "%" if found.group("from_pct") or found.group("to_pct") else "abs"
        from_ = int(found.group("from")) if found.group("from") else None
        to = int(found.group("to")) if found.group("to") else None
        rounding = found.group("rounding")
        if rounding is not None and rounding not in _ROUNDINGS:
            raise InputError("rounding must be either closest or pct1_dropremainder")
        if unit != "%" and rounding is not None:
            raise InputError("It is forbidden to specify rounding if not using percent slicing.")
        for bound in (from_, to):
            if unit == "%" and bound is not None and abs(bound) > 100:
                raise InputError("Percent slice boundaries must be > -100 and < 100.")
        if rounding is None and unit == "%":
            rounding = "closest"
        return cls(found.group("split"), from_, to, unit, rounding)

    def absolute(self, length: int) -> tuple[int, int]:
        """The rows ``[from, to)`` of a split of ``length`` rows (``_rel_to_abs_instr``)."""
        from_, to = self.from_, self.to
        if self.unit == "%":
            from_ = 0 if from_ is None else self._rows(from_, length)
            to = length if to is None else self._rows(to, length)
        else:
            from_ = 0 if from_ is None else from_
            to = length if to is None else to
        if from_ < 0:
            from_ = max(length + from_, 0)
        if to < 0:
            to = max(length + to, 0)
        return min(from_, length), min(to, length)

    def _rows(self, percent: int, length: int) -> int:
        if self.rounding == "closest":
            return round(percent * length / 100.0)
        if length < 100:
            raise InputError(
                'Using "pct1_dropremainder" rounding on a split with less than 100 '
                "elements is forbidden: it always results in an empty dataset."
            )
        return percent * math.trunc(length / 100.0)  # truncated: -99.5% is -99%


def _parts(spec: str) -> list[_Part]:
    """Every split a spec names, with its slice, or ``ValueError`` as ``from_spec`` raises it."""
    parts = [_Part.parse(sub) for sub in _PLUS.split(spec)]
    first = parts[0]
    for part in parts[1:]:
        if first.unit != "abs" and part.unit != "abs" and first.rounding != part.rounding:
            raise InputError(
                "It is forbidden to sum ReadInstruction instances with different rounding values."
            )
    return parts


@dataclass(frozen=True)
class SplitSpec:
    """A parsed split spec: the split's name and the slice asked for, if any."""

    spec: str
    """The spec as given."""
    part: _Part
    """The split and its slice, as parsed."""
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
        if length is None and self.needs_length:
            raise InputError(f"split {self.spec!r}: the slice needs the split's length")
        total = _UNBOUNDED if length is None else length
        try:
            start, end = self.part.absolute(total)
        except ValueError as error:
            raise InputError(f"split {self.spec!r} on {length} rows: {error}") from None
        stop = None if length is None and end == _UNBOUNDED else end
        if stop is not None and start >= stop:
            raise self.empty(length)
        return start, stop

    def empty(self, length: int | None) -> InputError:
        """The error for a slice that selects no row (``datasets`` refuses it too)."""
        rows = "" if length is None else f" of the {length:,}"
        return InputError(f"split {self.spec!r} selects no rows{rows} in {self.name!r}")


def parse_split(spec: str) -> SplitSpec:
    """Parse a split spec, or ``ValueError`` naming it and saying what is accepted.

    >>> parse_split("test[10%:20%]").name, parse_split("validation").sliced
    ('test', False)
    """
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"split {spec!r} is not a split spec; give {_ACCEPTED}")
    try:
        parts = _parts(spec)
    except ValueError as error:
        raise InputError(
            f"split {spec!r} is not a split spec ({error}); give {_ACCEPTED}"
        ) from None
    if len(parts) != 1:
        raise InputError(f"split {spec!r} joins {len(parts)} splits; give {_ACCEPTED}")
    (part,) = parts
    sliced = "[" in spec
    needs_length = sliced and (
        part.unit == "%"
        or (part.from_ is not None and part.from_ < 0)
        or (part.to is not None and part.to < 0)
    )
    return SplitSpec(spec, part, part.name, sliced, needs_length)
