"""The page's audit section: every check of every block, its verdicts and its bad share."""

from __future__ import annotations

from sdvm_hf._html import Html, bar, el, join, number, percent, table
from sdvm_hf.render.html._parts import bad_when, example_id, has_fixes, section
from sdvm_hf.summary import Summary
from sdvm_hf.verdicts import check_name

__all__ = ["audit"]


def audit(summary: Summary) -> Html:
    if not summary.verdicts:
        return section(
            "audit", "Audit", el("p", "No audit, fix or reaudit blocks.", class_="muted")
        )
    blocks = []
    for block, checks in summary.verdicts.items():
        rows = []
        for check, counts in checks.items():
            true, false = counts.get("true", 0), counts.get("false", 0)
            bad = true if bad_when(block, check) == "true" else false
            share = bad / (true + false) if true + false else 0.0
            name = check_name(block, check)
            link = el("a", name, href=f"#{example_id(block, check)}") if bad else name
            rows.append(
                [
                    link,
                    number(true),
                    number(false),
                    bad_when(block, check),
                    percent(share),
                    bar(1 - share, split=True),
                ]
            )
        carrying = summary.total.carrying.get(block, 0)
        others = summary.others.get(block, [])
        blocks.append(
            el(
                "div",
                el("h3", f"{block} block · {number(carrying)} samples"),
                table(
                    ["check", "true", "false", "bad when", "bad share", ""],
                    rows,
                    numeric=(1, 2, 4),
                    id=f"verdicts-{block}",
                ),
                el(
                    "p",
                    "Not checks (not counted): ",
                    el("span", ", ".join(others), id=f"others-{block}"),
                    class_="muted",
                )
                if others
                else "",
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
        if has_fixes(summary)
        else ""
    )
    note = el(
        "p",
        "Every boolean of each block, nested names joined by dots; a check is bad when false, "
        "except fix.flagged (bad when true). Shares are of the samples carrying the block. "
        "Bars:",
        el("span", class_="key"),
        "good",
        el("span", class_="key bad"),
        "bad",
    )
    return section("audit", "Audit", note, el("div", join(blocks), class_="row"), fixes)
