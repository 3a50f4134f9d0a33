"""``tk fork status``: where a fork stands against its upstream, and what its own commits are.

The merge base, how far upstream has moved on since, and the fork's own commits (those
``git rebase`` would replay) grouped by what they change, each group with its files and
whether ``tk ext`` can carry it out of tree - or why not.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from toolkit.bisect.worktree import commit_infos
from toolkit.fork import repo as forks
from toolkit.fork.classify import Commit, read
from toolkit.fork.rules import GROUPS, KINDS


@dataclass
class ForkStatus:
    source: str
    fork: dict[str, str]  # ref, hash, subject
    upstream: dict[str, str]  # ref, hash, subject
    merge_base: dict[str, str]  # hash, subject, date
    behind: int  # upstream commits the fork lacks
    merges: int  # merge commits of the fork's own (upstream merged in): not replayed
    commits: list[Commit]

    def groups(self) -> list[dict[str, Any]]:
        """The fork's changes by group: files, the commits touching each, and whether all of
        the group's files can move out of tree."""
        found: dict[str, dict[str, Any]] = {}
        for commit in self.commits:
            for c in commit.changes:
                g = found.setdefault(c.group, {"group": c.group, "label": GROUPS[c.group],
                                               "commits": [], "files": {}})
                if commit.hash not in g["commits"]:
                    g["commits"].append(commit.hash)
                f = g["files"].setdefault(c.path, {"path": c.path, "change": c.change,
                                                   "commits": [], "carry": c.carry,
                                                   "why": c.why})
                f["commits"].append(commit.hash)
                if c.carry is False or f["carry"] is None:  # the worst of its commits
                    f["carry"], f["why"] = c.carry, c.why
                if f["change"] != c.change:
                    f["change"] = "modified" if c.change != "deleted" else "deleted"
        out = []
        for name in GROUPS:
            if name not in found:
                continue
            g = found[name]
            files = list(g["files"].values())
            verdicts = [f["carry"] for f in files if f["carry"] is not None]
            carry = None if not verdicts else all(verdicts)
            why = list(dict.fromkeys(f["why"] for f in files if f["carry"] is False))
            out.append({**g, "files": files, "carry": carry, "why_not": why,
                        "kind": KINDS.get(name) if carry else None})
        return out

    def to_json(self) -> dict[str, Any]:
        commits = []
        for c in self.commits:
            kind, why = c.kind()
            commits.append({"hash": c.hash, "subject": c.subject, "author": c.author,
                            "date": c.date, "groups": c.groups, "kind": kind, "kind_why": why,
                            "files": [{k: v for k, v in asdict(ch).items() if k != "added"}
                                      for ch in c.changes]})
        return {"source": self.source, "fork": self.fork, "upstream": self.upstream,
                "merge_base": self.merge_base, "behind": self.behind, "ahead": len(self.commits),
                "merges": self.merges, "groups": self.groups(), "commits": commits}


def status(source: Path | None, upstream: str | None = None, fork_rev: str = "HEAD") -> ForkStatus:
    fork = forks.open_fork(source, fork_rev)
    ref, up = forks.upstream_of(fork, upstream)
    base = forks.merge_base(fork, up, fork.tip)
    info = commit_infos(fork.repo, [fork.tip, up, base])  # the three in one git command
    return ForkStatus(
        source=str(fork.root),
        fork={"ref": fork.tip_ref, "hash": fork.tip, "subject": info[fork.tip]["subject"]},
        upstream={"ref": ref, "hash": up, "subject": info[up]["subject"]},
        merge_base={"hash": base, "subject": info[base]["subject"],
                    "date": info[base]["date"]},
        behind=forks.count(fork, f"{fork.tip}..{up}"),
        merges=forks.count(fork, f"{up}..{fork.tip}", "--merges"),
        commits=read(fork, forks.own_commits(fork, up)),
    )


def render(data: dict[str, Any]) -> str:
    """The status as a person reads it."""
    base = data["merge_base"]
    lines = [f"fork {data['fork']['ref']} ({data['fork']['hash'][:10]}) on upstream "
             f"{data['upstream']['ref']} ({data['upstream']['hash'][:10]})",
             f"merge base {base['hash'][:10]} ({base['date'][:10]}, {base['subject']})",
             f"{data['behind']} upstream commits behind, {data['ahead']} commits of its own"
             + (f" (and {data['merges']} merges of upstream, not replayed)"
                if data["merges"] else "")]
    mark = {"added": "+", "modified": "~", "deleted": "-"}
    for g in data["groups"]:
        carry = {True: f"yes (tk ext new --kind {g['kind']})" if g["kind"] else "yes",
                 False: "no", None: "nothing to carry"}[g["carry"]]
        n = len(g["commits"])
        lines += ["", f"{g['label']}: {n} commit{'s' if n != 1 else ''}, {len(g['files'])} "
                      f"file{'s' if len(g['files']) != 1 else ''}; out of tree: {carry}"]
        for f in g["files"]:
            commits = ",".join(c[:7] for c in f["commits"])
            lines.append(f"  {mark[f['change']]} {f['path']}  [{commits}]"
                         + ("" if f["carry"] is None else f"  {f['why']}"))
    if data["commits"]:
        lines += ["", "commits (oldest first):"]
        for c in data["commits"]:
            how = f"tk fork extract {c['hash'][:10]} --kind {c['kind']}" if c["kind"] else \
                f"stays in the tree: {c['kind_why']}"
            lines.append(f"  {c['hash'][:10]} {c['subject'][:60]}")
            lines.append(f"      {', '.join(c['groups'])}; {how}")
    return "\n".join(lines)
