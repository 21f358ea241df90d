"""The SDVM round trip: samples through sdvm-audit-1 / sdvm-fix-1 and back, resumably.

The names are imported on first use, so ``python -m sdvm_hf.service.stub`` (the offline
stand-in) and the command's parser start without pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sdvm_hf.service.roundtrip import (
        MAX_BATCH,
        ROW_ID,
        Plan,
        Retry,
        ServiceError,
        Stage,
        plan_stage,
        run_stage,
    )

__all__ = [
    "MAX_BATCH",
    "ROW_ID",
    "Plan",
    "Retry",
    "ServiceError",
    "Stage",
    "plan_stage",
    "run_stage",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from sdvm_hf.service import roundtrip

        return getattr(roundtrip, name)
    raise AttributeError(f"module 'sdvm_hf.service' has no attribute {name!r}")
