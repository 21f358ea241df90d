"""A sample file's :class:`~sdvm_hf.summary.Summary` as one self-contained HTML page, or JSON.

The page needs nothing from outside: no scripts, fonts or images, bars drawn with CSS, and a
print stylesheet so it prints to PDF. Every text from the file (group names, check names,
reject reasons, extra keys) is escaped. The groups table sorts without JavaScript: each sort
order is its own copy of the table, shown when its header link makes it the ``:target``.

Longer than most modules: one function per section of the page, in page order, so the page
reads top to bottom here; the stylesheet and the escaping helpers are in :mod:`sdvm_hf._html`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Literal

from sdvm_hf._atomic import atomic_path
from sdvm_hf._html import CSS, Html, bar, el, join, number, percent, table
from sdvm_hf.summary import ALPHA, MIN_EXPECTED, Group, Summary, bias_verdict

__all__ = ["ReportFormat", "report_format", "report_html", "report_json", "write_report"]

ReportFormat = Literal["html", "json"]
"""A report's encoding."""


def report_html(summary: Summary, title: str = "sample file") -> str:
    """The summary as one self-contained HTML page (``title`` names the file)."""
    sections = [
        _overview(summary, title),
        _classes(summary),
        _positions(summary),
        _audit(summary),
        _groups(summary),
        _rejects(summary),
        _extra(summary),
    ]
    head = join(
        [
            Html('<meta charset="utf-8">'),
            Html('<meta name="viewport" content="width=device-width, initial-scale=1">'),
            el("title", f"{title}: sdvm-hf report"),
            el("style", Html(CSS)),
        ]
    )
    footer = el("footer", f"Made by sdvm-hf {version('sdvm-hf')}. Self-contained: no scripts.")
    body = el("body", el("main", join(sections), footer))
    return f'<!doctype html>\n<html lang="en">{el("head", head)}{body}</html>\n'


def report_json(summary: Summary) -> str:
    """The summary as JSON (:meth:`Summary.as_dict`)."""
    return json.dumps(summary.as_dict(), indent=2, ensure_ascii=False, default=str) + "\n"


def report_format(path: str | os.PathLike[str]) -> ReportFormat:
    """The format a report's file name says (``.html``, ``.htm``, ``.json``)."""
    suffix = Path(path).suffix.lower()
    if suffix in (".html", ".htm"):
        return "html"
    if suffix == ".json":
        return "json"
    raise ValueError(f"{path}: cannot tell the report format; name it .html or .json")


def write_report(
    summary: Summary,
    path: str | os.PathLike[str],
    format: ReportFormat | None = None,
    title: str = "sample file",
) -> None:
    """Write the report to ``path`` atomically, in ``format`` or the one its name says."""
    text = (
        report_json(summary)
        if (format or report_format(path)) == "json"
        else report_html(summary, title)
    )
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


# -- sections ------------------------------------------------------------------------------


def _section(id: str, heading: str, *body: object) -> Html:
    return el("section", el("h2", heading), *body, id=id)


def _card(value: str, label: str) -> Html:
    return el("div", el("b", value), el("span", label), class_="card")


def _overview(summary: Summary, title: str) -> Html:
    cards = [_card(number(summary.samples), "samples")]
    if summary.rows_in is not None:
        cards += [
            _card(number(summary.rows_in), "rows in"),
            _card(number(sum(summary.rejects.values())), "rejects"),
        ]
    total = summary.total
    if total.audited:
        cards.append(_card(number(total.audited), "audited"))
    if total.audited and total.failing:
        worst = max(total.failing, key=lambda check: total.failing[check])
        cards.append(_card(percent(total.share(total.failing[worst])), f"fail {worst}"))
    if _has_fixes(summary):
        cards += [_card(number(total.fixed), "fixed"), _card(number(total.flagged), "flagged")]
    biased = [str(n) for n, test in summary.bias.items() if test.biased]
    untestable = sum(not test.testable for test in summary.bias.values())
    label = "choices-counts with position bias"
    label += f" ({untestable} too small to test)" if untestable else ""
    cards.append(_card(", ".join(biased) if biased else "none", label))
    grouping = f"grouped by {summary.group_by}" if summary.group_by else "no group column"
    meta = el("p", f"Sample file report · {grouping}", class_="muted")
    return el("header", el("h1", title), meta, el("div", join(cards), class_="cards"), id="top")


