"""A sample file's report as one self-contained HTML page, or JSON.

Its :class:`~sdvm_hf.summary.Summary`, the samples behind the numbers, and what a stage
changed. :func:`build_report` reads a file once for the counts and once more for the few
example rows (and the same rows of the stage's input, the original, for the before/after
diffs). The page needs nothing from outside: no scripts, fonts or images, bars drawn with
CSS, and a print stylesheet so it prints to PDF. Every text from the file (group names, check
names, reject reasons, contexts, choices) is escaped. The groups table is one table that
sorts without JavaScript: each row carries its rank per column, and a radio button per column
orders the rows with CSS.

Longer than most modules: one function per section of the page, in page order, so the page
reads top to bottom here; the stylesheet and the escaping helpers are in :mod:`sdvm_hf._html`.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib.metadata import version
from pathlib import Path
from typing import Any, Literal

from sdvm_hf._atomic import atomic_path
from sdvm_hf._html import CSS, Html, bar, el, join, number, percent, table
from sdvm_hf.arrow._validate import canonical
from sdvm_hf.arrow.rejects import Rejects
from sdvm_hf.diff import SampleDiff, diff_samples, rows_of
from sdvm_hf.files import format_of, jsonl_records, parquet_batches, read_samples
from sdvm_hf.record import read_record
from sdvm_hf.samples import MultipleChoiceSample
from sdvm_hf.summary import (
    ALPHA,
    BAD_WHEN_TRUE,
    EXAMPLES,
    MIN_EXPECTED,
    REST,
    TOP_GROUPS,
    Group,
    Summary,
    Tally,
    bias_verdict,
    flatten_block,
)

__all__ = [
    "Report",
    "ReportFormat",
    "build_report",
    "original_path",
    "rejects_of",
    "report_format",
    "report_html",
    "report_json",
    "write_report",
]

ReportFormat = Literal["html", "json"]
"""A report's encoding."""


@dataclass
class Report:
    """A summary and the samples behind it: what :func:`build_report` reads from a file."""

    summary: Summary
    title: str = "sample file"
    """What the page is called: the file's name."""
    samples: dict[int, MultipleChoiceSample] = field(default_factory=dict)
    """The example rows of the file, by row number."""
    originals: dict[int, MultipleChoiceSample] = field(default_factory=dict)
    """The same rows of the original (the stage's input), when it is known."""
    original: str | None = None
    """The original file the diffs are against, or ``None``."""
    rejects_from: str | None = None
    """Where the rejects were read from (the record's path, or the file beside), or ``None``."""

    def diff(self, row: int) -> SampleDiff | None:
        """The row against the original, when both are known."""
        if row not in self.samples or row not in self.originals:
            return None
        return diff_samples(self.originals[row], self.samples[row], row)

    def as_dict(self) -> dict[str, Any]:
        """The summary's plain data, with each example sample (wire dict) and its diff."""
        rows = sorted(self.samples)
        return {
            **self.summary.as_dict(),
            "original": self.original,
            "rejects_from": self.rejects_from,
            "example_samples": {str(row): _example_data(self, row) for row in rows},
        }


def _example_data(report: Report, row: int) -> dict[str, Any]:
    found = report.diff(row)
    data: dict[str, Any] = {"sample": report.samples[row].to_dict()}
    if row in report.originals:
        data["original"] = report.originals[row].to_dict()
    if found is not None:
        data["diff"] = {
            "changed": found.changed,
            "context": found.context,
            "choices": {str(i): pieces for i, pieces in found.choices.items()},
            "answer_moved": found.answer_moved,
        }
    return data


def _relative_to(path: str | os.PathLike[str], name: str) -> Path:
    target = Path(name)
    return target if target.is_absolute() else Path(os.path.normpath(Path(path).parent / target))


def original_path(record: Mapping[str, Any] | None, path: str | os.PathLike[str]) -> Path | None:
    """The file a stage output came from: its record's last stage's ``input.path``.

    A relative path is relative to the folder of ``path`` (the output); ``None`` when the
    record names no input (a converted file, or no record).

    >>> record = {"stages": [{"stage": "convert"}, {"stage": "refine",
    ...           "input": {"path": "mmlu.parquet", "rows": 10}}]}
    >>> original_path(record, "out/mmlu.refine.parquet")
    PosixPath('out/mmlu.parquet')
    """
    stages = (record or {}).get("stages") or []
    last = stages[-1] if stages and isinstance(stages[-1], Mapping) else {}
    source = last.get("input")
    if not isinstance(source, Mapping) or not isinstance(source.get("path"), str):
        return None
    return _relative_to(path, source["path"])


