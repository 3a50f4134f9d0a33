"""A fork's commits read file by file: what each change is (``rules``) and whether ``tk ext``
can carry it out of tree, or why not.

What decides it is the change itself, from ``git show``: a file the fork added is its own
code and can move; a file of upstream's the fork only added lines to (a declaration, a
registration, a wrapper) can move too - the additions go into the extension; a file of
upstream's whose lines the fork changed or removed cannot: an extension only adds to the TVM
it is loaded into. Some places cannot move whatever the change: the IR itself (every pass,
printer and parser sees it), core headers, operators (tk ext has no kind for them),
TVM's core C++.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from toolkit.fork.repo import Fork
from toolkit.fork.rules import ALONG, GROUPS, KINDS, PATHS, SIGNALS, WEAK

ADDED, MODIFIED, DELETED = "added", "modified", "deleted"
_PATHS = [(re.compile(pattern), group) for pattern, group in PATHS]
_SIGNALS = [(re.compile(pattern), group) for pattern, group in SIGNALS]
_DIFF = re.compile(r"^diff --git a/(.*) b/(.*)$")
NEW = {"python": "a new module", "passes": "the fork's own pass code",
       "codegen": "the fork's own code generator or target", "runtime": "the fork's own runtime code"}


@dataclass
class Change:
    """One file of one commit: how it changed and what that means out of tree."""

    path: str
    change: str  # ADDED, MODIFIED or DELETED
    added: list[str] = field(default_factory=list)  # the lines it adds
    removed: int = 0  # lines it removes or changes
    binary: bool = False
    gitlink: bool = False  # a submodule's recorded commit
    group: str = "other"
    carry: bool | None = None  # None: not code, nothing to carry
    why: str = ""


@dataclass
class Commit:
    hash: str
    subject: str
    author: str
    date: str
    changes: list[Change]

    @property
    def groups(self) -> list[str]:
        return sorted({c.group for c in self.changes}, key=list(GROUPS).index)

    def kind(self) -> tuple[str | None, str]:
        """The ``tk fork extract --kind`` that moves this commit out of tree, or None and
        why not."""
        return kind_of(self.changes)


def group_of(path: str, added: list[str]) -> str:
    group = next(g for pattern, g in _PATHS if pattern.search(path))
    if group in WEAK and path.endswith((".cc", ".cpp", ".h", ".py")):
        text = "\n".join(added)
        for pattern, signal in _SIGNALS:
            if pattern.search(text):
                return signal
    return group


def verdict(c: Change) -> tuple[bool | None, str]:
    """Whether tk ext can carry ``c`` out of tree, and why (or why not)."""
    header = c.path.startswith("include/") and c.path.endswith((".h", ".hpp"))
    only_adds = c.change == MODIFIED and c.removed == 0 and not c.binary
    if c.group == "other":
        return None, "not code"
    if c.group == "tests":
        return True, "moves to the extension's tests/"
    if c.change == DELETED:
        return False, "deletes upstream's file: an extension can only add to the TVM it loads into"
    if c.group == "build":
        if c.gitlink:
            return False, "moves a submodule: a build setting of the tree itself"
        if c.change == ADDED or only_adds:
            return True, "the extension's own CMakeLists.txt builds its sources"
        return False, "changes how the tree itself builds"
    if c.group == "ir":
        return False, ("changes the IR itself (its nodes and the code that defines them): "
                       "every pass, printer and parser of the tree sees it; tk ext carries "
                       "passes, targets and runtimes, not IR")
    if c.group == "ops":
        return False, "an operator or legalization: tk ext has no kind for ops"
    if c.group == "core":
        return False, "changes TVM's core C++: only the tree can carry it"
    if c.change == ADDED:
        what = NEW[c.group]
        where = (f"a tk ext new --kind {KINDS[c.group]} extension" if c.group in KINDS
                 else "an extension's package")
        return True, f"{what}: moves into {where}"
    if header and c.group != "passes":
        return False, ("changes a core header: an extension compiles against upstream's "
                       "headers")
    if only_adds and c.path.endswith(".py"):
        return True, ("only adds to upstream's module (names: functions, wrappers, imports): "
                      "the extension adds them there when it is imported")
    if only_adds and header:
        return True, ("only adds declarations to upstream's header: the extension's sources "
                      "define what they declare")
    if only_adds:
        return False, ("adds code inside upstream's file: it builds only with the rest of that "
                       "file; move it into a file of its own in the fork first")
    return False, (f"edits upstream's own code ({c.removed} line{'s' if c.removed != 1 else ''}"
                   " changed or removed): an extension can only add; carry it as a copy "
                   "under a new name")


def kind_of(changes: list[Change]) -> tuple[str | None, str]:
    """The scaffold kind that carries these changes out of tree, or None and why not."""
    stuck = [c for c in changes if c.carry is False]
    if stuck:
        return None, f"{stuck[0].path}: {stuck[0].why}"
    kinds = {KINDS[c.group] for c in changes if c.group in KINDS}
    if not kinds:
        if any(c.group == "python" for c in changes):
            return "pass", "Python only: a pass extension's package carries it"
        return None, "nothing of a pass, a target or a runtime"
    if len(kinds) > 1:
        # A device is a target: its code generator and its runtime go together.
        if kinds == {"target", "runtime"}:
            return "target", "a target with its device runtime"
        return None, f"changes of several kinds ({', '.join(sorted(kinds))}): extract each"
    kind = kinds.pop()
    if not all(c.group in KINDS or c.group in ALONG for c in changes):
        return None, "changes beyond its kind"
    return kind, f"{GROUPS[next(g for g, k in KINDS.items() if k == kind)]}"


def parse(text: str) -> list[Change]:
    """The files of ``git show --format= --unified=0 --no-renames`` output."""
    changes: list[Change] = []
    current: Change | None = None
    in_hunk = False  # past the file's header: every +/- line is content
    for line in text.splitlines():
        m = _DIFF.match(line)
        if m:
            current = Change(path=m.group(2), change=MODIFIED)
            changes.append(current)
            in_hunk = False
            continue
        if current is None:
            continue
        if line.startswith("@@"):
            in_hunk = True
        elif not in_hunk:
            if line.startswith("new file mode"):
                current.change = ADDED
            elif line.startswith("deleted file mode"):
                current.change = DELETED
            elif line.startswith("Binary files"):
                current.binary = True
        elif line.startswith("+"):
            current.added.append(line[1:])
            current.gitlink = current.gitlink or line.startswith("+Subproject commit")
        elif line.startswith("-"):
            current.removed += 1
            current.gitlink = current.gitlink or line.startswith("-Subproject commit")
    for c in changes:
        if c.change == DELETED:
            c.added, c.removed = [], 0
        c.group = group_of(c.path, c.added)
        c.carry, c.why = verdict(c)
    return changes


def read(fork: Fork, shas: list[str]) -> list[Commit]:
    """Each commit of ``shas`` with its changes (one git command per commit)."""
    from toolkit.bisect.worktree import commit_infos

    infos = commit_infos(fork.repo, shas)
    commits = []
    for sha in shas:
        diff = fork.repo.git("show", "--format=", "--unified=0", "--no-renames", "--no-color",
                             "--no-ext-diff", sha)
        info = infos[sha]
        commits.append(Commit(sha, info["subject"], info["author"], info["date"], parse(diff)))
    return commits
