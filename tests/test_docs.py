"""Every example session in README.md and docs/ is run, and must print what it shows.

``tests/doc_sessions.py`` says how a session is written (``console`` blocks, ``[..]`` and
``...`` for what differs between runs, ``doc-session`` comments). An example that drifts from
what tk prints fails here, naming its file and line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from doc_sessions import Session, matches, sessions

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SESSIONS = [s for page in PAGES for s in sessions(page)]
# A session's PATH: this interpreter's scripts (tk, and the test extra's cmake and ninja) first.
SESSION_PATH = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def run_session(session: Session, where: Path) -> list[tuple[str, list[str], list[str]]]:
    """Run each command of ``session`` in ``where``; (command, expected, actual) per step."""
    for name in session.files:
        src = REPO / name
        dst = where / Path(name).name
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copy(src, dst)
    env = dict(os.environ)
    env.pop("TK_DEBUG", None)
    env.update({
        "PATH": SESSION_PATH,
        "PYTHONPATH": os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])]),
        "TK_CACHE": str(where / ".tk-cache"), "COLUMNS": "100", "NO_COLOR": "1",
    })
    out = []
    for step in session.steps:
        proc = subprocess.run(["sh", "-c", step.command], cwd=where, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900)
        out.append((step.command, step.expected, proc.stdout.splitlines()))
    return out


@pytest.mark.parametrize("session", SESSIONS, ids=[s.name for s in SESSIONS])
def test_an_example_session_prints_what_it_shows(session: Session, tmp_path: Path):
    if session.skip:
        pytest.skip(session.skip)
    missing = [p for p in session.needs if shutil.which(p, path=SESSION_PATH) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}, not found here")
    for command, expected, actual in run_session(session, tmp_path):
        assert matches(expected, actual), (
            f"{session.name}: $ {command}\n--- shown:\n" + "\n".join(expected)
            + "\n--- printed:\n" + "\n".join(actual))


def test_every_page_is_read_and_the_readme_has_sessions():
    assert any(s.path.name == "README.md" for s in SESSIONS)
    assert all(s.steps for s in SESSIONS), [s.name for s in SESSIONS if not s.steps]


def test_an_edited_example_fails(tmp_path: Path):
    """The README's first session, run, then its shown output changed by one character: the
    comparison that passes on the real output must fail on the edited one."""
    first = next(s for s in SESSIONS if s.path.name == "README.md" and not s.skip)
    command, expected, actual = run_session(first, tmp_path)[0]
    assert matches(expected, actual)
    line = next(i for i, text in enumerate(expected) if text.strip() and text != "...")
    edited = [*expected[:line], expected[line].replace(expected[line][-1], "#", 1)
              if expected[line][-1] != "#" else expected[line] + "!", *expected[line + 1:]]
    assert not matches(edited, actual)


LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_a_page_points_only_inside_the_repository(page: Path):
    """Every relative link names a file or folder of this checkout, and no page names the
    machine the docs were written on (/work/...) or the fixtures beside the checkout."""
    text = page.read_text()
    for outside in ("/work/", "../shared", "shared/fixtures"):
        assert outside not in text, f"{page.name} names {outside}"
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:|#", target):
            continue
        path = (page.parent / target.split("#")[0]).resolve()
        assert path.is_relative_to(REPO) and path.exists(), f"{page.name} links {target}"


MAN_SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES",
                "SEE ALSO"]


@pytest.mark.parametrize("page", sorted((REPO / "docs").glob("tk-*.md")), ids=lambda p: p.name)
def test_a_command_page_is_a_man_page(page: Path):
    """A command's page has a man page's sections, in a man page's order."""
    headings = [line[3:].strip() for line in page.read_text().splitlines()
                if line.startswith("## ")]
    assert [h for h in headings if h in MAN_SECTIONS] == MAN_SECTIONS, headings


def test_a_continued_command_is_one_command(tmp_path: Path):
    """A trailing backslash continues a command on the next line, as the shell reads it."""
    page = tmp_path / "page.md"
    page.write_text("```console\n$ echo one \\\n    two\none two\n```\n")
    [session] = sessions(page)
    assert [step.command for step in session.steps] == ["echo one \\\n    two"]
    [(_, expected, actual)] = run_session(session, tmp_path)
    assert matches(expected, actual), actual


@pytest.mark.parametrize("expected, actual, ok", [
    (["ran x in [..] ms"], ["ran x in 0.3 ms"], True),
    (["ran x in [..] ms"], ["ran y in 0.3 ms"], False),
    (["a", "...", "z"], ["a", "b", "c", "z"], True),
    (["a", "...", "z"], ["a", "z"], True),
    (["a", "...", "z"], ["a", "b"], False),
    (["a"], ["a", "extra"], False),
])
def test_wildcards(expected, actual, ok):
    assert matches(expected, actual) is ok