def rejects_of(
    record: Mapping[str, Any] | None, path: str | os.PathLike[str]
) -> tuple[Path, int | None]:
    """Where a sample file's conversion rejects are, and how many the record says there were.

    The record's ``rejects`` (kept through every stage) when it has them, else the rejects
    file beside the file (``NAME.rejects.jsonl``, :func:`sdvm_hf.jobs.rejects_path`).
    """
    rejects = (record or {}).get("rejects")
    if isinstance(rejects, Mapping) and isinstance(rejects.get("path"), str):
        count = rejects.get("count")
        return _relative_to(path, rejects["path"]), count if isinstance(count, int) else None
    file = Path(path)
    stem = file.name.removesuffix(f".{format_of(file)}")  # the rule of jobs.rejects_path
    return file.with_name(f"{stem}.rejects.jsonl"), None


_ROWS = 16_384
"""Rows of a sample file (or rejects) summarised at a time."""


def build_report(
    path: str | os.PathLike[str],
    *,
    original: str | os.PathLike[str] | None = None,
    examples: int = EXAMPLES,
    group_by: str | None = None,
    top: int | None = TOP_GROUPS,
) -> Report:
    """Summarise a sample file, its conversion's rejects, and a few samples per check.

    The rejects are those its record names (or the file beside it); the before/after diffs
    of fixed samples are against ``original``, or the stage's input its record names (when
    that file is there). ``examples`` samples per check, ``group_by`` and ``top`` as in
    :func:`~sdvm_hf.summary.summarize`.
    """
    if examples < 0:
        raise ValueError(f"examples: expected 0 or more, got {examples}")
    record = read_record(path)
    tally = Tally(group_by, top=top, examples=examples)
    if format_of(path) == "parquet":
        for part in parquet_batches(path, _ROWS):  # the schema checked, not every row:
            tally.add(canonical(part))  # that is what validate is for
    else:  # a JSON Lines file is read whole: its extra's storage is known only at the end
        tally.add(read_samples(path).table)
    rejects, count = rejects_of(record, path)
    rejects_from = None
    if rejects.is_file():
        rejects_from = str(rejects)
        records = (item for _, item in jsonl_records(rejects))
        tally.add_rejects([])
        while chunk := list(itertools.islice(records, _ROWS)):
            tally.add_rejects(Rejects.from_records(chunk))
    summary = tally.summary()
    if rejects_from is None and count is not None:  # the record counts them; the file is gone
        reason = f"(the reasons were in {rejects}, which is missing)"
        summary = replace(
            summary, rows_in=summary.samples + count, rejects={reason: count} if count else {}
        )
    wanted = {
        row for checks in summary.examples.values() for rows in checks.values() for row in rows
    }
    wanted.update(summary.fixed_examples)
    samples, _ = rows_of(path, wanted) if wanted else ({}, summary.samples)
    if original is None and (named := original_path(record, path)) is not None:
        original = named if named.is_file() else None
    originals: dict[int, MultipleChoiceSample] = {}
    if original is not None:
        originals, rows = rows_of(original, wanted)
        if rows != summary.samples:
            raise ValueError(
                f"original {original}: expected {summary.samples:,} rows, as {path} has (a "
                f"stage keeps every row), got {rows:,}"
            )
    return Report(
        summary,
        Path(path).name,
        samples,
        originals,
        None if original is None else str(original),
        rejects_from,
    )


def report_html(report: Report | Summary, title: str | None = None) -> str:
    """The report as one self-contained HTML page (``title`` names the file).

    A bare :class:`Summary` gives the page without example samples.
    """
    if isinstance(report, Summary):
        report = Report(report)
    title = report.title if title is None else title
    summary = report.summary
    sections = [
        _overview(summary, title),
        _classes(summary),
        _positions(summary),
        _audit(summary),
        _groups(summary),
        _examples(report),
        _rejects(report),
        _extra(summary),
    ]
    head = join(
        [
            Html('<meta charset="utf-8">'),
            Html('<meta name="viewport" content="width=device-width, initial-scale=1">'),
            el("title", f"{title}: sdvm-hf report"),
            el("style", Html(CSS + _sort_css(summary))),
        ]
    )
    footer = el("footer", f"Made by sdvm-hf {version('sdvm-hf')}. Self-contained: no scripts.")
    body = el("body", el("main", join(sections), footer))
    return f'<!doctype html>\n<html lang="en">{el("head", head)}{body}</html>\n'


def report_json(report: Report | Summary) -> str:
    """The report as JSON (:meth:`Report.as_dict`, or :meth:`Summary.as_dict`)."""
    return json.dumps(report.as_dict(), indent=2, ensure_ascii=False, default=str) + "\n"


