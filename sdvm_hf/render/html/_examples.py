"""The page's examples: a few samples per check, and of fixed samples, with word diffs.

Each example shows the sample, its answer, its blocks' bad checks, and, when the original is
known, what the stage changed: removed words struck through, added words underlined.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sdvm_hf._html import Html, el, join, number, percent
from sdvm_hf.render.html._parts import bad_when, example_id, letter, section
from sdvm_hf.render.model import Report
from sdvm_hf.verdicts import check_name, flatten_block, reads_bad

__all__ = ["examples"]


def examples(report: Report) -> Html:
    summary = report.summary
    parts = []
    for block, checks in summary.examples.items():
        for check, rows in checks.items():
            bad = summary.total.checks.get(block, {}).get(check, 0)
            carrying = summary.total.carrying.get(block, 0)
            heading = (
                f"{block} · {check_name(block, check)} {bad_when(block, check)}: "
                f"{number(bad)} samples ({percent(bad / carrying if carrying else 0)})"
            )
            parts.append(_example_group(report, example_id(block, check), heading, rows))
    if summary.fixed_examples:
        heading = f"fixed (fix.changes not empty): {number(summary.total.fixed)} samples"
        parts.append(_example_group(report, "ex-fixed", heading, summary.fixed_examples))
    if not parts:
        return section(
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
    return section("examples", "Examples", el("p", note, class_="muted"), join(parts))


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
        was = f"\u201c{before.choices[before.answer_index]}\u201d"
        now = f"\u201c{sample.choices[sample.answer_index]}\u201d"
        if found.answer_position_moved:
            said = f"The answer moved: {letter(before.answer_index)} {was} \u2192 "
            said += f"{letter(sample.answer_index)} {now}"
            notes.append(el("p", said, class_="moved"))
        else:  # the same position: only the answer's text was fixed
            said = f"The answer stays {letter(sample.answer_index)}; its text changed: {was} "
            notes.append(el("p", said + f"\u2192 {now}", class_="muted"))
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
        bad = [check_name(block, c) for c, v in checks.items() if reads_bad(block, c, v)]
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
