"""Safe-by-default HTML for the report: every value is text and escaped unless it is :class:`Html`.

No element here refers to anything outside the page: bars are CSS, links are ``#anchors``.
:data:`CSS` is the page's one stylesheet, screen and print.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

CSS = """
:root { --ink: #1f2328; --muted: #59636e; --line: #d8dee4; --soft: #f6f8fa; --bar: #3b6ea8;
  --bad: #b42318; --bad-bg: #fdecea; --good: #1f7a45; --good-bg: #e7f5ec; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
  sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 28px 40px 48px; }
h1 { font-size: 24px; margin: 0 0 2px; overflow-wrap: anywhere; }
h2 { font-size: 18px; margin: 32px 0 10px; padding-bottom: 4px;
  border-bottom: 1px solid var(--line); }
h3 { font-size: 14px; margin: 0 0 4px; }
p { margin: 4px 0 10px; max-width: 80ch; }
.muted { color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 18px 0 4px; }
.card { min-width: 140px; border: 1px solid var(--line); border-radius: 8px; padding: 8px 14px;
  background: var(--soft); }
.card b { display: block; font-size: 22px; font-variant-numeric: tabular-nums; }
.card span { color: var(--muted); font-size: 12px; }
.row { display: flex; flex-wrap: wrap; gap: 8px 48px; align-items: flex-start; }
table { border-collapse: collapse; margin: 4px 0 12px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 10px; border-bottom: 1px solid var(--line); text-align: left;
  vertical-align: middle; }
