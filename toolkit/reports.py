"""Reports: a pandas DataFrame inside; CSV, JSON, Markdown, a self-contained HTML page and a
terminal table outside.

Generic on purpose: a report is a DataFrame of rows plus a flat ``header`` (what makes the
numbers comparable) and ``summary`` (the totals). The HTML page embeds its data, CSS and
JavaScript (shipped as package data in ``toolkit/data/report``), so it opens offline, from a
mail attachment or a CI artifact alike.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from toolkit.errors import UserError
from toolkit.outputs import (
    fill,
    html_text,
    probe_writable,
    read_manifest,
    script_json,
    sha256_file,
    write_manifest,
    writing,
)

ASSETS = Path(__file__).parent / "data" / "report"
FORMATS = ("csv", "json", "md", "html")


def parse_formats(text: str) -> list[str]:
    """``"csv,json"`` -> ["csv", "json"]; unknown names are the user's mistake."""

    wanted = [f.strip().lower() for f in text.split(",") if f.strip()]
    unknown = [f for f in wanted if f not in FORMATS]
    if unknown or not wanted:
        raise UserError(
            f"--format {text!r}: expected a comma-separated subset of {','.join(FORMATS)}"
        )
    return wanted


def jsonable(value: Any) -> Any:
    """numpy scalars, NaN and tuples made plain JSON (NaN -> null)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [jsonable(row) for row in df.to_dict(orient="records")]


def to_document(kind: str, header: dict[str, Any], summary: dict[str, Any],
                df: pd.DataFrame, **extra: Any) -> dict[str, Any]:
    """The JSON form every writer starts from; ``from_document`` reads it back."""
    return jsonable({"report": kind, "header": header, "summary": summary,
                     "columns": list(df.columns), "rows": records(df), **extra})


def document_problem(doc: Any, required: Sequence[str] = ()) -> str | None:
    """What makes a report document (read from a file the user names) unusable, or None."""
    if not isinstance(doc, dict):
        return f"the document is a JSON {type(doc).__name__}, not an object"
    for key in ("header", "summary"):
        if not isinstance(doc.get(key, {}), dict):
            return f"'{key}' is not an object"
    columns, rows = doc.get("columns", []), doc.get("rows", [])
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        return "'columns' is not a list of names"
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        return "'rows' is not a list of objects"
    missing = [c for c in required if c not in columns]
    return f"no column {', '.join(missing)}" if missing else None


def from_document(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], pd.DataFrame]:
    df = pd.DataFrame(doc.get("rows", []), columns=doc.get("columns"))
    return doc.get("header", {}), doc.get("summary", {}), df


def _cell(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1e6 else f"{value:.4e}"
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    return str(value)


def markdown_table(df: pd.DataFrame, columns: Sequence[str] | None = None) -> str:
    cols = list(columns or df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df[cols].itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines)


def markdown(title: str, header: dict[str, Any], summary: dict[str, Any],
             df: pd.DataFrame, columns: Sequence[str] | None = None) -> str:
    kv = pd.DataFrame({"key": list(header) + list(summary),
                       "value": [_cell(v) for v in [*header.values(), *summary.values()]]})
    return (f"# {title}\n\n{markdown_table(kv)}\n\n{markdown_table(df, columns)}\n")


def html_page(title: str, doc: dict[str, Any], view: dict[str, Any]) -> str:
    """A self-contained page: the report's data, CSS and JS inline, nothing fetched.

    ``view`` tells the script how to draw: ``columns`` shown, ``sort`` (column, sorted
    descending), ``bar`` (numeric column drawn as a bar per row), ``breakdown`` (column
    grouped into the breakdown chart) and ``label`` (the row's name column).
    """
    return fill((ASSETS / "report.html").read_text(), {
        "{{TITLE}}": html_text(title), "{{CSS}}": (ASSETS / "report.css").read_text(),
        "{{JS}}": (ASSETS / "report.js").read_text(),
        "{{DATA}}": script_json({"doc": doc, "view": view})})


MARKER = ".tk-report"  # in an output directory: the files tk wrote there, with their sha256
MARKER_FORMAT = "tk-report-files/1"


def _written_before(directory: Path) -> dict[str, str]:
    return read_manifest(directory / MARKER, MARKER_FORMAT) or {}


def check_output(directory: Path, stem: str, formats: Sequence[str]) -> None:
    """Refuse, before any work, an output directory where writing would replace a file tk did
    not write (or one edited since), or where nothing can be written."""

    if directory.exists() and not directory.is_dir():
        raise UserError(f"-o {directory}: exists and is not a directory")
    ours = _written_before(directory)
    for fmt in formats:
        path = directory / f"{stem}.{fmt}"
        if os.path.lexists(path) and (path.is_symlink() or not path.is_file()
                                      or ours.get(path.name) != sha256_file(path)):
            raise UserError(f"-o {directory}: {path.name} is there and tk did not write it (or "
                            "it changed since): move it away or pick another directory")
    probe_writable(directory, f"-o {directory}")


def write(
    directory: Path, stem: str, formats: Sequence[str], *, kind: str, title: str,
    header: dict[str, Any], summary: dict[str, Any], df: pd.DataFrame,
    view: dict[str, Any], **extra: Any,
) -> dict[str, Path]:
    """Write the report in each format as ``directory/stem.<ext>``; return the paths.

    A file already there is replaced only when tk wrote it (``.tk-report`` lists what tk
    wrote, by sha256): a user's own ``profile.md`` is never overwritten.
    """
    check_output(directory, stem, formats)
    doc = to_document(kind, header, summary, df, **extra)
    written: dict[str, Path] = {}
    ours = _written_before(directory)
    what = f"-o {directory}"
    # Every format written, or none: each is renamed into place only when all were written.
    with contextlib.ExitStack() as stack:
        temporary = {fmt: stack.enter_context(writing(directory / f"{stem}.{fmt}", what))
                     for fmt in formats}
        for fmt, tmp in temporary.items():
            if fmt == "csv":
                df.to_csv(tmp, index=False)
            elif fmt == "json":
                tmp.write_text(json.dumps(doc, indent=1) + "\n")
            elif fmt == "md":
                tmp.write_text(markdown(title, header, summary, df, view.get("columns")))
            elif fmt == "html":
                tmp.write_text(html_page(title, doc, view))
    for fmt in formats:
        path = directory / f"{stem}.{fmt}"
        written[fmt] = path
        ours[path.name] = sha256_file(path)
    write_manifest(directory / MARKER, MARKER_FORMAT, ours)
    return written


def terminal_table(df: pd.DataFrame, columns: Sequence[str], limit: int | None = None,
                   max_width: int = 48) -> str:
    """A plain aligned table: numbers right-aligned, long text cut with an ellipsis."""
    shown = df if limit is None else df.head(limit)
    cells = [[_cell(v) for v in row] for row in shown[list(columns)].itertuples(index=False)]
    cells = [[c if len(c) <= max_width else c[: max_width - 1] + "…" for c in row]
             for row in cells]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) for c in columns]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric)).rstrip()

    out = [line(list(columns)), line(["-" * w for w in widths])]
    out += [line(r) for r in cells]
    if limit is not None and len(df) > limit:
        out.append(f"... {len(df) - limit} more rows")
    return "\n".join(out)
