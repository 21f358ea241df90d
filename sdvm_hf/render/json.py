"""A report, or a bare summary, as JSON: its plain data (:meth:`Report.as_dict`), indented."""

from __future__ import annotations

import json

from sdvm_hf.render.model import Report
from sdvm_hf.summary import Summary

__all__ = ["report_json"]


def report_json(report: Report | Summary) -> str:
    """The report as JSON (:meth:`Report.as_dict`, or :meth:`Summary.as_dict`)."""
    return json.dumps(report.as_dict(), indent=2, ensure_ascii=False, default=str) + "\n"
