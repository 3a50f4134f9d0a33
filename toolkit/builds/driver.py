"""``tk build``: plan, pre-flight, build, record, store, check — one function per step.

``build()`` serves a stored build when the same plan was already built from a tree with the
same build key; otherwise, with a team registry (``toolkit.builds.team``), it fetches the
build of that key from there (``fetch``: verified, then the same post-build check); otherwise
it runs the backend in the plan's build directory (incremental),
stores every library the build wrote (content-addressed), builds the tree's tvm-ffi Python
package, writes the ``BuildRecord`` from what is on disk (CMake's cache, not the request) and
checks the build in its own environment: each runtime backend asked for, then ``import tvm``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit import __version__, ownership
from toolkit.builds import ccache, preflight, store
from toolkit.builds.backends import (
    PLAN_STAMP,
    BuildJob,
    backend,
    empty_dir,
    foreign_cache,
    read_build_options,
    read_cmake_cache,
)
from toolkit.builds.backends.native import ccache_args
from toolkit.builds.recipes import (
    CONFIG_HEADER,
    BuildPlan,
    Request,
    is_on,
    resolve,
    separate_runtime_library,
)
from toolkit.builds.record import (
    Artifact,
    BuildRecord,
    PostBuildCheck,
    Provenance,
    Pulled,
    RuntimeCheck,
    SourceRecord,
)
from toolkit.builds.source import SourceTree, detect_layout, inspect
from toolkit.builds.team import TeamSettings, redact
from toolkit.errors import TkError, UserError
from toolkit.events import Handler, Stage, ignore

if TYPE_CHECKING:
    from toolkit.builds.registry import Found

# The registry's client (urllib, http.client, ssl) is imported where a registry is used: a
# store hit's process starts without it.

LIBRARY = re.compile(r"^lib[\w.+-]*\.so(\.[\d.]+)?$")
CACHE_FIELDS = ("CMAKE_BUILD_TYPE", "CMAKE_CXX_COMPILER", "CMAKE_CXX_FLAGS", "CMAKE_GENERATOR",
                "CMAKE_CUDA_ARCHITECTURES", "CMAKE_CXX_COMPILER_LAUNCHER", "CMAKE_COMMAND")


def one_line(text: str) -> str:
    """The first cause in a probe's stderr (tk explain's reader, imported only on failure
    paths: a store hit's process then starts without it)."""
    from toolkit.cause import one_line as first_line

    return first_line(text)


class PreflightFailed(TkError):
    def __init__(self, failed: list[preflight.Check]) -> None:
        first = failed[0]
        more = f" (+{len(failed) - 1} more, see --dry-run)" if len(failed) > 1 else ""
        super().__init__(f"pre-flight: {first.name}: {first.detail} — fix: {first.fix}{more}")
        self.failed = failed


@dataclass
class Outcome:
    record: BuildRecord
    from_store: bool  # not built by this call: the store had it, or the registry
    pulled: bool = False  # fetched from the team's registry by this call
    ccache: ccache.CcacheStats | None = None  # what ccache did for the compile, when it ran

    @property
    def came_from(self) -> str:
        return "registry" if self.pulled else "store" if self.from_store else "built"


def plan(req: Request, source_dir: Path | str) -> tuple[BuildPlan, SourceTree]:
    tree = inspect(source_dir)
    return plan_for(req, tree.root, tree.layout), tree


def plan_for(req: Request, root: Path, layout: str | None = None) -> BuildPlan:
    """The plan for the tree at ``root``, without looking at its git state: all a bisection
    needs to name its commits' builds (their trees come from git objects)."""
    root = Path(root).resolve()
    if (layout or detect_layout(root)) != "extension":
        plan = resolve(req, root)
        preflight.adapt_to_host(plan, root)
        return plan
    # An extension built against a prebuilt TVM (TVM_PREBUILD_PATH) has no config.cmake to
    # validate against or to read: its options go on CMake's command line instead.
    plan = resolve(req, None)
    for name, value in plan.options.items():
        plan.cmake.setdefault(name, value)
        plan.origin.setdefault(f"cmake.{name}", plan.origin.get(f"options.{name}", "?"))
    return plan


