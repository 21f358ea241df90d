"""The requests go through the SDK's low-level client: they are the ones its runners send.

``AsyncAuditor``, ``AsyncFixer`` and ``AsyncRefinery`` build an SDK sample per row each way;
the round trip hands the SDK's ``AsyncSDVMClient`` the wire dicts instead. Against the local
stand-in, with the real SDK (Python >= 3.12), each stage's requests must be exactly what the
SDK's own runner sends for the same samples: path, configuration, conventions and data.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from helpers import exact

from sdvm_hf import SampleSequence, load_hellaswag
from sdvm_hf.arrow._codec import json_text
from sdvm_hf.service import run_stage

if sys.version_info < (3, 12):
    pytest.skip(
        "the sdvm SDK needs Python >= 3.12; CI runs these under 3.12", allow_module_level=True
    )
pytest.importorskip("sdvm", reason="install the 'sdvm' extra: pip install -e '.[sdvm]'")

import sdvm
from service_stub import StubService
from test_service import CONVENTIONS, FAST, KEY


@pytest.fixture(scope="module")
def audited() -> SampleSequence:
    """150 HellaSwag samples, every other one audited before (its block travels too)."""
    table = load_hellaswag(bundled=True).table.slice(0, 150)
    texts = [json_text({"grammar": i % 3 == 0}) if i % 2 else None for i in range(150)]
    return SampleSequence(
        table.set_column(table.schema.get_field_index("audit"), "audit", pa.array(texts))
    )


def sdk_requests(stage: str, url: str, samples: SampleSequence, conventions: str) -> None:
    """Send ``samples`` in batches of 100 with the SDK's own runner, each tagged as we tag it."""
    tagged = [
        sample.model_copy(update={"extra": {**sample.extra, "sdvm_hf_row": row}})
        for row, sample in enumerate(samples)
    ]

    async def send() -> None:
        runner: Any
        options: dict[str, Any] = {"conventions": conventions}
        if stage == "audit":
            runner = sdvm.AsyncAuditor(api_key=KEY, base_url=url)
        elif stage == "fix":
            runner = sdvm.AsyncFixer(api_key=KEY, base_url=url)
        else:  # a Refinery takes its conventions once
            runner = sdvm.AsyncRefinery(api_key=KEY, base_url=url, conventions=conventions)
            options = {}
        for start in range(0, len(tagged), 100):
            await runner.run(tagged[start : start + 100], **options)
        await runner._client._http.aclose()

    asyncio.run(send())


@pytest.mark.parametrize("stage", ["audit", "fix", "refine"])
def test_each_stages_requests_are_the_sdk_runners_own(
    audited: SampleSequence, tmp_path: Path, stage: Any
) -> None:
    with StubService() as stub:
        run_stage(
            audited,
            stage,
            tmp_path / "out.parquet",
            api_key=KEY,
            base_url=stub.url,
            conventions=CONVENTIONS,
            concurrency=1,
            retry=FAST,
        )
        ours = [(r["path"], exact(r["body"])) for r in stub.requests]
        stub.requests.clear()
        sdk_requests(stage, stub.url, audited, CONVENTIONS)
        theirs = [(r["path"], exact(r["body"])) for r in stub.requests]
    assert len(ours) == 2
    assert ours == theirs
