"""The one record of a commit bisection, saved as JSON after every step.

It lives in ``$TK_CACHE/bisect/<id>/state.json`` (default cache ``~/.cache/tk``), where
``<id>`` is derived from the source repository's path, so one bisection per repository
runs at a time and an interrupted one (Ctrl-C, a crash, a reboot) is picked up again by
``tk bisect run``. Nothing is ever written into the user's repository except git's own
worktree bookkeeping (``.git/worktrees/``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.builds.recipes import Request
from toolkit.errors import UserError
from toolkit.paths import cache_root

FORMAT = 3  # 3: a patch stack applied at every probe; 2: the build request as a Request
READS = (2, 3)  # a format-2 state is one without a patch stack


def state_dir(source: Path) -> Path:
    """Where the bisection of the repository at ``source`` keeps its state and worktree."""
    digest = hashlib.sha256(str(source.resolve()).encode()).hexdigest()[:16]
    return cache_root() / "bisect" / f"{source.resolve().name}-{digest}"


@dataclass
class Step:
    """One commit probed: built (or found in the store), then checked ``count`` times."""

    commit: str  # full sha
    phase: str  # "good-end", "bad-end", "search", "confirm" or "manual"
    verdict: str  # good / bad / skip / stop
    reason: str  # why: "exit 1", "build failed", "flaky: 1 good, 1 bad in 2 runs", ...
    seconds: float = 0.0  # whole step: checkout + build + check runs
    build_seconds: float = 0.0
    cache_hit: bool | None = None  # build reused from the artifact store; None: no build
    build_key: str | None = None  # artifact-store key of the build used
    returncodes: list[int | None] = field(default_factory=list)  # one per run; None: timeout
    output_tail: str = ""  # last lines of the last run's output
    log: str | None = None  # build log path, when a build ran
    known: bool = False  # the verdict was known from earlier runs: nothing was built or run


@dataclass
class BuildSpan:
    """One build that ran (the store did not serve it): the step's own in slot 0, or one a
    spare slot built ahead of need; spans that overlap ran at the same time."""

    commit: str
    slot: int
    started: float  # wall clock, time.time()
    seconds: float
    ok: bool
    prefetch: bool = False


@dataclass
class Stack:
    """Patches applied on top of every commit probed (``toolkit.bisect.patches``): a fork's own
    commits, when ``tk bisect upstream`` bisects the upstream range under them."""

    patches: list[str]  # full shas, oldest first
    fork: str  # the repository they come from (the user's; only read)
    tip: str  # the fork's commit whose patches they are


@dataclass
class BisectState:
    """Everything needed to continue, report or reproduce a commit bisection."""

    source: str  # the user's repository (absolute); only read, never modified
    good: str  # full sha the user called good
    bad: str  # full sha the user called bad
    commits: list[str]  # good .. bad along the first-parent ancestry path, oldest first
    check: list[str]  # argv of the check, run in the worktree in the build's environment
    check_display: str  # the check as the user wrote it, for messages and the report
    regress: str = "error"  # what "bad" means: error | success | crash | match:REGEX
    build_failure: str = "skip"  # verdict for a commit that does not build: skip | bad
    timeout: float | None = None  # seconds per check run; None: no limit
    on_timeout: str = "skip"  # verdict for a check run that timed out: skip | bad | good
    count: int = 1  # runs per probe; disagreement between them is flaky (skip)
    parallel: int | None = None  # build slots (--parallel); None: 1, plus prefetch by rule
    recheck: bool = False  # run every check, even where its verdict is known
    request: Request = field(default_factory=Request)  # the build, as tk build takes it
    # How a step builds: None = tk build through the artifact store (TVM trees); a shell
    # command = run in the worktree, incrementally (other trees); "" = the check builds.
    build_command: str | None = None
    # Submodules the ends record that the user never initialised: left so at every checkout.
    submodules_left: list[str] = field(default_factory=list)
    stack: Stack | None = None  # patches applied at every probe; None: the commits as they are
    marks: dict[str, str] = field(default_factory=dict)  # sha -> good/bad/skip (latest)
    steps: list[Step] = field(default_factory=list)  # every probe, in the order run
    builds: list[BuildSpan] = field(default_factory=list)  # every build that ran, any slot
    current: str | None = None  # sha checked out in the worktree (for manual marking)
    status: str = "started"  # started | running | done | stopped
    stop_reason: str | None = None  # why the last run stopped short of an answer
    culprit: str | None = None  # first bad commit, once found
    culprit_candidates: list[str] = field(default_factory=list)  # when skips leave several
    confirmed: bool | None = None  # culprit bad and its parent good when re-run
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    format: int = FORMAT

    @property
    def directory(self) -> Path:
        return state_dir(Path(self.source))

    @property
    def worktree(self) -> Path:
        return self.directory / "worktree"

    def save(self) -> Path:
        """Write atomically: a kill mid-write leaves the previous state, never half of one."""
        self.updated = time.time()
        path = self.directory / "state.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        data = {**dataclasses.asdict(self), "request": self.request.to_json()}
        tmp.write_text(json.dumps(data, indent=2))
        os.replace(tmp, path)
        return path

    def record(self, step: Step) -> None:
        self.steps.append(step)
        if step.verdict != "stop":
            self.marks[step.commit] = step.verdict
        if not step.known:  # a known verdict is found again at once after a kill: no write
            self.save()

    def short(self, sha: str) -> str:
        return sha[:10]


class CorruptState(UserError):
    """state.json cannot be read back: every command but reset refuses, and says so."""


def load(source: Path) -> BisectState | None:
    path = state_dir(source) / "state.json"
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
        written = data.get("format") if isinstance(data, dict) else None
        if isinstance(written, int) and written not in READS:
            raise CorruptState(f"the bisection state {path} was written by another version of "
                               f"tk (format {written}, this tk reads "
                               f"{' and '.join(map(str, READS))}): "
                               "'tk bisect reset' drops it")
        data["steps"] = [Step(**s) for s in data.get("steps", [])]
        data["builds"] = [BuildSpan(**b) for b in data.get("builds", [])]
        data["request"] = Request.from_json(data.get("request", {}))
        data["stack"] = Stack(**data["stack"]) if data.get("stack") else None
        data["format"] = FORMAT  # saved again, it is written as this tk writes it
        known = {f.name for f in dataclasses.fields(BisectState)}
        st = BisectState(**{k: v for k, v in data.items() if k in known})
        if not (isinstance(st.commits, list) and st.commits and isinstance(st.marks, dict)
                and isinstance(st.check, list)):
            raise TypeError("commits, marks or check of the wrong kind")
    except (OSError, ValueError, TypeError, AttributeError, KeyError) as e:
        raise CorruptState(f"the bisection state {path} is corrupt ({type(e).__name__}: "
                           f"{str(e)[:120]}): 'tk bisect reset' drops it") from None
    return st
