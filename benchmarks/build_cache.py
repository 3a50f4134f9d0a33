"""How much the build directory and the artifact store save, on the miniature fork.

Measured side by side in one run, each a full ``tk build`` process as a user runs it:

- cold: a fresh fork and an empty store (configure + compile + store + post-build check);
- incremental: the same plan after touching one C++ source (Ninja recompiles one file);
- repeated: ``tk build`` again with nothing changed (served from the store; goal <= 2 s);
- python-only commit: a commit that touches only python/ (served from the store too);
- docker (with --docker, when the backend and an engine are present): a second container
  build of the same plan from a fresh tree against the first; with --docker-cold the first
  also makes the toolchain image (the second finds it by its content tag).

    python benchmarks/build_cache.py [--repeat N] [--docker [--docker-cold]]
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
    return (REPO / "toolkit/builders/docker.py").exists()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--docker", action="store_true", help="also time container builds")
    parser.add_argument("--docker-cold", action="store_true",
                        help="with --docker: remove the toolchain image (and images built on "
                             "it) first, so the first container build makes it (minutes)")
    args = parser.parse_args()
    base_env = {**os.environ, "PYTHONPATH": str(REPO)}
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
