"""What the sections of the page share: the section itself, and words for a check's outcome."""

from __future__ import annotations

from sdvm_hf._html import Html, el
from sdvm_hf._wire import letter
from sdvm_hf.summary import Summary
from sdvm_hf.verdicts import BAD_WHEN_TRUE

__all__ = ["bad_when", "example_id", "has_fixes", "letter", "section"]


def section(id: str, heading: str, *body: object) -> Html:
    """A section of the page: its heading and body, anchored at ``id``."""
    return el("section", el("h2", heading), *body, id=id)


def bad_when(block: str, check: str) -> str:
    """The value of ``check`` in ``block`` that is bad, as text (see ``BAD_WHEN_TRUE``)."""
    return "true" if (block, check) in BAD_WHEN_TRUE else "false"


def has_fixes(summary: Summary) -> bool:
    """Whether any sample carries a ``fix`` block (with a boolean, or fixed or flagged)."""
    return "fix" in summary.verdicts or summary.total.fixed > 0 or summary.total.flagged > 0


def example_id(block: str, check: str) -> str:
    """A page anchor for a check's examples (check names are text from the file)."""
    return "ex-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{block}-{check}")
