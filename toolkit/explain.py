"""What a TVM failure message means and what to do about it.

A knowledge base of failure patterns. Each pattern is a regular expression written against
the wording TVM, tvm-ffi, CMake, nvcc or the dynamic loader actually print (the ``source``
field says where that wording lives), a cause and a fix. ``explain(text)`` finds every known
failure in a log; ``hint(exc_or_text)`` gives the one line that doctor, build and bisect put
under a failure they report.

Host-side safe: no tvm import here, so build and bisect can route their logs through it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

# DLPack device codes, as printed in TVM's device_type argument checks.
DEVICE_NAMES = {
    1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal", 9: "vpi",
    10: "rocm", 11: "rocm_host", 12: "ext_dev", 13: "cuda_managed", 14: "oneapi", 15: "webgpu",
    16: "hexagon",
}


@dataclass
class Finding:
    """One recognised failure in a log: which pattern, where, and what to do."""

    id: str
    title: str
    cause: str
    fix: str
    line: int
    excerpt: str
    source: str
    groups: dict[str, str] = field(default_factory=dict)
    also_lines: list[int] = field(default_factory=list)

    def one_line(self) -> str:
        return f"{self.title}: {self.fix}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Pattern:
    """A failure TVM users meet. ``refine`` may rewrite cause/fix from the matched groups."""

    id: str
    regex: str
    title: str
    cause: str
    fix: str
    source: str
    refine: Callable[[dict[str, str], str], tuple[str, str] | None] | None = None

    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.regex, re.MULTILINE)


def _target_fix(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    import json

    from toolkit.target import parse

    spec = groups.get("target", "").strip()
    try:
        parsed = parse(spec)
    except Exception:  # noqa: BLE001 - a malformed string: keep the generic fix
        return None
    form = json.dumps(parsed if isinstance(parsed, dict) else {"kind": parsed})
    return None if not spec else (
        f"TVM >= 0.27 parses only the JSON/dict form of a target; {spec!r} has options "
        "written in the old CLI form.",
        f"use tvm.target.Target({form}) (tk's --target accepts '{spec}' and converts it).",
    )


def _kind_fix(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    import difflib

    known = ["llvm", "cuda", "rocm", "vulkan", "metal", "opencl", "webgpu", "c", "hexagon",
             "nvptx", "ext_dev", "hybrid"]
    near = difflib.get_close_matches(groups["kind"], known, n=1)
    if not near:
        return None
    return (f"'{groups['kind']}' is not a target kind this TVM knows.",
            f'did you mean "{near[0]}"? e.g. tvm.target.Target({{"kind": "{near[0]}"}}).')


def _option_fix(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    import difflib

    known = re.findall(r"'([^']+)'", groups["known"])
    near = difflib.get_close_matches(groups["option"], known, n=1)
    hint = f"did you mean '{near[0]}'? " if near else ""
    return (f"the target dict has option '{groups['option']}', which its kind does not declare.",
            f"{hint}known options: {', '.join(known)}.")


def _global_fix(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    prefix = groups["name"].split(".")[0]
    return (
        f"nothing in this process registered {groups['name']}: the library that defines it "
        "(an extension, or an optional part of TVM) is not loaded, or this build lacks it.",
        f"load the library that registers '{prefix}.*' first (import its package, or "
        "toolkit.ext.loader.load_extension(lib)); `tk ext check LIB.so` shows what a library "
        "registers and `tk doctor` which library registers which globals.",
    )


def _device_fix(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    if "want_name" in groups:
        name = groups["want_name"]
        want = next((code for code, n in DEVICE_NAMES.items() if n == name), "?")
    else:
        want = int(groups["want"])
        name = DEVICE_NAMES.get(want, f"device_type {want}")
    arg = groups["arg"]
    other = "a device array passed to host code" if name == "cpu" else "usually a host array"
    return (
        f"argument {arg} is not on the device the function was compiled for: it expects a "
        f"{name} array (device_type {want}) and got one from another device ({other}).",
        f"allocate or copy the input on {name} first: "
        f"tvm.runtime.tensor(np_array, device=tvm.device('{name}')) or arr.copyto(dev).",
    )


def _launch_fix(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    dims = [int(d) for d in re.findall(r"\d+", groups["block"])]
    threads = 1
    for d in dims:
        threads *= d
    if threads > 1024:
        return (
            f"the kernel was launched with block=({groups['block'].strip()}) = {threads} "
            "threads per block; CUDA allows at most 1024 (and blockDim.z <= 64).",
            "split the axis bound to threadIdx.* so the product of the thread extents is "
            "<= 1024 (e.g. sch.split(loop, factors=[None, 256]) before binding threadIdx.x).",
        )
    return None


def _ffi_symbol_fix(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    lib = groups["lib"].rsplit("/", 1)[-1]
    return (
        f"{lib} was built against another tvm-ffi than the apache-tvm-ffi now installed: "
        f"the symbol {groups['sym']} it needs is not exported by the libtvm_ffi.so in this "
        "process (the apache-tvm wheel pins tvm-ffi only from below).",
        "install the tvm-ffi the TVM build used (pip install 'apache-tvm-ffi==<version it was "
        "built with>'), or rebuild TVM against the installed one; `tk doctor` shows both.",
    )


def _ptxas_fix(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    needs = re.search(r"requires \.target (sm_\d+a?) or higher", text)
    if not needs:
        return None
    return (
        f"the kernel uses PTX features that need {needs.group(1)} or newer, but it was "
        "compiled for an older arch.",
        f'compile for the GPU that has them ({{"kind": "cuda", "arch": "{needs.group(1)}"}}) or '
        "schedule without those intrinsics for the older arch.",
    )


PATTERNS: list[Pattern] = [
    Pattern(
        "target-string-refused",
        r'Cannot parse target string "(?P<target>[^"\n]*)"\. CLI target string form',
        "Target string no longer accepted",
        "TVM >= 0.27 parses only the JSON/dict form of a target.",
        'use tvm.target.Target({"kind": "cuda", "arch": "sm_80"}) instead of '
        '"cuda -arch=sm_80".',
        "src/target/target.cc in apache-tvm 0.27.0.post1 (captured from the wheel)",
        _target_fix,
    ),
    Pattern(
        "unknown-target-kind",
        r'Target kind "(?P<kind>[^"]+)" is not defined',
        "Unknown target kind",
        "the target's kind is not one this TVM build knows (a typo, or a backend this build "
        "was compiled without).",
        "use a kind from tvm.target.Target.list_kinds() (llvm, cuda, rocm, vulkan, metal, "
        "opencl, ...); `tk doctor` lists the codegens this build has.",
        "src/target/target.cc in apache-tvm 0.27.0.post1 (captured from the wheel)",
        _kind_fix,
    ),
    Pattern(
        "unknown-target-option",
        r"Unknown config option '(?P<option>[^']+)'\. Known options: (?P<known>[^.]*)\.",
        "Unknown target option",
        "the target dict has an option its kind does not declare.",
        "use one of the options the message lists.",
        "src/target/target.cc in apache-tvm 0.27.0.post1 (captured from the wheel)",
        _option_fix,
    ),
    Pattern(
        "arm-features-without-llvm",
        r"Cannot parse Arm\(R\)-based target features(?: for target .*?)? without LLVM support",
        "TVM built without LLVM",
        "this libtvm was built with USE_LLVM OFF. The warning comes from the Arm(R) target "
        "parser, and the segmentation fault that usually follows comes from the host "
        "codegen, which needs LLVM even for a CUDA-only build.",
        'rebuild TVM with set(USE_LLVM "llvm-config-16 --ignore-libllvm --link-static") '
        "(LLVM >= 15), or pip install apache-tvm, whose wheel has LLVM.",
        "src/target/parsers/aprofile.cc (LOG(WARNING) in the Arm(R) A-profile parser)",
    ),
    Pattern(
        "device-type-constraint",
        r"Argument (?P<arg>[\w.]+)\.device_type has an unsatisfied constraint:?\s*"
        r"(?:\(?\s*)?(?P<want>\d+) ==",
        "Array on the wrong device",
        "an input array is on another device than the function expects.",
        "copy the input to the target's device before calling.",
        "src/tir/transforms/arg_binder.cc (BindDLTensor device_type assert)",
        _device_fix,
    ),
    Pattern(
        "device-type-mismatch",
        r"Mismatched (?P<arg>[\w.]+)\.device_type on argument #(?P<index>\d+) when calling:"
        r"[\s\S]{0,400}?expected (?P<want_name>\w+)",
        "Array on the wrong device",
        "an input array is on another device than the function expects.",
        "copy the input to the target's device before calling.",
        "tvm-ffi argument check in apache-tvm 0.27.0.post1 (captured from the wheel)",
        _device_fix,
    ),
    Pattern(
        "shape-constraint",
        r"Argument (?P<arg>[\w.]+)\.shape\[(?P<dim>\d+)\] has an unsatisfied constraint",
        "Input shape differs from the compiled shape",
        "the function was compiled for a fixed shape and the array passed has another extent "
        "in that dimension.",
        "pass arrays with the shapes the workload declares, or compile with a symbolic "
        "dimension (T.int64 var / R.Tensor((\"n\", ...))).",
        "src/tir/transforms/arg_binder.cc (BindDLTensor shape assert)",
    ),
    Pattern(
        "cuda-launch-error",
        r"CUDALaunch Error: (?P<err>\w+)\s*\n?\s*grid=\((?P<grid>[\d,\s]+)\),\s*"
        r"block=\((?P<block>[\d,\s]+)\)",
        "CUDA kernel launch failed",
        "the driver refused the launch configuration or resources of a generated kernel.",
        "inspect the kernel's thread binding and shared memory (tk dump-ir shows the TIR); "
        "CUDA_ERROR_INVALID_VALUE usually means more than 1024 threads per block.",
        "src/runtime/cuda/cuda_module.cc (CUDAWrappedFunc launch error)",
        _launch_fix,
    ),
    Pattern(
        "cuda-zero-grid",
        r"CUDALaunch Error: grid dimension must be positive, but got grid=\((?P<grid>[\d,\s]+)\)"
        r"(?: in kernel (?P<kernel>\w+))?",
        "CUDA kernel launched with an empty grid",
        "a grid extent computed from a dynamic shape was 0 at run time (e.g. zero tokens in a "
        "batch), and CUDA refuses a launch with no blocks.",
        "skip the call when the dynamic dimension is 0 (guard it in the caller or in Relax "
        "with R.If), or make the kernel's grid at least 1.",
        "src/runtime/cuda/cuda_module.cc (CUDAWrappedFunc grid check)",
    ),
    Pattern(
        "too-much-shared-data",
        r"uses too much shared data"
        r"(?: \((?P<used>0x[0-9a-fA-F]+) bytes, (?P<max>0x[0-9a-fA-F]+) max\))?",
        "Kernel uses too much shared memory",
        "ptxas rejects a kernel whose static shared memory exceeds the per-block limit "
        "(0xc000 = 48 KiB static on most GPUs).",
        "tile smaller (smaller cache_read/cache_write blocks, fewer stages) or move the "
        "buffer to dynamic shared memory (scope 'shared.dyn').",
        "ptxas (CUDA toolkit); captured with nvcc here",
    ),
    Pattern(
        "domain-already-inferred",
        r"domain already inferred, cannot prove their extents are the same "
        r"(?P<a>\S+) vs (?P<b>\S+)",
        "Thread axis bound twice with different extents",
        "the same thread/block index (e.g. blockIdx.y) is bound to loops of different "
        "extents in two stages of one kernel.",
        "bind the thread axis only to loops of equal extent (split to the same factor in "
        "every stage), or use a different thread axis.",
        "src/te/schedule/message_passing.cc (Update)",
    ),
    Pattern(
        "relayout-data-parallel",
        r"Can only relayout with in data parallel dimensions",
        "cache_write/rfactor on a reduction axis",
        "cache_write (or a relayout) was applied after the stage's reduction axes were "
        "moved among its leaf axes: only data-parallel leaf axes can be relaid out.",
        "call cache_write before split/reorder/fuse touch the reduction axes, or keep the "
        "reduction axes innermost.",
        "src/te/schedule/schedule_dataflow_rewrite.cc (CacheWriteWithReLayout)",
    ),
    Pattern(
        "attachment-point",
        r"did not find attachment point(?: for (?P<stage>.*?) in (?P<parent>.*?) x "
        r"(?P<axis>\S+))?",
        "compute_at target not in the parent's loop nest",
        "a stage was compute_at'ed to a loop that no longer exists in the parent's final "
        "loop nest (it was split/fused away, or the parent was itself inlined/attached).",
        "attach to a leaf axis of the parent after all its splits and fuses, and attach "
        "producers before inlining their consumer.",
        "src/te/schedule/schedule_ops.cc (MakeLoopNest / InjectAttach)",
    ),
    Pattern(
        "axis-not-in-leaf-iter-vars",
        r"Cannot find the axis (?P<axis>.+?) in parent's leaf_iter_vars",
        "compute_at axis belongs to another stage",
        "compute_at(parent, axis) was given an axis that is not a current leaf axis of that "
        "parent (an axis of another stage, or one already split).",
        "pass an axis from parent's own split/reorder results, e.g. s[AL].compute_at(s[C], "
        "ty) where ty came from s[C].split(...).",
        "src/te/schedule/schedule_lang.cc (Stage::compute_at)",
    ),
    Pattern(
        "iter-var-already-split",
        r"Operate on iter var (?P<iv>.+?)\s*that has already been split(?:ted)?",
        "Schedule uses an axis that was split",
        "the schedule refers to an iteration variable after it was split (or fused): only "
        "the outer/inner results remain leaf axes.",
        "use the axes split() returned (e.g. reorder(xo, yo, xi, yi)), not the original one.",
        "src/te/schedule/schedule_lang.cc (FindLeafVar)",
    ),
    Pattern(
        "duplicate-global-function",
        r"Global Function `(?P<name>[^`]+)` is already registered",
        "Global function registered twice",
        "two libraries (or two copies of one library) register the same global function "
        "name: typically a second TVM, or an extension loaded twice from two paths.",
        "load each extension once, through toolkit.ext.loader.load_extension; `tk doctor` lists "
        "which library registered which global.",
        "tvm-ffi src/ffi/function.cc (GlobalFunctionTable::Update)",
    ),
    Pattern(
        "missing-global-function",
        r"Cannot find global function (?P<name>[\w.]+)",
        "Global function not registered",
        "nothing in this process registered that name: the library that defines it (an "
        "extension, or an optional part of TVM) is not loaded, or this build lacks it.",
        "load the extension first (import its package, or toolkit.ext.loader.load_extension(lib)); "
        "`tk doctor` lists which library registers which globals.",
        "tvm-ffi get_global_func in apache-tvm-ffi 0.1.15 (captured from the wheel)",
        _global_fix,
    ),
    Pattern(
        "device-api-not-enabled",
        r"Device API (?P<device>\w+) is not enabled",
        "No runtime for this device",
        "this process has no device API for the device: the TVM build has no runtime for it, "
        "or its runtime library could not load (the wheel's libtvm_runtime_cuda.so needs the "
        "NVIDIA driver's libcuda.so.1).",
        "run on a machine with the device and its driver (tk doctor shows which runtimes "
        "loaded); compiling for the target works without it.",
        "src/runtime/device_api.cc in apache-tvm 0.27.0.post1 (captured from the wheel)",
    ),
    Pattern(
        "cuda-runtime-not-linked",
        r"CUDA runtime is not linked into this build; cannot launch kernels",
        "No CUDA runtime in this process",
        "the module was compiled for CUDA but the CUDA runtime library is not loaded here (no "
        "NVIDIA driver, or a build with USE_CUDA OFF).",
        "run it where libcuda.so.1 and a GPU exist, or export it (tk compile) and load it "
        "there with tvm.runtime.load_module.",
        "src/backend/cuda/codegen/cuda_fallback_module.cc in apache-tvm 0.27.0.post1 "
        "(captured from the wheel)",
    ),
    Pattern(
        "undefined-tvm-ffi-symbol",
        r"(?P<lib>\S*libtvm(?:_runtime|_compiler)?\.so): undefined symbol: "
        r"(?P<sym>_ZN\w*3tvm3ffi\w*)",
        "libtvm and tvm-ffi do not match",
        "libtvm was built against another tvm-ffi.",
        "install the tvm-ffi TVM was built with.",
        "glibc dynamic loader via ctypes.CDLL (apache/tvm#19486); captured with g++ here",
        _ffi_symbol_fix,
    ),
    Pattern(
        "undefined-symbol",
        r"(?P<lib>\S+\.so[.\d]*): undefined symbol: (?P<sym>\S+)",
        "Library needs a symbol nothing in the process provides",
        "a shared library was built against another version of one of its dependencies "
        "(often another TVM or tvm-ffi) than the one mapped now.",
        "rebuild the library against the TVM in use (tk ext build) and check it with "
        "`tk ext check LIB.so`.",
        "glibc dynamic loader (dlopen error)",
    ),
    Pattern(
        "llvm-too-old",
        r"TVM requires LLVM 15\.0 or higher",
        "LLVM too old for this TVM",
        "TVM >= 0.24 refuses LLVM < 15; Debian bookworm's default llvm-config is 14.",
        "apt-get install llvm-16-dev and point USE_LLVM at it: "
        'set(USE_LLVM "llvm-config-16 --ignore-libllvm --link-static").',
        "cmake/utils/FindLLVM.cmake (shipped in the wheel: tvm/cmake/utils/FindLLVM.cmake)",
    ),
    Pattern(
        "cmake-too-old",
        r"CMake (?P<need>[\d.]+) or higher is required\.\s+You are running version "
        r"(?P<have>[\d.]+)",
        "CMake too old",
        "this project (TVM >= 0.22 via 3rdparty/tvm-ffi needs 3.26) requires a newer CMake "
        "than the one on PATH.",
        "pip install 'cmake>=3.26' ninja (puts a current cmake first on PATH), then "
        "reconfigure from a clean build directory.",
        "CMake cmake_minimum_required (tvm-ffi CMakeLists.txt: VERSION 3.26); captured here",
    ),
    Pattern(
        "zstd-not-found",
        r"Could NOT find zstd",
        "zstd development files missing",
        "LLVM 16's CMake package requires zstd; the headers/library are not installed.",
        "apt-get install libzstd-dev (with zlib1g-dev libxml2-dev libedit-dev libtinfo-dev).",
        "CMake FindPackageHandleStandardArgs via LLVMConfig.cmake; captured here",
    ),
    Pattern(
        "ptxas-error",
        r"ptxas (?:[^\n;]*; )?(?:fatal|error)\s*:\s*(?P<msg>.*)",
        "ptxas rejected the generated PTX",
        "the CUDA assembler refused a kernel (resource limits, an unsupported instruction "
        "for the chosen -arch, or a PTX version newer than the toolkit).",
        "check the target's arch against the CUDA toolkit (nvcc --list-gpu-arch) and the "
        "kernel's resources; `tk dump-ir` shows the CUDA source TVM generated.",
        "ptxas (CUDA toolkit); captured with nvcc here",
        _ptxas_fix,
    ),
    Pattern(
        "stale-dlpack",
        r"DLPackManagedTensorAllocator\W+was not declared",
        "tvm-ffi's dlpack submodule is stale",
        "3rdparty/tvm-ffi was checked out with an older 3rdparty/dlpack than it needs.",
        "git submodule update --init --recursive (and record submodule SHAs in the build).",
        "apache/tvm-ffi's environment C API (TVMFFIEnvSetDLPackManagedTensorAllocator) built "
        "against a stale 3rdparty/dlpack (seen building apache/tvm main)",
    ),
    # Generic, so last: any CMake error, with the message lines that belong to it.
    Pattern(
        "cmake-error",
        r"^CMake Error(?: at (?P<where>\S+)(?: \((?P<command>\w+)\))?)?:[ \t]*(?P<head>.*)\n"
        r"(?P<message>(?:(?:  |\t).*\n?)*)",
        "CMake stopped configuring",
        "CMake reported an error (the message is in the lines under 'CMake Error').",
        "fix what the message says, then run tk build again (the configure step is retried).",
        "CMake's message() and error output format (cmake.org/cmake/help/latest/command/message.html)",
        lambda groups, _text: cmake_error_cause(groups),
    ),
]


def cmake_error_cause(groups: dict[str, str]) -> tuple[str, str] | None:
    """The message under ``CMake Error at FILE:LINE (cmd):``, joined into one line."""
    lines = [groups.get("head", "")] + groups.get("message", "").splitlines()
    message = " ".join(" ".join(lines).split())
    if not message:
        return None
    where = f" ({groups['where']})" if groups.get("where") else ""
    return f"{message}{where}", "fix what the message says, then run tk build again."

# The literal each pattern's match contains, on the line where the match starts: regexes run
# only around its occurrences, so a build log of many megabytes is explained in milliseconds.
NEEDLES = {
    "target-string-refused": "Cannot parse target string",
    "unknown-target-kind": "Target kind \"",
    "unknown-target-option": "Unknown config option",
    "arm-features-without-llvm": "Cannot parse Arm(R)-based target features",
    "device-type-constraint": ".device_type has an unsatisfied constraint",
    "device-type-mismatch": "Mismatched ",
    "shape-constraint": "] has an unsatisfied constraint",
    "cuda-launch-error": "CUDALaunch Error: ",
    "cuda-zero-grid": "CUDALaunch Error: grid dimension",
    "too-much-shared-data": "uses too much shared data",
    "domain-already-inferred": "domain already inferred",
    "relayout-data-parallel": "Can only relayout",
    "attachment-point": "did not find attachment point",
    "axis-not-in-leaf-iter-vars": "in parent's leaf_iter_vars",
    "iter-var-already-split": "Operate on iter var",
    "duplicate-global-function": "is already registered",
    "missing-global-function": "Cannot find global function",
    "device-api-not-enabled": "Device API ",
    "cuda-runtime-not-linked": "CUDA runtime is not linked",
    "undefined-tvm-ffi-symbol": "undefined symbol: ",
    "undefined-symbol": "undefined symbol: ",
    "llvm-too-old": "TVM requires LLVM",
    "cmake-too-old": " or higher is required",
    "zstd-not-found": "Could NOT find zstd",
    "ptxas-error": "ptxas ",
    "stale-dlpack": "DLPackManagedTensorAllocator",
    "cmake-error": "CMake Error",
}
CMAKE_BLOCK = 12  # lines a CMake error's message may span
WINDOW = 2000  # characters after a needle a match may span (CUDALaunch prints two lines)

# A more specific pattern wins over a generic one when both match the same line.
_GENERIC = {"undefined-symbol": "undefined-tvm-ffi-symbol", "ptxas-error": "too-much-shared-data"}
_COMPILED = [(p, p.compiled()) for p in PATTERNS]


def explain(text: str) -> list[Finding]:
    """Every known failure in ``text``, in the order they appear."""
    findings: list[Finding] = []
    for pattern, regex in _COMPILED:
        seen_lines: set[int] = set()
        counted, line = 0, 1
        for m in _matches(text, regex, NEEDLES[pattern.id]):
            line += text.count("\n", counted, m.start())
            counted = m.start()
            if line in seen_lines:
                continue
            seen_lines.add(line)
            groups = {k: v for k, v in m.groupdict().items() if v is not None}
            cause, fix = pattern.cause, pattern.fix
            if pattern.refine is not None:
                refined = pattern.refine(groups, text[max(0, m.start() - WINDOW):m.end() + WINDOW])
                if refined:
                    cause, fix = refined
            excerpt = m.group(0).strip()
            findings.append(Finding(pattern.id, pattern.title, cause, fix, line,
                                    excerpt[:300], pattern.source, groups))
    specific = {(f.id, f.line) for f in findings}
    findings = [f for f in findings
                if not (f.id in _GENERIC and (_GENERIC[f.id], f.line) in specific)]
    # A CMake error that a specific pattern explains (its message lines hold the match) is
    # that pattern's finding, not a second one.
    named = [f.line for f in findings if f.id != "cmake-error"]
    findings = [f for f in findings if f.id != "cmake-error"
                or not any(f.line <= line <= f.line + CMAKE_BLOCK for line in named)]
    findings.sort(key=lambda f: (f.line, PATTERNS.index(_by_id(f.id))))
    # One failure often prints the same complaint many times (ptxas per instruction).
    merged: dict[tuple[str, str, str], Finding] = {}
    for f in findings:
        first = merged.setdefault((f.id, f.cause, f.fix), f)
        if first is not f:
            first.also_lines.append(f.line)
    return list(merged.values())


def _matches(text: str, regex: re.Pattern[str], needle: str) -> list[re.Match[str]]:
    """Matches of ``regex`` that start on a line holding ``needle``, in text order."""
    found: list[re.Match[str]] = []
    pos = text.find(needle)
    while pos != -1:
        start = text.rfind("\n", 0, pos) + 1
        for m in regex.finditer(text, start, min(len(text), pos + WINDOW)):
            if m.start() > pos:
                break
            if not found or m.start() > found[-1].start():
                found.append(m)
        nxt = text.find("\n", pos)
        pos = -1 if nxt == -1 else text.find(needle, nxt)
    return found


def _by_id(pattern_id: str) -> Pattern:
    return next(p for p in PATTERNS if p.id == pattern_id)


def best(text_or_exc: str | BaseException) -> Finding | None:
    """The most useful finding: the most specific pattern, earliest in the text."""
    text = text_or_exc if isinstance(text_or_exc, str) else _exception_text(text_or_exc)
    findings = explain(text)
    if not findings:
        return None
    return min(findings, key=lambda f: (PATTERNS.index(_by_id(f.id)), f.line))


def hint(text_or_exc: str | BaseException) -> str | None:
    """One line to print under a failure (``explain: <title>: <fix>``), or None."""
    finding = best(text_or_exc)
    return f"explain: {finding.one_line()}" if finding else None


def _exception_text(exc: BaseException) -> str:
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        parts.append(f"{type(current).__name__}: {current}")
        current = current.__cause__ or current.__context__
    return "\n".join(parts)
