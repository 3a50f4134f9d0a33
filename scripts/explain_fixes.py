"""Regenerate the index of fixes whose commit messages quote an error, for ``tk explain``.

    python scripts/explain_fixes.py REPO=GIT_DIR [REPO=GIT_DIR ...] [--out FILE]

e.g. ``apache/tvm=/path/tvm.git tile-ai/tilelang=/path/tilelang.git``. Reads every commit of
each repository (``git log``, first parents and side branches alike; merges left out) and
keeps the fixes (a title, or a description's first paragraph, that says fix, bug, error,
crash, regression, ...) whose title or
description quotes an error message: a line with an exception's name, ``Check failed``, a
compiler's ``error:``, ``undefined reference``, ``CMake Error``, ``No such file``, ... For
each such line it writes, into one gzip'd text file (default
``toolkit/data/explain/fixes.txt.gz``), one row::

    REPO<TAB>REF<TAB>FIRST<TAB>DATE<TAB>TITLE<TAB>SUMMARY<TAB>QUOTE<TAB>RARE<TAB>LEAD<TAB>SCOPE

REF is the pull request (``#19617``, from the squashed title) or the commit's first 12 hex
digits; FIRST the first release tag that contains the commit (the project's own release tags,
as ``scripts/explain_index.py`` reads them; empty when no release has it yet or the project
has no releases); DATE the commit date; SUMMARY what the description says of the cause (the paragraph
under a "Root Cause" heading, else its first paragraph of prose) and, after "The fix: ", what
it says under a "Solution" heading; QUOTE the quoted line, normalised as ``toolkit/explain/fixes.py``
normalises a log's line; RARE the words and runs of three words of QUOTE that at most
``RARE_DF`` commit messages of all the repositories read use, joined by ``|`` (what makes a
quote this fix's and not any failure's); LEAD the prose right above the quote ("otherwise
linking fails with the following error:"), unless it is the SUMMARY; SCOPE ``outside`` for a
change of the project's CI, tests and docs only (the error is met there, the project the
user runs is not changed). The format is read by
``toolkit/explain/fixes.py``; only titles, prose and the quoted lines are kept, no code.

A change whose title has a name in code (``fixes.names_in``: CamelCase too), or names ONNX
(fix or not; reverted ones, reverts and changes of CI, tests and docs only left out) also gets
a row with an empty QUOTE, whose RARE are its title's words (``fixes.title_words``) that at
most ``fixes.TITLE_DF`` titles use (an ONNX change's every word: its operator is often a
common word, ``Split``), and whose SUMMARY is kept for a fix only: ``tk explain`` gives such a
title as a lead (alone where no quote matches, beside a quote when it names what the quote does
not), and lists a converter's changes and those to the function that raised the error
(``fixes.site_changes``).
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from explain_index import POST, Git  # noqa: E402

from toolkit.explain.fixes import (  # noqa: E402
    ERRORISH,
    FRAME,
    TITLE_DF,
    bare_title,
    continued,
    names_in,
    normalise,
    title_words,
    typename,
    words,
)

# The release tags of the projects tk knows; another repository's first release is not told.
RELEASES = {"apache/tvm": r"v\d+\.\d+(?:\.0)?", "apache/tvm-ffi": POST, "tile-ai/tilelang": POST}
FIXLIKE = re.compile(r"fix|bug|error|fail|crash|broken|regress|workaround|compat|missing|"
                     r"correct|hotfix", re.I)
# ... and in a description's first paragraph, where "error" is any quote's word
FIXES = re.compile(r"\bfix(?:es|ed)?\b|\bbug\b|regression|crash|workaround", re.I)
RARE_DF = 3  # commit messages a word may appear in and still tell one fix from another
MIN_QUOTE, MAX_QUOTE = 24, 400  # characters of a normalised quote
# Lines of a traceback the description pasted: every failure prints them, none tells a fix.
# A line of code the description shows (the check that fails, a patch), not what was printed.
CODE = re.compile(r"^\s*(?:[-+]\s*)?(?:assert|raise|if|elif|return|def|throw|[A-Z_]*CHECK\w*\(|"
                  r"LOG\(|TVM_FFI_THROW|ICHECK)\b")
PR = re.compile(r"\(#(\d+)\)\s*$")
# a change of a model importer: its title names the operator it converts ("[ONNX] Fix CumSum
# conversion"), which tk lists for "Error converting operator CumSum"
FRONTEND = re.compile(r"\bonnx\b", re.I)
EXCEPTION_NAME = re.compile(r"\b[A-Za-z_.]*(?:Error|Exception):")


@dataclass
class Commit:
    sha: str
    date: str
    title: str
    body: str
    files: list[str]

    def outside(self) -> bool:
        """It changed only the project's CI, tests and docs, nothing a user builds or runs: it
        did not fix the project for its users (a test script that ran ``python`` 2)."""
        return bool(self.files) and all(OUTSIDE.match(f) for f in self.files)


# what a build or a wheel of the project does not hold
OUTSIDE = re.compile(r"(?:tests?|testing|docker|ci|\.ci|\.github|docs?|jenkins|conda)/|"
                     r"Jenkinsfile|[^/]*\.md$|\.[^/]*$")


def commits(git: Git) -> list[Commit]:
    out = git.run("log", "--no-merges", "--name-only", "--format=%x00%H%x01%cs%x01%s%x01%b%x02")
    found = []
    for block in out.split("\0")[1:]:
        sha, date, title, rest = block.split("\x01", 3)
        body, _, files = rest.partition("\x02")
        found.append(Commit(sha, date, title.strip(), body.strip(), files.split()))
    return found


def first_releases(git: Git, pattern: str | None) -> dict[str, str]:
    """Each commit's first release tag: the oldest release whose history holds it."""
    if pattern is None:
        return {}
    # every release tag, post releases too (a fix first in v0.1.7.post2 is told as that;
    # explain_index's release_versions counts a post release under its first tag)
    tags = [t for t in git.tags() if re.fullmatch(pattern, t)]
    tags.sort(key=lambda t: tuple(int(x) for x in re.findall(r"\d+", t.partition("post")[0]))
              + (int(t.rpartition("post")[2]) if "post" in t else -1,))
    first: dict[str, str] = {}
    for tag in tags:
        for sha in git.run("rev-list", f"refs/tags/{tag}").split():
            first.setdefault(sha, tag)
    return first


