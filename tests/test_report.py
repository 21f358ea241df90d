"""The report: the chi-square test, the summary's new numbers, and the HTML page that shows them."""

import json
import math
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from sdvm_hf import (
    MultipleChoiceSample,
    SampleSequence,
    load_hellaswag,
    load_mmlu,
    read_samples,
    summarize,
    write_parquet,
)
from sdvm_hf.cli import main
from sdvm_hf.errors import read_category
from sdvm_hf.jobs import convert_to_files, read_rejects, rejects_path, report_file
from sdvm_hf.report import build_report, report_html
from sdvm_hf.summary import MISSING, REST, Summary, chi_square_sf, position_bias, reject_reasons
from sdvm_hf.verdicts import check_name

FIXTURES = Path(__file__).parent / "fixtures"


# -- the chi-square test --------------------------------------------------------------------


def closed_form_sf(x: float, df: int) -> float:
    """The chi-square survival function where it has a closed form (df 1 to 4)."""
    half = x / 2
    if df == 1:
        return math.erfc(math.sqrt(half))
    if df == 2:
        return math.exp(-half)
    if df == 3:
        return math.erfc(math.sqrt(half)) + math.sqrt(2 * x / math.pi) * math.exp(-half)
    assert df == 4
    return math.exp(-half) * (1 + half)