def build_dir_for(plan: BuildPlan, tree: SourceTree, name: str | None = None) -> Path:
    """``<tree>/build-<plan>`` by default, so each plan keeps its own incremental build."""
    if not name:
        return tree.root / own_dir_name(plan)
    path = Path(name)
    return path if path.is_absolute() else tree.root / path


def own_dir_name(plan: BuildPlan) -> str:
    """The name tk gives a plan's build directory (by a tree, or by a bisection's worktree):
    a directory of that name holds nothing but what tk build made there."""
    return f"build-{plan.hash[:8]}"


def source_record(tree: SourceTree) -> SourceRecord:
    return SourceRecord(dir=str(tree.root), layout=tree.layout, commit=tree.commit,
                        content_hash=tree.content_hash, dirty=bool(tree.dirty_paths),
                        dirty_paths=tree.dirty_paths[:50], dirty_hash=tree.dirty_hash,
                        tree_key=tree.key, submodules=tree.submodules)


def builds_python(plan: BuildPlan, tree: SourceTree) -> bool:
    """Does the build of ``plan`` keep the tree's tvm-ffi package (built for this Python)?"""
    from toolkit.builds import python as pypkg

    return (plan.backend == "native" and tree.layout != "extension"
            and pypkg.ffi_source(tree.root) is not None)


def build(plan: BuildPlan, tree: SourceTree, *, build_dir: str | None = None,
          jobs: int | None = None, events: Handler = ignore,
          force: bool = False, check: bool = True, pack: bool = True,
          share: TeamSettings | None = None) -> Outcome:
    """Build ``plan`` from ``tree`` (or serve it from the store, or fetch it from the team's
    registry).

    ``events`` hears a ``Stage`` per step and Ninja's ``Progress`` while it compiles.
    ``pack=False`` leaves the store's other builds unpacked: a bisection packs them when it
    ends, not between its steps (which may come back to an earlier build). ``share``: the
    registry and remote compile cache to use (None: those the environment and tk's config
    file name). ``force`` builds here, looking in neither store.
    """
    def say(message: str) -> None:
        events(Stage(message))

    share = share or TeamSettings.load()
    started = time.monotonic()
    key = store.build_key(plan.hash, tree.key)
    if not force:
        stored = store.load(key, verify=True)
        if stored is not None:
            raise_if_check_failed(stored)
            return Outcome(stored, from_store=True)
        damaged = store.load(key)
        if damaged is not None:
            say(f"stored build {key} is damaged (a library's sha256 differs): building it again")
            store.release_built(damaged)
    entry = store.entry_dir(key)
    entry.mkdir(parents=True, exist_ok=True)
    # One build per key at a time: two clones of one tree share keys, and the second waits,
    # then is served what the first built rather than building it again into the same log.
    with locked(entry / store.LOCK):
        if not force:
            stored = store.load(key, verify=True)
            if stored is not None:
                say(f"{key} was built by another tk while this one waited: served from the store")
                raise_if_check_failed(stored)
                return Outcome(stored, from_store=True)
            if share.registry:
                pulled = from_registry(plan, tree, key, share.registry, events, pack)
                if pulled is not None:
                    return pulled
        return _build(plan, tree, key, started, build_dir=build_dir, jobs=jobs,
                      events=events, check=check, pack=pack, ccache_remote=share.ccache_remote)


def from_registry(plan: BuildPlan, tree: SourceTree, key: str, where: str, events: Handler,
                  pack: bool) -> Outcome | None:
    """The build ``key`` from the team's registry, fetched and verified; None when it has
    none or does not answer (then this machine builds it). One it has that is not what it
    claims is refused: building over it would hide that someone's store was tampered with."""
    from toolkit.builds import oci, registry

    repo = oci.Reference.parse(where)
    ref = repo.at(registry.local_tag(key, builds_python(plan, tree)))
    try:
        found = registry.find(ref)
        if found is None:
            events(Stage(f"{repo} has no build {ref.tag}: building here"))
            return None
        theirs = found.record
        if (theirs.id, theirs.plan_hash, theirs.source.tree_key) != (key, plan.hash, tree.key):
            raise oci.Untrusted(f"{found.reference} holds build {theirs.id} (plan "
                                f"{theirs.plan_hash}, tree {theirs.source.tree_key}), not {key}")
        return fetch(found, plan, tree, events, pack)
    except (oci.RegistryUnavailable, oci.RegistryRefused) as e:
        events(Stage(f"{e}: building here"))
        return None
    except oci.Untrusted as e:
        raise oci.Untrusted(f"{e}; tk build --force builds it here without the "
                            "registry") from None


