"""The SDVM round trip: samples through sdvm-audit-1 / sdvm-fix-1 and back, resumably."""

from sdvm_hf.service.roundtrip import MAX_BATCH, ROW_ID, Retry, ServiceError, Stage, run_stage

__all__ = ["MAX_BATCH", "ROW_ID", "Retry", "ServiceError", "Stage", "run_stage"]