@pytest.mark.parametrize("df", [1, 2, 3, 4])
@pytest.mark.parametrize("x", [1e-6, 0.05, 0.5, 1.0, 2.0, 3.0, 5.0, 9.9, 25.0, 80.0])
def test_chi_square_sf_matches_the_closed_forms(x: float, df: int) -> None:
    assert chi_square_sf(x, df) == pytest.approx(closed_form_sf(x, df), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize(
    ("x", "df", "p"),
    [
        (3.841458820694124, 1, 0.05),  # the textbook critical values
        (6.634896601021214, 1, 0.01),
        (7.814727903251178, 3, 0.05),
        (18.307038053275146, 10, 0.05),
        (16.918977604620448, 9, 0.05),
        (0.0, 3, 1.0),
    ],
)
def test_chi_square_sf_at_known_critical_values(x: float, df: int, p: float) -> None:
    assert chi_square_sf(x, df) == pytest.approx(p, rel=1e-9)


def test_chi_square_sf_refuses_what_is_not_a_test() -> None:
    with pytest.raises(ValueError, match=r"expected df >= 1 and statistic >= 0, got 0, 1.0"):
        chi_square_sf(1.0, 0)
    with pytest.raises(ValueError, match=r"got 2, -1.0"):
        chi_square_sf(-1.0, 2)


def test_position_bias_by_hand() -> None:
    test = position_bias({0: 30, 1: 20, 2: 25, 3: 25}, 4)
    # expected 25 each: (5^2 + 5^2 + 0 + 0) / 25 = 2.0 with 3 degrees of freedom
    assert (test.samples, test.statistic, test.df) == (100, 2.0, 3)
    assert test.p_value == pytest.approx(closed_form_sf(2.0, 3), rel=1e-12)
    assert test.testable and not test.biased


def test_a_strongly_biased_position_is_flagged_and_a_uniform_one_is_not() -> None:
    biased = position_bias({0: 70, 1: 10, 2: 10, 3: 10}, 4)
    assert biased.statistic == pytest.approx(108.0) and biased.p_value < 1e-20
    assert biased.biased
    uniform = position_bias({0: 25, 1: 25, 2: 25, 3: 25}, 4)
    assert (uniform.statistic, uniform.p_value, uniform.biased) == (0.0, 1.0, False)
    missing_positions = position_bias({0: 10}, 2)  # position 1 never holds the answer
    assert missing_positions.statistic == 10.0 and missing_positions.biased


def test_too_few_samples_are_not_flagged_however_skewed() -> None:
    test = position_bias({0: 9}, 2)  # 4.5 expected per position
    assert test.p_value < 0.01 and not test.testable and not test.biased


# -- reading the page -----------------------------------------------------------------------


class Page(HTMLParser):
    """Every attribute, every table by id (rows of cell texts) and the text of every id."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self._table_id = ""
        self.attributes: list[tuple[str, str, str | None]] = []
        self.tables: dict[str, list[list[str]]] = {}
        self.row_styles: dict[str, list[str | None]] = {}
        """Each table's rows' ``style`` attribute (the header row's too)."""
        self.text_of: dict[str, str] = {}
        self.tags: list[str] = []
        self.style = ""
        self._open: list[tuple[str, str]] = []
        self._table: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [(tag, name, value) for name, value in attrs]
        found = dict(attrs)
        if tag not in ("meta", "input", "br", "hr", "img", "link"):  # void: never closed
            self._open.append((tag, str(found["id"]) if found.get("id") else ""))
        if found.get("id"):
            self.text_of[str(found["id"])] = ""
        if tag == "table":
            self._table = self.tables.setdefault(str(found.get("id")), [])
            self._table_id = str(found.get("id"))
        elif tag == "tr" and self._table is not None:
            self._table.append([])
            self.row_styles.setdefault(self._table_id, []).append(found.get("style"))
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._table is not None and self._cell is not None:
            self._table[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i][0] == tag:
                del self._open[i:]  # the element and any left open inside it
                break

    def handle_data(self, data: str) -> None:
        if self.tags and self.tags[-1] == "style":
            self.style += data
        if self._cell is not None:
            self._cell.append(data)
        for _, id in self._open:
            if id:
                self.text_of[id] += data

    def body(self, id: str) -> list[list[str]]:
        """A table's rows below its header row."""
        return self.tables[id][1:]


def count(text: str) -> int:
    return int(text.replace(",", ""))


def share_and_count(text: str) -> tuple[float, int]:
    """``'12.5% (3)'`` -> (0.125, 3); ``'<0.1% (1)'`` -> (0.0005, 1)."""
    match = re.fullmatch(r"([<>]?)([\d.]+)% \(([\d,]+)\)", text)
    assert match, text
    share = float(match.group(2)) / 100
    share += {"<": -0.0005, ">": 0.0005, "": 0.0}[match.group(1)]
    return share, count(match.group(3))


def assert_self_contained(html: str, page: Page) -> None:
    for tag, name, value in page.attributes:
        assert not re.search(r"(?i)\b(https?:)?//|^\s*(data|javascript):", value or ""), (
            tag,
            name,
            value,
        )
    assert "script" not in page.tags and "link" not in page.tags and "img" not in page.tags
    assert page.tags.count("style") == 1 and not re.search(r"url\(|@import|//", page.style)


def assert_page_shows(page: Page, summary: Summary) -> None:
    """Every number of the summary's counts, positions and tests is in the page, and equal."""
    for id, counts in [("by-class", summary.by_class), ("by-style", summary.by_style)]:
        assert {row[0]: count(row[1]) for row in page.body(id)} == counts
    assert {row[0]: count(row[1]) for row in page.body("choices")} == {
        f"{n} choices": c for n, c in summary.choices.items()
    }
    for row in page.body("by-class"):
        assert row[2] == f"{count(row[1]) / summary.samples:.1%}"
    bias_rows = {count(row[0]): row for row in page.body("bias")}
    assert set(bias_rows) == set(summary.bias) == set(summary.positions)
    for n, test in summary.bias.items():
        _, samples, statistic, df, p_value, verdict = bias_rows[n]
        assert count(samples) == test.samples and count(df) == test.df == n - 1
        assert float(statistic) == pytest.approx(test.statistic, abs=0.005)
        assert float(p_value) == pytest.approx(test.p_value, rel=5e-3)
        assert ("position bias (" in verdict) == test.biased
        shown = {int(row[0].split()[0]): count(row[1]) for row in page.body(f"pos-{n}")}
        assert shown == {p: summary.positions[n].get(p, 0) for p in range(n)}
    if summary.extra:
        assert {row[0]: row[1] for row in page.body("extra-keys")} == summary.extra


def assert_groups_shown(page: Page, summary: Summary) -> None:
    rows = page.body("groups")
    assert [row[0] for row in rows] == sorted(summary.groups)
    assert page.tables["groups"][0][0].startswith(str(summary.group_by))
    checks = list(summary.total.failing)
    fix_columns = 2 if "fix" in summary.verdicts else 0
    for row in rows:
        group = summary.groups[row[0]]
        assert count(row[1]) == group.samples
        if summary.total.audited:
            shown = [share_and_count(cell) for cell in row[2:]]
            want = [*group.failing.values(), group.fixed, group.flagged]
            want = want[: len(want) - 2 + fix_columns]
            assert [c for _, c in shown] == want and len(want) == len(checks) + fix_columns
            assert [s for s, _ in shown] == pytest.approx([group.share(c) for c in want], abs=5e-4)
    # one table: each row's rank per column, which the checked radio button orders by
    columns = 1 + (len(checks) + fix_columns if summary.total.audited else 0)
    assert [t for t in page.tables if t.startswith("groups")] == ["groups"]
    styles = page.row_styles["groups"][1:]
    ranks = [dict(part.split(":") for part in str(style).split(";")) for style in styles]
    assert all(set(r) == {f"--o{i}" for i in range(columns + 1)} for r in ranks)
    for sort in range(columns + 1):
        order = [int(r[f"--o{sort}"]) for r in ranks]
        ordered = [row for _, row in sorted(zip(order, rows, strict=True))]
        if sort == 0:
            assert ordered == rows
            continue
        keys = [count(r[sort]) if sort == 1 else share_and_count(r[sort])[0] for r in ordered]
        assert keys == sorted(keys, reverse=True)


# -- converted files --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("load", "group_by"), [(load_hellaswag, "activity_label"), (load_mmlu, "subject")]
)
def test_the_page_of_a_converted_file_shows_the_summary(
    tmp_path: Path, load: Any, group_by: str
) -> None:
    path = tmp_path / "converted.parquet"
    write_parquet(load(bundled=True), path)
    html_path = tmp_path / "report.html"
    returned = report_file(path, html_path)
    summary = summarize(read_samples(path).table)
    assert returned == summary and summary.group_by == group_by
    html = html_path.read_text(encoding="utf-8")
    page = Page(html)
    assert_self_contained(html, page)
    assert_page_shows(page, summary)
    assert_groups_shown(page, summary)
    assert sum(group.samples for group in summary.groups.values()) == summary.samples
    for row in page.body("groups"):
        assert row[2] == f"{count(row[1]) / summary.samples:.1%}"
    values = read_samples(path).table.column("extra").combine_chunks().field(group_by)
    assert {name: g.samples for name, g in summary.groups.items()} == {
        v: values.to_pylist().count(v) for v in set(values.to_pylist())
    }
    assert "verdicts-audit" not in page.tables and "No audit, fix or reaudit blocks" in html
    assert "No rejects known" in page.text_of["rejects"]
    assert page.text_of["top"].startswith("converted.parquet")


def test_rejects_beside_the_file_are_read_and_shown(tmp_path: Path) -> None:
    samples = load_mmlu(data_files=str(FIXTURES / "mmlu" / "mmlu_pro.parquet"), on_error="skip")
    out = tmp_path / "pro.jsonl"
    converted = convert_to_files(samples, out)
    assert converted.rejects == rejects_path(out) and samples.rejects
    assert reject_reasons(read_rejects(rejects_path(out))) == reject_reasons(samples.rejects)
    summary = report_file(out, tmp_path / "pro.html")
    assert summary == converted.summary
    assert summary.rows_in == len(samples) + len(samples.rejects)
    page = Page((tmp_path / "pro.html").read_text(encoding="utf-8"))
    shown = {row[0]: count(row[1]) for row in page.body("rejects-by-reason")}
    assert shown == {read_category(c): n for c, n in summary.rejects.items()}  # with meanings
    assert str(summary.rows_in) in page.text_of["rejects"]
    assert_page_shows(page, summary)
    assert summary.group_by is None and "groups" not in page.tables
    assert all(not test.testable for test in summary.bias.values())  # 7 samples: too few


# -- audited files ----------------------------------------------------------------------------

HOSTILE = "<script>alert('x')</script> & \"quoted\" <img src=https://evil.example/x.png>"


def audited_samples(with_fix: bool = True) -> list[MultipleChoiceSample]:
    """The bundled MMLU slice with audit / fix / reaudit blocks as the service writes them."""
    out = []
    for i, sample in enumerate(load_mmlu(bundled=True)):
        audit = {
            "grammar": i % 7 != 0,
            "complete": i % 5 != 0 or not sample.extra["subject"].startswith("high_school"),
            HOSTILE: i % 11 != 0,
            "score": 0.5,  # not a boolean check: counted nowhere
        }
        changes = ["fixed grammar"] if i % 7 == 0 else []
        fix: dict[str, object] | None = {"changes": changes, "flagged": i % 13 == 0, "attempts": 1}
        reaudit = {"grammar": True} if changes and with_fix else None
        fix = fix if with_fix else None
        extra = {"subject": HOSTILE} if i < 3 else sample.extra
        out.append(
            sample.model_copy(
                update={"audit": audit, "fix": fix, "reaudit": reaudit, "extra": extra}
            )
        )
    return out


@pytest.mark.parametrize("with_fix", [True, False], ids=["refined", "audited"])
def test_the_page_of_an_audited_file_shows_failures_fixes_and_flags_per_group(
    tmp_path: Path, with_fix: bool
) -> None:
    samples = audited_samples(with_fix)
    path = tmp_path / "mmlu.audit.parquet"
    write_parquet(samples, path)
    summary = report_file(path, tmp_path / "report.html")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    page = Page(html)
    assert_self_contained(html, page)
    assert_page_shows(page, summary)
    assert_groups_shown(page, summary)

    # the summary's numbers, counted here straight from the samples
    by_group: dict[str, list[MultipleChoiceSample]] = {}
    for sample in samples:
        by_group.setdefault(sample.extra["subject"], []).append(sample)
    assert list(summary.groups) == sorted(by_group)
    for name, members in by_group.items():
        group = summary.groups[name]
        assert group.samples == group.audited == len(members)
        assert group.failing == {
            check: sum(s.audit is not None and s.audit[check] is False for s in members)
            for check in ("grammar", "complete", HOSTILE)
        }
        assert group.fixed == sum(bool(s.fix and s.fix["changes"]) for s in members)
        assert group.flagged == sum(bool(s.fix and s.fix["flagged"]) for s in members)
    assert summary.total.failing["grammar"] == sum(i % 7 == 0 for i in range(len(samples)))
    assert summary.total.flagged == sum(with_fix and i % 13 == 0 for i in range(len(samples)))

    # the overall verdict tables and the fix line
    for block, checks in summary.verdicts.items():
        shown = {row[0]: (count(row[1]), count(row[2])) for row in page.body(f"verdicts-{block}")}
        assert shown == {
            check_name(block, c): (v.get("true", 0), v.get("false", 0)) for c, v in checks.items()
        }
    assert "score" not in {row[0] for row in page.body("verdicts-audit")}
    total = summary.total
    if with_fix:
        fixes = page.text_of["fixes"]
        assert f"{total.fixed} samples fixed ({total.share(total.fixed):.1%})" in fixes
        assert f"{total.flagged} flagged" in fixes
    else:
        assert "fixes" not in page.text_of and "fixed" not in page.tables["groups"][0]

    # untrusted text arrives as text, never as markup
    assert "<script" not in html and "<img" not in html
    assert HOSTILE in {row[0] for row in page.body("groups")}
    assert HOSTILE in {row[0] for row in page.body("verdicts-audit")}
    assert f"fail {HOSTILE}" in [cell.rstrip(" ↕▼") for cell in page.tables["groups"][0]]


def test_the_summary_as_plain_data(tmp_path: Path) -> None:
    write_parquet(audited_samples(), tmp_path / "a.parquet")
    summary = summarize(read_samples(tmp_path / "a.parquet").table)
    data = json.loads(json.dumps(summary.as_dict()))
    assert data["group_by"] == "subject" and data["alpha"] == 0.05
    assert data["position_bias"]["4"]["p_value"] == summary.bias[4].p_value
    anatomy = data["groups"]["anatomy"]
    assert anatomy["samples"] == summary.groups["anatomy"].samples
    assert anatomy["failing"]["grammar"] == {
        "count": summary.groups["anatomy"].failing["grammar"],
        "share": summary.groups["anatomy"].failing["grammar"] / anatomy["samples"],
    }
    assert data["total"]["fixed"]["count"] == summary.total.fixed
    assert "chi-square" in "\n".join(summary.lines())


def test_group_by_names_any_extra_key_and_refuses_others(tmp_path: Path) -> None:
    path = tmp_path / "h.parquet"
    write_parquet(load_hellaswag(bundled=True), path)
    table = read_samples(path).table
    by_split = summarize(table, group_by="split_type")
    split_types = table.column("extra").combine_chunks().field("split_type").to_pylist()
    assert {n: g.samples for n, g in by_split.groups.items()} == {
        v: split_types.count(v) for v in set(split_types)
    }
    by_ind = summarize(table, group_by="ind", top=None)  # an int32 key: its values as text
    assert sum(g.samples for g in by_ind.groups.values()) == len(table)
    assert all(name.isdigit() for name in by_ind.groups)
    assert (
        by_ind.group_count
        == len(by_ind.groups)
        == len(set(table.column("extra").combine_chunks().field("ind").to_pylist()))
    )
    top = summarize(table, group_by="ind", top=10)  # the ten largest, then the rest summed
    assert list(top.groups)[-1] == REST and len(top.groups) == 11
    assert top.group_count == by_ind.group_count
    largest = sorted(by_ind.groups, key=lambda n: (-by_ind.groups[n].samples, n))[:10]
    assert list(top.groups)[:-1] == sorted(largest)
    assert top.groups[REST].samples == len(table) - sum(by_ind.groups[n].samples for n in largest)
    with pytest.raises(ValueError, match=r"group by 'nope': expected an extra key \('ind', "):
        summarize(table, group_by="nope")


def test_a_json_extra_column_groups_and_marks_missing_values(tmp_path: Path) -> None:
    samples = [
        MultipleChoiceSample(context=f"Q{i}?", choices=["a", "b"], answer_index=0, extra=extra)
        for i, extra in enumerate([{"subject": "x"}, {"subject": "x", "n": 1}, {"n": 2}, {}])
    ]
    write_parquet(samples, tmp_path / "mixed.parquet")
    summary = summarize(read_samples(tmp_path / "mixed.parquet").table)
    assert summary.group_by == "subject"
    assert {n: g.samples for n, g in summary.groups.items()} == {MISSING: 2, "x": 2}
    assert summarize(
        read_samples(tmp_path / "mixed.parquet").table, group_by="n"
    ).groups.keys() == {
        MISSING,
        "1",
        "2",
    }


# -- the command --------------------------------------------------------------------------------


def test_the_command_writes_html_or_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "a.parquet"
    write_parquet(audited_samples(), path)
    summary = summarize(read_samples(path).table)
    built = build_report(path)
    assert built.summary == summary
    want = json.loads(json.dumps(built.as_dict()))
    assert {key: want[key] for key in summary.as_dict()} == json.loads(
        json.dumps(summary.as_dict())
    )
    assert main(["report", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == want
    assert main(["report", str(path), "-o", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text()) == want
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 0
    assert "html report of 285 samples" in capsys.readouterr().err
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert html == report_html(built)
    assert main(["report", str(path), "--format", "html"]) == 0
    assert capsys.readouterr().out == html


def test_the_command_names_what_it_cannot_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "a.parquet"
    write_parquet(load_mmlu(bundled=True)[:10], path)
    assert main(["report", str(path), "-o", str(tmp_path / "r.txt")]) == 2
    assert "r.txt: cannot tell the report format; name it .html or .json" in capsys.readouterr().err
    assert main(["report", str(path), "--group-by", "nope"]) == 2
    assert "sdvm-hf report: group by 'nope': expected an extra key ('subject')" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "r.txt").exists()


# -- a file the (stand-in) service audited ----------------------------------------------------


@pytest.mark.skipif(sys.version_info < (3, 12), reason="the sdvm SDK needs Python >= 3.12")
def test_the_page_of_a_file_refined_by_the_stand_in_service(tmp_path: Path) -> None:
    pytest.importorskip("sdvm", reason="install the 'sdvm' extra: pip install -e '.[sdvm]'")
    from service_stub import stub_stage

    from sdvm_hf import PRESETS

    samples = load_hellaswag(bundled=True)
    contexts = samples.table.column("context").to_pylist()
    doubled = [c.replace(" ", "  ", 1) if i % 3 == 0 else c for i, c in enumerate(contexts)]
    table = samples.table.set_column(2, "context", pa.array(doubled))
    out = tmp_path / "refined.parquet"
    stub_stage(SampleSequence(table), "refine", out, PRESETS["hellaswag"].conventions)
    summary = report_file(out, tmp_path / "refined.html")
    html = (tmp_path / "refined.html").read_text(encoding="utf-8")
    page = Page(html)
    assert_self_contained(html, page)
    assert_page_shows(page, summary)
    assert_groups_shown(page, summary)
    labels = table.column("extra").combine_chunks().field("activity_label").to_pylist()
    for name, group in summary.groups.items():
        rows = [i for i, label in enumerate(labels) if label == name]
        assert group.failing["grammar"] == group.fixed == sum(i % 3 == 0 for i in rows)
        assert group.flagged == 0 and group.audited == len(rows)
    assert summary.total.fixed == sum(i % 3 == 0 for i in range(len(contexts))) > 0
    assert {row[0] for row in page.body("verdicts-reaudit")} == {
        "grammar",
        "complete",
        "answer_in_range",
    }


def test_the_command_has_help_with_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["report", "--help"])
    assert exit_info.value.code == 0
    assert "sdvm-hf report" in capsys.readouterr().out.split("example")[-1]
