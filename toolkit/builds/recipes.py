"""Recipes: declarative TOML fragments composed into one resolved ``BuildPlan``.

A recipe file (``recipes/NAME.toml`` or the user's own) has these sections, all optional::

    description = "one line"
    [flag]       # a fragment of recipes/ that is a flag: help = "...", order = N, value = "VER"
    [options]    # config.cmake lines: set(NAME VALUE); validated against the source tree
    USE_CUDA = "ON"
    [cmake]      # -DNAME=VALUE cache arguments (CMAKE_BUILD_TYPE, CMAKE_CUDA_ARCHITECTURES, ...)
    CMAKE_BUILD_TYPE = "Debug"
    [env]        # environment of the configure and build commands
    [build]      # generator = "Ninja", targets = ["runtime"]
    [container]  # what a container image needs (llvm = "16", cuda = "12.4", packages = [...])

Composition is an ordered merge (base first, then each fragment, then ``--recipe`` files,
then ``--set``): a later value wins, and every value remembers which recipe set it. Rules
that join several values (CUTLASS needs CUDA, ...) run on the merged result and say why.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shutil
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from toolkit.errors import TkError, UserError, suggest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

# The repository's recipes/, through a symlink that also puts it in the wheel.
RECIPE_DIR = Path(__file__).resolve().parent.parent / "data" / "recipes"
SECTIONS = ("description", "flag", "options", "cmake", "env", "build", "container")
BUILD_KEYS = ("generator", "targets")
FLAG_KEYS = ("help", "order", "value")  # a fragment's [flag] table: what its flag says
DEFAULT_CUDA_ARCH = "75"  # what TVM's CI pins, for a machine without a visible GPU
# Runtime backends with a device API (option -> kind): the post-build check verifies each one
# the plan turns on.
GPU_RUNTIMES = {"USE_CUDA": "cuda", "USE_ROCM": "rocm", "USE_VULKAN": "vulkan",
                "USE_METAL": "metal", "USE_OPENCL": "opencl"}
CONFIG_HEADER = "# Written by tk build"  # marks a config.cmake tk may overwrite
SET_SYNTAX = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
CONFIG_SET = re.compile(r"^\s*set\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\b", re.M)
TVM_OPTION = re.compile(r"^\s*tvm_option\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\b", re.M)


@dataclass
class BuildPlan:
    """A resolved recipe: everything a backend needs, and nothing about a particular tree."""

    recipes: list[str]
    options: dict[str, str]
    cmake: dict[str, str]
    env: dict[str, str]
    generator: str = "Ninja"
    targets: list[str] = field(default_factory=list)
    backend: str = "native"
    container: dict[str, Any] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)  # "options.USE_CUDA" -> recipe
    notes: list[str] = field(default_factory=list)  # rules that warn rather than refuse

    @property
    def build_type(self) -> str:
        return self.cmake.get("CMAKE_BUILD_TYPE", "")

    @property
    def llvm_config(self) -> str | None:
        """The llvm-config the plan asks for (first word of USE_LLVM), or None without LLVM."""
        value = self.options.get("USE_LLVM", "OFF")
        if value.upper() in ("OFF", "0", "FALSE", "NO", ""):
            return None
        if value.upper() in ("ON", "1", "TRUE", "YES"):
            return "llvm-config"
        return value.split()[0]

    @property
    def wants_cuda(self) -> bool:
        return is_on(self.options.get("USE_CUDA", "OFF"))

    @property
    def runtimes(self) -> list[str]:
        """The GPU runtime backends this plan turns on (cuda, rocm, vulkan, ...)."""
        return [kind for option, kind in GPU_RUNTIMES.items()
                if is_on(self.options.get(option, "OFF"))]

    @property
    def runtime_only(self) -> bool:
        return bool({"runtime", "tvm_runtime"} & set(self.targets))

    def config_cmake(self) -> str:
        """The config.cmake a build directory gets: one set() line per option, with origin."""
        lines = [CONFIG_HEADER + " from recipes: " + " + ".join(self.recipes),
                 f"# plan {self.hash}"]
        for name, value in self.options.items():
            lines.append(f"set({name} {cmake_quote(value)})  # {self.origin.get('options.' + name)}")
        return "\n".join(lines) + "\n"

    def cmake_args(self) -> list[str]:
        return ["-G", self.generator, *(f"-D{k}={v}" for k, v in self.cmake.items())]

    def identity(self) -> dict[str, Any]:
        """What makes two plans the same build (not where the values came from)."""
        ident: dict[str, Any] = {
            "options": self.options, "cmake": self.cmake, "env": self.env,
            "generator": self.generator, "targets": self.targets, "backend": self.backend,
        }
        if self.backend != "native":
            ident["container"] = self.container
        return ident

    @property
    def hash(self) -> str:
        blob = json.dumps(self.identity(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "hash": self.hash, "config_cmake": self.config_cmake(),
                "cmake_args": self.cmake_args()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BuildPlan:
        """The plan ``to_json`` wrote (a record's); the derived keys are left to be derived
        again, so a plan edited after its hash was taken hashes otherwise."""
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


def is_on(value: str) -> bool:
    return str(value).upper() not in ("OFF", "0", "FALSE", "NO", "N", "", "NONE", "AUTO")


def cmake_quote(value: str) -> str:
    if value and re.fullmatch(r"[A-Za-z0-9_./+:-]+", value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def scalar(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise UserError(f"{where}: expected a string, number or boolean, got {type(value).__name__}")


def recipe_path(name: str) -> Path:
    path = RECIPE_DIR / f"{name}.toml"
    if not path.exists():
        known = sorted(p.stem for p in RECIPE_DIR.glob("*.toml"))
        raise UserError(f"no recipe named {name!r} (known: {', '.join(known)})")
    return path


def load_recipe(path: Path) -> dict[str, Any]:
    """Parse and shape-check one recipe file."""
    if not path.is_file():
        raise UserError(f"--recipe {path}: {'not a file' if path.exists() else 'no such file'}")
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"recipe {path}: not valid TOML: {e}") from None
    except UnicodeDecodeError:
        raise UserError(f"recipe {path}: not UTF-8 text (TOML files are)") from None
    for key, value in data.items():
        if key not in SECTIONS:
            raise UserError(f"recipe {path.name}: unknown section {key!r}{suggest(key, SECTIONS)}"
                            f" (known: {', '.join(SECTIONS)})")
        want = str if key == "description" else dict
        if not isinstance(value, want):
            raise UserError(f"recipe {path.name}: '{key}' must be "
                            f"{'a string' if want is str else f'a table ([{key}])'}, "
                            f"not {toml_kind(value)}")
    for key, kind in (("targets", list), ("packages", list)):
        section = "build" if key == "targets" else "container"
        value = data.get(section, {}).get(key)
        if value is not None and not isinstance(value, kind):
            raise UserError(f"recipe {path.name}: [{section}] {key} must be a list, e.g. "
                            f"{key} = [\"...\"], not {toml_kind(value)}")
    for key in data.get("build", {}):
        if key not in BUILD_KEYS:
            raise UserError(f"recipe {path.name}: unknown [build] key {key!r}"
                            f"{suggest(key, BUILD_KEYS)}")
    return data


# CMAKE_CUDA_ARCHITECTURES as CMake takes it: a list of capabilities, or one keyword.
CUDA_ARCHS = re.compile(r"native|all|all-major|\d+[a-z]?(-real|-virtual)?(;\d+[a-z]?(-real|-virtual)?)*")


def toml_kind(value: Any) -> str:
    kinds = {dict: "a table", list: "an array", str: "a string", bool: "a boolean",
             int: "a number", float: "a number"}
    return kinds.get(type(value), f"a {type(value).__name__}")


def tree_options(source_dir: Path) -> set[str]:
    """Options the tree knows: ``set()`` names in cmake/config.cmake and ``tvm_option`` names."""
    names: set[str] = set()
    config = source_dir / "cmake" / "config.cmake"
    if config.exists():
        names |= set(CONFIG_SET.findall(config.read_text(errors="replace")))
    lists = source_dir / "CMakeLists.txt"
    if lists.exists():
        names |= set(TVM_OPTION.findall(lists.read_text(errors="replace")))
    return names


def llvm_config_for(version: str | None) -> str:
    return f"llvm-config-{version}" if version else "llvm-config"


def gpu_visible() -> bool:
    return Path("/dev/nvidia0").exists() or bool(shutil.which("nvidia-smi") and
                                                  Path("/proc/driver/nvidia/gpus").exists())


# --- what the user asks for ---------------------------------------------------------------


@dataclass(frozen=True)
class Flag:
    """A command-line flag of a build request: a fragment's (declared by the ``[flag]`` table of
    its recipe file) or one of ``Request``'s own fields (declared in its metadata)."""

    name: str  # without dashes: "cuda" is --cuda
    dest: str  # the parameter the CLI hands over: a Request field, or the fragment's name
    help: str
    value: str | None = None  # the metavar of its value; None: an on/off flag
    optional_value: bool = False  # --llvm alone or --llvm 16 (a fragment's value)
    multiple: bool = False
    choices: tuple[str, ...] = ()
    fragment: str | None = None  # the recipe fragment it turns on


