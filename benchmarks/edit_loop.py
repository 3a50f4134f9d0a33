"""The inner loop of a fork developer: edit one source, ``tk build`` again. What does tk add to
what CMake and Ninja cost?

Each round appends a function to one C++ source, runs the build's own compile command
(Ninja recompiles the file and relinks its library), then ``tk build`` with the same flags
(its Ninja finds nothing left to do, so all the rest is tk's: inspecting the tree, storing,
the tvm-ffi package, the post-build check), then the compile command once more (a no-op
Ninja, to take its CPU out of tk's). Per round:

- tk's own wall time: ``tk build``'s wall minus its record's configure and compile times
  (goal <= 2 s; 7 s was measured before on the real tree);
- tk's own CPU: the CPU of the ``tk build`` process and everything it waited for, minus a
  no-op Ninja's;
- the record's own timings (store, hash: overlapped with the check, python, check), and
  whether the check imported TVM or stood on the previous round's import (the same surface:
  toolkit/builds/equivalence.py).

``tk build`` returns before packing the build it displaced: that runs in a process of its own
(its CPU, from the store's pack.log, is printed apart). The source is restored at the end (not rebuilt).

On a built tree (the real one: a compiler build with LLVM, as a fork developer has):

    python benchmarks/edit_loop.py --tree /path/to/tvm --source src/relax/transform/fuse_ops.cc \\
        -- --llvm 15 --debug --ccache

Without ``--tree``: the miniature fork (tests/minifork.py) whose compiler library embeds
``--blob-mb`` of a real library's bytes (default 1000, about the Debug libtvm_compiler.so of
TVM main with LLVM): the library's size without the minutes of a real compiler build. It
measures storing, hashing and packing; the check loads the library but does not do the work
of a real one's static initialisers.

    python benchmarks/edit_loop.py [--blob-mb 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from minifork import git, make_minifork  # noqa: E402

BLOB = """
// A Debug compiler library's worth of bytes, embedded as read-only data.
__asm__(".section .rodata.tk_blob,\\"a\\"\\n.globl tk_blob\\ntk_blob:\\n.incbin \\"{path}\\"\\n"
        ".previous\\n");
