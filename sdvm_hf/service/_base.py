"""What every part of the round trip shares: the stages, the limits and the one error type."""

from __future__ import annotations

import sys
from typing import Literal

from sdvm_hf.errors import SdvmHfError

Stage = Literal["audit", "fix", "refine"]
STAGES: tuple[Stage, ...] = ("audit", "fix", "refine")
MAX_BATCH = 100
"""The service's limit of samples per request."""
ROW_ID = "sdvm_hf_row"
"""The extra key that carries each sample's row number on the wire (removed on return).

A source whose ``extra`` already has this key gets ``sdvm_hf_row_1`` (or the next free one)."""
RESUME = "finished batches are kept; rerun the same command to resume"


class ServiceError(SdvmHfError, RuntimeError):
    """The round trip stopped: a refused key, no credits, a malformed answer, retries spent.

    Every batch finished before it is kept; rerun the same command to resume.
    """


def install_hint() -> str:
    """What to do when the ``sdvm`` SDK is missing, for the Python that is running."""
    if sys.version_info < (3, 12):
        running = ".".join(map(str, sys.version_info[:3]))
        return (
            "the SDVM round trip needs the sdvm SDK, which needs Python >= 3.12; this is "
            f"Python {running}, where the 'sdvm' extra installs nothing. Make a 3.12 "
            "environment: python3.12 -m venv .venv312 && .venv312/bin/pip install "
            "'sdvm-hf[sdvm]' (from a checkout: .venv312/bin/pip install -e '.[sdvm]')"
        )
    return "the SDVM round trip needs the sdvm SDK: pip install 'sdvm-hf[sdvm]'"


BLOCK_COLUMNS = frozenset({"context", "choices", "answer_index", "audit", "fix", "reaudit"})
"""The columns a stage may change (see :func:`sdvm_hf.arrow._codec.changeable_columns`)."""
