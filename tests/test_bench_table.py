"""`make bench`'s table (benchmarks/run_all.py) from the scripts' last JSON lines; no timing here."""
from __future__ import annotations

import json

from benchmarks.run_all import Outcome, discover, figures_line, format_table, table_rows

FIGURES = {"bench": "coldstart", "rows": [
    {"metric": "cardfit ask over python -c pass", "value": 120.4, "unit": "ms", "target": "<= 150 ms", "ok": True},
    {"metric": "questions/s", "value": 16234.0, "unit": "1/s", "target": ">= 15,000", "ok": False},
    {"metric": "python -c pass", "value": 31.0, "unit": "ms", "target": "", "ok": None},
]}


def test_the_last_json_line_is_the_figures():
    stdout = "words first\n{\"not\": \"the last line\"}\n" + json.dumps(FIGURES) + "\n\n"
    assert figures_line(stdout) == FIGURES
    assert figures_line("no figures at all\n") is None
    assert figures_line(json.dumps(FIGURES) + "\ntext after it\n") is None  # only the LAST line counts
    assert figures_line('{"bench": "x"}') is None  # no rows
    assert figures_line("") is None


def test_table_rows_per_figure_and_a_row_for_a_script_without_any():
    outcomes = [Outcome("bench_coldstart", 0, "text\n" + json.dumps(FIGURES), 1.0),
                Outcome("bench_chart", 0, "only words\n", 1.0),
                Outcome("bench_bot", 1, "Traceback ...\n", 1.0)]
    rows = table_rows(outcomes)
    assert rows[:3] == [
        ("coldstart", "cardfit ask over python -c pass", "120.4", "ms", "<= 150 ms", "yes"),
        ("coldstart", "questions/s", "16,234", "1/s", ">= 15,000", "NO"),
        ("coldstart", "python -c pass", "31.0", "ms", "", "-"),
    ]
    assert rows[3] == ("chart", "no figures", "-", "", "", "-")
    assert rows[4] == ("bot", "crashed (exit 1)", "-", "", "", "NO")
    table = format_table(rows).splitlines()
    assert table[0].split() == ["bench", "metric", "value", "unit", "target", "ok"]
    assert len(table) == 2 + len(rows) and "no figures" in table[5]


def test_every_bench_script_is_found():
    names = discover()
    assert "bench_coldstart" in names and "bench_chart" in names and names == sorted(names)