def fetch(found: Found, plan: BuildPlan, tree: SourceTree, events: Handler,
          pack: bool = True) -> Outcome:
    """Store a build found in a registry for ``tree``: its files fetched and checked against
    their digests, then the post-build check a local build gets, run here; the record is saved
    last. A build that fails any of it leaves nothing in the store. The caller holds the
    entry's lock."""
    from toolkit.builds import oci, registry

    fetched = registry.install(found, source_record(tree), events)
    record = fetched.record
    try:
        events(Stage("checking the pulled build in its own environment"))
        t = time.monotonic()
        record.check = post_build_check(record, plan)
        record.pulled.timings["check"] = round(time.monotonic() - t, 3)
        if not record.check.ok:
            raise oci.Untrusted(f"{found.reference} fails its post-build check here: "
                                f"{'; '.join(record.check.problems)} (not stored)")
        store.save(record)
    except BaseException:
        registry.discard(record.id, fetched)
        raise
    if pack:  # as after a local build: in a process of its own, nothing here waits for it
        from toolkit.builds import gc

        gc.pack_in_background(keep={record.id})
    return Outcome(record, from_store=True, pulled=True)


def pull(ref: str, tree: SourceTree, events: Handler = ignore) -> Outcome:
    """``tk build pull REF``: the build ``ref`` names, for ``tree`` (the tree it was built
    from, or one whose build key is the same), into the store."""
    from toolkit.builds import oci, registry

    reference = oci.Reference.parse(ref)
    if not reference.tag and not reference.digest:
        raise UserError(f"{ref}: name the build, REGISTRY/REPOSITORY:TAG or @sha256:DIGEST "
                        "(tk build push prints it)")
    found = registry.find(reference)
    if found is None:
        raise UserError(f"{reference.name} has no {reference.tag or reference.digest}")
    theirs = found.record
    if theirs.source.tree_key != tree.key:
        raise oci.Untrusted(f"{found.reference} is the build of another tree (tree key "
                            f"{theirs.source.tree_key}; {tree.root}'s is {tree.key})")
    entry = store.entry_dir(theirs.id)
    entry.mkdir(parents=True, exist_ok=True)
    with locked(entry / store.LOCK):
        stored = store.load(theirs.id, verify=True)
        if stored is not None:
            events(Stage(f"{theirs.id} is in the store already: served from there"))
            return Outcome(stored, from_store=True)
        return fetch(found, found.plan, tree, events)


def compiles_through_ccache(plan: BuildPlan) -> bool:
    """Whether the native backend's compiles go through ccache, so that its remote storage
    is used: tk's launchers, TVM's own (USE_CCACHE=ON), or a recipe's ccache launcher."""
    return bool(ccache_args(plan)) or plan.options.get("USE_CCACHE", "").upper() == "ON" or any(
        k.endswith("_COMPILER_LAUNCHER") and "ccache" in v for k, v in plan.cmake.items())


