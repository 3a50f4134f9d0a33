"""Pre-flight checks: what would make CMake or the compiler fail later, caught before, with a fix.

Each check looks at the plan and the source tree; host tools are checked only for builds
that run on the host (a container brings its own).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from toolkit.builds.recipes import BuildPlan, is_on
from toolkit.builds.source import SourceTree
from toolkit.builds.tools import cmake_binary, tool_output

FFI_MIN_CMAKE = (3, 26)


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None
    warn: bool = False  # builds, but the user should know (ok stays True)

    def to_json(self) -> dict:
        return asdict(self)


def version_of(argv: list[str]) -> tuple[int, ...] | None:
    """The first dotted version in a tool's output, or None when the tool does not run."""
    return _version_of(tuple(argv))


@functools.cache
def _version_of(argv: tuple[str, ...]) -> tuple[int, ...] | None:
    out = tool_output(argv)
    if out is None:
        return None
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", out)
    return tuple(int(g) for g in m.groups() if g is not None) if m else None


def dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def required_cmake(tree: SourceTree) -> tuple[tuple[int, ...], str]:
    """The CMake the tree needs, and why: tvm-ffi wants 3.26, else cmake_minimum_required."""
    if (tree.root / "3rdparty" / "tvm-ffi").exists():
        return FFI_MIN_CMAKE, "3rdparty/tvm-ffi requires it"
    text = (tree.root / "CMakeLists.txt").read_text(errors="replace")
    m = re.search(r"cmake_minimum_required\s*\(\s*VERSION\s+(\d+)\.(\d+)", text, re.I)
    need = (int(m.group(1)), int(m.group(2))) if m else (3, 18)
    return need, "CMakeLists.txt's cmake_minimum_required"


def required_llvm(tree: SourceTree) -> int | None:
    """The oldest LLVM major the tree accepts (TVM >= 0.24: 15), from its FindLLVM.cmake."""
    find = tree.root / "cmake" / "utils" / "FindLLVM.cmake"
    if not find.exists():
        return None
    text = find.read_text(errors="replace")
    # TVM compares TVM_LLVM_VERSION (major * 10 + minor) against e.g. 150.
    m = re.search(r"TVM_LLVM_VERSION\}?\s+(?:VERSION_)?LESS\s+(\d+)", text)
    return int(m.group(1)) // 10 if m else None


def check_cmake(tree: SourceTree) -> Check:
    need, why = required_cmake(tree)
    have = version_of([cmake_binary(), "--version"])
    if have is None:
        return Check("cmake", False, "cmake not found on PATH",
                     f"pip install 'cmake>={dotted(need)}'")
    if have < need:
        return Check("cmake", False, f"cmake {dotted(have)} is older than {dotted(need)} ({why})",
                     f"pip install 'cmake>={dotted(need)}' (then check `cmake --version`)")
    return Check("cmake", True, f"cmake {dotted(have)} (>= {dotted(need)}: {why})")


def old_cmake_minimums(root: Path) -> list[str]:
    """The tree itself (TVM <= 0.8 asked for 3.2) or vendored CMake projects asking for
    CMake < 3.5, which CMake 4 refuses to configure."""
    found = []
    for path in [root / "CMakeLists.txt", *root.glob("3rdparty/*/CMakeLists.txt"),
                 *root.glob("3rdparty/*/3rdparty/*/CMakeLists.txt")]:
        m = re.search(r"cmake_minimum_required\s*\(\s*VERSION\s+(\d+)\.(\d+)",
                      path.read_text(errors="replace"), re.I)
        if m and (int(m.group(1)), int(m.group(2))) < (3, 5):
            found.append(path.relative_to(root).as_posix())
    return sorted(found)


def adapt_to_host(plan: BuildPlan, root: Path) -> None:
    """Host facts that change the plan itself (so the plan hash says so): CMake 4 needs
    CMAKE_POLICY_VERSION_MINIMUM to configure vendored projects older than CMake 3.5; an
    LLVM whose static libraries are incomplete is linked as a shared library."""
    if plan.backend != "native":
        return
    adapt_llvm_link(plan, root)
    if "CMAKE_POLICY_VERSION_MINIMUM" in plan.cmake:
        return
    olds = old_cmake_minimums(root)  # reading a few files is cheaper than running cmake
    have = version_of([cmake_binary(), "--version"]) if olds else None
    if olds and have and have >= (4, 0):
        plan.cmake["CMAKE_POLICY_VERSION_MINIMUM"] = "3.5"
        plan.origin["cmake.CMAKE_POLICY_VERSION_MINIMUM"] = f"host cmake {dotted(have)}"
        plan.notes.append(f"cmake {dotted(have)} refuses projects asking for CMake < 3.5 "
                          f"({', '.join(olds[:3])}): added -DCMAKE_POLICY_VERSION_MINIMUM=3.5 "
                          "(or install cmake<4)")