def report_format(path: str | os.PathLike[str]) -> ReportFormat:
    """The format a report's file name says (``.html``, ``.htm``, ``.json``)."""
    suffix = Path(path).suffix.lower()
    if suffix in (".html", ".htm"):
        return "html"
    if suffix == ".json":
        return "json"
    raise ValueError(f"{path}: cannot tell the report format; name it .html or .json")


def write_report(
    report: Report | Summary,
    path: str | os.PathLike[str],
    format: ReportFormat | None = None,
    title: str | None = None,
) -> None:
    """Write the report to ``path`` atomically, in ``format`` or the one its name says."""
    json_format = (format or report_format(path)) == "json"
    text = report_json(report) if json_format else report_html(report, title)
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


# -- sections ------------------------------------------------------------------------------


def _section(id: str, heading: str, *body: object) -> Html:
    return el("section", el("h2", heading), *body, id=id)


def _card(value: str, label: str, tone: str | None = None) -> Html:
    return el("div", el("b", value), el("span", label), class_=f"card {tone}" if tone else "card")


def _overview(summary: Summary, title: str) -> Html:
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
    if _has_fixes(summary):
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
        before = summary.positions_before.get(n)
        top = max(max(counts.values()) / total, 1 / n)
        if before:
            top = max(top, max(before.values()) / max(1, sum(before.values())))
        heads = ["position", "samples", "share", ""]
        rows = []
        for p, c in counts.items():
            row: list[object] = [f"{p} ({_letter(p)})", number(c), percent(c / total)]
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
    return _section(
        "positions",
        "Answer positions",
        el("p", note, class_="muted"),
        tests,
        *shuffled,
        el("div", join(per_count), class_="row"),
    )


def _letter(position: int) -> str:
    return chr(ord("A") + position) if position < 26 else str(position)


