"""``tk fork rebase-check --onto REF``: the fork's patches replayed on a newer upstream, patch
by patch, in tk's own worktree - then, when every one applies, built and checked there.

Each patch applies, conflicts (with the files) or becomes empty (upstream has its change
already: ``git rebase`` drops it). A conflicting patch is left out and the ones after it are
tried on what applied so far, so one conflict does not hide the next. The check runs through
commit bisection's own step (``toolkit.bisect``): the build through the store, the verdict
remembered - a later ``tk bisect upstream`` onto the same REF knows its bad end.
"""

from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from toolkit import events as ev
from toolkit.bisect import patches as stack_mod
from toolkit.bisect import session
from toolkit.bisect.state import BisectState, Stack, Step
from toolkit.bisect.worktree import Worktree
from toolkit.builds.recipes import Request
from toolkit.errors import UserError
from toolkit.fork import repo as forks


@dataclass
class RebaseCheck:
    source: str
    fork: dict[str, str]  # ref, hash
    onto: dict[str, str]  # ref, hash, subject
    merge_base: str
    patches: list[stack_mod.Applied]
    commit: str | None  # the replayed tip in tk's repository; None when a patch conflicts
    worktree: str  # where it is checked out
    check: str | None  # as the user gave it; None: no check asked for
    step: Step | None  # the check's run on the replayed tip, when it ran

    @property
    def ok(self) -> bool:
        """Every patch applies (or is already upstream), and the check, if any, passed."""
        return self.commit is not None and (self.step is None or self.step.verdict == "good")

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        data["conflicts"] = sum(p.status == stack_mod.CONFLICT for p in self.patches)
        data["empty"] = sum(p.status == stack_mod.EMPTY for p in self.patches)
        return data


def check_words(check: str | None, workload: str | None, target: str) -> list[str]:
    """The check as ``tk bisect start`` takes it: a command, or a workload's numerics."""
    if check and workload:
        raise UserError("give --check CMD or a WORKLOAD, not both")
    if workload is not None:
        return ["numerics", workload, "--target", target]
    return [check] if check else []


def rebase_check(source: Path | None, onto: str, fork_rev: str = "HEAD",
                 check: list[str] | None = None, request: Request | None = None,
                 build_cmd: str | None = None, no_build: bool = False,
                 timeout: float | None = None, events: ev.Handler = ev.ignore) -> RebaseCheck:
    from toolkit.bisect import checks
    from toolkit.bisect.artifacts import choose_command

    fork = forks.open_fork(source, fork_rev)
    onto_sha = fork.resolve(onto, "--onto")
    base = forks.merge_base(fork, onto_sha, fork.tip)
    patches = forks.own_commits(fork, onto_sha)
    argv, display = checks.resolve(check, fork.root) if check else ([], None)
    own = forks.own_repo(fork)
    st = BisectState(source=own.working_tree_dir, good=base, bad=onto_sha,
                     commits=[base, onto_sha], check=argv, check_display=display or "",
                     timeout=timeout, request=request or Request(),
                     build_command=choose_command(own, onto_sha, build_cmd, no_build)
                     if check else "",
                     stack=Stack(patches, str(fork.root), fork.tip))
    wt = Worktree(own, forks.home(fork) / "rebase" / "worktree")
    step = None
    with session.locked(st):
        wt.checkout(onto_sha)
        done = stack_mod.replay(wt.path, onto_sha, patches, keep_going=True)
        session.stacks_of(st, own).put(done)  # the probe below checks out what this made
        if done.commit is not None:
            wt.checkout(done.commit)
            if check:
                step = session.bisector(st, events, prefetch=False, worktree=wt.path).probe(
                    onto_sha, "rebase")
    return RebaseCheck(
        source=str(fork.root), fork={"ref": fork.tip_ref, "hash": fork.tip},
        onto={"ref": onto, "hash": onto_sha, "subject": fork.subject(onto_sha)},
        merge_base=base, patches=done.patches, commit=done.commit, worktree=str(wt.path),
        check=display, step=step)


def render(data: dict[str, Any]) -> str:
    n = len(data["patches"])
    lines = [f"replaying the {n} commit{'s' if n != 1 else ''} of {data['fork']['ref']} "
             f"({data['fork']['hash'][:10]}) onto {data['onto']['ref']} "
             f"({data['onto']['hash'][:10]}, {data['onto']['subject']})"]
    for i, p in enumerate(data["patches"], 1):
        status = p["status"]
        if status == stack_mod.CONFLICT:
            status += " in " + ", ".join(p["files"])
        elif status == stack_mod.EMPTY:
            status += " (upstream has its change: dropped)"
        lines.append(f"  {i:2}. {p['patch'][:10]} {p['subject'][:60]}: {status}")
    if data["commit"] is None:
        lines.append(f"{data['conflicts']} of {n} patches conflict: resolve them (git rebase "
                     f"{data['onto']['ref']}), or drop them; the others applied on what came "
                     "before")
        if data["check"]:
            lines.append(f"check not run: the fork does not apply whole ({data['check']})")
        return "\n".join(lines)
    lines.append(f"every patch applies: {data['commit'][:10]} in {data['worktree']}")
    step = data["step"]
    if step is not None:
        build = ("known" if step["known"] else
                 {True: "from the store", False: f"built in {step['build_seconds']:.1f}s",
                  None: "none"}[step["cache_hit"]])
        lines.append(f"check {data['check']}: {step['verdict']} ({step['reason']}; build: "
                     f"{build})")
        if step["verdict"] != "good" and step["output_tail"]:
            lines += ["  " + line for line in step["output_tail"].splitlines()[-10:]]
        if step["verdict"] == "bad":
            lines.append(f"next: tk bisect upstream --source {shlex.quote(data['source'])} "
                         f"--onto {shlex.quote(data['onto']['ref'])} --check "
                         f"{shlex.quote(data['check'])} names the upstream commit that breaks it")
    return "\n".join(lines)