def _build(plan: BuildPlan, tree: SourceTree, key: str, started: float, *,
           build_dir: str | None, jobs: int | None, events: Handler,
           check: bool, pack: bool, ccache_remote: str | None = None) -> Outcome:
    # Here, not at the top: planning (a bisection keying its commits) needs none of them.
    from toolkit.builds import gc
    from toolkit.builds import python as pypkg

    def say(message: str) -> None:
        events(Stage(message))

    if ccache_remote:
        ccache.check_remote(ccache_remote)
        if plan.backend != "native":
            say(f"warning: the {plan.backend} backend compiles with its own ccache: the remote "
                f"storage {redact(ccache_remote)} is not used")
        elif not compiles_through_ccache(plan):
            say(f"warning: this plan does not compile through ccache (USE_CCACHE=OFF, no ccache "
                f"here, or another launcher): the remote storage {redact(ccache_remote)} is "
                "not used")
    checks = preflight.run(plan, tree)
    failed = [c for c in checks if not c.ok]
    if failed:
        raise PreflightFailed(failed)
    for c in checks:
        if c.warn:
            say(f"warning: {c.name}: {c.detail}")
    preflight_s = time.monotonic() - started
    bdir = build_dir_for(plan, tree, build_dir)
    refuse_foreign_config(bdir)
    refuse_foreign_build_dir(bdir, tree, plan)
    owner = ownership.owner_of(tree.root)
    made = [p for p in (bdir, *bdir.parents) if not p.exists()]
    bdir.mkdir(parents=True, exist_ok=True)
    earlier = BuildRecord.load(store.entry_dir(key) / store.MANIFEST)  # --force: checked before?
    entry = store.clear_entry(key)  # an earlier incomplete (or --force'd) entry starts afresh
    log = entry / "build.log"
    job = BuildJob(plan=plan, source_dir=tree.root, build_dir=bdir, log=log, jobs=jobs,
                   events=events, files_key=tree.files_key, ccache_remote=ccache_remote)
    # The wheel needs only tvm-ffi's sources: it is built while Ninja compiles.
    wheel = pypkg.WheelBuild(tree.root, entry / "python.log") if builds_python(plan, tree) \
        else None
    if wheel is not None:
        say(f"building the tree's {pypkg.DIST} Python package beside the compile (once per "
            f"tvm-ffi source; log: {wheel.log})")
    storing: store.Storing | None = None
    try:
        with locked(bdir / ".tk-lock"):
            try:
                foreign = foreign_cache(bdir, tree.root)
                if foreign:  # tk's own directory (refuse_foreign_build_dir): only its outputs
                    empty_dir(bdir, keep=(".tk-lock",))
                    say(f"{bdir} was configured for another tree ({foreign}): emptied, "
                        "configured afresh")
                write_if_changed(job.config_cmake, plan.config_cmake())
                log.write_text(f"# tk build {key}: plan {plan.hash}, tree {tree.key}, {tree.root}\n")
                say(f"building {key} ({plan.backend}) in {bdir}; log: {log}")
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
            used = cmake_values(bdir)
            t = time.monotonic()
            storing = store.store_artifacts(key, libs)
        # The libraries the build relinked are hashed meanwhile, in a thread: the Python package
        # and the post-build check use the files in the entry's lib/, which need no sha256.
        timings = {"preflight": round(preflight_s, 3), **result.timings,
                   "store": round(time.monotonic() - t, 3)}
        record = _record(plan, tree, key, bdir, result, used, storing.artifacts, checks,
                         timings, log)
        if wheel is not None:
            t = time.monotonic()
            ffi = next((Path(a.path) for a in storing.artifacts if a.name == "libtvm_ffi.so"),
                       None)
            record.python = wheel.package(entry, ffi)
            timings["python"] = round(time.monotonic() - t, 3)  # what the compile left to wait
        record.env = store.env_of(record)
        if check and not storing.relinked and checked_before(earlier, record):
            say("the libraries and Python package are those checked before: check not run again")
            record.check = earlier.check
            timings["check"] = 0.0
        elif check:
            say("checking the build in its own environment")
            t = time.monotonic()
            record.check = post_build_check(record, plan)
            timings["check"] = round(time.monotonic() - t, 3)
            stood = record.check.import_from
            if stood is not None and record.check.surface is not None:
                say(f"the libraries load and register what build {stood}'s did "
                    f"({record.check.surface.functions} functions"
                    + (f", {record.check.surface.types} types" if record.check.surface.types
                       is not None else "")
                    + "), with the same Python sources: its import of TVM stands, not run "
                    f"again (eval \"$(tk env {record.id})\" && tk doctor imports this one)")
    finally:
        if wheel is not None:
            wheel.cancel()  # nothing once its package was taken; else pip is stopped
        t = time.monotonic()
        if storing is not None:
            storing.wait()  # also after a failure: nothing is left writing into the store
    # What storing cost beyond the work it overlapped: the wait for the last sha256.
    timings["store"] = round(timings["store"] + time.monotonic() - t, 3)
    timings["hash"] = round(storing.seconds, 3)
    timings["total"] = round(time.monotonic() - started, 3)
    store.save(record)
    # The other builds' libraries go back to their packs, unless someone may be using them
    # (an extension built against a stored TVM names its lib/ in the plan): in the
    # background, the compressing takes a while and nothing here needs it done.
    if pack:
        plan_text = json.dumps(plan.to_json())
        gc.pack_in_background(keep={key, *(r.id for r in store.all_builds()
                                           if str(store.entry_dir(r.id)) in plan_text)})
    raise_if_check_failed(record)
    return Outcome(record, from_store=False, ccache=result.extra.get("ccache"))


