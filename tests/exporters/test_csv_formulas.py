"""Every CSV export goes through one spreadsheet-safe writer: no cell a spreadsheet would run
as a formula, whatever the memory holds."""

from __future__ import annotations

import csv
import io

import pytest

from memory.dashboards.tables import Cell, Table
from memory.storage.human_labels import HumanLabels, human_labels_csv
from redteam.core.downloads import SafeCsvWriter, csv_safe

PAYLOADS = [
    '=HYPERLINK("http://x")',
    "=cmd|' /C calc'!A0",
    "@SUM(1)",
    "+1+cmd",
    "-1+1",
    "\t=1+1",
    "\r=1+1",
    "  =1+1",
    " \t@SUM(1)",
]
LEADS = tuple("=+-@\t\r")


def _formula_cells(text: str, *, skip_lines: int = 0) -> list[str]:
    lines = io.StringIO(text)
    for _ in range(skip_lines):
        lines.readline()
    return [
        cell
        for row in csv.reader(lines)
        for cell in row
        if cell.startswith(LEADS) or cell.lstrip(" \t\r\n").startswith(LEADS)
    ]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_csv_safe_defuses_formula_leads_even_after_blanks(payload):
    assert csv_safe(payload) == "'" + payload


@pytest.mark.parametrize("number", ["-1", "+0.5", "-2.5e3", "0"])
def test_numbers_stay_numbers(number):
    assert csv_safe(number) == number


def test_the_shared_writer_defuses_every_text_cell_and_keeps_numbers():
    out = io.StringIO()
    SafeCsvWriter(out).writerow([*PAYLOADS, 3, None])
    [row] = list(csv.reader(io.StringIO(out.getvalue())))
    assert row == ["'" + p for p in PAYLOADS] + ["3", ""]


def test_human_label_file_has_no_formula_cell_and_reads_back_with_the_quote():
    labels = HumanLabels(kind="objective", raters=1)
    labels.rows = [
        {"assistant_response": p, "objective": p, "human_score": "1", "data_type": "text"}
        for p in PAYLOADS
    ]
    text = "".join(human_labels_csv(labels, dataset_version="1.0"))

    assert _formula_cells(text, skip_lines=1) == []
    rows = list(csv.DictReader(io.StringIO(text.partition("\n")[2])))
    assert [r["assistant_response"] for r in rows] == ["'" + p for p in PAYLOADS]
    assert {r["human_score"] for r in rows} == {"1"}


def test_dashboard_table_csv_has_no_formula_cell():
    table = Table(slug="t", title="t", columns=["name", "n"])
    table.rows = [[Cell(p, p), Cell(-1, "-1")] for p in PAYLOADS]
    text = table.to_csv()
    assert _formula_cells(text) == ["-1"] * len(PAYLOADS)
