"""``tk build``: plan, pre-flight, build, record, store, check — one function per step.

``build()`` serves a stored build when the same plan was already built from a tree with the
same build key; otherwise it runs the backend in the plan's build directory (incremental),
copies the libraries into the store, writes ``manifest.json`` from what is on disk (CMake's
cache, not the request) and runs ``tk doctor``'s probe in the build's own environment.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit import __version__
from toolkit.build import ownership, preflight, store
from toolkit.build.backends import (
    PLAN_STAMP,
    BuildJob,
    backend,
    read_build_options,
    read_cmake_cache,
)
from toolkit.build.recipes import CONFIG_HEADER, BuildPlan, Request, is_on, resolve
from toolkit.build.source import SourceTree, inspect
from toolkit.errors import TkError, UserError
from toolkit.events import Handler, Stage, ignore

LIBRARY_NAMES = ("libtvm.so", "libtvm_compiler.so", "libtvm_runtime.so", "libtvm_ffi.so",
                 "libtvm_allvisible.so")
CACHE_FIELDS = ("CMAKE_BUILD_TYPE", "CMAKE_CXX_COMPILER", "CMAKE_CXX_FLAGS", "CMAKE_GENERATOR",
                "CMAKE_CUDA_ARCHITECTURES", "CMAKE_CXX_COMPILER_LAUNCHER", "CMAKE_COMMAND")


class PreflightFailed(TkError):
    def __init__(self, failed: list[preflight.Check]) -> None:
        first = failed[0]
        more = f" (+{len(failed) - 1} more, see --dry-run)" if len(failed) > 1 else ""
        super().__init__(f"pre-flight: {first.name}: {first.detail} — fix: {first.fix}{more}")
        self.failed = failed


class CheckFailed(TkError):
    """The build finished but does not work as asked in its own environment."""


@dataclass
class Outcome:
    manifest: dict[str, Any]
    from_store: bool


def plan(req: Request, source_dir: Path | str) -> tuple[BuildPlan, SourceTree]:
    tree = inspect(source_dir)
    if tree.layout != "extension":
        plan = resolve(req, tree.root)
        preflight.adapt_to_host(plan, tree)
        return plan, tree
    # An extension built against a prebuilt TVM (TVM_PREBUILD_PATH) has no config.cmake to
    # validate against or to read: its options go on CMake's command line instead.
    plan = resolve(req, None)
    for name, value in plan.options.items():
        plan.cmake.setdefault(name, value)
        plan.origin.setdefault(f"cmake.{name}", plan.origin.get(f"options.{name}", "?"))
    return plan, tree


def build_dir_for(plan: BuildPlan, tree: SourceTree, name: str | None = None) -> Path:
    """``<tree>/build-<plan>`` by default, so each plan keeps its own incremental build."""
    if not name:
        return tree.root / f"build-{plan.hash[:8]}"
    path = Path(name)
    return path if path.is_absolute() else tree.root / path


def build(plan: BuildPlan, tree: SourceTree, *, build_dir: str | None = None,
          jobs: int | None = None, events: Handler = ignore,
          force: bool = False, check: bool = True) -> Outcome:
    """Build ``plan`` from ``tree`` (or serve it from the store).

    ``events`` hears a ``Stage`` per step and Ninja's ``Progress`` while it compiles.
    """
    started = time.monotonic()
    key = store.build_key(plan.hash, tree.key)
    if not force:
        stored = store.load(key, verify=True)
        if stored is not None:
            raise_if_check_failed(stored)
            return Outcome(stored, from_store=True)
        if store.load(key) is not None:
            events(Stage(f"stored build {key} is damaged (a library's sha256 differs): "
                         "building it again"))
    entry = store.entry_dir(key)
    entry.mkdir(parents=True, exist_ok=True)
    # One build per key at a time: two clones of one tree share keys, and the second waits,
    # then is served what the first built rather than building it again into the same log.
    with locked(entry / ".lock"):
        if not force:
            stored = store.load(key, verify=True)
            if stored is not None:
                events(Stage(f"{key} was built by another tk while this one waited: served "
                             "from the store"))
                raise_if_check_failed(stored)
                return Outcome(stored, from_store=True)
        return _build(plan, tree, key, started, build_dir=build_dir, jobs=jobs,
                      events=events, check=check)


def _build(plan: BuildPlan, tree: SourceTree, key: str, started: float, *,
           build_dir: str | None, jobs: int | None, events: Handler,
           check: bool) -> Outcome:
    checks = preflight.run(plan, tree)
    failed = [c for c in checks if not c.ok]
    if failed:
        raise PreflightFailed(failed)
    preflight_s = time.monotonic() - started
    bdir = build_dir_for(plan, tree, build_dir)
    refuse_foreign_config(bdir)
    owner = ownership.owner_of(tree.root)
    made = [p for p in (bdir, *bdir.parents) if not p.exists()]
    bdir.mkdir(parents=True, exist_ok=True)
    log = store.entry_dir(key) / "build.log"
    job = BuildJob(plan=plan, source_dir=tree.root, build_dir=bdir, log=log, jobs=jobs,
                   events=events, files_key=tree.files_key)
    with locked(bdir / ".tk-lock"):
        try:
            write_if_changed(job.config_cmake, plan.config_cmake())
            log.write_text(f"# tk build {key}: plan {plan.hash}, tree {tree.key}, {tree.root}\n")
            events(Stage(f"building {key} ({plan.backend}) in {bdir}; log: {log}"))
            result = backend(plan.backend).build(job)
            (bdir / PLAN_STAMP).write_text(job.stamp + "\n")
        finally:
            # Built or not, what tk made in the owner's tree is the owner's.
            for path in made[1:]:
                ownership.hand_over(path, owner, recursive=False)
            ownership.hand_over(bdir, owner)
        libs = find_artifacts(bdir, tree.layout)
        if not libs:
            raise TkError(f"the build finished but left no TVM library in {bdir} (log: {log})")
        t = time.monotonic()
        artifacts = store.store_artifacts(key, libs)
        used = cmake_values(bdir)
    store_s = time.monotonic() - t
    manifest: dict[str, Any] = {
        "id": key,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "tk_version": __version__,
        "plan_hash": plan.hash,
        "plan": plan.to_json(),
        "source": tree.to_json(),
        "backend": plan.backend,
        "image_id": result.image_id,
        "build_dir": str(bdir),
        "toolchain": result.toolchain,
        "cmake_values": used,
        "mismatches": mismatches(plan, used),
        "artifacts": artifacts,
        "timings": {"preflight": round(preflight_s, 3), **result.timings,
                    "store": round(store_s, 3)},
        "log": str(log),
        "commands": result.commands,
        "preflight": [c.to_json() for c in checks],
        "env": store.env_of({"id": key, "source": {"dir": str(tree.root)}}),
    }
    if check:
        events(Stage("checking the build in its own environment (tk doctor's probe)"))
        t = time.monotonic()
        manifest["check"] = post_build_check(manifest, plan)
        manifest["timings"]["check"] = round(time.monotonic() - t, 3)
    manifest["timings"]["total"] = round(time.monotonic() - started, 3)
    store.save(manifest)
    raise_if_check_failed(manifest)
    return Outcome(manifest, from_store=False)


def refuse_foreign_config(bdir: Path) -> None:
    """A build directory whose config.cmake someone wrote by hand is theirs: never overwrite."""
    config = bdir / "config.cmake"
    if config.exists() and not config.read_text(errors="replace").startswith(CONFIG_HEADER):
        raise UserError(f"{config} was not written by tk build and would be overwritten: "
                        "move it away, or pick another --build-dir")


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """One build at a time per build directory (a second tk build waits for the first)."""
    with path.open("w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def write_if_changed(path: Path, text: str) -> None:
    # An unchanged config.cmake keeps its mtime, so Ninja does not re-run CMake for nothing.
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def find_artifacts(build_dir: Path, layout: str = "python") -> list[Path]:
    """The libraries a build produced: TVM's by name (build/ for <= v0.26, build/lib for
    main); for an extension built against a prebuilt TVM, every shared library it made."""
    found: list[Path] = []
    for sub in (build_dir, build_dir / "lib"):
        names = LIBRARY_NAMES if layout != "extension" else sorted(
            p.name for p in sub.glob("*.so") if p.is_file())
        for name in names:
            path = sub / name
            if path.is_file() and path.name not in {p.name for p in found}:
                found.append(path.resolve())
    if found and layout != "extension":
        # tvm-ffi, built as a subproject, may put libtvm_ffi.so in its own binary dir.
        have = {p.name for p in found}
        for path in sorted(build_dir.glob("3rdparty/**/libtvm_ffi.so")):
            if path.is_file() and path.name not in have:
                found.append(path.resolve())
                have.add(path.name)
    return found


def cmake_values(build_dir: Path) -> dict[str, str]:
    """What CMake used: TVMBuildOptions.txt over CMakeCache.txt (config.cmake's set() lines
    shadow the cache, so the cache alone can lie about options)."""
    cache = read_cmake_cache(build_dir)
    values = {k: cache[k] for k in CACHE_FIELDS if k in cache}
    options = read_build_options(build_dir)
    if options:
        values.update(options)
    else:
        values.update({k: v for k, v in cache.items() if k.startswith(("USE_", "HIDE_", "BUILD_"))})
    return values


def same_value(a: str, b: str) -> bool:
    if a.strip('"') == b.strip('"'):
        return True
    flags = {"ON", "OFF", "TRUE", "FALSE", "1", "0", "YES", "NO"}
    if a.upper() in flags and b.upper() in flags:
        return is_on(a) == is_on(b)
    return False


def mismatches(plan: BuildPlan, used: dict[str, str]) -> list[dict[str, str]]:
    """Options the plan asked for that CMake did not use as asked."""
    rows = []
    for name, want in {**plan.options, **plan.cmake}.items():
        if name in used and not same_value(want, used[name]):
            rows.append({"option": name, "requested": want, "used": used[name]})
    return rows


def post_build_check(manifest: dict[str, Any], plan: BuildPlan) -> dict[str, Any]:
    """Run tk doctor's probe with the build's own PYTHONPATH / TVM_LIBRARY_PATH."""
    from toolkit import doctor

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TVM_LIBRARY_PATH")}
    env.update(manifest["env"])
    if ({"runtime", "tvm_runtime"} & set(plan.targets)
            or manifest["source"]["layout"] == "extension"):
        return load_check(manifest, env)
    report = doctor.run(sys.executable, env=env)
    facts = report.facts
    imp = facts.get("import", {})
    lib_dir = manifest["env"]["TVM_LIBRARY_PATH"]
    mapped = [lib["path"] for lib in facts.get("libraries", {}).get("libraries", [])]
    problems = []
    if not imp.get("ok"):
        problems.append(f"import tvm failed in the build's environment: "
                        f"{imp.get('error_type')}: {imp.get('error') or facts.get('exit')}")
    else:
        tree_python = manifest["env"].get("PYTHONPATH", "").split(os.pathsep)[0]
        if tree_python and not str(imp.get("file", "")).startswith(tree_python):
            problems.append(f"import tvm found {imp.get('file')}, not the tree's {tree_python}")
        ours = [p for p in mapped if p.startswith(lib_dir)]
        if mapped and not ours:
            problems.append(f"no library from {lib_dir} was loaded (got {', '.join(mapped[:3])})")
    cuda = cuda_in_runtime(facts)
    if plan.wants_cuda and imp.get("ok") and cuda is False:
        problems.append("the plan asked for CUDA (USE_CUDA=ON) but the built runtime has no CUDA"
                        + cuda_hint(manifest))
    return {
        "ok": not problems, "problems": problems, "cuda": cuda,
        "tvm_file": imp.get("file"), "tvm_version": imp.get("version"),
        "libinfo": facts.get("build_info", {}).get("libinfo"),
        "loaded": mapped,
        "doctor": [{"name": c.name, "status": c.status, "detail": c.detail}
                   for c in report.checks],
    }


def load_check(manifest: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """No ``import tvm`` for a runtime-only build (no compiler library) or an extension (its
    TVM is the prebuilt one): each stored library must at least load."""
    problems = []
    libs = [a["path"] for a in manifest["artifacts"]]
    for lib in libs:
        proc = subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])",
                               lib], capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            problems.append(f"{lib} does not load: "
                            f"{(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    return {"ok": not problems, "problems": problems, "cuda": None, "loaded": libs,
            "load_only": True}


def cuda_in_runtime(facts: dict[str, Any]) -> bool | None:
    """Does the imported TVM have CUDA? Its runtime registry when that lists anything of
    TVM's (a registry with nothing is tvm-ffi's alone), else libinfo."""
    rows = facts.get("runtimes", {}).get("runtimes", [])
    if any(r.get("codegen") or r.get("runtime") for r in rows):
        return any(r.get("kind") == "cuda" and (r.get("codegen") or r.get("runtime"))
                   for r in rows)
    info = facts.get("build_info", {}).get("libinfo") or {}
    if "USE_CUDA" in info:
        return is_on(info["USE_CUDA"])
    return None


def cuda_hint(manifest: dict[str, Any]) -> str:
    used = manifest["cmake_values"].get("USE_CUDA")
    if used is not None and not is_on(used):
        return f" — CMake used USE_CUDA={used}: something in the tree overrides config.cmake"
    return ""


def raise_if_check_failed(manifest: dict[str, Any]) -> None:
    chk = manifest.get("check")
    if chk and not chk["ok"]:
        raise CheckFailed(f"build {manifest['id']} does not work as asked: "
                          f"{'; '.join(chk['problems'])} (manifest: "
                          f"{store.entry_dir(manifest['id']) / store.MANIFEST})")


def dry_run(plan: BuildPlan, tree: SourceTree, build_dir: str | None = None) -> dict[str, Any]:
    """Everything ``tk build`` would do, without doing it."""
    return {
        "plan": plan.to_json(),
        "plan_hash": plan.hash,
        "source": tree.to_json(),
        "build_dir": str(build_dir_for(plan, tree, build_dir)),
        "build_id": store.build_key(plan.hash, tree.key),
        "stored": store.load(store.build_key(plan.hash, tree.key)) is not None,
        "preflight": [c.to_json() for c in preflight.run(plan, tree)],
        "dockerfile": render_dockerfile(plan),
    }


def render_dockerfile(plan: BuildPlan) -> str | None:
    """The Dockerfile the docker backend would build, when that backend is present."""
    try:
        docker = backend("docker")
    except UserError:
        return None
    render = getattr(docker, "render_dockerfile", None)
    return render(plan) if render else None
