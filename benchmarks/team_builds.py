"""What a team's registry and remote compile cache save a second machine, measured side by
side in one run on real servers started here on 127.0.0.1 (Debian's docker-registry and
redis-server; the script starts and stops them).

Two "machines" on this one, each its own TK_CACHE and empty CCACHE_DIR, the tree at its own
path:

1. machine one builds (``tk build --ccache-remote redis://...``: empty local ccache, empty
   redis, so every compile misses and is written to both) and pushes the build;
2. machine two runs ``tk build --registry ...`` for the same plan and sources: pulled,
   verified, checked - nothing compiled;
3. machine two forces a rebuild (``--force``) with its empty local ccache and the remote: the
   figure is the share of its compiles the remote answered (goal >= 95%).

Each step is one whole ``tk`` process: wall seconds and CPU seconds (user + system of it and
everything it waited for: CMake, Ninja, the compilers, the check's interpreters).

    python benchmarks/team_builds.py [--repeat N]      # the miniature fork
    python benchmarks/team_builds.py --real            # $TK_FIXTURES/tvm-main.tar.xz, runtime only
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from minifork import make_minifork  # noqa: E402
from team_helpers import redis, registry  # noqa: E402


def tk(env: dict[str, str], *args: str) -> tuple[float, float, dict]:
    """Run ``tk ARGS --json``: (wall s, CPU s, its JSON)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "toolkit", *args, "--json"],
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        sys.exit(f"tk {' '.join(args)} failed: {proc.stderr.strip()[-2000:]}")
    return wall, cpu, json.loads(proc.stdout)


def machine(root: Path, name: str) -> dict[str, str]:
    home = root / name
    home.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "PYTHONPATH": str(REPO), "TK_CACHE": str(home / "cache"),
            "CCACHE_DIR": str(home / "ccache"), "TK_CONFIG": str(home / "config.toml"),
            "TK_REGISTRY": "", "TK_CCACHE_REMOTE": ""}


def one_round(root: Path, trees: tuple[Path, Path], args: list[str]) -> dict[str, float]:
    """Build on one, push, pull on two, force a rebuild on two: each step's figures."""
    with registry(root / "registry") as reg, redis(root / "redis") as red:
        repo, remote = f"{reg.address}/team/tvm", f"redis://{red.address}"
        one, two = machine(root, "one"), machine(root, "two")
        b_wall, b_cpu, built = tk(one, "build", "-C", str(trees[0]), *args,
                                  "--ccache-remote", remote)
        assert built["from"] == "built", built["from"]
        s_wall, s_cpu, sent = tk(one, "build", "push", built["id"], repo)
        p_wall, p_cpu, pulled = tk(two, "build", "-C", str(trees[1]), *args, "--registry", repo)
        assert pulled["from"] == "registry" and pulled["id"] == built["id"], pulled["from"]
        assert not list(trees[1].glob("build-*")), "machine two compiled"
        r_wall, r_cpu, rebuilt = tk(two, "build", "-C", str(trees[1]), *args, "--force",
                                    "--ccache-remote", remote)
    stats = rebuilt["ccache"]
    return {"build": b_wall, "build_cpu": b_cpu, "compile": built["timings"]["compile"],
            "push": s_wall, "push_cpu": s_cpu, "bytes": sent["bytes_uploaded"],
            "pull": p_wall, "pull_cpu": p_cpu, "pull_only": pulled["pulled"]["timings"]["pull"],
            "check": pulled["pulled"]["timings"]["check"],
            "rebuild": r_wall, "rebuild_cpu": r_cpu, "compiles": stats["compiles"],
            "remote_hits": stats["remote_hits"], "cold_misses": built["ccache"]["misses"]}


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def report(what: str, runs: list[dict[str, float]], loads: tuple[str, str]) -> None:
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"{what}: {len(runs)} run(s), median; load average {loads[0]} at the start, "
          f"{loads[1]} at the end, {os.cpu_count()} cores")
    print(f"  machine one: build through the remote ccache  {med['build']:8.2f} s wall "
          f"{med['build_cpu']:8.2f} s CPU  (compile {med['compile']:.1f} s, "
          f"{med['cold_misses']:.0f} compiles, all misses)")
    print(f"  machine one: tk build push                    {med['push']:8.2f} s wall "
          f"{med['push_cpu']:8.2f} s CPU  ({med['bytes'] / 1e6:.1f} MB uploaded)")
    print(f"  machine two: tk build, pulled from registry   {med['pull']:8.2f} s wall "
          f"{med['pull_cpu']:8.2f} s CPU  (fetch {med['pull_only']:.2f} s, post-build check "
          f"{med['check']:.1f} s) = {med['pull'] / med['build']:.3f}x of the build")
    rate = med["remote_hits"] / med["compiles"] if med["compiles"] else 0.0
    print(f"  machine two: forced rebuild, empty ccache     {med['rebuild']:8.2f} s wall "
          f"{med['rebuild_cpu']:8.2f} s CPU = {med['rebuild'] / med['build']:.3f}x of the "
          f"build; remote hits {med['remote_hits']:.0f}/{med['compiles']:.0f} = {100 * rate:.1f}% "
          f"(goal >= 95%: {'met' if rate >= 0.95 else 'NOT met'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--real", action="store_true",
                        help="the real TVM tree from $TK_FIXTURES/tvm-main.tar.xz, runtime only")
    args = parser.parse_args()
    for binary in ("docker-registry", "redis-server", "ccache"):
        if shutil.which(binary) is None:
            sys.exit(f"{binary} is not installed (apt-get install {binary})")
    start = load()
    runs = []
    if args.real:
        tarball = Path(os.environ.get("TK_FIXTURES", "")) / "tvm-main.tar.xz"
        if not tarball.is_file():
            sys.exit("--real needs TK_FIXTURES: the directory holding tvm-main.tar.xz")
        with tempfile.TemporaryDirectory(prefix="tk-team-real-") as tmp:
            root = Path(tmp)
            trees = []
            for where in (root / "one", root / "two" / "elsewhere"):
                where.mkdir(parents=True)
                with tarfile.open(tarball) as tf:
                    tf.extractall(where)
                trees.append(where / "tvm-main")
            runs.append(one_round(root, (trees[0], trees[1]), ["--runtime-only"]))
        report(f"real tree {tarball.name}, runtime only", runs, (start, load()))
        return
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="tk-team-") as tmp:
            root = Path(tmp)
            trees = (make_minifork(root / "one" / "tvm"),
                     make_minifork(root / "two" / "elsewhere" / "tvm"))
            runs.append(one_round(root, trees, []))
    report("miniature fork", runs, (start, load()))


if __name__ == "__main__":
    main()
