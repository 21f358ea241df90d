"""The page's sections of counts, each a function in page order.

The overview cards, the samples by class, style and number of choices, the answer positions
and their bias test, the rejects, and the extra keys.
"""

from __future__ import annotations

from sdvm_hf._html import Html, bar, el, join, number, percent, table
from sdvm_hf.errors import read_category
from sdvm_hf.render.html._parts import has_fixes, letter, section
from sdvm_hf.render.model import Report
from sdvm_hf.summary import ALPHA, MIN_EXPECTED, Summary, bias_verdict

__all__ = ["classes", "extra", "overview", "positions", "rejects"]


def _card(value: str, label: str, tone: str | None = None) -> Html:
    return el("div", el("b", value), el("span", label), class_=f"card {tone}" if tone else "card")


def overview(summary: Summary, title: str) -> Html:
    cards = [_card(number(summary.samples), "samples")]
    if summary.rows_in is not None:
        rejected = sum(summary.rejects.values())
        share = percent(rejected / summary.rows_in) if summary.rows_in else "0.0%"
        cards += [
            _card(number(summary.rows_in), "rows in"),
            _card(number(rejected), f"rejects ({share} of rows in)"),
        ]
    total = summary.total
    if total.audited:
        cards.append(_card(number(total.audited), "audited"))
    if total.audited and total.failing:
        worst = max(total.failing, key=lambda check: total.failing[check])
        tone = "bad" if total.failing[worst] else "good"
        share = percent(total.failing[worst] / total.audited)
        cards.append(_card(share, f"fail audit.{worst} (of audited)", tone))
    if has_fixes(summary):
        cards += [_card(number(total.fixed), "fixed"), _card(number(total.flagged), "flagged")]
    biased = [f"{n} choices" for n, test in summary.bias.items() if test.biased]
    untestable = sum(not test.testable for test in summary.bias.values())
    label = f"answer-position bias (chi-square, p < {ALPHA}), by number of choices"
    label += f"; {untestable} too small to test" if untestable else ""
    tone = "bad" if biased else "good"
    cards.append(_card(", ".join(biased) if biased else "none found", label, tone))
    grouping = f"grouped by {summary.group_by}" if summary.group_by else "no group column"
    meta = el("p", f"Sample file report · {grouping}", class_="muted")
    return el("header", el("h1", title), meta, el("div", join(cards), class_="cards"), id="top")


def _share_rows(counts: dict[str, int], total: int) -> list[list[object]]:
    top = max(counts.values(), default=0)
    return [
        [name, number(count), percent(count / total if total else 0), bar(count, top)]
        for name, count in counts.items()
    ]


def classes(summary: Summary) -> Html:
    heads = ["samples", "share", ""]
    by_choices = {f"{n} choices": count for n, count in summary.choices.items()}
    blocks = [
        ("by-class", "By class", "class", summary.by_class),
        ("by-style", "By style", "style", summary.by_style),
        ("choices", "By number of choices", "choices", by_choices),
    ]
    return section(
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


def positions(summary: Summary) -> Html:
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
    for n, observed in summary.positions.items():
        total = sum(observed.values())
        counts = {p: observed.get(p, 0) for p in range(n)}
        before = summary.positions_before.get(n)
        top = max(max(counts.values()) / total, 1 / n)
        if before:
            top = max(top, max(before.values()) / max(1, sum(before.values())))
        heads = ["position", "samples", "share", ""]
        rows = []
        for p, c in counts.items():
            row: list[object] = [f"{p} ({letter(p)})", number(c), percent(c / total)]
            if before:
                shown = sum(before.values())
                row += [number(before.get(p, 0)), percent(before.get(p, 0) / max(1, shown))]
            rows.append([*row, bar(c / total, top, 1 / n)])
        if before:
            heads = ["position", "after", "share", "before shuffle", "share", ""]
        per_count.append(
            el(
                "div",
                el("h3", f"{n} choices"),
                table(heads, rows, numeric=range(1, len(heads) - 1), id=f"pos-{n}"),
            )
        )
    note = (
        f"Each choices-count's answer positions tested against uniform (chi-square, df = "
        f"choices - 1); flagged when p < {ALPHA}, tested only when every position expects at "
        f"least {MIN_EXPECTED} samples. The dotted line marks the uniform share."
    )
    shuffled = []
    if summary.positions_before:
        shuffled.append(
            el(
                "p",
                "The choices were shuffled (sdvm-hf convert --shuffle-choices): each table "
                "shows where the answer sits now and where it sat before. "
                f"{number(summary.left_in_place)} samples whose choices refer to each other "
                "(\u201call of the above\u201d, \u201cboth A and B\u201d) were left in place.",
                id="shuffle-note",
            )
        )
    return section(
        "positions",
        "Answer positions",
        el("p", note, class_="muted"),
        tests,
        *shuffled,
        el("div", join(per_count), class_="row"),
    )


def rejects(report: Report) -> Html:
    summary = report.summary
    if summary.rows_in is None:
        text = (
            "No rejects known: the file's record names none and no rejects file sits beside "
            "it (NAME.rejects.jsonl)."
        )
        return section("rejects", "Rejects", el("p", text, class_="muted"))
    where = f" (from {report.rejects_from})" if report.rejects_from else ""
    if not summary.rejects:
        return section("rejects", "Rejects", el("p", f"The conversion left no rows out{where}."))
    rejected = sum(summary.rejects.values())
    return section(
        "rejects",
        "Rejects",
        el(
            "p",
            f"Rows the conversion left out, by reason: {number(rejected)} "
            f"({percent(rejected / summary.rows_in)}) of {number(summary.rows_in)} rows in{where}.",
        ),
        table(
            ["reason", "rows", "share", ""],
            _share_rows({read_category(c): n for c, n in summary.rejects.items()}, summary.rows_in),
            numeric=(1, 2),
            id="rejects-by-reason",
        ),
    )


def extra(summary: Summary) -> Html:
    if not summary.extra:
        return section("extra", "Extra", el("p", "No extra keys.", class_="muted"))
    return section("extra", "Extra", table(["key", "type"], summary.extra.items(), id="extra-keys"))