"""


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(argv: list[str], env: dict[str, str], cwd: Path | None = None
          ) -> tuple[float, float, subprocess.CompletedProcess]:
    cpu, start = children_cpu(), time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd)
    return time.perf_counter() - start, children_cpu() - cpu, proc


def tk_build(tree: Path, flags: list[str], env: dict[str, str]) -> tuple[float, float, dict]:
    wall, cpu, proc = timed([sys.executable, "-m", "toolkit", "build", "-C", str(tree), *flags,
                             "--json"], env)
    if proc.returncode != 0:
        sys.exit(f"tk build failed: {proc.stderr.strip()[-3000:]}")
    return wall, cpu, json.loads(proc.stdout)


def compile_step(record: dict, env: dict[str, str]) -> tuple[float, float]:
    """The record's own compile command (``cmake --build DIR ...``), run as it is."""
    line = next(c for c in record["commands"] if " --build " in c)
    wall, cpu, proc = timed(["sh", "-c", line], env)
    if proc.returncode != 0:
        sys.exit(f"{line} failed: {proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return wall, cpu


def packer_cpu(cache: Path) -> list[float]:
    log = cache / "pack.log"
    return [float(x) for x in re.findall(r"CPU ([\d.]+) s", log.read_text())] \
        if log.exists() else []


def library_bytes() -> bytes:
    """Bytes that compress as a TVM library does: the installed apache-tvm's compiler library
    (random bytes, which compress far worse and slower, where there is none)."""
    import importlib.util

    spec = importlib.util.find_spec("tvm")
    lib = Path(spec.origin).parent / "lib" / "libtvm_compiler.so" if spec and spec.origin else None
    return lib.read_bytes() if lib and lib.is_file() else os.urandom(64 << 20)


def synthetic(root: Path, blob_mb: int) -> tuple[Path, str]:
    fork = make_minifork(root / "tvm", layout="main")
    blob = root / "blob.bin"
    chunk = library_bytes()
    with blob.open("wb") as f:
        left = blob_mb << 20
        while left > 0:
            f.write(chunk[:left])
            left -= len(chunk)
    info = fork / "src/driver/build_info.cc"
    info.write_text(info.read_text() + BLOB.format(path=blob))
    git(fork, "commit", "-qam", "a Debug compiler library's size")
    return fork, "src/ir/module.cc"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, help="a built TVM tree (default: a synthetic one)")
    ap.add_argument("--source", help="with --tree: the source to edit, relative to it")
    ap.add_argument("--blob-mb", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("flags", nargs="*", help="tk build's recipe flags (after --)")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "toolkit")],
                   check=True, stdout=subprocess.DEVNULL)  # as installed: bytecode there
    with tempfile.TemporaryDirectory(prefix="tk-edit-loop-") as tmp:
        if args.tree:
            tree, source = args.tree.resolve(), args.source
            if not source:
                sys.exit("--tree needs --source: the file to edit")
        else:
            tree, source = synthetic(Path(tmp), args.blob_mb)
            # A store of its own, and no ccache: a gigabyte object file is no one's cache.
            env.update(TK_CACHE=str(Path(tmp) / "cache"), CCACHE_DISABLE="1")
        cache = Path(env.get("TK_CACHE") or Path.home() / ".cache" / "tk")
        path = tree / source
        original = path.read_text()
        load = [os.getloadavg()[0]]
        _, _, base = tk_build(tree, args.flags, env)  # the build the loop starts from
        packed_before = len(packer_cpu(cache))
        rows = []
        try:
            for i in range(args.rounds):
                path.write_text(path.read_text()
                                + f'\nextern "C" int TkEditLoop{i}{os.getpid()}() {{ return {i}; }}\n')
                n_wall, n_cpu = compile_step(base, env)
                wall, cpu, rec = tk_build(tree, args.flags, env)
                _, noop_cpu = compile_step(rec, env)
                t = rec["timings"]
                rows.append({"ninja": n_wall, "ninja_cpu": n_cpu, "wall": wall, "cpu": cpu,
                             "own": wall - t.get("configure", 0) - t.get("compile", 0),
                             "own_cpu": cpu - noop_cpu, **{k: t.get(k, 0) for k in (
                                 "store", "hash", "python", "check", "compile", "total")},
                             "import": rec["check"] and (rec["check"].get("import_from")
                                                         or "ran"),
                             "relinked": [a["name"] for a in rec["artifacts"]
                                          if a["size"] > 0 and a["name"] in changed(base, rec)]})
                base = rec
        finally:
            path.write_text(original)
        load.append(os.getloadavg()[0])
        wait = [sys.executable, "-c", "from toolkit.builds import gc; gc.wait_for_packing()"]
        subprocess.run(wait, env=env, check=False)  # this tk's packers, if it has them
        from_packers = packer_cpu(cache)[packed_before:]
        size = sum(a["size"] for a in base["artifacts"])

    med = statistics.median
    where = f"{tree} ({' '.join(args.flags)})" if args.tree else (
        f"the miniature fork, its compiler library with {args.blob_mb} MB embedded")
    print(f"edit-rebuild loop on {where}: edit {source}, {args.rounds} rounds, median; "
          f"libraries {size / 1e6:.0f} MB; {os.cpu_count()} cores, load average "
          f"{load[0]:.1f} at the start, {load[1]:.1f} at the end; tk at {REPO}")
    print(f"  Ninja's own recompile + relink     {med(r['ninja'] for r in rows):7.2f} s wall "
          f"{med(r['ninja_cpu'] for r in rows):7.2f} s CPU")
    print(f"  tk build after it, whole process   {med(r['wall'] for r in rows):7.2f} s wall "
          f"{med(r['cpu'] for r in rows):7.2f} s CPU")
    print(f"  tk's own (beyond CMake/Ninja)      {med(r['own'] for r in rows):7.2f} s wall "
          f"{med(r['own_cpu'] for r in rows):7.2f} s CPU  (goal <= 2 s)")
    print("  its record: " + ", ".join(f"{k} {med(r[k] for r in rows):.2f} s" for k in (
        "store", "hash", "python", "check", "total")) + " (hash: overlapped with the check)")
    for i, r in enumerate(rows, 1):
        stood = "ran" if r["import"] == "ran" else f"stood on build {r['import']}'s"
        print(f"  round {i}: tk's own {r['own']:.2f} s wall {r['own_cpu']:.2f} s CPU, check "
              f"{r['check']:.2f} s (import of TVM: {stood})")
    print(f"  relinked each round: {', '.join(rows[-1]['relinked']) or 'none'}")
    print(f"  packing the displaced builds afterwards, in the background: {len(from_packers)} "
          f"runs, {sum(from_packers):.1f} s CPU" if from_packers else
          "  packing: no background packer logged (this tk packs while tk build runs)")
    print(f"  {source} restored as it was")
    print("  commands: " + shlex.join([sys.executable, *sys.argv]))


def changed(before: dict, after: dict) -> set[str]:
    old = {a["name"]: a["sha256"] for a in before["artifacts"]}
    return {a["name"] for a in after["artifacts"] if old.get(a["name"]) != a["sha256"]}


if __name__ == "__main__":
    main()