def _own(help: str, name: str | None = None, value: str | None = None,
         choices: tuple[str, ...] = ()) -> dict[str, Any]:
    """The metadata that makes a ``Request`` field a flag."""
    return {"flag": {"help": help, "name": name, "value": value, "choices": choices}}


@dataclass
class Request:
    """What the user asked for: recipe fragments by their flags, the request's own options,
    extra recipe files and overrides. This class and the fragments' recipe files are the only
    lists of them: the CLI's flags (``request_flags``), the JSON a bisection saves
    (``to_json``/``from_json``) and the command lines that repeat a request (``flags``) are
    derived from them."""

    # fragment -> the value its flag was given ("" for an on/off flag, or one given none):
    # {"llvm": "16", "cuda": ""} is --llvm 16 --cuda.
    fragments: dict[str, str] = field(default_factory=dict)
    no_llvm: bool = field(default=False, metadata=_own(
        "No LLVM, not even the one a GPU backend brings (codegen-only work)."))
    cuda_arch: str | None = field(default=None, metadata=_own(
        "CMAKE_CUDA_ARCHITECTURES, e.g. 80 or '80;90'.", value="LIST"))
    recipe_files: list[Path] = field(default_factory=list, metadata=_own(
        "Add your own recipe (TOML), after the built-in ones.", name="recipe", value="FILE"))
    sets: list[str] = field(default_factory=list, metadata=_own(
        "Override one option (USE_X=VALUE, or CMAKE_X=VALUE for a CMake argument).",
        name="set", value="NAME=VALUE"))
    backend: str = field(default="native", metadata=_own(
        "Where the build runs.", choices=("native", "docker")))

    def wants(self, fragment: str) -> bool:
        return fragment in self.fragments

    @property
    def llvm(self) -> str | None:
        """None: no LLVM asked for; "": the default llvm-config; "16": llvm-config-16."""
        return self.fragments.get("llvm")

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "recipe_files": [str(p) for p in self.recipe_files]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Request:
        """The request ``to_json`` wrote; a key it does not know is an error, never dropped."""
        unknown = set(data) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"a build request has no {', '.join(sorted(unknown))}")
        req = cls(**data)
        req.recipe_files = [Path(p) for p in req.recipe_files]
        return req

    @classmethod
    def from_flags(cls, values: dict[str, Any]) -> Request:
        """The request the command-line flags of ``request_flags`` ask for (by ``dest``)."""
        flags = request_flags()
        fragments = {f.fragment: ("" if values[f.dest] is True else values[f.dest])
                     for f in flags if f.fragment and values[f.dest] not in (None, False)}
        own = {f.dest: list(values[f.dest]) if f.multiple else values[f.dest]
               for f in flags if not f.fragment}
        req = cls(fragments=fragments, **own)
        req.recipe_files = [Path(p) for p in req.recipe_files]
        return req

    def flags(self) -> list[str]:
        """The command-line words that ask for this request (its defaults left out)."""
        words: list[str] = []
        for f in request_flags():
            if f.fragment:
                if self.wants(f.fragment):
                    value = self.fragments[f.fragment]
                    words += [f"--{f.name}", value] if value else [f"--{f.name}"]
                continue
            value = getattr(self, f.dest)
            default = next(x for x in fields(self) if x.name == f.dest).default
            if f.multiple:
                words += [w for item in value for w in (f"--{f.name}", str(item))]
            elif value is True:
                words.append(f"--{f.name}")
            elif value not in (None, False, default):
                words += [f"--{f.name}", str(value)]
        return words


