"""The build record: what a stored build really is, typed, saved as ``manifest.json``.

Everything is read back from disk after the build (CMake's cache and TVMBuildOptions.txt,
the libraries written, the tools that ran), never copied from the request. ``save`` writes it
last and atomically, so a record present means a complete store entry; ``load`` returns None
for a record that is absent, unreadable or from a tk that wrote another shape.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from toolkit.builds.source import Submodule

FORMAT = 2  # bump when a field changes meaning; older records are then rebuilt, not misread


@dataclass
class SourceRecord:
    dir: str
    layout: str
    commit: str | None  # None for a tree without git (a release tarball)
    content_hash: str | None  # such a tree's hash of its build-relevant files
    dirty: bool
    dirty_paths: list[str]
    dirty_hash: str | None  # hash of the uncommitted build-relevant changes (and submodules')
    tree_key: str
    submodules: list[Submodule]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["submodules"] = {s.path: s.to_json() for s in self.submodules}
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SourceRecord:
        subs = [Submodule.from_json(p, d) for p, d in data.get("submodules", {}).items()]
        return cls(dir=data["dir"], layout=data["layout"], commit=data.get("commit"),
                   content_hash=data.get("content_hash"), dirty=bool(data.get("dirty")),
                   dirty_paths=list(data.get("dirty_paths", [])),
                   dirty_hash=data.get("dirty_hash"), tree_key=data.get("tree_key", ""),
                   submodules=subs)


@dataclass
class Artifact:
    """One library the build wrote, as stored: ``path`` is a hard link to the store object
    ``sha256`` (a symlink such as libfoo.so -> libfoo.so.1 keeps ``link``, no object)."""

    name: str
    path: str
    built: str
    size: int
    sha256: str | None
    link: str | None = None


@dataclass
class PythonPackage:
    """The tree's tvm-ffi Python package, built from the tree and kept with the build."""

    name: str  # the distribution, e.g. apache-tvm-ffi
    version: str
    wheel: str  # the wheel in the store (content-addressed)
    sha256: str
    site: str  # the unpacked package directory this build puts on PYTHONPATH
    source: str  # the directory it was built from
    python: str  # the interpreter tag it was built for (cp311): its core is per-version


@dataclass
class RuntimeCheck:
    """A runtime backend the plan asked for (cuda, vulkan, ...), checked after the build."""

    kind: str
    library: str | None  # the library that carries it (None: inside libtvm_runtime)
    loads: bool
    device_api: bool | None  # device_api.<kind> registered (None: not answerable here)
    kernel: bool | None = None  # a tiny kernel ran (None: no device here)
    detail: str = ""


@dataclass
class Provenance:
    """Where the sources of the objects a build directory's Ninja file makes lie (Ninja's
    compilation database: the command of every object): all in the tree or its build
    directory, or not."""

    objects: int | None  # objects whose source was found; None: not checked (``note``: why)
    outside: list[str] = field(default_factory=list)  # sources outside both (the first 20)
    outside_count: int = 0
    note: str = ""


@dataclass
class Surface:
    """What ``import tvm`` meets of a build beyond its bytes: the digest of the global
    functions and object types its libraries register with tvm-ffi (with the interpreter and
    tvm-ffi that loaded them: toolkit/probes/registry.py), and of the tree's Python sources.
    Two builds with the same surface import alike unless a function's body changed what
    the import itself calls."""

    registry: str  # sha256 of the registered names, the interpreter and tvm-ffi's version
    functions: int  # how many global functions the build's libraries register
    types: int | None  # how many object types (None: this tvm-ffi cannot list them)
    python_sources: str  # sha256 of the .py files of the tree's Python packages


