"""How much the build directory and the artifact store save: the miniature fork, or
(``--real``) the real apache/tvm tree from ``$TK_FIXTURES/tvm-main.tar.xz``.

Miniature fork, measured side by side in one run, each a full ``tk build`` process:

- cold: a fresh fork and an empty store (configure + compile + store + post-build check);
- incremental: the same plan after touching one C++ source (Ninja recompiles one file);
- repeated: ``tk build`` again with nothing changed (served from the store; goal <= 2 s);
- python-only commit: a commit that touches only python/ (served from the store too);
- docker (with --docker, when the backend and an engine are present): a second container
  build of the same plan from a fresh tree against the first; with --docker-cold the first
  also makes the toolchain image (the second finds it by its content tag).

Real tree (``--real``; runtime only, as CI builds it), one run:

- cold: ``tk build --runtime-only`` on a fresh unpack and an empty store (with
  ``--cold-ccache`` an empty ccache too; else this machine's, which hits when the same
  sources were compiled before anywhere: tk sets CCACHE_BASEDIR to the tree);
- no-op: ``tk build --force --no-check`` with nothing changed (pre-flight, Ninja finding
  nothing to do, storing, the cached tvm-ffi wheel; goal <= 2 s);
- store hit: ``tk build`` served from the store (goal <= 0.5 s), as a whole process and as
  the library call alone (without the interpreter's start);
- bytes: what the store holds after a second build that differs in one source file (a
  function added to src/runtime/file_utils.cc), against one build (goal <= 1.2x).

    python benchmarks/build_cache.py [--repeat N] [--docker [--docker-cold]]
    python benchmarks/build_cache.py --real [--cold-ccache]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from minifork import add_python_commit, make_minifork  # noqa: E402


def tk_build(fork: Path, env: dict[str, str], *args: str) -> tuple[float, dict]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "toolkit", "build", "-C", str(fork), *args,
                           "--json"], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"tk build {' '.join(args)} failed: {proc.stderr.strip()}")
    return seconds, json.loads(proc.stdout)


def touch_source(fork: Path, n: int) -> None:
    src = fork / "src/runtime/device_api.cc"
    src.write_text(src.read_text() + f"// touched {n}\n")


def docker_ready() -> bool:
    try:
        import docker

        docker.from_env().ping()
    except Exception:  # noqa: BLE001 - any failure means: no engine to measure
        return False
    return (REPO / "toolkit/builds/backends/docker.py").exists()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--docker", action="store_true", help="also time container builds")
    parser.add_argument("--docker-cold", action="store_true",
                        help="with --docker: remove the toolchain image (and images built on "
                             "it) first, so the first container build makes it (minutes)")
    parser.add_argument("--real", action="store_true",
                        help="the real TVM tree from $TK_FIXTURES/tvm-main.tar.xz instead")
    parser.add_argument("--cold-ccache", action="store_true",
                        help="with --real: an empty ccache, so the cold build compiles all")
    parser.add_argument("--wheels-from", metavar="STORE",
                        help="with --real: seed the new store with STORE/wheels (the tvm-ffi "
                             "wheel built from the same tree: the cold build then skips it)")
    args = parser.parse_args()
    base_env = {**os.environ, "PYTHONPATH": str(REPO)}
    if args.real:
        real_tree(base_env, args.cold_ccache, args.wheels_from)
        return
    cold, incr, repeat, pyonly = [], [], [], []
    for i in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="tk-bench-") as tmp:
            env = {**base_env, "TK_CACHE": str(Path(tmp) / "cache")}
            fork = make_minifork(Path(tmp) / "tvm")
            seconds, m = tk_build(fork, env)
            assert not m["from_store"]
            cold.append(seconds)
            touch_source(fork, i)
            seconds, m = tk_build(fork, env)
            assert not m["from_store"]
            incr.append(seconds)
            seconds, m = tk_build(fork, env)
            assert m["from_store"]
            repeat.append(seconds)
            subprocess.run(["git", "-C", str(fork), "checkout", "-q", "--", "."], check=True)
            add_python_commit(fork)
            seconds, m = tk_build(fork, env)
            assert m["from_store"]
            pyonly.append(seconds)
    med = statistics.median
    print(f"miniature fork, {args.repeat} runs, median wall time of `tk build` (one process each)")
    print(f"  cold build (configure + compile + store + check)  {med(cold):6.2f} s")
    print(f"  incremental after touching one source             {med(incr):6.2f} s"
          f"  ({med(incr) / med(cold):.2f}x of cold)")
    print(f"  repeated, nothing changed (from the store)        {med(repeat):6.2f} s"
          f"  ({med(repeat) / med(cold):.2f}x of cold; goal <= 2 s: "
          f"{'met' if med(repeat) <= 2 else 'NOT met'})")
    print(f"  after a Python-only commit (from the store)       {med(pyonly):6.2f} s"
          f"  ({med(pyonly) / med(cold):.2f}x of cold)")
    if args.docker:
        if not docker_ready():
            print("  docker: skipped (no docker backend or no engine)")
            return
        with tempfile.TemporaryDirectory(prefix="tk-bench-docker-") as tmp:
            env = {**base_env, "TK_CACHE": str(Path(tmp) / "cache")}
            dropped = drop_toolchain_image(env) if args.docker_cold else None
            first, m1 = tk_build(make_minifork(Path(tmp) / "a"), env, "--backend", "docker")
            # A fresh tree and build directory: what is reused is the image's layers (and
            # the ccache volume), not the build directory; --force skips the store.
            second, m2 = tk_build(make_minifork(Path(tmp) / "b"), env, "--backend", "docker",
                                  "--force")
        same = "same image" if m1["image_id"] == m2["image_id"] else "DIFFERENT image"
        print(f"  docker: first build {first:6.2f} s (image {m1['timings']['image']:.2f} s"
              + (", image already there" if dropped is None else
                 ", image rebuilt" if m1["image_id"] != dropped else ", CACHED despite removal")
              + "), "
              f"second (fresh tree) {second:6.2f} s (image {m2['timings']['image']:.2f} s, "
              f"{same}) = {second / first:.2f}x of the first")


def store_bytes(cache: Path) -> int:
    """Bytes the store holds on disk, each file once (hard links share their inode)."""
    seen, total = set(), 0
    for path in cache.rglob("*"):
        st = path.lstat()
        if path.is_file() and not path.is_symlink() and (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            total += st.st_size
    return total


def in_process_hit(tree: Path, env: dict[str, str]) -> float:
    """Seconds of plan + store lookup in one interpreter (what a served build costs beyond
    starting Python), median of 5."""
    code = (
        "import sys, time, statistics\n"
        "from toolkit.builds import driver\n"
        "from toolkit.builds.recipes import Request\n"
        "times = []\n"
        "for _ in range(5):\n"
        "    t = time.perf_counter()\n"
        "    plan, tree = driver.plan(Request(fragments={'runtime-only': ''}), sys.argv[1])\n"
        "    out = driver.build(plan, tree)\n"
        "    assert out.from_store\n"
        "    times.append(time.perf_counter() - t)\n"
        "print(statistics.median(times))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tree)], capture_output=True,
                          text=True, env=env, check=True)
    return float(proc.stdout.strip())


def real_tree(base_env: dict[str, str], cold_ccache: bool, wheels_from: str | None) -> None:
    import tarfile

    fixtures = os.environ.get("TK_FIXTURES")
    tarball = Path(fixtures or "") / "tvm-main.tar.xz"
    if not tarball.is_file():
        sys.exit("--real needs TK_FIXTURES: the directory holding tvm-main.tar.xz")
    with tempfile.TemporaryDirectory(prefix="tk-bench-real-") as tmp:
        root = Path(tmp)
        with tarfile.open(tarball) as tf:
            tf.extractall(root)
        tree = root / "tvm-main"
        cache = root / "cache"
        env = {**base_env, "TK_CACHE": str(cache)}
        if cold_ccache:
            env["CCACHE_DIR"] = str(root / "ccache")
        if wheels_from:
            import shutil

            shutil.copytree(Path(wheels_from) / "wheels", cache / "wheels")
        load = [Path("/proc/loadavg").read_text().split()[0]]
        wheels = set((cache / "wheels").glob("*"))
        cold, m = tk_build(tree, env, "--runtime-only")
        built_wheel = set((cache / "wheels").glob("*")) != wheels
        assert not m["from_store"]
        one = store_bytes(cache)
        noop, m2 = tk_build(tree, env, "--runtime-only", "--force", "--no-check")
        hit, m3 = tk_build(tree, env, "--runtime-only")
        assert m3["from_store"] and m3["id"] == m["id"]
        hit_lib = in_process_hit(tree, env)
        src = tree / "src/runtime/file_utils.cc"
        src.write_text(src.read_text() + '\nextern "C" int tk_bench_changed() { return 1; }\n')
        changed, m4 = tk_build(tree, env, "--runtime-only")
        assert not m4["from_store"] and m4["id"] != m["id"]
        two = store_bytes(cache)
        load.append(Path("/proc/loadavg").read_text().split()[0])
        lib = lambda rec: sum(a["size"] for a in rec["artifacts"])  # noqa: E731
    print(f"real tree {tarball.name}, runtime only (libraries {lib(m) / 1e6:.1f} MB: "
          f"{', '.join(a['name'] for a in m['artifacts'])}); load average "
          f"{load[0]} at the start, {load[1]} at the end, {os.cpu_count()} cores")
    ccache = "an empty ccache" if cold_ccache else "this machine's ccache"
    if wheels_from and not built_wheel:
        print(f"  (the tvm-ffi wheel came from {wheels_from}: the cold build did not build it)")
    elif wheels_from:
        print(f"  ({wheels_from} had no wheel of this tvm-ffi: the cold build built it)")
    print(f"  cold build (empty store, {ccache})  {cold:7.2f} s "
          f"(configure {m['timings'].get('configure', 0):.1f} s, compile "
          f"{m['timings'].get('compile', 0):.1f} s, python {m['timings'].get('python', 0):.1f} s, "
          f"check {m['timings'].get('check', 0):.1f} s)")
    print(f"  no-op build (--force --no-check, nothing changed) {noop:7.2f} s "
          f"({noop / cold:.3f}x of cold; goal <= 2 s: {'met' if noop <= 2 else 'NOT met'})")
    print(f"  store hit, whole tk build process                 {hit:7.2f} s "
          f"(goal <= 0.5 s: {'met' if hit <= 0.5 else 'NOT met'})")
    print(f"  store hit, plan + lookup in one interpreter        {hit_lib:7.2f} s "
          f"(goal <= 0.5 s: {'met' if hit_lib <= 0.5 else 'NOT met'})")
    print(f"  one source file changed, rebuilt                  {changed:7.2f} s")
    print(f"  store bytes: one build {one / 1e6:.1f} MB, two builds {two / 1e6:.1f} MB = "
          f"{two / one:.2f}x (goal <= 1.2x: {'met' if two / one <= 1.2 else 'NOT met'})")


def drop_toolchain_image(env: dict[str, str]) -> str:
    """Remove the docker plan's toolchain image, and the images built on it (whose layers
    would otherwise serve its rebuild from the cache), so the first build has to make it.
    Returns the removed image's id."""
    import docker

    proc = subprocess.run([sys.executable, "-m", "toolkit", "image", "build", "--json"],
                          capture_output=True, text=True, env=env, check=True)
    tag = json.loads(proc.stdout)["tag"]
    client = docker.from_env()
    target = client.images.get(tag).id
    for img in client.images.list():
        if img.id != target and any(h.get("Id") == target for h in img.history()):
            for child_tag in img.tags:
                client.images.remove(child_tag)
    client.images.remove(tag)
    return target

if __name__ == "__main__":
    main()