def _record(plan: BuildPlan, tree: SourceTree, key: str, bdir: Path, result: Any,
            used: dict[str, str], artifacts: list[Artifact], checks: list[preflight.Check],
            timings: dict[str, float], log: Path) -> BuildRecord:
    """The record of what was built, from what is on disk (its Python package and check are
    added as they are made)."""
    return BuildRecord(
        id=key,
        created=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        tk_version=__version__, plan_hash=plan.hash, plan=plan.to_json(),
        source=source_record(tree), backend=plan.backend, image_id=result.image_id,
        build_dir=str(bdir), toolchain=result.toolchain, cmake_values=used,
        mismatches=mismatches(plan, used), artifacts=artifacts, timings=timings,
        log=str(log), commands=result.commands, preflight=[c.to_json() for c in checks],
        env={}, runtimes=plan.runtimes,
    )


def checked_before(earlier: BuildRecord | None, record: BuildRecord) -> bool:
    """Did a passed check see exactly these bytes (a --force rebuild that changed nothing)?
    The check's verdict depends on the libraries, the tvm-ffi package and the tree's Python
    code, which is the same tree key here."""
    if earlier is None or earlier.check is None or not earlier.check.ok:
        return False
    if earlier.pulled is not None:
        return False  # its check could not read a build directory here: this one can
    def files(r: BuildRecord) -> list[tuple[str, str | None, str | None]]:
        return sorted((a.name, a.sha256, a.link) for a in r.artifacts)

    return (files(earlier) == files(record) and earlier.runtimes == record.runtimes
            and (earlier.python and earlier.python.sha256) == (record.python and record.python.sha256))


def refuse_foreign_config(bdir: Path) -> None:
    """A build directory whose config.cmake someone wrote by hand is theirs: never overwrite."""
    config = bdir / "config.cmake"
    if config.exists() and not config.read_text(errors="replace").startswith(CONFIG_HEADER):
        raise UserError(f"{config} was not written by tk build and would be overwritten: "
                        "move it away, or pick another --build-dir")


def refuse_foreign_build_dir(bdir: Path, tree: SourceTree, plan: BuildPlan) -> None:
    """A build directory configured for another tree (copied with it: ``cp -a tvm tvm2``) would
    compile that tree's sources. tk's own (``build-<plan>``) is emptied and configured afresh
    when the build starts; one the user named may hold more than outputs: refused."""
    why = foreign_cache(bdir, tree.root)
    if why and bdir.name != own_dir_name(plan):
        raise UserError(f"{bdir} holds the build of another tree ({why}): building there would "
                        "compile that tree's sources; remove it, or pick another --build-dir")


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
    """Every shared library the build wrote (``lib*.so*``: libtvm, libtvm_compiler,
    libtvm_runtime and its per-backend libraries, libtvm_runtime_extra, libtvm_ffi, ...),
    shallowest first; for an extension built against a prebuilt TVM, every ``*.so`` it made.
    Ninja's own list of outputs, when it has one, keeps out leftovers of an older commit."""
    outputs = ninja_outputs(build_dir)
    found: dict[str, Path] = {}
    for dirpath, dirnames, names in os.walk(build_dir):
        dirnames[:] = sorted(d for d in dirnames if d != "CMakeFiles" and not d.startswith("."))
        for name in sorted(names):
            path = Path(dirpath) / name
            wanted = name.endswith(".so") if layout == "extension" else LIBRARY.match(name)
            if not wanted or name in found or not (path.is_file() or path.is_symlink()):
                continue
            if outputs is not None and os.path.relpath(path, build_dir) not in outputs:
                continue
            found[name] = path
    # Keep symlinks as they were built (libfoo.so -> libfoo.so.1) after the files they name.
    return sorted(found.values(), key=lambda p: (p.is_symlink(), len(p.relative_to(build_dir).parts),
                                                 p.name))