def check_generator(plan: BuildPlan) -> Check | None:
    if plan.generator != "Ninja":
        return None
    have = version_of(["ninja", "--version"])
    if have is None:
        return Check("ninja", False, "ninja not found on PATH",
                     "apt-get install ninja-build (or pip install ninja)")
    return Check("ninja", True, f"ninja {dotted(have)}")


def check_llvm(plan: BuildPlan, tree: SourceTree) -> list[Check]:
    config = plan.llvm_config
    if config is None:
        return []
    have = version_of([config, "--version"])
    if have is None:
        found = sorted({Path(p).name for d in ("/usr/bin", "/usr/local/bin")
                        for p in Path(d).glob("llvm-config*")})
        hint = f" (found: {', '.join(found)})" if found else ""
        major = re.search(r"-(\d+)$", config)
        pkg = f"llvm-{major.group(1)}-dev" if major else "llvm-dev"
        return [Check("llvm", False, f"{config} not found{hint}",
                      f"apt-get install {pkg}, or pick an installed one with --llvm VER")]
    checks = []
    need = required_llvm(tree)
    if need and have[0] < need:
        checks.append(Check("llvm", False, f"{config} is LLVM {dotted(have)}; this tree needs "
                            f"LLVM >= {need}",
                            f"apt-get install llvm-{need}-dev and build with --llvm {need}"))
    else:
        checks.append(Check("llvm", True, f"{config}: LLVM {dotted(have)}"
                            + (f" (>= {need})" if need else "")))
    checks.extend(check_llvm_deps(config, have))
    if "--link-static" in plan.options.get("USE_LLVM", "").split() and links_libfiles(tree.root):
        checks.extend(check_llvm_static(plan.options["USE_LLVM"].split(), have))
    return checks


def check_llvm_deps(config: str, have: tuple[int, ...]) -> list[Check]:
    """LLVM's own link dependencies: LLVM 16's CMake package needs zstd."""
    libs = tool_output((config, "--system-libs"))  # asked once per llvm-config binary
    if libs is None:
        return []
    wants_zstd = "zstd" in libs or have[0] == 16
    if not wants_zstd:
        return []
    if any(Path(d, "zstd.h").exists() for d in ("/usr/include", "/usr/local/include")):
        return [Check("zstd", True, f"LLVM {have[0]} links zstd; zstd.h present")]
    return [Check("zstd", False, f"LLVM {have[0]} links zstd but its headers are missing "
                  "(configure would fail with 'Could NOT find zstd')", "apt-get install libzstd-dev")]


def links_libfiles(root: Path) -> bool:
    """Does the tree's FindLLVM.cmake link what ``<USE_LLVM> --libfiles`` names (TVM's does,
    with USE_LLVM's own arguments, e.g. --link-static)?"""
    find = root / "cmake" / "utils" / "FindLLVM.cmake"
    return find.exists() and "--libfiles" in find.read_text(errors="replace")


def missing_libfiles(use_llvm: list[str]) -> list[str] | None:
    """The files ``<USE_LLVM> --libfiles`` names that do not exist, as TVM's FindLLVM.cmake
    links them; None when llvm-config does not answer."""
    out = tool_output((*use_llvm, "--libfiles"))
    if out is None:
        return None
    return [f for f in out.split() if f.startswith("/") and not Path(f).exists()]


