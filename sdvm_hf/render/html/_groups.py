"""The page's groups table: one table that sorts without JavaScript.

Each row carries its rank per column, and a radio button per column orders the rows with CSS
(:func:`sort_css`); the rest, summed, stays last whatever the order.
"""

from __future__ import annotations

from collections.abc import Callable

from sdvm_hf._html import Html, bar, el, join, number, percent
from sdvm_hf.render.html._parts import has_fixes, section
from sdvm_hf.summary import REST, Group, Summary

__all__ = ["groups", "sort_css"]


def _columns(summary: Summary) -> list[tuple[str, Callable[[Group], float]]]:
    """The groups table's sortable columns after the name: heading and sort key."""
    columns: list[tuple[str, Callable[[Group], float]]] = [("samples", lambda g: g.samples)]
    if summary.total.audited:
        columns += [(f"fail {check}", _failing(check)) for check in summary.total.failing]
    if has_fixes(summary):
        columns += [
            ("fixed", lambda g: g.share(g.fixed)),
            ("flagged", lambda g: g.share(g.flagged)),
        ]
    return columns


def sort_css(summary: Summary) -> str:
    """The rules that order the groups table by the column whose radio button is checked."""
    if not summary.groups:
        return ""
    count = len(_columns(summary)) + 1
    rules = [
        f"#sort-{i}:checked ~ table tbody tr {{ order: var(--o{i}); }}\n"
        f'#sort-{i}:checked ~ table label[for="sort-{i}"] {{ color: var(--ink); }}\n'
        f'#sort-{i}:checked ~ table label[for="sort-{i}"]::after {{ content: " \\25BC"; }}\n'
        for i in range(count)
    ]
    return "".join(rules)


def groups(summary: Summary) -> Html:
    if not summary.groups:
        return section(
            "by-group",
            "Groups",
            el(
                "p",
                "No subject or activity_label in extra; "
                "name a group column with --group-by (group_by= in Python).",
                class_="muted",
            ),
        )
    audited = summary.total.audited > 0
    fixes = has_fixes(summary)
    columns = _columns(summary)
    plain = not audited and not fixes  # samples only: add their share and a bar
    listed = [name for name in summary.groups if name != REST]
    largest = max(summary.groups[name].samples for name in listed)

    def cells(name: str, group: Group) -> list[object]:
        row: list[object] = [name, number(group.samples)]
        if audited:
            row += [_count_share(group, count) for count in group.failing.values()]
        if fixes:
            row += [
                _count_share(group, group.fixed, heat=False),
                _count_share(group, group.flagged),
            ]
        if plain:
            row += [percent(group.samples / summary.samples), bar(group.samples, largest)]
        return row

    ranks: dict[str, list[int]] = {name: [i] for i, name in enumerate(listed)}
    for _, key in columns:
        ordered = sorted(listed, key=lambda name: (-key(summary.groups[name]), name))
        for rank, name in enumerate(ordered):
            ranks[name].append(rank)
    heads = [str(summary.group_by), *(header for header, _ in columns)]
    ths = [
        el("th", el("label", head, for_=f"sort-{i}"), class_="n" if i else None)
        for i, head in enumerate(heads)
    ]
    if plain:
        ths += [el("th", "share", class_="n"), el("th", "")]
    numeric = len(heads) + plain  # the cells after the name, up to any bar
    widths = ["minmax(12em, 2.5fr)"] + ["minmax(6em, 1fr)"] * (len(ths) - 1)
    if plain:
        widths[-1] = "180px"

    def tr(name: str, order: list[int] | None) -> Html:
        last = [len(listed)] * len(heads)  # the rest stays last, whatever the order
        style = ";".join(f"--o{i}:{rank}" for i, rank in enumerate(order or last))
        return el(
            "tr",
            join(
                el("td", c, class_="n" if 0 < i < numeric else None)
                for i, c in enumerate(cells(name, summary.groups[name]))
            ),
            style=style,
            class_="rest" if order is None else None,
        )

    rows = [tr(name, ranks[name]) for name in listed]
    if REST in summary.groups:
        rows.append(tr(REST, None))
    radios = [
        el(
            "input",
            type="radio",
            name_="sort-groups",
            id=f"sort-{i}",
            checked="" if i == 0 else None,
        )
        for i in range(len(heads))
    ]
    body = el(
        "div",
        join(radios),
        el(
            "table",
            el("thead", el("tr", join(ths))),
            el("tbody", join(rows)),
            id="groups",
            style=f"--grid: {' '.join(widths)}",
        ),
        class_="groups sortable",
    )
    note = f"{summary.group_count:,} groups by extra key {summary.group_by!r}"
    if REST in summary.groups:
        rest = summary.group_count - len(listed)
        note += f": the {len(listed):,} largest, the other {rest:,} summed in the last row"
    note += ". Click a column heading to sort by it."
    if audited:
        note += " Shares are of each group's samples, counts in brackets."
    return section("by-group", "Groups", el("p", note, class_="muted"), body)


def _failing(check: str) -> Callable[[Group], float]:
    return lambda group: group.share(group.failing[check])


def _count_share(group: Group, count: int, *, heat: bool = True) -> Html:
    """A share and its count; shaded red by the share when ``heat`` (a bad outcome)."""
    share = group.share(count)
    shade = f"background:rgba(180,35,24,{min(0.45, share * 0.9):.2f})" if count and heat else None
    return el(
        "span", percent(share), el("small", f" ({number(count)})"), class_="heat", style=shade
    )