def fragment_flags(recipe_dir: Path | None = None) -> list[Flag]:
    """The fragments that are also flags: each built-in recipe file with a ``[flag]`` table, in
    the order they compose (its ``order``)."""
    return list(_fragment_flags(recipe_dir or RECIPE_DIR))


@functools.cache
def _fragment_flags(recipe_dir: Path) -> tuple[Flag, ...]:
    # Once per process: the CLI's options, a request's words and its plan all ask.
    found = []
    for path in sorted(recipe_dir.glob("*.toml")):
        declared = load_recipe(path).get("flag")
        if declared is None:
            continue
        unknown = set(declared) - set(FLAG_KEYS)
        if unknown or not isinstance(declared.get("help"), str) \
                or not isinstance(declared.get("order"), int):
            raise TkError(f"recipe {path.name}: [flag] takes help (text), order (a number) and "
                          f"value (a metavar), got {sorted(declared)}")
        found.append((declared["order"], Flag(
            name=path.stem, dest=path.stem.replace("-", "_"), help=declared["help"],
            value=f"[{declared['value']}]" if "value" in declared else None,
            optional_value="value" in declared, fragment=path.stem)))
    return tuple(f for _, f in sorted(found, key=lambda pair: (pair[0], pair[1].name)))


def request_flags(recipe_dir: Path | None = None) -> list[Flag]:
    """Every flag of a build request: the fragments' first, in the order they compose, then
    ``Request``'s own fields'."""
    flags = fragment_flags(recipe_dir)
    for f in fields(Request):
        declared = f.metadata.get("flag")
        if declared is None:
            continue
        multiple = f.default_factory is list  # type: ignore[comparison-overlap]
        flags.append(Flag(name=declared["name"] or f.name.replace("_", "-"), dest=f.name,
                          help=declared["help"], value=declared["value"], multiple=multiple,
                          choices=declared["choices"]))
    taken = [f.dest for f in flags]
    if len(set(taken)) != len(taken):
        raise TkError(f"two build flags share a name: {sorted(d for d in taken if taken.count(d) > 1)}")
    return flags