def _share_rows(counts: dict[str, int], total: int) -> list[list[object]]:
    top = max(counts.values(), default=0)
    return [
        [name, number(count), percent(count / total if total else 0), bar(count, top)]
        for name, count in counts.items()
    ]


def _classes(summary: Summary) -> Html:
    heads = ["samples", "share", ""]
    by_choices = {f"{n} choices": count for n, count in summary.choices.items()}
    blocks = [
        ("by-class", "By class", "class", summary.by_class),
        ("by-style", "By style", "style", summary.by_style),
        ("choices", "By number of choices", "choices", by_choices),
    ]
    return _section(
        "counts",
        "Samples",
        el(
            "div",
            join(
                el(
                    "div",
                    el("h3", heading),
                    table(
                        [first, *heads],
                        _share_rows(counts, summary.samples),
                        numeric=(1, 2),
                        id=id,
                    ),
                )
                for id, heading, first, counts in blocks
            ),
            class_="row",
        ),
    )


def _positions(summary: Summary) -> Html:
    tests = table(
        ["choices", "samples", "chi-square", "df", "p-value", "verdict"],
        [
            [
                n,
                number(test.samples),
                f"{test.statistic:.2f}",
                test.df,
                f"{test.p_value:.3g}",
                el(
                    "span",
                    bias_verdict(test),
                    class_="badge " + ("bad" if test.biased else "good" if test.testable else ""),
                ),
            ]
            for n, test in summary.bias.items()
        ],
        numeric=(0, 1, 2, 3, 4),
        id="bias",
    )
    per_count = []
    for n, positions in summary.positions.items():
        total = sum(positions.values())
        counts = {p: positions.get(p, 0) for p in range(n)}
        top = max(max(counts.values()) / total, 1 / n)
        rows = [
            [f"{p} ({_letter(p)})", number(c), percent(c / total), bar(c / total, top, 1 / n)]
            for p, c in counts.items()
        ]
        per_count.append(
            el(
                "div",
                el("h3", f"{n} choices"),
                table(["position", "samples", "share", ""], rows, numeric=(1, 2), id=f"pos-{n}"),
            )
        )
    note = (
        f"Each choices-count's answer positions tested against uniform (chi-square, df = "
        f"choices - 1); flagged when p < {ALPHA}, tested only when every position expects at "
        f"least {MIN_EXPECTED} samples. The dotted line marks the uniform share."
    )
    return _section(
        "positions",
        "Answer positions",
        el("p", note, class_="muted"),
        tests,
        el("div", join(per_count), class_="row"),
    )


def _letter(position: int) -> str:
    return chr(ord("A") + position) if position < 26 else str(position)


def _audit(summary: Summary) -> Html:
    if not summary.verdicts:
        return _section(
            "audit", "Audit", el("p", "No audit, fix or reaudit blocks.", class_="muted")
        )
    blocks = []
    for block, checks in summary.verdicts.items():
        rows = []
        for check, counts in checks.items():
            true, false = counts.get("true", 0), counts.get("false", 0)
            share = false / (true + false) if true + false else 0.0
            rows.append(
                [check, number(true), number(false), percent(share), bar(1 - share, split=True)]
            )
        blocks.append(
            el(
                "div",
                el("h3", f"{block} block"),
                table(
                    ["check", "true", "false", "false share", ""],
                    rows,
                    numeric=(1, 2, 3),
                    id=f"verdicts-{block}",
                ),
            )
        )
    total = summary.total
    fixes = (
        el(
            "p",
            f"{number(total.fixed)} samples fixed ({percent(total.share(total.fixed))}), "
            f"{number(total.flagged)} flagged ({percent(total.share(total.flagged))}) "
            f"of {number(total.samples)}.",
            id="fixes",
        )
        if _has_fixes(summary)
        else ""
    )
    note = el(
        "p",
        "Boolean checks only; shares are of the samples carrying the block. Bars:",
        el("span", class_="key"),
        "true",
        el("span", class_="key false"),
        "false",
    )
    return _section("audit", "Audit", note, el("div", join(blocks), class_="row"), fixes)