def _bad_when(block: str, check: str) -> str:
    return "true" if (block, check) in BAD_WHEN_TRUE else "false"


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
            bad = true if _bad_when(block, check) == "true" else false
            share = bad / (true + false) if true + false else 0.0
            link = el("a", check, href=f"#{_example_id(block, check)}") if bad else check
            rows.append(
                [
                    link,
                    number(true),
                    number(false),
                    _bad_when(block, check),
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
        if _has_fixes(summary)
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
    return _section("audit", "Audit", note, el("div", join(blocks), class_="row"), fixes)


def _columns(summary: Summary) -> list[tuple[str, Callable[[Group], float]]]:
    """The groups table's sortable columns after the name: heading and sort key."""
    columns: list[tuple[str, Callable[[Group], float]]] = [("samples", lambda g: g.samples)]
    if summary.total.audited:
        columns += [(f"fail {check}", _failing(check)) for check in summary.total.failing]
    if _has_fixes(summary):
        columns += [
            ("fixed", lambda g: g.share(g.fixed)),
            ("flagged", lambda g: g.share(g.flagged)),
        ]
    return columns


def _sort_css(summary: Summary) -> str:
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


def _groups(summary: Summary) -> Html:
    if not summary.groups:
        return _section(
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
    fixes = _has_fixes(summary)
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
    return _section("by-group", "Groups", el("p", note, class_="muted"), body)


def _has_fixes(summary: Summary) -> bool:
    """Whether any sample carries a ``fix`` block (with a boolean, or fixed or flagged)."""
    return "fix" in summary.verdicts or summary.total.fixed > 0 or summary.total.flagged > 0


def _failing(check: str) -> Callable[[Group], float]:
    return lambda group: group.share(group.failing[check])


def _count_share(group: Group, count: int, *, heat: bool = True) -> Html:
    """A share and its count; shaded red by the share when ``heat`` (a bad outcome)."""
    share = group.share(count)
    shade = f"background:rgba(180,35,24,{min(0.45, share * 0.9):.2f})" if count and heat else None
    return el(
        "span", percent(share), el("small", f" ({number(count)})"), class_="heat", style=shade
    )


# -- the samples behind the numbers ----------------------------------------------------------


def _example_id(block: str, check: str) -> str:
    """A page anchor for a check's examples (check names are text from the file)."""
    return "ex-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{block}-{check}")


def _examples(report: Report) -> Html:
    summary = report.summary
    parts = []
    for block, checks in summary.examples.items():
        for check, rows in checks.items():
            bad = summary.total.checks.get(block, {}).get(check, 0)
            carrying = summary.total.carrying.get(block, 0)
            heading = (
                f"{block} · {check} {_bad_when(block, check)}: {number(bad)} samples "
                f"({percent(bad / carrying if carrying else 0)})"
            )
            parts.append(_example_group(report, _example_id(block, check), heading, rows))
    if summary.fixed_examples:
        heading = f"fixed (fix.changes not empty): {number(summary.total.fixed)} samples"
        parts.append(_example_group(report, "ex-fixed", heading, summary.fixed_examples))
    if not parts:
        return _section(
            "examples",
            "Examples",
            el("p", "No check failed and nothing was fixed.", class_="muted"),
        )
    if report.original:
        source = f"Before/after diffs against {report.original} (the same row)."
    elif summary.fixed_examples:
        source = (
            "No original to diff against: the file's record names no stage input that is "
            "there; name one with --original FILE."
        )
    else:
        source = ""
    note = (
        "A few samples per check, the same ones on every run (a fixed hash of the row "
        f"number). {source} The answer is marked \u2713; removed words are struck through, added "
        "words underlined."
    )
    return _section("examples", "Examples", el("p", note, class_="muted"), join(parts))


def _example_group(report: Report, id: str, heading: str, rows: list[int]) -> Html:
    shown = [row for row in rows if row in report.samples]
    return el(
        "div",
        el("h3", heading, el("small", f" · {len(shown)} shown")),
        join(_example(report, row) for row in shown),
        id=id,
        class_="examples",
    )


def _pieces(pieces: Sequence[tuple[str, str]]) -> Html:
    tags = {"same": "span", "del": "del", "ins": "ins"}
    return join(
        el(tags[op], text, class_="ws" if op != "same" and text.isspace() else None)
        if op != "same"
        else text
        for op, text in pieces
    )


def _example(report: Report, row: int) -> Html:
    sample = report.samples[row]
    found = report.diff(row)
    context: object = sample.context
    if found is not None and found.context is not None:
        context = _pieces(found.context)
    items = []
    for i, choice in enumerate(sample.choices):
        text: object = choice
        if found is not None and i in found.choices:
            text = _pieces(found.choices[i])
        mark = " \u2713" if i == sample.answer_index else ""
        items.append(el("li", text, mark, class_="answer" if mark else None))
    notes = []
    if found is not None and found.answer_moved:
        before = found.before
        notes.append(
            el(
                "p",
                f"The answer moved: {_letter(before.answer_index)} "
                f"\u201c{before.choices[before.answer_index]}\u201d \u2192 "
                f"{_letter(sample.answer_index)} \u201c{sample.choices[sample.answer_index]}\u201d",
                class_="moved",
            )
        )
    if found is not None and len(found.before.choices) != len(sample.choices):
        notes.append(el("p", f"Choices before: {list(found.before.choices)}", class_="muted"))
    if found is not None and not found.changed:
        notes.append(el("p", "Unchanged from the original.", class_="muted"))
    verdicts = []
    for block in ("audit", "fix", "reaudit"):
        value = getattr(sample, block)
        if value is None:
            continue
        checks, _ = flatten_block(value)
        bad = [c for c, v in checks.items() if v == (_bad_when(block, c) == "true")]
        verdicts.append(
            el(
                "div",
                el("b", block),
                " ",
                el(
                    "span",
                    ", ".join(bad) if bad else "all good",
                    class_="badge bad" if bad else "badge good",
                ),
                el("code", json.dumps(value, ensure_ascii=False)),
                class_="verdict",
            )
        )
    group = ""
    if report.summary.group_by is not None:
        value = sample.extra.get(report.summary.group_by)
        group = f" · {report.summary.group_by}: {value}" if value is not None else ""
    return el(
        "article",
        el("h4", f"row {row}{group}"),
        el("p", context, class_="context"),
        el("ol", join(items), type="A"),
        *notes,
        join(verdicts),
        class_="example",
        data_row=str(row),
    )


def _rejects(report: Report) -> Html:
    summary = report.summary
    if summary.rows_in is None:
        text = (
            "No rejects known: the file's record names none and no rejects file sits beside "
            "it (NAME.rejects.jsonl)."
        )
        return _section("rejects", "Rejects", el("p", text, class_="muted"))
    where = f" (from {report.rejects_from})" if report.rejects_from else ""
    if not summary.rejects:
        return _section("rejects", "Rejects", el("p", f"The conversion left no rows out{where}."))
    rejected = sum(summary.rejects.values())
    return _section(
        "rejects",
        "Rejects",
        el(
            "p",
            f"Rows the conversion left out, by reason: {number(rejected)} "
            f"({percent(rejected / summary.rows_in)}) of {number(summary.rows_in)} rows in{where}.",
        ),
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