@dataclass
class PostBuildCheck:
    ok: bool
    problems: list[str]
    cuda: bool | None = None
    runtimes: list[RuntimeCheck] = field(default_factory=list)
    tvm_file: str | None = None
    tvm_version: str | None = None
    libinfo: dict[str, str] | None = None
    loaded: list[str] = field(default_factory=list)
    load_only: bool = False
    doctor: list[dict[str, str]] = field(default_factory=list)
    provenance: Provenance | None = None
    surface: Surface | None = None  # None: not measured (no tvm-ffi registry in this build)
    # The build whose ``import tvm`` this check stands on: a rebuild with the same surface as
    # an earlier build of the same directory and plan does not import again (None: imported).
    import_from: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PostBuildCheck:
        known = {k: v for k, v in data.items() if k in {f.name for f in fields(cls)}}
        known["runtimes"] = [RuntimeCheck(**r) for r in data.get("runtimes", [])]
        if data.get("provenance"):
            known["provenance"] = Provenance(**data["provenance"])
        if data.get("surface"):
            known["surface"] = Surface(**data["surface"])
        return cls(**known)


@dataclass
class Pulled:
    """Where a build fetched from a team's registry came from (``toolkit.builds.registry``):
    the libraries are the builder's, checked against their digests and by this machine's own
    post-build check; its build directory and log stayed with the builder (the record's
    ``timings`` are the builder's too; this machine's are here)."""

    reference: str  # registry/repository:tag@digest
    digest: str  # the manifest's
    at: str  # when it was pulled (UTC)
    source_dir: str  # the builder's tree, build directory and store entry
    build_dir: str
    entry: str
    provenance: Provenance | None = None  # what the builder's check found of its sources
    timings: dict[str, float] = field(default_factory=dict)  # here: pull, check (seconds)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Pulled:
        known = {k: v for k, v in data.items() if k in {f.name for f in fields(cls)}}
        if data.get("provenance"):
            known["provenance"] = Provenance(**data["provenance"])
        return cls(**known)


@dataclass
class BuildRecord:
    id: str
    created: str
    tk_version: str
    plan_hash: str
    plan: dict[str, Any]  # BuildPlan.to_json(): recipes, options, cmake, origin, notes
    source: SourceRecord
    backend: str
    image_id: str | None
    build_dir: str
    toolchain: dict[str, str]  # tool -> version line, as seen where the build ran
    cmake_values: dict[str, str]  # what CMake used (TVMBuildOptions.txt over CMakeCache.txt)
    mismatches: list[dict[str, str]]
    artifacts: list[Artifact]
    timings: dict[str, float]
    log: str
    commands: list[str]
    preflight: list[dict[str, Any]]
    env: dict[str, str]
    runtimes: list[str] = field(default_factory=list)  # runtime backends the plan asked for
    python: PythonPackage | None = None
    check: PostBuildCheck | None = None
    pulled: Pulled | None = None  # fetched from a registry, not built here
    format: int = FORMAT

    @property
    def recipes(self) -> list[str]:
        return list(self.plan.get("recipes", []))

    @property
    def lib_dir(self) -> Path:
        return Path(self.log).parent / "lib"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["source"] = self.source.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BuildRecord:
        if data.get("format") != FORMAT:
            raise ValueError(f"record format {data.get('format')}, this tk reads {FORMAT}")
        known = {k: v for k, v in data.items() if k in {f.name for f in fields(cls)}}
        known["source"] = SourceRecord.from_json(data["source"])
        known["artifacts"] = [Artifact(**a) for a in data.get("artifacts", [])]
        if data.get("python"):
            known["python"] = PythonPackage(**data["python"])
        if data.get("check"):
            known["check"] = PostBuildCheck.from_json(data["check"])
        if data.get("pulled"):
            known["pulled"] = Pulled.from_json(data["pulled"])
        return cls(**known)

    def save(self, path: Path) -> Path:
        """Write atomically: a record present means a complete store entry."""
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=2) + "\n")
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: Path) -> BuildRecord | None:
        try:
            return cls.from_json(json.loads(path.read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            return None
