"""The compile cache a team shares (ccache's remote storage), and what one build got from
ccache.

tk compiles through ccache where it is installed (``backends/native.py``: ``ccache_args``),
with paths relative to the directory that holds the tree and its build directory and the
working directory left out of the hash, so the same sources at another path hit. ccache >= 4.4
also reads and writes a *remote storage* that many machines share (redis, http, a directory):
a machine with an empty local cache then gets what the others compiled. tk hands the team's
URL to ccache in the environment of the compile only: never on a command line it records,
never in a log (a redis password may be in the URL).

Every build through ccache has ccache write its per-compile stats log (``CCACHE_STATSLOG``)
into the build's store entry, and ``read_stats`` counts that: the hit rate of this build, not
of everyone's builds since the cache directory's counters were last zeroed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from toolkit.builds.team import redact
from toolkit.builds.tools import tool_output
from toolkit.errors import UserError

# URL scheme -> the feature ``ccache --version`` lists for it
SCHEMES = {"redis": "redis-storage", "redis+unix": "redis+unix-storage",
           "http": "http-storage", "file": "file-storage"}
STATS_LOG = "ccache-stats.log"  # in the build's store entry


def check_remote(url: str) -> None:
    """Refuse a remote storage this machine's ccache cannot use, before anything is built."""
    scheme = url.split(":", 1)[0] if ":" in url else ""
    if scheme not in SCHEMES:
        raise UserError(f"--ccache-remote {redact(url)}: not a storage ccache knows (redis://HOST"
                        "[:PORT], redis+unix:PATH, http://HOST[:PORT]/PATH or file:DIR)")
    if re.match(r"^redis://:[^@/]*@", url):
        # ccache 4.7 logs in as nobody with this common form, then counts every compile a
        # remote error: say how it reads a password instead.
        raise UserError(f"--ccache-remote {redact(url)}: ccache reads a redis password as "
                        "redis://PASSWORD@HOST:PORT or redis://USER:PASSWORD@HOST:PORT")
    out = tool_output(("ccache", "--version"))
    if out is None:
        raise UserError(f"--ccache-remote {redact(url)}: ccache is not installed here "
                        "(apt-get install ccache)")
    m = re.search(r"^Features:\s*(.*)$", out, re.M)
    features = m.group(1).split() if m else []
    if SCHEMES[scheme] not in features:
        version = out.splitlines()[0].strip() if out.strip() else "ccache"
        raise UserError(f"--ccache-remote {redact(url)}: {version} has no {SCHEMES[scheme]} "
                        f"(it has: {', '.join(features) or 'no remote storage; it needs 4.4 or later'})")


def environment(remote: str | None, stats_log: Path) -> dict[str, str]:
    """What the compile's environment gets for ccache: the stats log of this build and, when
    the team has one, the remote storage."""
    env = {"CCACHE_STATSLOG": str(stats_log)}
    if remote:
        env["CCACHE_REMOTE_STORAGE"] = remote
    return env


@dataclass
class CcacheStats:
    """What ccache did for the compiles of one build."""

    compiles: int  # compiles ccache could cache (hits + misses)
    hits: int
    remote_hits: int  # of the hits, those the remote storage answered
    misses: int
    uncacheable: int  # preprocessing, linking through the launcher, ...
    remote_errors: int  # the remote storage failed or timed out (ccache compiled instead)
    remote: str | None = None  # the remote storage, as tk may print it

    @property
    def hit_rate(self) -> float:
        return self.hits / self.compiles if self.compiles else 0.0

    @property
    def remote_rate(self) -> float:
        return self.remote_hits / self.compiles if self.compiles else 0.0

    def to_json(self) -> dict[str, object]:
        return {"compiles": self.compiles, "hits": self.hits, "remote_hits": self.remote_hits,
                "misses": self.misses, "uncacheable": self.uncacheable,
                "remote_errors": self.remote_errors, "remote": self.remote,
                "hit_rate": round(self.hit_rate, 4), "remote_rate": round(self.remote_rate, 4)}


def read_stats(stats_log: Path, remote: str | None = None) -> CcacheStats:
    """Count ccache's stats log: one ``# <source>`` line per call, then the counters it
    bumped (``direct_cache_hit``, ``remote_storage_hit``, ``cache_miss``, ...). No log: ccache
    was not called (Ninja had nothing to compile)."""
    try:
        text = stats_log.read_text(errors="replace")
    except FileNotFoundError:
        text = ""
    calls: list[set[str]] = []
    for line in text.splitlines():
        if line.startswith("#"):
            calls.append(set())
        elif line.strip() and calls:
            calls[-1].add(line.strip())
    hits = sum(1 for c in calls if c & {"direct_cache_hit", "preprocessed_cache_hit"})
    misses = sum(1 for c in calls if "cache_miss" in c)
    return CcacheStats(
        compiles=hits + misses, hits=hits, misses=misses,
        remote_hits=sum(1 for c in calls if "remote_storage_hit" in c),
        uncacheable=len(calls) - hits - misses,
        remote_errors=sum(1 for c in calls
                          if c & {"remote_storage_error", "remote_storage_timeout"}),
        remote=redact(remote) if remote else None)
