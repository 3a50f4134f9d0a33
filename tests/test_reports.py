"""toolkit.reports: any DataFrame to CSV/JSON/Markdown/HTML and a terminal table."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from toolkit import reports
from toolkit.errors import UserError


def _frame() -> pd.DataFrame:
    return pd.DataFrame({
        "name": ["b</script>x", "a|pipe", "c"],
        "kind": ["x", "y", "x"],
        "value": [2.5, 10.0, float("nan")],
        "count": [1, 2, 3],
    })


def test_all_formats_round_trip(tmp_path: Path) -> None:
    df = _frame()
    view = {"columns": ["name", "value", "count"], "sort": "value", "bar": "value",
            "breakdown": "kind", "label": "name"}
    paths = reports.write(tmp_path, "r", reports.FORMATS, kind="demo", title="Demo <1>",
                          header={"tool": "t"}, summary={"total": 12.5}, df=df, view=view)
    assert sorted(paths) == sorted(reports.FORMATS)
    doc = json.loads(paths["json"].read_text())
    header, summary, back = reports.from_document(doc)
    assert header == {"tool": "t"} and summary == {"total": 12.5}
    assert back["name"].tolist() == df["name"].tolist()
    assert back["value"].iloc[2] is None or pd.isna(back["value"].iloc[2])  # NaN -> null
    assert pd.read_csv(paths["csv"])["count"].tolist() == [1, 2, 3]
    md = paths["md"].read_text()
    assert md.startswith("# Demo <1>") and "a\\|pipe" in md and "| total | 12.5 |" in md
    page = paths["html"].read_text()
    assert "</script>x" not in page and "\\u003c/script\\u003ex" in page  # data cannot end the script
    assert "Demo &lt;1&gt;" in page


def test_html_draws_sorted_rows_and_bars(tmp_path: Path, browser) -> None:
    view = {"columns": ["name", "value"], "sort": "value", "bar": "value",
            "breakdown": "kind", "label": "name"}
    path = reports.write(tmp_path, "r", ["html"], kind="demo", title="Demo", header={},
                         summary={}, df=_frame(), view=view)["html"]
    dom = browser.dom(path)
    order = [n for n in ("a|pipe", "b&lt;/script&gt;x", "c") if n in dom]
    assert len(order) == 3
    assert dom.index('data-name="a|pipe"') < dom.index('data-name="b&lt;/script&gt;x"')
    assert 'style="width:100.00%"' in dom and 'data-rendered="3"' in dom


def test_terminal_table_and_formats() -> None:
    text = reports.terminal_table(_frame(), ["name", "value", "count"], limit=2)
    lines = text.splitlines()
    assert lines[0].split() == ["name", "value", "count"]
    assert len(lines) == 5 and lines[-1] == "... 1 more rows"
    assert reports.parse_formats("CSV, html") == ["csv", "html"]
    with pytest.raises(UserError):
        reports.parse_formats("csv,pdf")