def ninja_outputs(build_dir: Path) -> set[str] | None:
    """What build.ninja can produce (paths relative to the build directory), or None."""
    ninja = shutil.which("ninja")
    if not ninja or not (build_dir / "build.ninja").exists():
        return None
    proc = subprocess.run([ninja, "-C", str(build_dir), "-t", "targets", "all"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    return {line.rsplit(":", 1)[0].strip() for line in proc.stdout.splitlines() if ":" in line}


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


def build_env(record: BuildRecord) -> dict[str, str]:
    """This process's environment with the build's own variables in place of the user's."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TVM_LIBRARY_PATH")}
    env.update(record.env)
    return env


def post_build_check(record: BuildRecord, plan: BuildPlan) -> PostBuildCheck:
    """Each runtime backend asked for (its library exists, loads, registers its device API;
    a tiny kernel runs where the device is), then, with a compiler, tk doctor's probe:
    ``import tvm`` from the tree with this build's libraries and tvm-ffi."""
    env = build_env(record)
    runtimes = check_runtimes(record, env)
    origin = (builders_provenance(record.pulled) if record.pulled is not None
              else provenance(Path(record.build_dir), Path(record.source.dir)))
    problems = provenance_problems(origin, record)
    problems += [p for r in runtimes for p in runtime_problems(r, record)]
    if record.source.layout == "extension" or {"runtime", "tvm_runtime"} & set(plan.targets):
        chk = load_check(record, env)
        chk.problems = problems + chk.problems
        chk.runtimes = runtimes
        chk.provenance = origin
        chk.ok = not chk.problems
        chk.cuda = next((r.device_api for r in runtimes if r.kind == "cuda"), None)
        return chk
    from toolkit.builds import equivalence

    # A pulled build's directory is the builder's: no earlier build here to stand on.
    now = equivalence.surface(record, env) if record.pulled is None else None
    earlier = equivalence.imported_before(record, now) if now is not None else None
    if earlier is not None:
        chk = equivalence.stands_on(earlier, now, problems)
        chk.runtimes, chk.provenance = runtimes, origin
        chk.loaded = equivalence.load_order(record)
        chk.cuda = cuda_in_build(runtimes, {}) if runtimes else chk.cuda
        return chk
    from toolkit import doctor

    report = doctor.run(sys.executable, env=env, asked=store.asked_of(record), light=True)
    facts = report.facts
    imp = facts.get("import", {})
    lib_dir = record.env["TVM_LIBRARY_PATH"]
    mapped = [lib["path"] for lib in facts.get("libraries", {}).get("libraries", [])]
    if not imp.get("ok"):
        problems.append(f"import tvm failed in the build's environment: "
                        f"{imp.get('error_type')}: {imp.get('error') or facts.get('exit')}")
    else:
        tree_python = record.env.get("PYTHONPATH", "").split(os.pathsep)[0]
        if tree_python and not str(imp.get("file", "")).startswith(tree_python):
            problems.append(f"import tvm found {imp.get('file')}, not the tree's {tree_python}")
        ours = [p for p in mapped if p.startswith(lib_dir)]
        if mapped and not ours:
            problems.append(f"no library from {lib_dir} was loaded (got {', '.join(mapped[:3])})")
    cuda = cuda_in_build(runtimes, facts)
    if plan.wants_cuda and imp.get("ok") and cuda is False and not any(
            r.kind == "cuda" for r in runtimes if runtime_problems(r, record)):
        problems.append("the plan asked for CUDA (USE_CUDA=ON) but the built runtime has no CUDA"
                        + cuda_hint(record))
    return PostBuildCheck(
        ok=not problems, problems=problems, cuda=cuda, runtimes=runtimes,
        tvm_file=imp.get("file"), tvm_version=imp.get("version"),
        libinfo=facts.get("build_info", {}).get("libinfo"), loaded=mapped,
        doctor=[{"name": c.name, "status": c.status, "detail": c.detail}
                for c in report.checks],
        provenance=origin, surface=now,
    )


MAX_OUTSIDE = 20


def provenance(build_dir: Path, root: Path) -> Provenance:
    """Where the sources of every object in ``build_dir``'s build file lie, from Ninja's
    compilation database (what Ninja compiled each object with). Not the libraries' debug
    info: ccache, run without the working directory in its hash, hands one tree's objects
    (and their DW_AT_comp_dir) to another."""
    ninja = shutil.which("ninja")
    if not ninja or not (build_dir / "build.ninja").exists():
        return Provenance(objects=None, note=f"not checked: no Ninja build file in {build_dir} "
                          "or no ninja here")
    proc = subprocess.run([ninja, "-C", str(build_dir), "-t", "compdb"], capture_output=True,
                          text=True)
    try:
        rows = json.loads(proc.stdout) if proc.returncode == 0 else None
    except ValueError:
        rows = None
    if not isinstance(rows, list):
        return Provenance(objects=None, note="not checked: ninja -t compdb failed in "
                          f"{build_dir}: {one_line(proc.stderr) if proc.stderr.strip() else '?'}")
    sources = [os.path.normpath(os.path.join(r["directory"], r["file"])) for r in rows
               if str(r.get("output", "")).endswith((".o", ".obj")) and r.get("file")]
    outside = [s for s in sources if not (inside(s, root) or inside(s, build_dir))]
    return Provenance(objects=len(sources), outside=outside[:MAX_OUTSIDE],
                      outside_count=len(outside))


def builders_provenance(pulled: Pulled) -> Provenance:
    """What a pulled build's builder found of its sources: its build directory is not here
    to be read again (and a directory of that name here would be another build's)."""
    if pulled.provenance is None:
        return Provenance(objects=None, note="not checked: built elsewhere without a "
                          "post-build check, and its build directory is not here")
    return dataclasses.replace(pulled.provenance, note="as checked where it was built")


def inside(path: str, root: Path) -> bool:
    """Is ``path`` under ``root``, as written (a tree's symlinked submodule stays the tree's)
    or resolved?"""
    def under(p: str, r: str) -> bool:
        return p == r or p.startswith(r.rstrip(os.sep) + os.sep)

    return (under(os.path.normpath(path), os.path.normpath(root))
            or under(os.path.realpath(path), os.path.realpath(root)))


def provenance_problems(origin: Provenance, record: BuildRecord) -> list[str]:
    if not origin.outside_count:
        return []
    return [f"{origin.outside_count} of the {origin.objects} objects {record.build_dir} builds "
            f"are compiled from outside {record.source.dir} (first: {origin.outside[0]}): the "
            "libraries are not built from this tree's sources alone"]


def has_compiler(record: BuildRecord) -> bool:
    return any(a.name in ("libtvm.so", "libtvm_compiler.so") for a in record.artifacts)


def check_runtimes(record: BuildRecord, env: dict[str, str]) -> list[RuntimeCheck]:
    """Run the stdlib runtime probe on the stored libraries for each backend asked for."""
    if not record.runtimes or record.source.layout == "extension":
        return []
    from toolkit.probes import path_of

    proc = subprocess.run([sys.executable, str(path_of("runtimes")), str(record.lib_dir),
                           *record.runtimes], capture_output=True, text=True, env=env,
                          timeout=300)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or any(r.get("kind") is None for r in rows):
        why = next((r.get("detail") for r in rows if r.get("kind") is None), None) or \
            (one_line(proc.stderr) if proc.stderr.strip() else "?")
        return [RuntimeCheck(kind, None, False, None, detail=f"the runtime does not load: {why}")
                for kind in record.runtimes]
    checks = [RuntimeCheck(kind=r["kind"], library=r.get("library"), loads=r["loads"],
                           device_api=r.get("device_api"), detail=r.get("detail") or "")
              for r in rows]
    for chk in checks:
        if chk.loads and chk.device_api and has_compiler(record):
            chk.kernel, why = run_tiny_kernel(chk.kind, env)
            chk.detail = chk.detail or why
    return checks


def run_tiny_kernel(kind: str, env: dict[str, str]) -> tuple[bool | None, str]:
    """Compile and run a one-line kernel on device 0 of ``kind``: None when there is none."""
    from toolkit.probes import path_of

    proc = subprocess.run([sys.executable, str(path_of("kernel")), kind], capture_output=True,
                          text=True, env=env, timeout=600)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if not rows:
        return False, one_line(proc.stderr) if proc.stderr.strip() else "the kernel probe died"
    return rows[-1]["ok"], rows[-1].get("detail", "")


def runtime_problems(chk: RuntimeCheck, record: BuildRecord) -> list[str]:
    """What is wrong with a backend that was asked for (nothing when only this machine
    cannot answer, e.g. no NVIDIA driver to load the CUDA library against)."""
    if chk.library is None and separate_runtime_library(Path(record.source.dir), chk.kind):
        return [f"{chk.kind}: the plan asked for it but libtvm_runtime_{chk.kind}.so was not "
                f"built{cuda_hint(record) if chk.kind == 'cuda' else ''}"]
    if not chk.loads:
        if missing_driver(chk.detail):
            chk.detail = f"cannot load here (no driver: {chk.detail})"
            return []
        return [f"{chk.kind}: {chk.library or 'the runtime'} does not load: {chk.detail}"]
    if chk.device_api is False:
        return [f"{chk.kind}: the runtime loads but registers no device_api.{chk.kind}"
                + (cuda_hint(record) if chk.kind == "cuda" else "")]
    if chk.kernel is False:
        return [f"{chk.kind}: a tiny kernel failed on device 0: {chk.detail}"]
    return []


def missing_driver(error: str) -> bool:
    """A GPU runtime library that needs the vendor's driver library, absent on this machine."""
    return bool(re.search(r"lib(cuda|vulkan|OpenCL|amdhip64|hsa-runtime64)\.so[.\d]*: cannot open",
                          error))


def load_check(record: BuildRecord, env: dict[str, str]) -> PostBuildCheck:
    """No ``import tvm`` for a runtime-only build (no compiler library) or an extension (its
    TVM is the prebuilt one): each stored library must at least load."""
    problems = []
    libs = [a.path for a in record.artifacts if a.link is None]
    for lib in libs:
        proc = subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])",
                               lib], capture_output=True, text=True, env=env)
        last = one_line(proc.stderr) if proc.stderr.strip() else "?"
        if proc.returncode != 0 and not missing_driver(last):
            problems.append(f"{lib} does not load: {last}")
    return PostBuildCheck(ok=not problems, problems=problems, loaded=libs, load_only=True)