def adapt_llvm_link(plan: BuildPlan, root: Path) -> None:
    """The llvm recipe links LLVM's static libraries into libtvm. Debian bookworm's
    llvm-15-dev names libPolly.a among them, which no bookworm package ships: where the
    archives are incomplete and the shared libLLVM is there, the plan links that instead and
    says so. A USE_LLVM the user chose is kept as it is (pre-flight explains it)."""
    words = plan.options.get("USE_LLVM", "").split()
    if ("--link-static" not in words or not links_libfiles(root)
            or not plan.origin.get("options.USE_LLVM", "").startswith("llvm")):
        return
    missing = missing_libfiles(words)
    shared = [words[0], "--link-shared"]
    if not missing or missing_libfiles(shared) != []:
        return
    libllvm = (tool_output((*shared, "--libfiles")) or "").split()
    plan.options["USE_LLVM"] = " ".join(shared)
    plan.origin["options.USE_LLVM"] += f" (shared: {Path(missing[0]).name} is missing)"
    plan.notes.append(f"{' '.join(words)} --libfiles names {missing[0]}, which is missing: "
                      f"linking the shared {' '.join(Path(f).name for f in libllvm)} instead, "
                      "which the built libraries then load at run time; "
                      f"--set USE_LLVM='{' '.join(words)}' insists on the static one")


def check_llvm_static(use_llvm: list[str], have: tuple[int, ...]) -> list[Check]:
    """Every archive ``<USE_LLVM> --libfiles`` names must exist, as TVM's FindLLVM.cmake asks
    it; Debian's llvm-15-dev names libPolly.a under --link-static, which no bookworm package
    ships (Ninja would stop late with "missing and no known rule to make it")."""
    config = use_llvm[0]
    missing = missing_libfiles(use_llvm)
    if not missing:
        return []
    polly = any("Polly" in Path(f).name for f in missing)
    fix = (f"apt-get install libpolly-{have[0]}-dev if your distribution has it; else link "
           f"LLVM's shared library: --set USE_LLVM={config} (or --llvm 16 with libpolly-16-dev)"
           if polly else f"install LLVM {have[0]}'s static libraries, or link its shared "
           f"library: --set USE_LLVM={config}")
    more = f" (+{len(missing) - 1} more)" if len(missing) > 1 else ""
    return [Check("llvm static libraries", False,
                  f"{' '.join(use_llvm)} --libfiles names {missing[0]}{more}, which is missing",
                  fix)]


def check_cuda(plan: BuildPlan) -> Check | None:
    if not plan.wants_cuda:
        return None
    have = version_of(["nvcc", "--version"])
    if have is None:
        return Check("nvcc", False, "USE_CUDA=ON but nvcc is not on PATH",
                     "install the CUDA toolkit and put its bin/ on PATH (or --backend docker)")
    return Check("nvcc", True, f"nvcc {dotted(have)}; architectures "
                 f"{plan.cmake.get('CMAKE_CUDA_ARCHITECTURES')}")


# Where TVM's cmake/utils/FindCUDA.cmake looks for libcuda.so under a CUDA toolkit.
TOOLKIT_LIB_DIRS = ("lib", "lib64", "targets/x86_64-linux/lib", "targets/x86_64-linux/lib/stubs",
                    "targets/sbsa-linux/lib", "targets/sbsa-linux/lib/stubs", "lib64/stubs",
                    "lib/x86_64-linux-gnu")
SYSTEM_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                   "/usr/lib", "/usr/local/lib")


def links_libcuda(root: Path) -> bool:
    """Does the tree stop configuring CUDA without libcuda.so (TVM main's
    cmake/modules/CUDA.cmake: "USE_CUDA is on but libcuda was not found")?"""
    cuda = root / "cmake" / "modules" / "CUDA.cmake"
    return cuda.exists() and re.search(r"if\s*\(\s*NOT\s+CUDA_CUDA_LIBRARY\s*\)",
                                       cuda.read_text(errors="replace")) is not None


def named_toolkit(plan: BuildPlan) -> str | None:
    """The CUDA toolkit USE_CUDA names (a directory), if it names one."""
    value = plan.options.get("USE_CUDA", "")
    return value if os.path.isdir(value) else None