def gpu_brings_llvm(req: Request) -> str | None:
    """The GPU option that makes this request add LLVM, or None. A GPU model's host side
    (argument packing, kernel launches) is compiled by LLVM: a compiler built with CUDA and
    without LLVM cannot build any model (``target.build.llvm`` is missing)."""
    if req.llvm is not None or req.no_llvm or req.wants("runtime-only"):
        return None
    for name in req.fragments:
        options = load_recipe(recipe_path(name)).get("options", {})
        if any(option in GPU_RUNTIMES and is_on(scalar(value, name))
               for option, value in options.items()):
            return f"--{name}"
    for item in req.sets:
        m = SET_SYNTAX.match(item)
        if m and m.group(1) in GPU_RUNTIMES and is_on(m.group(2)):
            return f"--set {item}"
    return None


def fragments_of(req: Request) -> list[str]:
    """The fragments a request composes, in order: those it asks for, and LLVM where a GPU
    backend brings it."""
    if req.no_llvm and req.llvm is not None:
        raise UserError("--llvm and --no-llvm contradict each other: pick one")
    known = [f.fragment for f in fragment_flags()]
    for name in req.fragments:
        if name not in known:
            raise UserError(f"no recipe fragment named {name!r}{suggest(name, known)} "
                            f"(known: {', '.join(known)})")
    brought = {"llvm"} if gpu_brings_llvm(req) is not None else set()
    return [name for name in known if req.wants(name) or name in brought]


