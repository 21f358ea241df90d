"""A report as one self-contained HTML page.

The page needs nothing from outside: no scripts, fonts or images, bars drawn with CSS, and a
print stylesheet so it prints to PDF. Every text from the file (group names, check names,
reject reasons, contexts, choices) is escaped. One module per part of the page, assembled here
in page order; the stylesheet and the escaping helpers are in :mod:`sdvm_hf._html`.
"""

from __future__ import annotations

from importlib.metadata import version

from sdvm_hf._html import CSS, Html, el, join
from sdvm_hf.render.html._audit import audit
from sdvm_hf.render.html._counts import classes, extra, overview, positions, rejects
from sdvm_hf.render.html._examples import examples
from sdvm_hf.render.html._groups import groups, sort_css
from sdvm_hf.render.model import Report
from sdvm_hf.summary import Summary

__all__ = ["report_html"]


def report_html(report: Report | Summary, title: str | None = None) -> str:
    """The report as one self-contained HTML page (``title`` names the file).

    A bare :class:`Summary` gives the page without example samples.
    """
    if isinstance(report, Summary):
        report = Report(report)
    title = report.title if title is None else title
    summary = report.summary
    sections = [
        overview(summary, title),
        classes(summary),
        positions(summary),
        audit(summary),
        groups(summary),
        examples(report),
        rejects(report),
        extra(summary),
    ]
    head = join(
        [
            Html('<meta charset="utf-8">'),
            Html('<meta name="viewport" content="width=device-width, initial-scale=1">'),
            el("title", f"{title}: sdvm-hf report"),
            el("style", Html(CSS + sort_css(summary))),
        ]
    )
    footer = el("footer", f"Made by sdvm-hf {version('sdvm-hf')}. Self-contained: no scripts.")
    body = el("body", el("main", join(sections), footer))
    return f'<!doctype html>\n<html lang="en">{el("head", head)}{body}</html>\n'