def libcuda_dirs(plan: BuildPlan) -> list[Path]:
    """Where CMake will look for libcuda.so: under USE_CUDA when it names the toolkit (and
    nowhere else), else under the toolkit nvcc belongs to and the system's library dirs."""
    named = named_toolkit(plan)
    if named:
        return [Path(named, d) for d in TOOLKIT_LIB_DIRS]
    roots = [os.environ.get(v) for v in ("CUDA_TOOLKIT_ROOT", "CUDA_PATH", "CUDA_HOME")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(str(Path(os.path.realpath(nvcc)).parent.parent))
    roots.append("/usr/local/cuda")
    dirs = [Path(r, d) for r in dict.fromkeys(r for r in roots if r) for d in TOOLKIT_LIB_DIRS]
    return dirs + [Path(d) for d in SYSTEM_LIB_DIRS]


def check_libcuda(plan: BuildPlan, tree: SourceTree) -> Check | None:
    """A machine with nvcc but no driver and no stub (a build container, CI) configures no
    CUDA build of TVM main: say so before the build, not after CMake."""
    if not plan.wants_cuda or not links_libcuda(tree.root):
        return None
    found = next((d / "libcuda.so" for d in libcuda_dirs(plan)
                  if (d / "libcuda.so").exists()), None)
    if found is not None:
        return Check("libcuda", True, f"links {found}")
    where = named_toolkit(plan) or "the CUDA toolkit or the system's library directories"
    return Check("libcuda", False, "this tree links libcuda.so (the CUDA driver API; "
                 "cmake/modules/CUDA.cmake stops without it) and there is none: no driver "
                 f"here, and no stub in {where} (lib64/stubs/libcuda.so)",
                 "install the toolkit's driver stub (lib64/stubs/libcuda.so, e.g. the "
                 "cuda-driver-dev package) or the NVIDIA driver, or --backend docker")


def check_ccache(plan: BuildPlan) -> Check | None:
    if plan.options.get("USE_CCACHE", "").upper() != "ON":
        return None
    if shutil.which("ccache"):
        return Check("ccache", True, "ccache on PATH")
    return Check("ccache", False, "USE_CCACHE=ON (--ccache) but ccache is not on PATH",
                 "apt-get install ccache, or drop --ccache")


# Submodules only some options compile (by the last part of their path): left out of a
# checkout, they matter only when the plan turns the option on.
OPTIONAL_SUBMODULES = {
    "cutlass": "USE_CUTLASS", "cutlass_fpA_intB_gemm": "USE_CUTLASS",
    "libflash_attn": "USE_CUTLASS", "OpenCL-Headers": "USE_OPENCL",
    "flashinfer": "USE_FLASHINFER", "vta-hw": "USE_VTA_FSIM",
}


def check_submodules(tree: SourceTree, plan: BuildPlan | None = None) -> list[Check]:
    """Refuse only what cannot build (a needed submodule that is empty, a conflict); a
    submodule at another commit or with local changes is how a fork developer works inside
    it: a warning, with the SHA and dirty state in the build record."""
    checks = []
    for sub in tree.submodules:
        name = f"submodule {sub.path}"
        option = OPTIONAL_SUBMODULES.get(Path(sub.path).name)
        unused = option is not None and not (plan and is_on(plan.options.get(option, "OFF")))
        dirty = ", with uncommitted changes" if sub.dirty else ""
        if sub.state == "uninitialised" and unused:
            checks.append(Check(name, True, f"empty (only {option}=ON needs it)"))
        elif sub.state == "uninitialised":
            fix = ("git submodule update --init --recursive" if tree.commit else
                   f"put {sub.path}'s sources there (a release tarball should include them)")
            checks.append(Check(name, False, "empty: not initialised", fix))
        elif sub.state == "populated":
            registered = " (not registered in .git/config)" if tree.commit else ""
            checks.append(Check(name, True, f"populated{registered}: judged by its content "
                                f"{sub.content}"))
        elif sub.state == "moved":
            checks.append(Check(name, True,
                                f"checked out at {sub.checked_out[:12]}{dirty}; the tree records "
                                f"{(sub.recorded or '?')[:12]} (building what is checked out)",
                                f"git submodule update --recursive {sub.path} to build the "
                                "recorded commit (or commit the new SHA)", warn=True))
        elif sub.state == "conflict":
            checks.append(Check(name, False, "merge conflict",
                                "resolve the conflict, then git submodule update --recursive"))
        elif sub.dirty:
            checks.append(Check(name, True, f"at {sub.recorded[:12]}{dirty} (building them)",
                                f"git -C {sub.path} status shows them", warn=True))
        else:
            checks.append(Check(name, True, f"at {(sub.recorded or '?')[:12]}"))
    return checks


def run(plan: BuildPlan, tree: SourceTree) -> list[Check]:
    """All checks for this plan and tree (host tools only when the build runs on the host)."""
    checks = check_submodules(tree, plan)
    if plan.backend == "native":
        checks.append(check_cmake(tree))
        checks += [c for c in (check_generator(plan), check_cuda(plan),
                               check_libcuda(plan, tree), check_ccache(plan)) if c]
        checks += check_llvm(plan, tree)
    return checks