CAUSE_HEADING = re.compile(r"^#*\s*\**\s*(?:root cause|cause|why|problem|the problem|issue)\b"
                           r"[^\n]{0,20}$", re.I | re.M)
REMEDY_HEADING = re.compile(r"^#*\s*\**\s*(?:solution|the fix|fix|changes|how)\b[^\n]{0,20}$",
                            re.I | re.M)


def _prose(body: str, start: int, shortest: int) -> str:
    """The first paragraph of prose from ``start`` on (not a quote, a table, a list of
    reviewers or code), at most 300 characters; "" for none."""
    for para in re.split(r"\n\s*\n", body[start:]):
        para = para.partition("```")[0]  # the prose, not the quote it leads to
        text = " ".join(line.strip() for line in para.splitlines()).lstrip("#* ").strip()
        if len(text) >= shortest and not FRAME.match(text) and not text.startswith(
                ("```", "|", "cc ", "Co-authored")):
            return text[:297] + "..." if len(text) > 300 else text
    return ""


def summary(body: str) -> tuple[str, str]:
    """What the description says of the cause (the first paragraph of prose under a "Root
    Cause", "Cause", "Problem", "Issue" or "Why" heading, else its first paragraph of prose),
    and what the fix did (under a "Solution", "Fix" or "Changes" heading; "" without one)."""
    heading = CAUSE_HEADING.search(body)
    cause = (_prose(body, heading.end(), 40) if heading else "") or _prose(body, 0, 40)
    remedy = REMEDY_HEADING.search(body)
    did = _prose(body, remedy.end(), 15) if remedy else ""
    return cause, "" if did in cause else did


def quotes(commit: Commit) -> list[tuple[str, str]]:
    """The lines of the message that quote an error, normalised (each alone, and with the
    lines that go on with it), each with the prose that leads to it."""
    title = bare_title(commit.title)
    found: dict[str, str] = {}
    lines = commit.body.splitlines()
    for i, line in [(-1, title), *enumerate(lines)]:
        if FRAME.match(line) or CODE.match(line) or not ERRORISH.search(line):
            continue
        # the line, and the message as it goes on in the description (wrapped as a paste is);
        # and from an exception's name on, when words came before it ("Fix operator
        # Transpose: TVMError: PermuteDims expects ...")
        goes_on = continued(lines, i) if i >= 0 else [line]
        named = EXCEPTION_NAME.search(line)
        own = [normalise(line[named.start():])] if named and named.start() else []
        for quote in (normalise(line), normalise(" ".join(goes_on)), *own):
            if MIN_QUOTE <= len(quote) <= MAX_QUOTE and quote not in found:
                found[quote] = leading(lines, i)
    return list(found.items())