def _groups(summary: Summary) -> Html:
    if not summary.groups:
        return _section(
            "groups",
            "Groups",
            el(
                "p",
                "No subject or activity_label in extra; "
                "name a group column with --group-by (group_by= in Python).",
                class_="muted",
            ),
        )
    audited = summary.total.audited > 0
    fixes = _has_fixes(summary)
    columns: list[tuple[str, Callable[[Group], float]]] = [("samples", lambda g: g.samples)]
    if audited:
        columns += [(f"fail {check}", _failing(check)) for check in summary.total.failing]
    if fixes:
        columns += [
            ("fixed", lambda g: g.share(g.fixed)),
            ("flagged", lambda g: g.share(g.flagged)),
        ]

    plain = not audited and not fixes  # samples only: add their share and a bar
    largest = max(group.samples for group in summary.groups.values())

    def cells(name: str, group: Group) -> list[object]:
        row: list[object] = [name, number(group.samples)]
        if audited:
            row += [_count_share(group, count) for count in group.failing.values()]
        if fixes:
            row += [_count_share(group, group.fixed), _count_share(group, group.flagged)]
        if plain:
            row += [percent(group.samples / summary.samples), bar(group.samples, largest)]
        return row

    def one_table(sort: int) -> Html:
        names = sorted(summary.groups)
        if sort:
            key = columns[sort - 1][1]
            names.sort(key=lambda name: -key(summary.groups[name]))
        heads = [str(summary.group_by), *(header for header, _ in columns)]
        ths = [
            el(
                "th",
                el("a", head, href="#groups" if i == 0 else f"#groups-by-{i}"),
                class_=" ".join(filter(None, ["n" if i else "", "sorted" if i == sort else ""]))
                or None,
            )
            for i, head in enumerate(heads)
        ]
        if plain:
            ths += [el("th", "share", class_="n"), el("th", "")]
        numeric = len(heads) + plain  # the cells after the name, up to any bar
        rows = join(
            el(
                "tr",
                join(
                    el("td", c, class_="n" if 0 < i < numeric else None)
                    for i, c in enumerate(cells(name, summary.groups[name]))
                ),
            )
            for name in names
        )
        return el(
            "table",
            el("thead", el("tr", join(ths))),
            el("tbody", rows),
            id="groups" if sort == 0 else f"groups-by-{sort}",
            class_="sort-default" if sort == 0 else "sort-alt",
        )

    tables = join([*(one_table(i) for i in range(1, len(columns) + 1)), one_table(0)])
    note = f"{len(summary.groups):,} groups by extra key {summary.group_by!r}. "
    note += "Click a column heading to sort by it."
    if audited:
        note += " Shares are of each group's samples, counts in brackets."
    return _section(
        "groups",
        "Groups",
        el("p", note, class_="muted"),
        el("div", tables, class_="groups" if plain else "groups wide"),
    )


def _has_fixes(summary: Summary) -> bool:
    """Whether any sample carries a ``fix`` block (with a boolean, or fixed or flagged)."""
    return "fix" in summary.verdicts or summary.total.fixed > 0 or summary.total.flagged > 0


def _failing(check: str) -> Callable[[Group], float]:
    return lambda group: group.share(group.failing[check])


def _count_share(group: Group, count: int) -> Html:
    share = group.share(count)
    heat = f"background:rgba(180,35,24,{min(0.45, share * 0.9):.2f})" if count else None
    return el("span", percent(share), el("small", f" ({number(count)})"), class_="heat", style=heat)


def _rejects(summary: Summary) -> Html:
    if summary.rows_in is None:
        text = (
            "No rejects file beside this file (NAME.rejects.jsonl), so no rows left out are known."
        )
        return _section("rejects", "Rejects", el("p", text, class_="muted"))
    if not summary.rejects:
        return _section("rejects", "Rejects", el("p", "The conversion left no rows out."))
    return _section(
        "rejects",
        "Rejects",
        el("p", f"Rows the conversion left out, by reason, of {number(summary.rows_in)} rows in."),
        table(
            ["reason", "rows", "share", ""],
            _share_rows(summary.rejects, summary.rows_in),
            numeric=(1, 2),
            id="rejects-by-reason",
        ),
    )


def _extra(summary: Summary) -> Html:
    if not summary.extra:
        return _section("extra", "Extra", el("p", "No extra keys.", class_="muted"))
    return _section(
        "extra", "Extra", table(["key", "type"], summary.extra.items(), id="extra-keys")
    )
