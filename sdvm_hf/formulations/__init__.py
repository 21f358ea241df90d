"""Samples as loglikelihood requests in a standard formulation (OLMES rc / mc, lm-eval).

:mod:`.olmes` holds AI2's OLMES rules, :mod:`.lm_eval` lm-evaluation-harness 0.4.13's tasks.

``render_requests(samples, formulation, ...)`` yields the requests; ``write_requests`` writes
them as AI2's request dumps (``requests.jsonl.gz`` + ``config.json``), which OLMo's in-loop
``OEEvalTask`` reads as a task. ``Template`` renders a mapping of one's own.
"""

from sdvm_hf.formulations._request import UNCONDITIONAL_OFFSET, RenderError, Request
from sdvm_hf.formulations.olmes import OLMES, OlmesRule, Rendered
from sdvm_hf.formulations.render import (
    FORMULATIONS,
    SUBSAMPLE_SEED,
    Rendering,
    render_requests,
    write_requests,
)
from sdvm_hf.formulations.template import Template

__all__ = [
    "FORMULATIONS",
    "OLMES",
    "SUBSAMPLE_SEED",
    "UNCONDITIONAL_OFFSET",
    "OlmesRule",
    "RenderError",
    "Rendered",
    "Rendering",
    "Request",
    "Template",
    "render_requests",
    "write_requests",
]