def leading(lines: list[str], i: int) -> str:
    """The prose right above line ``i`` ("... otherwise linking fails with the following
    error:"): the lines of its paragraph above it, else the paragraph before; "" for none."""
    above: list[str] = []
    for line in reversed(lines[:max(i, 0)]):
        text = line.strip()
        if not text:
            if above:
                break
            continue
        if text.startswith("```") or FRAME.match(line):
            if above:
                break
            continue
        above.insert(0, text)
    text = " ".join(above).lstrip("#* ").strip()
    return "" if len(text) < 40 else text[:297] + "..." if len(text) > 300 else text


def _row(*cells: str) -> str:
    """One row of the file: its cells, tabs inside them made spaces."""
    return "\t".join(c.replace("\t", " ") for c in cells)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", help="OWNER/NAME=GIT_DIR")
    parser.add_argument("--out", default=str(ROOT / "toolkit" / "data" / "explain" /
                                             "fixes.txt.gz"))
    args = parser.parse_args()
    started = time.time()
    read: list[tuple[str, Commit, dict[str, str]]] = []
    df: Counter[str] = Counter()
    for spec in args.repos:
        repo, _, git_dir = spec.partition("=")
        if not git_dir or not Path(git_dir).exists():
            print(f"explain_fixes: not OWNER/NAME=GIT_DIR with a git directory: {spec}",
                  file=sys.stderr)
            return 2
        git = Git(git_dir)
        releases = first_releases(git, RELEASES.get(repo))
        for commit in commits(git):
            df.update(set(words(normalise(f"{commit.title}\n{commit.body}"))))
            read.append((repo, commit, releases))
    # A fix later reverted is not in the project (and the revert quotes its title again).
    reverted = {PR.sub("", m.group(1)).strip() for _, c, _ in read
                if (m := re.match(r'Revert "(.*)"', c.title))}
    titled = Counter(w for _, c, _ in read for w in title_words(c.title))
    rows = []
    for repo, commit, releases in read:
        cause, did = summary(commit.body)
        about = f"{cause} The fix: {did}" if did else cause
        if commit.title.startswith("Revert") or PR.sub("", commit.title).strip() in reverted:
            continue
        # a fix by its title, or by the first paragraph of its description ("... fixes for
        # tvm_rpc backend pickups")
        fix = bool(FIXLIKE.search(commit.title) or FIXES.search(cause))
        pr = PR.search(commit.title)
        ref = f"#{pr.group(1)}" if pr else commit.sha[:12]
        # (an importer's change by every word: its operator's name is a common word, Split)
        told = sorted(w for w in title_words(commit.title)
                      if titled[w] <= TITLE_DF or FRONTEND.search(commit.title))
        if (set(told) & names_in(commit.title) or FRONTEND.search(commit.title)) \
                and not commit.outside():
            rows.append(_row(repo, ref, releases.get(commit.sha, ""), commit.date, commit.title,
                             about if fix else "", "", "|".join(told), "", ""))
        if not fix:
            continue
        for quote, lead in quotes(commit):
            rare = sorted({w for w in words(quote) if df[w] <= RARE_DF and not typename(w)})
            if rare:
                rows.append(_row(repo, ref, releases.get(commit.sha, ""), commit.date,
                                 commit.title, about, quote, "|".join(rare),
                                 "" if lead == cause else lead,
                                 "outside" if commit.outside() else ""))
    Path(args.out).write_bytes(gzip.compress(("\n".join(rows) + "\n").encode(),
                                             compresslevel=9, mtime=0))
    print(f"{len(read)} commits, {len(rows)} rows ({sum(r.split(chr(9))[6] == '' for r in rows)} "
          f"titles); {Path(args.out).stat().st_size / 1e3:.0f}"
          f" KB; {time.time() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