thead th { border-bottom: 2px solid var(--ink); font-weight: 600; white-space: nowrap; }
th.n, td.n { text-align: right; white-space: nowrap; }
td small { color: var(--muted); }
.heat { display: inline-block; padding: 0 5px; border-radius: 3px; }
.heat small { color: inherit; opacity: 0.75; }
.bar { display: inline-block; position: relative; width: 160px; height: 10px;
  vertical-align: middle; background: #e9edf1; border-radius: 2px; }
.bar span { display: block; height: 100%; background: var(--bar); border-radius: 2px; }
.bar.split { background: #e9a39b; }
.bar.split span { background: var(--good); }
.key { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 10px;
  vertical-align: baseline; background: var(--good); }
.key.bad { background: #e9a39b; }
.card.bad b { color: var(--bad); }
.card.good b { color: var(--good); }
.bar i { position: absolute; top: -3px; bottom: -3px; border-left: 2px dotted var(--ink); }
.badge { display: inline-block; padding: 0 8px; border-radius: 9px; font-size: 12px;
  font-weight: 600; white-space: nowrap; background: var(--soft); color: var(--muted); }
.badge.bad { background: var(--bad-bg); color: var(--bad); }
.badge.good { background: var(--good-bg); color: var(--good); }
.groups { overflow-x: auto; }
.groups.wide table { width: 100%; }
.groups thead th { white-space: normal; overflow-wrap: break-word; vertical-align: bottom; }
.sortable > input { position: absolute; opacity: 0; pointer-events: none; }
.sortable table { display: block; width: 100%; }
.sortable thead, .sortable tbody { display: flex; flex-direction: column; }
.sortable tr { display: grid; grid-template-columns: var(--grid); align-items: center; }
.sortable th, .sortable td { display: block; }
.sortable thead tr { align-items: end; border-bottom: 2px solid var(--ink); }
.sortable thead th { border-bottom: none; }
.sortable th label { cursor: pointer; color: var(--muted); }
.sortable th label::after { content: " \\2195"; font-weight: 400; }
.sortable tr.rest td { font-style: italic; border-top: 2px solid var(--line); }
.groups td:first-child { overflow-wrap: anywhere; }
.examples h3 small { color: var(--muted); font-weight: 400; }
.example { border: 1px solid var(--line); border-radius: 8px; padding: 6px 14px 8px;
  margin: 8px 0 12px; max-width: 80em; }
.example h4 { margin: 0 0 4px; font-size: 12px; color: var(--muted); font-weight: 600; }
.example .context { margin: 0 0 4px; white-space: pre-wrap; }
.example ol { margin: 0 0 6px; padding-left: 2em; }
.example li.answer { font-weight: 600; color: var(--good); }
.example .moved { color: var(--bad); font-weight: 600; }
del { background: var(--bad-bg); color: var(--bad); }
ins { background: var(--good-bg); color: var(--good); }
del.ws, ins.ws { white-space: pre; outline: 1px dashed currentColor; }
.verdict { margin: 2px 0; font-size: 12px; }
.verdict code { display: block; color: var(--muted); overflow-wrap: anywhere;
  font: 11px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
footer { margin-top: 36px; color: var(--muted); font-size: 12px; }
@media print {
  @page { margin: 14mm 12mm; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  body { font-size: 10.5px; }
  main { max-width: none; padding: 0; }
  h2, h2 + p { break-after: avoid; }
  h2 { margin-top: 18px; }
  .card, .row > div, tr { break-inside: avoid; }
  thead { display: table-header-group; }
  .sortable th label::after { content: ""; }
  .groups { overflow: visible; }
  .example { break-inside: avoid; }
  .bar { width: 110px; }
}
"""
"""The report's stylesheet: screen, and a print stylesheet for PDF."""


VOID = frozenset({"br", "hr", "input", "meta"})
"""Elements without an end tag."""


class Html(str):
    """Markup that goes into the page as it is; any other value is text and gets escaped."""

    __slots__ = ()


def render(value: object) -> str:
    """``value`` as markup: :class:`Html` as it is, anything else escaped."""
    return value if isinstance(value, Html) else escape(str(value), quote=True)


def el(name: str, *children: object, **attrs: str | None) -> Html:
    """An element; ``class_`` is ``class``, ``data_x`` is ``data-x``; ``None`` leaves one out.

    >>> print(el("td", "<b>", el("i", "x"), class_="n", title='say "hi"'))
    <td class="n" title="say &quot;hi&quot;">&lt;b&gt;<i>x</i></td>
    """
    written = "".join(
        f' {key.rstrip("_").replace("_", "-")}="{escape(value, quote=True)}"'
        for key, value in attrs.items()
        if value is not None
    )
    if name in VOID:  # no content, no end tag
        return Html(f"<{name}{written}>")
    return Html(f"<{name}{written}>{''.join(render(child) for child in children)}</{name}>")


def join(parts: Iterable[object]) -> Html:
    """Several pieces of markup (or text) one after another."""
    return Html("".join(render(part) for part in parts))


def number(count: int) -> str:
    """A count with thousands separators: ``12,345``."""
    return f"{count:,}"


def percent(share: float, digits: int = 1) -> str:
    """A share as a percentage: ``12.3%``; never ``0.0%`` or ``100.0%`` for a share that is not.

    >>> percent(0.123), percent(5 / 12_032), percent(0.0), percent(12_031 / 12_032), percent(1.0)
    ('12.3%', '<0.1%', '0.0%', '>99.9%', '100.0%')
    """
    floor = 10.0 ** -(digits + 2)
    if 0 < share < floor:
        return f"<{floor:.{digits}%}"
    if 1 - floor < share < 1:
        return f">{1 - floor:.{digits}%}"
    return f"{share:.{digits}%}"


def bar(
    share: float, scale: float = 1.0, marker: float | None = None, *, split: bool = False
) -> Html:
    """A horizontal bar ``share / scale`` of its width, with an optional dotted marker.

    ``split`` colours the rest of the bar too (true against false).
    """
    width = 0.0 if scale <= 0 else min(1.0, share / scale)
    parts = [el("span", style=f"width:{width:.2%}")]
    if marker is not None and scale > 0:
        parts.append(el("i", style=f"left:{min(1.0, marker / scale):.2%}", title="uniform"))
    return el(
        "span", *parts, class_="bar split" if split else "bar", role="img", title=percent(share)
    )


def table(
    headers: Sequence[object],
    rows: Iterable[Sequence[object]],
    *,
    numeric: Iterable[int] = (),
    **attrs: str | None,
) -> Html:
    """A table with a header row; columns listed in ``numeric`` are right-aligned."""
    right = set(numeric)

    def cells(tag: str, values: Sequence[object]) -> Html:
        return join(el(tag, v, class_="n" if i in right else None) for i, v in enumerate(values))

    head = el("thead", el("tr", cells("th", headers)))
    body = el("tbody", join(el("tr", cells("td", row)) for row in rows))
    return el("table", head, body, **attrs)
