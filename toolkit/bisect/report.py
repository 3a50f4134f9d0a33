"""The bisection's answer, as JSON (for tools) and Markdown (for an issue or a PR)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from toolkit.bisect import search
from toolkit.bisect.state import BisectState
from toolkit.bisect.worktree import commit_infos, open_repo


def _q(words: list[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)


def start_command(st: BisectState, good: str, bad: str) -> str:
    """The ``tk bisect start`` that repeats this bisection's settings on another range (``tk
    bisect upstream`` for one that carries a fork's patch stack)."""
    if st.stack is not None:
        words = ["tk", "bisect", "upstream", "--source", st.stack.fork, "--fork", st.stack.tip,
                 "--from", good, "--onto", bad]
    else:
        words = ["tk", "bisect", "start", "--source", st.source, "--good", good, "--bad", bad]
    words += ["--regress", st.regress, "--build-failure", st.build_failure]
    if st.timeout:
        words += ["--timeout", f"{st.timeout:g}", "--on-timeout", st.on_timeout]
    if st.count > 1:
        words += ["--count", str(st.count)]
    words += st.request.flags()
    if st.build_command == "":
        words.append("--no-build")
    elif st.build_command is not None:
        words += ["--build-cmd", st.build_command]
    return _q(words) + " --check " + shlex.quote(st.check_display)


def reproduce_command(st: BisectState) -> str | None:
    """Two probes that show the verdict again: the culprit's parent good, the culprit bad."""
    if not st.culprit:
        return None
    parent = st.commits[st.commits.index(st.culprit) - 1]
    if st.stack is not None:  # tk bisect upstream starts and runs
        return start_command(st, parent, st.culprit)
    return f"{start_command(st, parent, st.culprit)} && tk bisect run --source {shlex.quote(st.source)}"


def pass_hint(st: BisectState) -> dict[str, str] | None:
    """For a workload check, how to see which pass differs between parent and culprit.

    Each dump runs as the check ran: ``tk bisect env`` checks the commit out in the
    bisection's worktree and puts its build in use, and the dump runs in that worktree, so a
    workload file of the tree (and anything the environment names relative to it) is that
    commit's, not the one in the user's checkout. Without a build of tk's (``--no-build``,
    ``--build-cmd``) the environment is the user's, as the check's was: said so.
    """
    if (not st.culprit or st.confirmed is False or len(st.check) < 3
            or Path(st.check[1]).stem not in ("numerics", "speed")):
        return None  # (an unconfirmed culprit is none: nothing to look into)
    args = st.check[2:]
    workload = shlex.quote(args[0])
    target = "llvm"
    for flag in ("--target", "-t"):
        if flag in args[:-1]:
            target = args[args.index(flag) + 1]
    target = shlex.quote(target)
    parent = st.commits[st.commits.index(st.culprit) - 1]
    src = shlex.quote(st.source)
    worktree = shlex.quote(str(st.worktree))

    def dump(sha: str, out: str) -> str:
        return (f'eval "$(tk bisect env {sha[:12]} --source {src})" && (cd {worktree} && '
                f'tk dump-ir {workload} --target {target} -o "$OLDPWD/{out}")')

    hint = {
        # The parent's texts are rendered before the culprit's checkout changes the workload.
        "dump_ir": (f"{dump(parent, 'ir-parent')} && tk dump-ir page ir-parent && "
                    f"{dump(st.culprit, 'ir-culprit')} && "
                    "tk dump-ir compare ir-parent ir-culprit"),
        "passes": (f"(cd {worktree} && tk bisect passes {workload} --target {target} --rev "
                   f"{st.culprit[:12]} --source {src})"),
    }
    if st.build_command is not None:
        hint["note"] = ("tk built nothing for these commits (the check builds): each dump runs "
                        "in the bisection's worktree at that commit, in your environment, as "
                        "the check did; if the check builds or installs TVM, do that before "
                        "each dump")
    return hint