def resolve(req: Request, source_dir: Path | None = None) -> BuildPlan:
    """Compose base + fragments + recipe files + --set into a plan, validated for the tree."""
    layers: list[tuple[str, dict[str, Any]]] = [("base", load_recipe(recipe_path("base")))]
    layers += [(name, load_recipe(recipe_path(name))) for name in fragments_of(req)]
    layers += [(str(p), load_recipe(Path(p))) for p in req.recipe_files]
    for name, data in layers[len(layers) - len(req.recipe_files):]:
        if "flag" in data:
            raise UserError(f"--recipe {name}: [flag] makes a fragment of tk's own recipes/ a "
                            "flag; a recipe given with --recipe has no flag (drop the table)")
    plan = BuildPlan(recipes=[], options={}, cmake={}, env={}, backend=req.backend)
    for name, data in layers:
        merge(plan, Path(name).name if name.endswith(".toml") else name, data)
    if "USE_LLVM" in plan.options:  # a user's recipe may use the placeholder too
        plan.options["USE_LLVM"] = plan.options["USE_LLVM"].replace(
            "{llvm_config}", llvm_config_for(req.llvm))
    if req.llvm:
        plan.container["llvm"] = req.llvm
    if req.cuda_arch:
        if not CUDA_ARCHS.fullmatch(req.cuda_arch):
            raise UserError(f"--cuda-arch {req.cuda_arch!r}: expected compute capabilities like "
                            "80 or '80;90a' (each may end in -real or -virtual), or native, all, "
                            "all-major")
        plan.cmake["CMAKE_CUDA_ARCHITECTURES"] = req.cuda_arch
        plan.origin["cmake.CMAKE_CUDA_ARCHITECTURES"] = "--cuda-arch"
    for item in req.sets:
        apply_set(plan, item)
    brought = gpu_brings_llvm(req)
    if brought:
        plan.origin["options.USE_LLVM"] = f"llvm (brought by {brought})"
        plan.notes.append(f"{brought} brings LLVM: a GPU model's host code (argument packing, "
                          "kernel launches) is compiled by LLVM, so without it this TVM could "
                          "not build any model — --no-llvm or --runtime-only leave it out")
    elif req.no_llvm and plan.runtimes and not req.wants("runtime-only"):
        plan.notes.append("--no-llvm: this compiler cannot build the host side of a GPU model "
                          "(target.build.llvm is missing); fine for codegen-only work")
    known = tree_options(source_dir) if source_dir is not None else None
    validate(plan, known)
    if source_dir is not None and "runtime" in plan.targets:
        adapt_runtime_target(plan, source_dir)
    apply_rules(plan, source_dir)
    plan.container.setdefault("dockerfile", "cuda" if plan.wants_cuda else "cpu")
    return plan


def merge(plan: BuildPlan, name: str, data: dict[str, Any]) -> None:
    plan.recipes.append(name)
    for section in ("options", "cmake", "env"):
        target = getattr(plan, section)
        for key, value in data.get(section, {}).items():
            target[key] = scalar(value, f"recipe {name}: [{section}] {key}")
            plan.origin[f"{section}.{key}"] = name
    build = data.get("build", {})
    if "generator" in build:
        plan.generator = scalar(build["generator"], f"recipe {name}: generator")
    if "targets" in build:
        plan.targets = [scalar(t, f"recipe {name}: targets") for t in build["targets"]]
    for key, value in data.get("container", {}).items():
        plan.container[key] = value


def apply_set(plan: BuildPlan, item: str) -> None:
    m = SET_SYNTAX.match(item)
    if not m:
        raise UserError(f"--set {item!r}: expected NAME=VALUE, e.g. --set USE_CUDA=ON")
    name, value = m.groups()
    section = "cmake" if name.startswith("CMAKE_") else "options"
    getattr(plan, section)[name] = value
    plan.origin[f"{section}.{name}"] = "--set"