def cuda_in_build(runtimes: list[RuntimeCheck], facts: dict[str, Any]) -> bool | None:
    """Does the build have CUDA? The runtime probe's answer (the registry of this build's own
    libraries) first; else what the imported TVM says: its registry when that lists anything
    of TVM's (a registry with nothing is tvm-ffi's alone), else libinfo."""
    cuda = next((r for r in runtimes if r.kind == "cuda"), None)
    if cuda is not None and cuda.device_api is not None:
        return cuda.device_api
    if cuda is not None and cuda.library is not None:
        return True  # built, though this machine cannot load it (no driver)
    rows = facts.get("runtimes", {}).get("runtimes", [])
    if any(r.get("codegen") or r.get("runtime") for r in rows):
        return any(r.get("kind") == "cuda" and (r.get("codegen") or r.get("runtime"))
                   for r in rows)
    info = facts.get("build_info", {}).get("libinfo") or {}
    if "USE_CUDA" in info:
        return is_on(info["USE_CUDA"])
    return None


def cuda_hint(record: BuildRecord) -> str:
    used = record.cmake_values.get("USE_CUDA")
    if used is not None and not is_on(used):
        return f" — CMake used USE_CUDA={used}: something in the tree overrides config.cmake"
    return ""


def raise_if_check_failed(record: BuildRecord) -> None:
    failed = store.check_failure(record)
    if failed:
        raise store.CheckFailed(failed)


def dry_run(plan: BuildPlan, tree: SourceTree, build_dir: str | None = None) -> dict[str, Any]:
    """Everything ``tk build`` would do, without doing it."""
    from toolkit.builds import python as pypkg

    return {
        "plan": plan.to_json(),
        "plan_hash": plan.hash,
        "source": tree.to_json(),
        "build_dir": str(build_dir_for(plan, tree, build_dir)),
        "build_id": store.build_key(plan.hash, tree.key),
        "stored": store.load(store.build_key(plan.hash, tree.key)) is not None,
        "python": (f"{pypkg.DIST} built from {pypkg.ffi_source(tree.root)}"
                   if plan.backend == "native" and pypkg.ffi_source(tree.root) else None),
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