def build(st: BisectState) -> dict[str, Any]:
    patches = st.stack.patches if st.stack else []
    named = [st.good, st.bad, *(s.commit for s in st.steps), *st.culprit_candidates, *patches]
    infos = commit_infos(open_repo(Path(st.source)), named)

    def info(sha: str) -> dict[str, Any]:
        return infos[sha]

    b = search.bounds(st.commits, st.marks)
    steps = []
    for i, s in enumerate(st.steps, 1):
        subject = info(s.commit)["subject"]
        steps.append({
            "n": i, "commit": s.commit, "subject": subject, "phase": s.phase,
            "verdict": s.verdict, "reason": s.reason, "seconds": s.seconds,
            "build_seconds": s.build_seconds, "cache_hit": s.cache_hit, "known": s.known,
            "returncodes": s.returncodes,
        })
    built = [s for s in st.steps if s.cache_hit is False]
    return {
        "source": st.source,
        "status": st.status,
        "stop_reason": st.stop_reason,
        "check": st.check_display,
        "regress": st.regress,
        "range": {"good": info(st.good), "bad": info(st.bad), "commits": len(st.commits) - 1},
        "window": {"good": st.commits[b.lo], "bad": st.commits[b.hi],
                   "untested": len(b.candidates), "skipped": len(b.skipped)},
        "first_bad": info(st.culprit) if st.culprit else None,
        "candidates": [info(c) for c in st.culprit_candidates] if not st.culprit else [],
        "confirmed": st.confirmed,
        # Every build that ran, spare slots' included (states older than slots: the steps').
        "builds": len(st.builds) or len(built),
        "built_ahead": sum(b.prefetch for b in st.builds),
        "build_seconds": round(sum(b.seconds for b in st.builds)
                               or sum(s.build_seconds for s in built), 3),
        "build_spans": [{"commit": b.commit, "slot": b.slot, "started": b.started,
                         "seconds": b.seconds, "ok": b.ok, "prefetch": b.prefetch}
                        for b in st.builds],
        "probes": len(st.steps),
        "known": sum(s.known for s in st.steps),  # verdicts known: nothing built or run
        "steps": steps,
        "reproduce": reproduce_command(st),
        "pass_hint": pass_hint(st),
        "submodules_left": st.submodules_left,
        "stack": None if st.stack is None else {
            "fork": st.stack.fork, "tip": st.stack.tip,
            "patches": [info(sha) for sha in st.stack.patches]},
    }


def markdown(data: dict[str, Any]) -> str:
    rng = data["range"]
    lines = []
    fb = data["first_bad"]
    if fb and data["confirmed"] is False:
        again = ", ".join(f"{s['commit'][:10]} {s['verdict']} ({s['reason']})"
                          for s in data["steps"] if s["phase"] == "confirm")
        lines += ["# The check is flaky - no confirmed culprit", "",
                  f"The search ended at `{fb['hash'][:12]}` (**{fb['subject']}**), but re-run, "
                  f"its parent and it did not say good and bad again ({again}): no culprit "
                  "on this evidence. Run again with --count N: runs that disagree on a commit "
                  "make it a skip.", ""]
    elif fb:
        what = "First upstream commit that breaks the fork" if data.get("stack") else \
            "First bad commit"
        lines += [f"# {what}: {fb['hash'][:12]}", "",
                  f"**{fb['subject']}** — {fb['author']}, {fb['date']}", ""]
    elif data["candidates"]:
        lines += ["# First bad commit: one of these (the others could not be tested)", ""]
        lines += [f"- {c['hash'][:12]} {c['subject']}" for c in data["candidates"]] + [""]
    else:
        lines += [f"# Bisection {data['status']}", ""]
        if data["stop_reason"]:
            lines += [f"Stopped: {data['stop_reason']}", ""]
    lines += [
        f"- Range: good `{rng['good']['hash'][:12]}` ({rng['good']['subject']}) .. bad "
        f"`{rng['bad']['hash'][:12]}` ({rng['bad']['subject']}), {rng['commits']} commits",
        f"- Check: `{data['check']}` (regress: {data['regress']})",
        f"- Builds: {data['builds']} ({data['build_seconds']:.1f} s)"
        + (f", {data['built_ahead']} of them ahead of need in spare slots"
           if data.get("built_ahead") else "")
        + f"; probes: {data['probes']}"
        + (f", of which {data['known']} known from earlier runs" if data["known"] else ""),
    ]
    if data.get("stack"):
        stack = data["stack"]
        n = len(stack["patches"])
        lines.append(f"- Patch stack: the {n} commit{'s' if n != 1 else ''} of the fork "
                     f"`{stack['tip'][:12]}` ({stack['fork']}) applied on every commit probed; "
                     "where they do not apply, the commit is skipped")
    if data.get("submodules_left"):
        lines.append(f"- Submodules never initialised in your checkout, left so at every "
                     f"commit: {', '.join(data['submodules_left'])}")
    if data["confirmed"] is not None:
        lines.append("- Confirmed: " + ("yes, the culprit is bad and its parent good when re-run"
                                        if data["confirmed"] else
                                        "NO - a re-run disagreed; the check may be flaky"))
    lines += ["", "| # | commit | subject | phase | verdict | why | build | s |",
              "|---|---|---|---|---|---|---|---|"]
    for s in data["steps"]:
        build = ("known" if s.get("known") else
                 {True: "store", False: f"{s['build_seconds']:.1f}s", None: "-"}[s["cache_hit"]])
        subject = s["subject"].replace("|", "\\|")[:50]
        lines.append(f"| {s['n']} | `{s['commit'][:10]}` | {subject} | {s['phase']} | "
                     f"{s['verdict']} | {s['reason'].replace('|', '/')} | {build} | "
                     f"{s['seconds']:.1f} |")
    if data["reproduce"]:
        lines += ["", "Reproduce:", "", "```sh", data["reproduce"], "```"]
    if data["pass_hint"]:
        lines += ["", "Which pass changed (IR of parent vs culprit, then pass bisection):", "",
                  "```sh", data["pass_hint"]["dump_ir"], data["pass_hint"]["passes"], "```"]
        if "note" in data["pass_hint"]:
            lines += ["", data["pass_hint"]["note"] + "."]
    return "\n".join(lines) + "\n"