CMAKE_VARIABLES = (
    "CMAKE_BUILD_TYPE", "CMAKE_CUDA_ARCHITECTURES", "CMAKE_CXX_FLAGS", "CMAKE_C_FLAGS",
    "CMAKE_CUDA_FLAGS", "CMAKE_CXX_COMPILER", "CMAKE_C_COMPILER", "CMAKE_CUDA_COMPILER",
    "CMAKE_CXX_COMPILER_LAUNCHER", "CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CUDA_COMPILER_LAUNCHER",
    "CMAKE_EXPORT_COMPILE_COMMANDS", "CMAKE_INSTALL_PREFIX", "CMAKE_PREFIX_PATH",
    "CMAKE_POLICY_VERSION_MINIMUM", "CMAKE_CXX_STANDARD", "CMAKE_VERBOSE_MAKEFILE",
    "CMAKE_SHARED_LINKER_FLAGS", "CMAKE_EXE_LINKER_FLAGS", "CMAKE_LINKER_TYPE",
    "CMAKE_CUDA_HOST_COMPILER", "CMAKE_POSITION_INDEPENDENT_CODE",
)
BUILD_TYPES = ("Debug", "Release", "RelWithDebInfo", "MinSizeRel")


def validate_cmake(plan: BuildPlan) -> None:
    """CMake ignores a misspelt variable with a warning nobody reads: catch near-misses."""
    for name in plan.cmake:
        where = plan.origin.get(f"cmake.{name}", "?")
        if name not in CMAKE_VARIABLES and suggest(name, CMAKE_VARIABLES):
            raise UserError(f"unknown CMake variable {name}{suggest(name, CMAKE_VARIABLES)} "
                            f"(from {where})")
    build_type = plan.cmake.get("CMAKE_BUILD_TYPE")
    if build_type is not None and build_type not in BUILD_TYPES:
        raise UserError(f"CMAKE_BUILD_TYPE={build_type} (from "
                        f"{plan.origin.get('cmake.CMAKE_BUILD_TYPE')}) is not a build type"
                        f"{suggest(build_type, BUILD_TYPES)} (known: {', '.join(BUILD_TYPES)})")


def validate(plan: BuildPlan, known: set[str] | None) -> None:
    """Every option must be one the source tree declares: typos are refused with a guess."""
    validate_cmake(plan)
    if not known:
        return
    for name in plan.options:
        if name not in known:
            where = plan.origin.get(f"options.{name}", "?")
            raise UserError(f"unknown option {name}{suggest(name, known)} "
                            f"(from {where}; not in the tree's cmake/config.cmake or CMakeLists.txt)")


def adapt_runtime_target(plan: BuildPlan, source_dir: Path) -> None:
    """TVM names its runtime-only target ``runtime``; a tree without it still has the
    ``tvm_runtime`` library target. Where a GPU runtime is a library of its own
    (``libtvm_runtime_cuda.so`` on main), ``runtime`` does not depend on it, so a
    ``--runtime-only --cuda`` build would leave out the very runtime it was asked for: it is
    built as a target too."""
    lists = source_dir / "CMakeLists.txt"
    text = lists.read_text(errors="replace") if lists.exists() else ""
    runtime = re.search(r"add_custom_target\s*\(\s*runtime\b([^)]*)\)", text)
    if runtime is None and "tvm_runtime" in text:
        plan.targets = ["tvm_runtime" if t == "runtime" else t for t in plan.targets]
        plan.notes.append("this tree has no 'runtime' target: building 'tvm_runtime'")
    for kind in plan.runtimes:
        library = f"tvm_runtime_{kind}"
        if separate_runtime_library(source_dir, kind) and not (
                runtime and re.search(rf"\b{library}\b", runtime.group(1))):
            plan.targets.append(library)
            plan.notes.append(f"the tree's 'runtime' target leaves out lib{library}.so, "
                              f"--{kind}'s runtime: building '{library}' too")


