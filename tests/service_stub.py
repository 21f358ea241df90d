"""The tests' handle on the stand-in (:mod:`sdvm_hf.service.stub`) and a stage run against it."""

from __future__ import annotations

from typing import Any

from sdvm_hf.service.stub import FAULTS, RESULT_KEY, STATUS, StubService, fixed, verdict

__all__ = ["FAULTS", "RESULT_KEY", "STATUS", "StubService", "fixed", "stub_stage", "verdict"]


def stub_stage(
    samples: Any, stage: str, out: Any, conventions: str | None = None, **options: Any
) -> None:
    """Run ``stage`` on ``samples`` into ``out`` against a fresh stand-in, retrying fast."""
    from sdvm_hf.service import Retry, run_stage

    with StubService(**options) as stub:
        run_stage(
            samples,
            stage,  # type: ignore[arg-type]
            out,
            api_key=stub.key,
            base_url=stub.url,
            conventions=conventions,
            retry=Retry(rate_limited=1, transient=1, backoff=0.01),
        )