def separate_runtime_library(source_dir: Path, kind: str) -> bool:
    """Does the tree build ``kind``'s runtime as a library of its own
    (``add_library(tvm_runtime_<kind> SHARED`` in cmake/modules)?"""
    pattern = re.compile(rf"add_library\s*\(\s*tvm_runtime_{kind}\s+SHARED", re.I)
    return any(pattern.search(f.read_text(errors="replace"))
               for f in (source_dir / "cmake" / "modules").glob("*.cmake"))


def exclude_libs_always(source_dir: Path | None) -> bool:
    """Does the tree hide statically linked libraries' symbols (-Wl,--exclude-libs,ALL) in
    every build type? TVM's cmake/utils/Library.cmake does since the tvm_compiler split."""
    if source_dir is None:
        return False
    lib = source_dir / "cmake" / "utils" / "Library.cmake"
    return lib.exists() and "--exclude-libs,ALL" in lib.read_text(errors="replace")


def apply_rules(plan: BuildPlan, source_dir: Path | None = None) -> None:
    """Rules across values: refuse what cannot build, note what silently does nothing."""
    opts, cuda = plan.options, plan.wants_cuda
    for dep, why in (("USE_CUTLASS", "CUTLASS kernels are CUDA code"),
                     ("USE_CUBLAS", "cuBLAS is a CUDA library"),
                     ("USE_CUDNN", "cuDNN is a CUDA library")):
        if is_on(opts.get(dep, "OFF")) and not cuda:
            raise UserError(f"{dep}={opts[dep]} (from {plan.origin.get('options.' + dep)}) needs "
                            f"USE_CUDA=ON: {why} — add --cuda")
    arch = plan.cmake.get("CMAKE_CUDA_ARCHITECTURES")
    if cuda and arch is None and plan.backend == "native" and gpu_visible():
        plan.cmake["CMAKE_CUDA_ARCHITECTURES"] = "native"
        plan.origin["cmake.CMAKE_CUDA_ARCHITECTURES"] = "default (a GPU is visible)"
        plan.notes.append("CUDA architectures: native (the GPUs visible here); pick others "
                          "with --cuda-arch 80;90")
    elif cuda and arch is None:
        plan.cmake["CMAKE_CUDA_ARCHITECTURES"] = DEFAULT_CUDA_ARCH
        plan.origin["cmake.CMAKE_CUDA_ARCHITECTURES"] = "default"
        plan.notes.append(f"CUDA architectures default to {DEFAULT_CUDA_ARCH} (as TVM's CI; no "
                          "GPU visible for 'native'); pick others with --cuda-arch 80;90")
    if cuda and arch is not None and "native" in arch.split(";"):
        if plan.backend != "native":
            raise UserError("CMAKE_CUDA_ARCHITECTURES=native needs a visible GPU and a container "
                            "build sees none — pass --cuda-arch 80 (or another list)")
        if not gpu_visible():
            raise UserError("CMAKE_CUDA_ARCHITECTURES=native needs a visible GPU and none is "
                            "visible here — pass --cuda-arch 80 (or another list)")
    if plan.build_type == "Debug" and is_on(opts.get("HIDE_PRIVATE_SYMBOLS", "OFF")):
        if exclude_libs_always(source_dir):
            plan.notes.append("HIDE_PRIVATE_SYMBOLS=ON in a Debug build: TVM's own symbols stay "
                              "exported (-fvisibility=hidden is for non-Debug builds), while "
                              "statically linked libraries' (LLVM's) are hidden in every build "
                              "type (-Wl,--exclude-libs,ALL, cmake/utils/Library.cmake)")
        else:
            plan.notes.append("HIDE_PRIVATE_SYMBOLS=ON is inert in a Debug build: TVM applies "
                              "it to non-Debug builds only, so LLVM symbols stay exported")
    if {"runtime", "tvm_runtime"} & set(plan.targets) and plan.llvm_config:
        plan.notes.append("USE_LLVM is set but only the runtime library is built: LLVM is "
                          "configured (llvm-config must still work) yet not linked")
