"""The rules corpus: what TVM, tvm-ffi, CMake, nvcc and the loader print, and what it means.

Each rule is a literal ``needle`` (found with ``str.find``), a regular expression matched only
near it, a cause and a fix. ``source`` says where the wording lives (a TVM source file, a
tool) and tests/fixtures/explain/SOURCES.md where the rule's sample came from. ``rank`` orders
rules that fire on the same log: a specific rule outranks the generic one it refines
(``undefined-tvm-ffi-symbol`` over ``undefined-symbol``), and no two rules that fire on one
sample share a rank (tests/test_explain.py checks it). ``family`` groups rules for coverage.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from toolkit.explain import (
    android_artifacts,
    backend_packages,
    build_isolation,
    buildtools,
    cli_options,
    cmake_checks,
    codegen,
    frontend_attrs,
    frontend_reads,
    import_cycles,
    interpreter_exit,
    llvm_guards,
    llvm_link,
    mlc_model_libs,
    mlc_skew,
    native_halves,
    opencl_extensions,
    optional_libs,
    python_versions,
    runtime_link,
    shared_output,
    tensor_intrins,
    tilelang_archs,
    tilelang_layouts,
    tilelang_templates,
    toolchain,
    torch_script,
    tvmc_options,
    windows_build,
)
from toolkit.explain.refine import NOT_THIS


@dataclass(frozen=True)
class Rule:
    """A failure TVM users meet. ``refine`` may rewrite cause/fix from the matched groups, or
    decline the match (``NOT_THIS``)."""

    id: str
    family: str
    needle: str | tuple[str, ...]  # literal(s) the match holds, on the line it starts on
    regex: str
    title: str
    cause: str
    fix: str
    source: str
    refine: Callable[[dict[str, str], str], tuple[str, str] | None] | None = None
    rank: int = 50
    span: int = 0  # lines after its own that a match covers: a higher rank there replaces it
    origin: str = "rule"  # what its answer comes from: a rule, or a table tk generates
    # The pattern never spans lines: searched within the needle's line, not the window after
    # it (a pattern that may start at any word would otherwise try every position of 2 KB).
    one_line: bool = False

    def needles(self) -> tuple[str, ...]:
        return self.needle if isinstance(self.needle, tuple) else (self.needle,)

    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.regex, re.MULTILINE)


def _unpassable(cls: str) -> tuple[str, str] | None:
    """What a Python object the FFI could not pass was, and what to pass instead."""
    if cls.endswith(("ExecutorFactoryModule", "RuntimeFactoryModule")):
        return (f"the argument is a {cls.rsplit('.', 1)[-1]}, what relay.build returns since "
                "v0.7.0 (GraphRuntimeFactoryModule in v0.7.0, GraphExecutorFactoryModule from "
                "v0.8.0; until v0.6.0 it returned (graph_json, lib, params)): code or docs "
                "written for the older relay.build pass it where a runtime.Module is wanted, "
                "and a Python wrapper cannot go through the FFI.",
                "pass its runtime module (lib.get_lib()) where a module is wanted, or create the "
                "executor from the factory (graph_executor.GraphModule(lib['default'](dev)); "
                "for the debugger debug_executor.GraphModuleDebug(lib['debug_create']('default', "
                "dev), [dev], lib.graph_json, dump_root=...))")
    if cls.startswith("tvm."):
        return (f"the argument is a {cls}, a Python class of TVM's that is not a TVM object "
                "the FFI can pass.",
                f"pass the TVM object the {cls.rsplit('.', 1)[-1]} holds (its module or array), "
                "not the wrapper")
    return None


# DLPack device codes, as printed in TVM's device_type argument checks.
DEVICE_NAMES = {
    1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal", 9: "vpi",
    10: "rocm", 11: "rocm_host", 12: "ext_dev", 13: "cuda_managed", 14: "oneapi", 15: "webgpu",
    16: "hexagon",
}


def _target_fix(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    import json

    from toolkit.target_spec import parse

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


def _static_init_fix(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    ns = groups.get("ns")
    lib = ns or "a library"
    registering = " while registering its C API (TVMFFIEnvRegisterCAPI)" if \
        "TVMFFIEnvRegisterCAPI" in text else ""
    return (f"{lib}'s static initialiser (a TVM_FFI_STATIC_INIT_BLOCK, run when the library "
            f"is loaded) crashed inside tvm-ffi{registering}: the library was compiled against "
            "another apache-tvm-ffi than the one loaded, and tvm-ffi's C ABI changed between "
            "its 0.1.x releases.",
            f"install the apache-tvm-ffi {lib} was built with (`pip show "
            f"{ns or 'PACKAGE'}` and its requirements name the range; pin it: pip install "
            f"'apache-tvm-ffi==<that version>'), or rebuild {lib} against the installed one")


def _extension_lock_fix(_groups: dict[str, str], text: str) -> tuple[str, str] | None:
    tvm_ffi = "torch_c_dlpack" in text  # tvm_ffi/_optional_torch_c_dlpack.py's build
    who = (" Here the first `import tvm_ffi` builds its optional Torch DLPack extension "
           "through torch's load_inline, and waits for that extension's lock." if tvm_ffi else "")
    skip = (" apache-tvm-ffi 0.1.15 skips building that extension with "
            "TVM_FFI_DISABLE_TORCH_C_DLPACK=1." if tvm_ffi else "")
    return ("the process hangs in torch.utils.cpp_extension's file baton: a JIT build "
            "(load / load_inline) waits until the lock file in the extension's build directory "
            "goes away; another process building the same extension holds it, or a build "
            f"killed earlier left it behind, and then the wait never ends (a deadlock).{who}",
            "if no other process is building it, delete the stale `lock` file in the "
            "extension's build directory (under $TORCH_EXTENSIONS_DIR, by default "
            f"~/.cache/torch_extensions/<python>-<torch>/<name>/) and run again.{skip}")


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


# ELF e_machine codes a linker prints ("Relocations in generic ELF (EM: 183)").
ELF_MACHINES = {3: "x86 (32-bit)", 8: "MIPS", 20: "PowerPC", 21: "PowerPC64", 40: "ARM (32-bit)",
                62: "x86-64", 183: "AArch64", 243: "RISC-V"}


def _elf_arch_fix(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    em = groups.get("em") or (re.search(r"EM: (\d+)\)", text) or [None, None])[1]
    lib = groups.get("lib") or ""
    arch = ELF_MACHINES.get(int(em), f"EM {em}") if em else "another architecture"
    if re.search(r"libLLVM", lib):
        return (f"{lib} (LLVM's static libraries, built for the host) was linked into a library "
                "built for another architecture: a cross build of libtvm with USE_LLVM picks up "
                "the host's LLVM.",
                "for the device build only the runtime: cmake with USE_LLVM OFF (and the cross "
                "toolchain) and `make runtime`; compile models on the host and load them on the "
                "device through the runtime (or RPC)")
    return (f"an object for {arch} was given to a linker for another architecture: the host's "
            "linker for a cross-compiled object (an Android/ARM module exported with the host cc), "
            "or a library built for the host inside a cross build.",
            f"link {arch} objects with the {arch} toolchain: export_library(path, fcompile="
            "tvm.contrib.ndk.create_shared) or cc.cross_compiler('aarch64-linux-gnu-g++'); in a "
            "cross build of TVM, build the host-only libraries for the target or leave them out")


def _target_attr_fix(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    attr = groups["attr"]
    return (f"the target has no '{attr}': code that reads target.{attr} (a dlight or MetaSchedule "
            "rule, a codegen) needs it, and a target detected automatically or written by hand "
            "may lack it.",
            f'give the target the attribute: tvm.target.Target({{"kind": "cuda", "arch": "sm_80", '
            f'"{attr}": ...}}), or use a tag that sets it ("nvidia/geforce-rtx-4090")')


def _make_no_rule(lib: str) -> str:
    """GNU make's ``No rule to make target 'LIB', needed by 'OUT'`` for a library matching
    ``lib`` (groups lib, out), and the same in its Chinese translation (没有规则可制作目标“LIB”，
    由“OUT” 需求: groups lib_zh, out_zh)."""
    return (rf"No rule to make target [`'‘\"](?P<lib>{lib})[`'’\"], needed by "
            r"[`'‘\"](?P<out>[^`'’\"\s]+)[`'’\"]"
            rf"|没有规则可制作目标[“\"'‘](?P<lib_zh>{lib})[”\"'’]，由[“\"'‘](?P<out_zh>[^”\"'’\s]+)"
            r"[”\"'’]")


RULES: list[Rule] = [
    Rule(
        "target-string-refused", "target", "Cannot parse target string",
        r'Cannot parse target string "(?P<target>[^"\n]*)"\. CLI target string form',
        "Target string no longer accepted",
        "TVM >= 0.27 parses only the JSON/dict form of a target.",
        'use tvm.target.Target({"kind": "cuda", "arch": "sm_80"}) instead of '
        '"cuda -arch=sm_80".',
        "src/target/target.cc in apache-tvm 0.27.0.post1 (captured from the wheel)",
        _target_fix,
    ),
    Rule(
        "unknown-target-kind", "target", "Target kind \"",
        r'Target kind "(?P<kind>[^"]+)" is not defined',
        "Unknown target kind",
        "the target's kind is not one this TVM build knows (a typo, or a backend this build "
        "was compiled without).",
        "use a kind from tvm.target.Target.list_kinds() (llvm, cuda, rocm, vulkan, metal, "
        "opencl, ...); `tk doctor` lists the codegens this build has.",
        "src/target/target.cc in apache-tvm 0.27.0.post1 (captured from the wheel)",
        _kind_fix,
    ),
    Rule(
        "unknown-target-option", "target", "Unknown config option",
        r"Unknown config option '(?P<option>[^']+)'\. Known options: (?P<known>[^.]*)\.",
        "Unknown target option",
        "the target dict has an option its kind does not declare.",
        "use one of the options the message lists.",
        "src/target/target.cc in apache-tvm 0.27.0.post1 (captured from the wheel)",
        _option_fix,
    ),
    Rule(
        "arm-features-without-llvm", "build", "Cannot parse Arm(R)-based target features",
        r"Cannot parse Arm\(R\)-based target features(?: for target .*?)? without LLVM support",
        "TVM built without LLVM",
        "this libtvm was built with USE_LLVM OFF. The warning comes from the Arm(R) target "
        "parser, and the segmentation fault that usually follows comes from the host "
        "codegen, which needs LLVM even for a CUDA-only build.",
        'rebuild TVM with set(USE_LLVM "llvm-config-16 --ignore-libllvm --link-static") '
        "(LLVM >= 15), or pip install apache-tvm, whose wheel has LLVM.",
        "src/target/parsers/aprofile.cc (LOG(WARNING) in the Arm(R) A-profile parser)",
    ),
    Rule(
        "device-type-constraint", "runtime-args", ".device_type has an unsatisfied constraint",
        r"Argument (?P<arg>[\w.]+)\.device_type has an unsatisfied constraint:?\s*"
        r"(?:\(?\s*)?(?P<want>\d+) ==",
        "Array on the wrong device",
        "an input array is on another device than the function expects.",
        "copy the input to the target's device before calling.",
        "src/tir/transforms/arg_binder.cc (BindDLTensor device_type assert)",
        _device_fix,
    ),
    Rule(
        "device-type-mismatch", "runtime-args", "Mismatched ",
        r"Mismatched (?P<arg>[\w.]+)\.device_type on argument #(?P<index>\d+) when calling:"
        r"[\s\S]{0,400}?expected (?P<want_name>\w+)",
        "Array on the wrong device",
        "an input array is on another device than the function expects.",
        "copy the input to the target's device before calling.",
        "tvm-ffi argument check in apache-tvm 0.27.0.post1 (captured from the wheel)",
        _device_fix,
    ),
    Rule(
        "shape-constraint", "runtime-args", ("] has an unsatisfied constraint", "Invalid "),
        r"Argument (?P<arg>[\w.]+)\.shape\[(?P<dim>\d+)\] has an unsatisfied constraint|"
        r"Invalid (?P<arg2>[\w.]+)\.shape\[(?P<dim2>\d+)\] on argument #\d+",
        "Input shape differs from the compiled shape",
        "the function was compiled for a fixed shape and the array passed has another extent "
        "in that dimension.",
        "pass arrays with the shapes the workload declares, or compile with a symbolic "
        "dimension (T.int64 var / R.Tensor((\"n\", ...))).",
        "src/tir/transforms/arg_binder.cc (BindDLTensor shape assert); 0.27 wording "
        "(tvm-ffi argument check) captured with 0.27.0.post1",
    ),
    Rule(
        "cuda-launch-error", "cuda", "CUDALaunch Error: ",
        r"CUDALaunch Error: (?P<err>\w+)\s*\n?\s*grid=\((?P<grid>[\d,\s]+)\),\s*"
        r"block=\((?P<block>[\d,\s]+)\)",
        "CUDA kernel launch failed",
        "the driver refused the launch configuration or resources of a generated kernel.",
        "inspect the kernel's thread binding and shared memory (tk dump-ir shows the TIR); "
        "CUDA_ERROR_INVALID_VALUE usually means more than 1024 threads per block.",
        "src/runtime/cuda/cuda_module.cc (CUDAWrappedFunc launch error)",
        _launch_fix,
        rank=40,
    ),
    Rule(
        "cuda-zero-grid", "cuda", "CUDALaunch Error: grid dimension",
        r"CUDALaunch Error: grid dimension must be positive, but got grid=\((?P<grid>[\d,\s]+)\)"
        r"(?: in kernel (?P<kernel>\w+))?",
        "CUDA kernel launched with an empty grid",
        "a grid extent computed from a dynamic shape was 0 at run time (e.g. zero tokens in a "
        "batch), and CUDA refuses a launch with no blocks.",
        "skip the call when the dynamic dimension is 0 (guard it in the caller or in Relax "
        "with R.If), or make the kernel's grid at least 1.",
        "src/runtime/cuda/cuda_module.cc (CUDAWrappedFunc grid check)",
        rank=60,
    ),
    Rule(
        "too-much-shared-data", "cuda", "uses too much shared data",
        r"uses too much shared data"
        r"(?: \((?P<used>0x[0-9a-fA-F]+) bytes, (?P<max>0x[0-9a-fA-F]+) max\))?",
        "Kernel uses too much shared memory",
        "ptxas rejects a kernel whose static shared memory exceeds the per-block limit "
        "(0xc000 = 48 KiB static on most GPUs).",
        "tile smaller (smaller cache_read/cache_write blocks, fewer stages) or move the "
        "buffer to dynamic shared memory (scope 'shared.dyn').",
        "ptxas (CUDA toolkit); captured with nvcc here",
        rank=60,
    ),
    Rule(
        "domain-already-inferred", "schedule-te", "domain already inferred",
        r"domain already inferred, cannot prove their extents are the same "
        r"(?P<a>\S+) vs (?P<b>\S+)",
        "Thread axis bound twice with different extents",
        "the same thread/block index (e.g. blockIdx.y) is bound to loops of different "
        "extents in two stages of one kernel.",
        "bind the thread axis only to loops of equal extent (split to the same factor in "
        "every stage), or use a different thread axis.",
        "src/te/schedule/message_passing.cc (Update)",
    ),
    Rule(
        "relayout-data-parallel", "schedule-te", "Can only relayout",
        r"Can only relayout with in data parallel dimensions",
        "cache_write/rfactor on a reduction axis",
        "cache_write (or a relayout) was applied after the stage's reduction axes were "
        "moved among its leaf axes: only data-parallel leaf axes can be relaid out.",
        "call cache_write before split/reorder/fuse touch the reduction axes, or keep the "
        "reduction axes innermost.",
        "src/te/schedule/schedule_dataflow_rewrite.cc (CacheWriteWithReLayout)",
    ),
    Rule(
        "attachment-point", "schedule-te", "did not find attachment point",
        r"did not find attachment point(?: for (?P<stage>.*?) in (?P<parent>.*?) x "
        r"(?P<axis>\S+))?",
        "compute_at target not in the parent's loop nest",
        "a stage was compute_at'ed to a loop that no longer exists in the parent's final "
        "loop nest (it was split/fused away, or the parent was itself inlined/attached).",
        "attach to a leaf axis of the parent after all its splits and fuses, and attach "
        "producers before inlining their consumer.",
        "src/te/schedule/schedule_ops.cc (MakeLoopNest / InjectAttach)",
    ),
    Rule(
        "axis-not-in-leaf-iter-vars", "schedule-te", "in parent's leaf_iter_vars",
        r"Cannot find the axis (?P<axis>.+?) in parent's leaf_iter_vars",
        "compute_at axis belongs to another stage",
        "compute_at(parent, axis) was given an axis that is not a current leaf axis of that "
        "parent (an axis of another stage, or one already split).",
        "pass an axis from parent's own split/reorder results, e.g. s[AL].compute_at(s[C], "
        "ty) where ty came from s[C].split(...).",
        "src/te/schedule/schedule_lang.cc (Stage::compute_at)",
    ),
    Rule(
        "iter-var-already-split", "schedule-te", "Operate on iter var",
        r"Operate on iter var (?P<iv>.+?)\s*that has already been split(?:ted)?",
        "Schedule uses an axis that was split",
        "the schedule refers to an iteration variable after it was split (or fused): only "
        "the outer/inner results remain leaf axes.",
        "use the axes split() returned (e.g. reorder(xo, yo, xi, yi)), not the original one.",
        "src/te/schedule/schedule_lang.cc (FindLeafVar)",
    ),
    Rule(
        "duplicate-global-function", "library", "is already registered",
        r"Global Function `(?P<name>[^`]+)` is already registered",
        "Global function registered twice",
        "two libraries (or two copies of one library) register the same global function "
        "name: typically a second TVM, or an extension loaded twice from two paths.",
        "load each extension once, through toolkit.ext.loader.load_extension; `tk doctor` lists "
        "which library registered which global.",
        "tvm-ffi src/ffi/function.cc (GlobalFunctionTable::Update)",
    ),
    Rule(
        "missing-global-function", "library", "Cannot find global function",
        r"Cannot find global function (?P<name>[\w.]+)",
        "Global function not registered",
        "nothing in this process registered that name: the library that defines it (an "
        "extension, or an optional part of TVM) is not loaded, or this build lacks it.",
        "load the extension first (import its package, or toolkit.ext.loader.load_extension(lib)); "
        "`tk doctor` lists which library registers which globals.",
        "tvm-ffi get_global_func in apache-tvm-ffi 0.1.15 (captured from the wheel)",
        _global_fix,
    ),
    Rule(
        "device-api-not-enabled", "cuda", "Device API ",
        r"Device API (?P<device>\w+) is not enabled",
        "No runtime for this device",
        "this process has no device API for the device: the TVM build has no runtime for it, "
        "or its runtime library could not load (the wheel's libtvm_runtime_cuda.so needs the "
        "NVIDIA driver's libcuda.so.1).",
        "run on a machine with the device and its driver (tk doctor shows which runtimes "
        "loaded); compiling for the target works without it.",
        "src/runtime/device_api.cc in apache-tvm 0.27.0.post1 (captured from the wheel)",
        rank=55,
    ),
    Rule(
        "cuda-runtime-not-linked", "cuda", "CUDA runtime is not linked",
        r"CUDA runtime is not linked into this build; cannot launch kernels",
        "No CUDA runtime in this process",
        "the module was compiled for CUDA but the CUDA runtime library is not loaded here (no "
        "NVIDIA driver, or a build with USE_CUDA OFF).",
        "run it where libcuda.so.1 and a GPU exist, or export it (tk compile) and load it "
        "there with tvm.runtime.load_module.",
        "src/backend/cuda/codegen/cuda_fallback_module.cc in apache-tvm 0.27.0.post1 "
        "(captured from the wheel)",
    ),
    Rule(
        "undefined-tvm-ffi-symbol", "library", "undefined symbol: ",
        r"(?P<lib>\S*libtvm(?:_runtime|_compiler)?\.so): undefined symbol: "
        r"(?P<sym>_ZN\w*3tvm3ffi\w*)",
        "libtvm and tvm-ffi do not match",
        "libtvm was built against another tvm-ffi.",
        "install the tvm-ffi TVM was built with.",
        "glibc dynamic loader via ctypes.CDLL (apache/tvm#19486); captured with g++ here",
        _ffi_symbol_fix,
        rank=60,
    ),
    Rule(
        "tvm-ffi-static-init-crash", "library", "Segfault encountered",
        r"Segfault encountered[^\n]*\n(?:[^\n]*\n){0,40}?[^\n]*? in "
        r"(?:(?P<ns>[A-Za-z_]\w*)::)?__TVMFFIStaticInitFunc",
        "A library crashed registering itself with tvm-ffi",
        "a library's static initialiser crashed in tvm-ffi's registration.",
        "install the apache-tvm-ffi the library was built with.",
        "tvm-ffi's segfault handler and its TVM_FFI_STATIC_INIT_BLOCK functions "
        "(__TVMFFIStaticInitFunc); the shape of users' reports",
        _static_init_fix,
        rank=60,
    ),
    Rule(
        "torch-extension-lock-wait", "library", "file_baton.py",
        r'torch/utils/file_baton\.py", line \d+, in wait',
        "Waiting for a lock of a PyTorch extension build",
        "the process waits on torch.utils.cpp_extension's lock file.",
        "remove the stale lock.",
        "torch/utils/cpp_extension.py and file_baton.py (PyTorch 2.x); apache-tvm-ffi 0.1.15's "
        "_optional_torch_c_dlpack.py",
        _extension_lock_fix,
    ),
    Rule(
        "ext-tvm-ffi-skew", "library", "undefined symbol: ",
        r"(?P<lib>\S+\.so[.\d]*): undefined symbol: (?P<sym>_ZN\w*3tvm3ffi\w*|TVMFFI\w+)",
        "Library built against another tvm-ffi",
        "the library needs a tvm-ffi symbol (C API TVMFFI* or a tvm::ffi C++ one) that the "
        "libtvm_ffi.so loaded here does not export: it was compiled against other tvm-ffi "
        "headers than the apache-tvm-ffi installed.",
        "rebuild it against the installed tvm-ffi (tk ext build uses the interpreter's "
        "tvm_ffi include dir), or install the tvm-ffi it was built with; `tk ext check LIB.so` "
        "and `tk doctor` show both sides.",
        "glibc dynamic loader; captured here with a g++-built library calling an absent "
        "TVMFFI C function",
        toolchain.ffi_symbol_skew,
        rank=55,
    ),
    Rule(
        "undefined-symbol", "library", "undefined symbol: ",
        r"(?P<lib>\S+\.so[.\d]*): undefined symbol: (?P<sym>\S+)",
        "Library needs a symbol nothing in the process provides",
        "a shared library was built against another version of one of its dependencies "
        "(often another TVM or tvm-ffi) than the one mapped now.",
        "rebuild the library against the TVM in use (tk ext build) and check it with "
        "`tk ext check LIB.so`.",
        "glibc dynamic loader (dlopen error)",
        toolchain.missing_symbol,
        rank=20,
    ),
    Rule(
        "llvm-too-old", "build", "TVM requires LLVM",
        r"TVM requires LLVM (?P<need>[\d.]+) or higher",
        "LLVM too old for this TVM",
        "TVM >= 0.24 refuses LLVM < 15; Debian bookworm's default llvm-config is 14.",
        "apt-get install llvm-16-dev and point USE_LLVM at it: "
        'set(USE_LLVM "llvm-config-16 --ignore-libllvm --link-static").',
        "cmake/utils/FindLLVM.cmake (shipped in the wheel: tvm/cmake/utils/FindLLVM.cmake)",
        toolchain.llvm_too_old,
    ),
    Rule(
        "cmake-too-old", "build", " or higher is required",
        r"CMake (?P<need>[\d.]+) or higher is required\.\s+You are running version "
        r"(?P<have>[\d.]+)",
        "CMake too old",
        "this project (TVM >= 0.22 via 3rdparty/tvm-ffi needs 3.26) requires a newer CMake "
        "than the one on PATH.",
        "pip install 'cmake>=3.26' ninja (puts a current cmake first on PATH), then "
        "reconfigure from a clean build directory.",
        "CMake cmake_minimum_required (tvm-ffi CMakeLists.txt: VERSION 3.26); captured here",
        toolchain.cmake_too_old,
    ),
    Rule(
        "zstd-not-found", "build", "Could NOT find zstd",
        r"Could NOT find zstd",
        "zstd development files missing",
        "LLVM 16's CMake package requires zstd; the headers/library are not installed.",
        "apt-get install libzstd-dev (with zlib1g-dev libxml2-dev libedit-dev libtinfo-dev).",
        "CMake FindPackageHandleStandardArgs via LLVMConfig.cmake; captured here",
    ),
    Rule(
        "ptxas-error", "cuda", "ptxas ",
        r"ptxas (?:[^\n;]*; )?(?:fatal|error)\s*:\s*(?P<msg>.*)",
        "ptxas rejected the generated PTX",
        "the CUDA assembler refused a kernel (resource limits, an unsupported instruction "
        "for the chosen -arch, or a PTX version newer than the toolkit).",
        "check the target's arch against the CUDA toolkit (nvcc --list-gpu-arch) and the "
        "kernel's resources; `tk dump-ir` shows the CUDA source TVM generated.",
        "ptxas (CUDA toolkit); captured with nvcc here",
        _ptxas_fix,
        rank=30,
    ),
    Rule(
        "stale-dlpack", "build", "DLPackManagedTensorAllocator",
        r"DLPackManagedTensorAllocator\W+was not declared",
        "tvm-ffi's dlpack submodule is stale",
        "3rdparty/tvm-ffi was checked out with an older 3rdparty/dlpack than it needs.",
        "git submodule update --init --recursive (and record submodule SHAs in the build).",
        "apache/tvm-ffi's environment C API (TVMFFIEnvSetDLPackManagedTensorAllocator) built "
        "against a stale 3rdparty/dlpack (seen building apache/tvm main)",
    ),
    # --- s_tir schedule primitives (0.24+: tvm.s_tir.Schedule); the message is a
    # ScheduleError's "Error message:" line, after the whole IRModule.
    Rule(
        "sch-output-block", "schedule", "is an output block",
        r"The block (?P<block>\S+) is an output block",
        "Schedule primitive applied to an output block",
        "compute_at / compute_inline move or remove a block, and an output block (one that "
        "writes a function argument) can be neither moved under a consumer nor inlined.",
        "attach the other way: sch.reverse_compute_at(consumer, loop) moves a consumer under "
        "its producer's loop; compute_at is for producers of an intermediate buffer.",
        "src/s_tir/schedule/analysis/analysis.cc (NotOutputBlockError)",
    ),
    Rule(
        "sch-split-factors", "schedule", ("The product of factors is not larger than",
                                          "Only one factor can be specified",
                                          "constant factors are required to be positive"),
        r"The product of factors is not larger than or equal to the extent of loop|"
        r"Only one factor can be specified as -1 or none|"
        r"All the constant factors are required to be positive",
        "Invalid split factors",
        "sch.split(loop, factors=[...]) needs positive factors whose product covers the "
        "loop's extent, with at most one of them None (inferred).",
        "give exactly one factor as None and TVM infers it (factors=[None, 32]); the others "
        "positive.",
        "src/s_tir/schedule/primitive/loop_transformation.cc (WrongFactorProductError)",
    ),
    Rule(
        "sch-not-data-parallel", "schedule", "cannot be fulfilled with regard to block",
        r"The \"(?P<prim>\w+)\" cannot be fulfilled with regard to block (?P<block>\S+?)\.?"
        r"(?: because| This is because)",
        "Loop over a reduction cannot be vectorized, parallelized or bound",
        "vectorize / parallel / bind need every block iter that depends on the loop to be "
        "data-parallel; this loop feeds a reduction iter (e.g. the k of a matmul).",
        "apply it to a spatial loop, or split the reduction first with sch.rfactor(loop, 0) "
        "and vectorize/bind the rfactor block's spatial loop.",
        "src/s_tir/schedule/primitive/for_kind.cc (WrongBlockIterTypeError)",
    ),
    Rule(
        "sch-block-not-found", "schedule", "Cannot find a block with the name",
        r"Cannot find a block with the name: (?P<name>\S+)",
        "No block of that name",
        "sch.get_sblock(name) found no block called that in the function (names change when "
        "blocks are split, cached or inlined, and default to the op name after LegalizeOps).",
        "print sch.mod.script() to see the block names, or pass func_name= when the module "
        "has several functions.",
        "src/s_tir/schedule/concrete_schedule.cc (GetSBlock NotSingleResult)",
    ),
    Rule(
        "sch-init-statement", "schedule", "The block has init statement",
        r"The block has init statement",
        "Reduction block cannot be inlined",
        "compute_inline / reverse_compute_inline refuse a block with a T.init() (a "
        "reduction): its value is not a pure function of its inputs.",
        "inline the element-wise blocks around it instead, or decompose_reduction first.",
        "src/s_tir/schedule/primitive/compute_inline.cc (HasInitBlock)",
    ),
    Rule(
        "sch-not-reduction-block", "schedule", "is not a reduction block",
        r"is not a reduction block - it violates condition #(?P<cond>\d+)",
        "rfactor/decompose on a block that is not a reduction",
        "the primitive needs a reduction block (with T.init(), affine bindings, reduction "
        "iters not indexing the output); the message lists the conditions and which failed.",
        "apply it to the reduction block's reduction loop (the loop over the 'R' iter).",
        "src/s_tir/schedule/analysis/analysis.cc (NotReductionBlockError)",
    ),
    Rule(
        "sch-single-writer", "schedule", "is expected to be written by single block",
        r"The buffer (?P<buf>\S+) is expected to be written by single block, but got "
        r"(?P<n>\d+) blocks who write it",
        "Buffer written by several blocks",
        "compute_inline / cache_read need a buffer that exactly one block writes.",
        "write the buffer from one block (or schedule the writers separately, without "
        "inlining).",
        "src/s_tir/schedule/primitive/compute_inline.cc (NotSingleWriteBlock)",
    ),
    Rule(
        "sch-stale-rv", "schedule", "no longer exists in the IRModule",
        r"The (?P<what>loop|block) no longer exists in the IRModule",
        "Schedule handle used after it was replaced",
        "a LoopRV/SBlockRV was used after a primitive removed what it referred to (split, "
        "fuse, reorder-free primitives return new loops; inlining removes the block).",
        "use the handles the primitive returned: i0, i1 = sch.split(i, ...) and then i0/i1, "
        "never i; re-fetch with sch.get_loops(block).",
        "src/s_tir/schedule/concrete_schedule.h (GetSRef)",
    ),
    Rule(
        "sch-not-complete-block", "schedule", "is not a complete block",
        r"The block (?P<block>\S+) is not a complete block - it violates condition #(?P<cond>\d+)",
        "Block is not complete",
        "compute_at / compute_inline need a complete block: it alone writes its outputs, "
        "all its iters are data-parallel, and it does not read what it writes; an in-place "
        "update (B[i] = B[i] + ...) or a second writer of the buffer breaks that.",
        "write the update into a new buffer, or attach/inline the first writer instead.",
        "src/s_tir/schedule/analysis/analysis.cc (NotCompleteBlockError); captured with 0.27",
    ),
    Rule(
        "sch-loop-bound", "schedule", "has annotation or thread binding",
        r"The primitive can't be applied because the loop (?P<loop>\S+) has annotation or "
        r"thread binding",
        "Loop already bound to a thread (or annotated)",
        "split / fuse / reorder refuse a loop that was already bound to a thread axis or "
        "annotated: binding comes last.",
        "restructure the loops first (split, fuse, reorder), then bind the resulting loops "
        "once each: sch.bind(fused, 'blockIdx.x').",
        "src/s_tir/schedule/primitive/loop_transformation.cc (HasAnnotationOrThreadBinding"
        "Error); captured with 0.27.0.post1",
    ),
    Rule(
        "sch-affine-binding", "schedule", "affine binding",
        r"is required to have an (?:partial )?affine binding",
        "Block bindings are not affine",
        "the primitive needs the block's iter bindings to be affine in the outer loops; an "
        "earlier split by a non-dividing factor or a fused irregular loop broke that.",
        "use factors that divide the extent (or pad with sch.pad_einsum), or apply this "
        "primitive before the one that made the binding non-affine.",
        "src/s_tir/schedule/analysis/analysis.cc (NotAffineBindingError)",
    ),
    Rule(
        "sch-not-stage-pipeline", "schedule", "is not a stage pipeline",
        r"The scope (?P<scope>\S+) is not a stage pipeline",
        "Scope is not a stage pipeline",
        "compute_at / cache_* need the enclosing scope's blocks to form a producer-consumer "
        "pipeline (each buffer written by one block, before it is read).",
        "schedule each producer-consumer pair separately; a buffer written twice (e.g. in "
        "place) cannot be attached.",
        "src/s_tir/schedule/analysis/analysis.cc (NotStagePipelineError)",
    ),
    # --- API moves of 0.24-0.27 (tvm.tir split into tirx and s_tir, tvm.nd gone).
    Rule(
        "api-tvm-nd", "api-move", ("'nd'", "No module named 'tvm.nd"),
        r"module 'tvm' has no attribute 'nd'|cannot import name 'nd' from 'tvm'|"
        r"No module named 'tvm\.nd'",
        "tvm.nd was removed",
        "tensors live in tvm.runtime since the move to tvm-ffi: tvm.nd.array and "
        "tvm.nd.NDArray are gone.",
        "use tvm.runtime.tensor(np_array, device=dev) and arr.numpy(); the type is "
        "tvm.runtime.Tensor.",
        "python/tvm/runtime (apache/tvm 0.22+: tvm.nd removed); captured with 0.27.0.post1",
    ),
    Rule(
        "api-tvm-tir", "api-move", ("'tir'", "No module named 'tvm.tir"),
        r"module 'tvm' has no attribute 'tir'|cannot import name 'tir' from 'tvm'(?!\.)|"
        r"No module named 'tvm\.tir(?:\.\w+)*'",
        "tvm.tir was split into tvm.tirx and tvm.s_tir",
        "TVM 0.24 split tvm.tir: the IR, analysis and transforms are tvm.tirx; block "
        "scheduling (Schedule, dlight, meta_schedule) is tvm.s_tir.",
        "tvm.tir.X -> tvm.tirx.X (Var, PrimFunc, transform, analysis); tvm.tir.Schedule -> "
        "tvm.s_tir.Schedule; pass names are tirx.* / s_tir.*.",
        "apache/tvm#18913; captured with 0.27.0.post1",
    ),
    Rule(
        "api-script-tir", "api-move", ("from 'tvm.script'", "No module named 'tvm.script.tir"),
        r"cannot import name 'tir' from 'tvm\.script'|No module named 'tvm\.script\.tir'",
        "tvm.script.tir is now tvm.script.tirx",
        "TVMScript's TIR dialect moved with tvm.tir (TVM 0.24).",
        "from tvm.script import tirx as T; functions with blocks need "
        "@T.prim_func(s_tir=True) and T.sblock instead of T.block.",
        "python/tvm/script/__init__.py (_DIALECT_REGISTRY); captured with 0.27.0.post1",
    ),
    Rule(
        "api-t-block", "api-move", "has no attribute 'block'",
        r"module 'tvm\.tirx\.script(?:\.\w+)*' has no attribute 'block'",
        "T.block is now T.sblock",
        "scheduleable blocks are s_tir constructs since 0.24; TVMScript spells them T.sblock.",
        "write `with T.sblock(\"name\"):` and decorate the function with "
        "@T.prim_func(s_tir=True).",
        "python/tvm/tirx/script (0.24+); captured with 0.27.0.post1",
    ),
    Rule(
        "api-sblock-without-s-tir", "api-move", "TIR verifier does not support statement",
        r"TIR verifier does not support statement s_tir\.SBlockRealize",
        "Blocks in a plain tirx function",
        "a PrimFunc with T.sblock was parsed as plain tirx, whose verifier does not accept "
        "blocks.",
        "decorate it with @T.prim_func(s_tir=True) (or @I.ir_module with such functions).",
        "src/tirx/analysis/verify_well_formed.cc; captured with 0.27.0.post1",
        rank=60,
    ),
    Rule(
        "api-relay", "api-move", "relay",
        r"cannot import name 'relay' from 'tvm'|No module named 'tvm\.relay'|"
        r"module 'tvm' has no attribute 'relay'",
        "Relay was removed",
        "Relay and its frontends were removed (TVM 0.20); Relax replaces them.",
        "import models with tvm.relax.frontend (onnx.from_onnx, torch.from_exported_program) "
        "and compile with tvm.compile(mod, target).",
        "apache/tvm v0.20.0 release notes (Relay removal); captured with 0.27.0.post1",
    ),
    Rule(
        "api-moved-to-s-tir", "api-move", ("No module named 'tvm.", "has no attribute '",
                                           "cannot import name '"),
        r"No module named 'tvm\.(?P<name>dlight|meta_schedule)'|"
        r"module 'tvm' has no attribute '(?P<name2>dlight|meta_schedule)'|"
        r"cannot import name '(?P<name3>dlight|meta_schedule)' from 'tvm'",
        "dlight and meta_schedule moved under tvm.s_tir",
        "TVM 0.24 moved the block-schedule tools with tvm.tir's split.",
        "from tvm.s_tir import dlight as dl; from tvm.s_tir import meta_schedule as ms.",
        "apache/tvm#18913; captured with 0.27.0.post1",
        one_line=True,
    ),
    Rule(
        "api-te-create-schedule", "api-move", "has no attribute 'create_schedule'",
        r"module 'tvm\.te' has no attribute 'create_schedule'",
        "TE schedules were removed",
        "te.create_schedule and the TE scheduling language were removed; TE now only "
        "describes computations.",
        "func = te.create_prim_func([A, B]); sch = tvm.s_tir.Schedule(func); schedule "
        "blocks with sch.split / sch.bind ...",
        "apache/tvm (TE schedule removal, 0.19); captured with 0.27.0.post1",
    ),
    Rule(
        "api-struct-info-names", "api-move", "StructInfo'",
        r"module 'tvm\.relax' has no attribute '(?P<name>\w+StructInfo)'",
        "Relax struct-info classes moved",
        "the StructInfo classes are no longer re-exported from tvm.relax in this version.",
        "write annotations as R.Tensor((4, 3), \"float32\") through tvm.script.relax, or use "
        "the classes from tvm.relax.struct_info where your version has them.",
        "python/tvm/relax/__init__.py; captured with 0.27.0.post1",
    ),
    Rule(
        "tvmscript-error-hidden", "api-move", "TVM_BACKTRACE=1` environment variable",
        r"note: run with `TVM_BACKTRACE=1` environment variable to display a backtrace",
        "TVMScript error hidden by TVM's excepthook",
        "a TVMScript function failed to parse (a DiagnosticError: often an API that moved, "
        "T.block, or a wrong op signature) and TVM's excepthook printed only this note.",
        "rerun with TVM_BACKTRACE=1 (TVM_BACKTRACE=1 python script.py 2>&1 | tk explain -) "
        "to see the message and the line it points at.",
        "python/tvm/__init__.py (tvm_wrap_excepthook); captured with 0.27.0.post1",
        rank=30,  # when the message is in the log too, its own rule says more
    ),
    # --- Relax: struct info and the VM's argument checks.
    Rule(
        "relax-not-broadcastable", "relax", "which are not broadcastable",
        r"the first input shape at dim (?P<dim>\d+) is (?P<a>\S+) and the second input shape "
        r"at dim \d+ is (?P<b>\S+), which are not broadcastable",
        "Operand shapes do not broadcast",
        "a binary op's inputs have extents that are neither equal nor 1 in one dimension.",
        "fix the shapes (reshape/expand_dims) so each dimension is equal or 1.",
        "src/relax/op/op_common.cc (InferBinaryBroadcastShape); captured with 0.27.0.post1",
    ),
    Rule(
        "relax-dtype-mismatch", "relax", "must have the same datatype",
        r"Binary operators must have the same datatype for both operands",
        "Operand dtypes differ",
        "a Relax binary op got operands of two dtypes; Relax does not promote types.",
        "cast one side first: R.astype(y, \"float32\").",
        "src/relax/op/op_common.cc (InferBinaryArithOpOutDtype); captured with 0.27.0.post1",
    ),
    Rule(
        "relax-reshape-size", "relax", "Reshape expects the new shape",
        r"Reshape expects the new shape to be convertible from the old shape",
        "reshape to a shape of another size",
        "R.reshape's new shape has another number of elements than the input.",
        "make the products equal, or use -1 for the one dimension to infer.",
        "src/relax/op/tensor/manipulate.cc (InferStructInfoReshape); captured with 0.27",
    ),
    Rule(
        "relax-call-arg-mismatch", "relax", "type mismatch: expected",
        r"Argument (?P<index>\d+) type mismatch: expected (?P<want>.*?), given (?P<got>.*)",
        "Relax call with an argument of another struct info",
        "a Relax function is called with an argument whose shape/dtype differs from its "
        "parameter's annotation.",
        "pass what the callee declares, or relax its annotation (symbolic shape "
        "R.Tensor((\"n\",), ...)).",
        "src/relax/analysis/struct_info_analysis.cc / op call checks; captured with 0.27",
    ),
    Rule(
        "relax-matmul-reduction", "relax", "Matmul requires the reduction length",
        r"Matmul requires the reduction length of the operands to be equal",
        "matmul operands disagree on the reduction length",
        "R.matmul(a, b) contracts a's last axis with b's second-to-last; they differ.",
        "transpose the second operand (R.permute_dims(b)) or fix the shapes.",
        "src/relax/op/tensor/linear_algebra.cc (InferStructInfoMatmul); captured with 0.27",
    ),
    Rule(
        "relax-no-legalization", "relax", "No legalization func for",
        r"No legalization func for (?P<op>\S+) is found",
        "Op without a legalization",
        "LegalizeOps found no FLegalize for this op (a custom op, or one this TVM lowers "
        "only through a library); it stays a high-level call and codegen fails later.",
        "register a legalization (tvm.ir.register_op_attr(op, 'FLegalize', fn)) or pass "
        "legalize_ops with a custom function, or lower it to call_dps_packed.",
        "src/relax/transform/legalize_ops.cc (LOG(WARNING) with enable_warning=True); "
        "captured with 0.27.0.post1",
    ),
    Rule(
        "relax-vm-codegen-op", "relax", "CodeGenVM cannot ",
        r"CodeGenVM cannot (?:handle this intrinsic now|emit this Relax operator directly)",
        "High-level op reached the VM codegen",
        "an op was neither legalized nor lowered before VM codegen (usually the missing "
        "legalization warned about earlier).",
        "give the op a legalization (tvm.ir.register_op_attr(name, 'FLegalize', fn)) or "
        "call a kernel for it (R.call_tir / R.call_dps_packed); "
        "relax.transform.LegalizeOps(enable_warning=True) names the ops it leaves.",
        "src/relax/backend/vm/codegen_vm.cc; captured with 0.27.0.post1 (R.ewise_fma)",
        rank=45,
    ),
    Rule(
        "vm-arg-count", "relax", "arguments were provided",
        r"Invoking function (?P<fn>\S+) expects (?P<want>\d+) arguments \((?P<names>[^)]*)\), "
        r"but (?P<got>\d+) arguments were provided",
        "Wrong number of arguments to a Relax function",
        "the VM function was called with another number of arguments than its signature.",
        "pass every parameter, parameters included (vm['main'](*inputs, *params)).",
        "src/runtime/vm/vm.cc (InvokeBytecode); captured with 0.27.0.post1",
    ),
    Rule(
        "vm-shape-mismatch", "relax", "mismatch to specified constant",
        r"ErrorContext\(fn=(?P<fn>[^,]+), loc=(?P<loc>[^,]+), param=(?P<param>[^,]+), "
        r"annotation=(?P<ann>.*?)\)\s+match_cast error,\s+shape\[(?P<dim>\d+)\] mismatch",
        "Input shape differs from the Relax signature",
        "an argument's extent differs from the constant the function's annotation declares.",
        "pass an array of the annotated shape, or make the dimension symbolic "
        "(R.Tensor((\"n\", 3))).",
        "src/runtime/vm/builtin.cc (MatchShape); captured with 0.27.0.post1",
    ),
    Rule(
        "vm-dtype-mismatch", "relax", "expect Tensor with dtype",
        r"param=(?P<param>[^,]+),.*?expect Tensor with dtype (?P<want>\w+) but get (?P<got>\w+)",
        "Input dtype differs from the Relax signature",
        "an argument has another dtype than its annotation.",
        "convert it first (np_array.astype(...)) or change the annotation.",
        "src/runtime/vm/builtin.cc (CheckTensorInfo); captured with 0.27.0.post1",
    ),
    Rule(
        "vm-ndim-mismatch", "relax", "expect Tensor with ndim",
        r"param=(?P<param>[^,]+),.*?expect Tensor with ndim (?P<want>\d+) but get (?P<got>\d+)",
        "Input rank differs from the Relax signature",
        "an argument has another number of dimensions than its annotation.",
        "reshape it to the annotated rank (np.expand_dims / reshape).",
        "src/runtime/vm/builtin.cc (CheckTensorInfo); captured with 0.27.0.post1",
    ),
    # --- Lowering: memory verification, dlight, FuseTIR.
    Rule(
        "memory-unbound", "lowering", "Did you forget to bind?",
        r"Did you forget to bind\?",
        "GPU kernel without thread bindings",
        "a GPU PrimFunc accesses buffers outside any threadIdx/blockIdx loop: it was never "
        "scheduled for the GPU, so its loops would run on the host.",
        "schedule it (dlight: tvm.s_tir.dlight.ApplyDefaultSchedule(dl.gpu.Fallback()) under "
        "the target, or tvm.s_tir.transform.DefaultGPUSchedule()), or bind loops by hand.",
        "src/tirx/analysis/verify_memory.cc; captured with 0.27.0.post1",
    ),
    Rule(
        "dlight-root-block", "lowering", "The function body is expected to be the root block",
        r"The function body is expected to be the root block",
        "dlight needs a block-structured PrimFunc",
        "the dlight rule reads the function's root block; this PrimFunc is plain tirx (loops "
        "and stores, no T.sblock) or was already lowered.",
        "give dlight functions written with blocks (@T.prim_func(s_tir=True) / "
        "te.create_prim_func / LegalizeOps output), or schedule a hand-written kernel "
        "yourself (T.thread_binding loops) and mark it "
        "T.func_attr({\"tirx.is_scheduled\": True}) ('tir.is_scheduled' before 0.24) so "
        "dlight skips it.",
        "python/tvm/s_tir/dlight/analysis/common_analysis.py (get_root_block); captured here",
    ),
    Rule(
        "fusetir-not-schedulable", "lowering", "Only schedulable functions",
        r"Only schedulable functions \(whose body is the root block\) can be fused",
        "FuseTIR met a PrimFunc without a root block",
        "FuseTIR merges the blocks of the PrimFuncs in a fused group; one of them is plain "
        "tirx (no root block).",
        "keep hand-written plain-tirx kernels out of fusion (call them with "
        "R.call_tir outside fused groups, or give them blocks).",
        "src/relax/transform/fuse_tir.cc",
    ),
    Rule(
        "fusetir-unknown-shape", "lowering", "FuseTIR expects all",
        r"FuseTIR expects all (?:Tensor parameters have a known shape|parameters are Tensors "
        r"with symbolic shape)",
        "FuseTIR needs known tensor shapes",
        "a fused function takes a tensor whose shape is unknown (R.Tensor(ndim=-1) or a "
        "dynamic rank).",
        "annotate shapes (symbolic ones are fine) before FuseOps/FuseTIR.",
        "src/relax/transform/fuse_tir.cc",
    ),
    # --- Targets and LLVM.
    Rule(
        "llvm-unknown-mcpu", "target", "is not valid in `-mtriple",
        r"Using LLVM (?P<llvm>[\d.]+) with `-mcpu=(?P<cpu>[^`]+)` is not valid in "
        r"`-mtriple=(?P<triple>[^`]+)`",
        "LLVM does not know this -mcpu",
        "the target's mcpu is not a CPU this LLVM knows for the triple; TVM falls back to a "
        "generic CPU (slower code, no error).",
        "use a name from `llc -mtriple=<triple> -mcpu=help` (e.g. skylake, znver3, "
        "cortex-a76).",
        "src/target/llvm/llvm_instance.cc (LOG(ERROR)); captured with 0.27.0.post1",
    ),
    # --- CUDA driver and toolchain.
    Rule(
        "cuda-no-binary", "cuda", ("NO_BINARY_FOR_GPU", "no kernel image is available"),
        r"CUDA_ERROR_NO_BINARY_FOR_GPU|no kernel image is available for execution on the device",
        "Kernel not compiled for this GPU",
        "the module holds cubin/PTX for another architecture than the GPU it runs on.",
        "compile for this GPU's arch: {\"kind\": \"cuda\", \"arch\": \"sm_XY\"} with "
        "XY from nvidia-smi --query-gpu=compute_cap.",
        "src/runtime/cuda/cuda_module.cc (cuModuleLoadData via CUDA_DRIVER_CALL); "
        "as in apache/tvm#205; the runtime API's cudaErrorNoKernelImageForDevice wording",
        toolchain.no_kernel_image,
    ),
    Rule(
        "cuda-invalid-ptx", "cuda", "CUDA_ERROR_INVALID_PTX",
        r"CUDA_ERROR_INVALID_PTX",
        "Driver rejected the PTX",
        "the driver's JIT could not compile the module's PTX: generated for a newer arch or "
        "PTX ISA than this driver/GPU has, or miscompiled.",
        "compile for the GPU's own arch (cubin, not PTX-only), update the driver, or look at "
        "the CUDA source in tk compile --emit-source.",
        "src/runtime/cuda/cuda_module.cc (cuModuleLoadData via CUDA_DRIVER_CALL); "
        "as in apache/tvm#1027",
    ),
    Rule(
        "module-loader-not-registered", "library", "but a loader of that name is not registered",
        r"Binary was created using \{?(?P<kind>[\w.]+)\}? but a loader of that name is not "
        r"registered",
        "Runtime for the module's device not loaded",
        "the exported library holds a device module (e.g. cuda) and this process's TVM "
        "runtime has no loader for it: built without that runtime, or its library (e.g. "
        "libtvm_runtime_cuda.so, which needs libcuda.so.1) did not load.",
        "load the module where a TVM with that runtime is installed (tk doctor shows which "
        "runtimes load), or compile for a target this runtime has.",
        "src/runtime/library_module.cc (ProcessLibraryBin); as in apache/tvm#13595; TVM's history "
        "of its loaders (module.loadbinary_X, runtime.module.loadbinary_X, "
        "ffi.Module.load_from_bytes.X)",
        toolchain.module_loader,
    ),
    Rule(
        "cuda-unsupported-ptx", "cuda", ("UNSUPPORTED_PTX_VERSION", "unsupported toolchain"),
        r"CUDA_ERROR_UNSUPPORTED_PTX_VERSION|the provided PTX was compiled with an unsupported "
        r"toolchain",
        "PTX newer than the driver",
        "the PTX was produced by a CUDA toolkit newer than the installed driver supports.",
        "update the NVIDIA driver, or compile with the toolkit matching the driver "
        "(nvidia-smi shows the highest CUDA version it supports).",
        "src/runtime/cuda/cuda_module.cc (cuModuleLoadData via CUDA_DRIVER_CALL)",
    ),
    Rule(
        "cuda-illegal-address", "cuda", ("ILLEGAL_ADDRESS", "illegal memory access"),
        r"CUDA_ERROR_ILLEGAL_ADDRESS|an illegal memory access was encountered",
        "Kernel read or wrote out of bounds",
        "a kernel accessed memory outside its buffers (a wrong index, a missing bound check "
        "after a non-dividing split, or inputs smaller than compiled for).",
        "run with compute-sanitizer, and check the kernel's predicates in tk dump-ir; the "
        "error is sticky: the process must restart.",
        "src/runtime/cuda/cuda_device_api.cc (CUDA_CALL: \"CUDA Runtime Error: \" in "
        "libtvm_runtime_cuda.so 0.27)",
    ),
    Rule(
        "cuda-out-of-memory", "cuda", ("out of memory", "OUT_OF_MEMORY", "MemoryAllocation"),
        r"CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|CUDA(?: Runtime Error)?: out of "
        r"memory",
        "GPU out of memory",
        "an allocation on the GPU failed.",
        "lower the batch/sequence size, free other GPU users (nvidia-smi), or plan memory "
        "with relax.transform.StaticPlanBlockMemory.",
        "src/runtime/cuda/cuda_device_api.cc (AllocDataSpace)",
    ),
    Rule(
        "cuda-no-driver", "cuda", "libcuda.so",
        r"libcuda\.so(?:\.1)?: cannot open shared object file",
        "No NVIDIA driver",
        "the CUDA driver library (libcuda.so.1) is not installed on this machine.",
        "install the NVIDIA driver, or on a machine without a GPU compile only.",
        "glibc dynamic loader",
        rank=60,
    ),
    Rule(
        "ptx-version-too-new", "cuda", "Unsupported .version",
        r"Unsupported \.version (?P<have>[\d.]+); current version is '(?P<max>[\d.]+)'",
        "PTX ISA newer than this ptxas",
        "the PTX declares an ISA version the CUDA toolkit's ptxas does not know: it was "
        "generated (by LLVM's NVPTX backend or another toolkit) for a newer CUDA.",
        "use a CUDA toolkit at least as new as the PTX (or let TVM compile with nvcc: "
        "the target's default), or lower the PTX version the generator emits.",
        "ptxas (CUDA toolkit); captured with CUDA 13 ptxas on a .version 99.0 module",
        rank=40,
    ),
    Rule(
        "nvcc-unsupported-arch", "cuda", ("Unsupported gpu architecture",
                                          "is not defined for option 'gpu-architecture'"),
        r"[Nn]vcc fatal\s*: Unsupported gpu architecture '(?P<arch>[\w.]+)'|"
        r"[Nn]vcc fatal\s*: Value ['\u2018](?P<arch2>[\w.]+)['\u2019] is not defined for option "
        r"['\u2018]gpu-architecture['\u2019]",
        "nvcc does not support this arch",
        "the CUDA toolkit on PATH cannot compile for that architecture (too old for it, or "
        "removed: CUDA 12 dropped sm_35/37, CUDA 13 dropped sm_50-72).",
        "use an arch listed by `nvcc --list-gpu-arch`, or a toolkit that supports it.",
        "nvcc (CUDA toolkit); captured with CUDA 13 nvcc here",
    ),
    # --- Building TVM.
    Rule(
        "cmake-no-cuda-compiler", "build", "No CMAKE_CUDA_COMPILER could be found",
        r"No CMAKE_CUDA_COMPILER could be found",
        "CMake finds no CUDA compiler",
        "USE_CUDA is ON but nvcc is neither on PATH nor given to CMake.",
        "export CUDACXX=/usr/local/cuda/bin/nvcc (or PATH=/usr/local/cuda/bin:$PATH), or "
        "-DCMAKE_CUDA_COMPILER=...; tk build checks this before configuring.",
        "CMake's compiler detection (strings of cmake 3.25); as users report it",
    ),
    Rule(
        "cmake-cuda-arch-detect", "build", "Failed to detect a default CUDA architecture",
        r"Failed to detect a default CUDA architecture",
        "CMake cannot probe the CUDA compiler",
        "CMake compiles a test program to find nvcc's default architecture and it failed: "
        "usually a CMake older than the CUDA toolkit (CUDA 13 needs CMake >= 3.31), or an "
        "nvcc that cannot run.",
        "pip install 'cmake>=3.31' or set CMAKE_CUDA_ARCHITECTURES=80 (the GPU's arch).",
        "Modules/CMakeDetermineCUDACompiler.cmake; captured with CMake 3.25 and CUDA 13",
    ),
    Rule(
        "cuda-architectures-native-no-gpu", "build", 'is set to "native", but no GPU',
        r'CUDA_ARCHITECTURES is set to "native", but no GPU was detected',
        "CUDA architectures \"native\" on a machine without a GPU",
        "CMAKE_CUDA_ARCHITECTURES is \"native\": CMake compiles for the GPUs it finds on "
        "this machine, and it found none (a build host, container or CI job without a GPU or "
        "without the NVIDIA driver). TVM's cmake/modules/CUDA.cmake sets native itself when "
        "CMAKE_CUDA_ARCHITECTURES is unset, from v0.16.0 on (apache/tvm#16335).",
        "name the architectures: set(CMAKE_CUDA_ARCHITECTURES 80) in config.cmake, or "
        "-DCMAKE_CUDA_ARCHITECTURES=\"80;90\" (tk build --cuda-arch \"80;90\"); keep native "
        "only where the GPU is visible to the build.",
        "CMake's generator check for CUDA_ARCHITECTURES native (as CMake words it); "
        "cmake/modules/CUDA.cmake at the release tags (git)",
    ),
    Rule(
        "cmake-make-program", "build", "CMAKE_MAKE_PROGRAM",
        r"CMake was unable to find a build program corresponding to \"(?P<gen>[^\"]+)\"",
        "Build tool not found",
        "the generator's build program (ninja or make) is not on PATH.",
        "pip install ninja (or apt-get install ninja-build make).",
        "CMake generator check; captured here",
    ),
    Rule(
        "link-library-not-found", "build", "cannot find -l",
        r"cannot find -l(?P<lib>[^\s:]+)",
        "Linker cannot find a library",
        "a -l<name> the link asks for is not in the linker's search path (its -dev package "
        "is not installed, or its directory is not given with -L).",
        "install the library's development package, or point the build at it "
        "(CMAKE_PREFIX_PATH, or -L<dir> / LIBRARY_PATH).",
        "GNU ld; captured with g++ -ltk_absent_lib",
    ),
    Rule(
        "undefined-reference", "build", "undefined reference to",
        r"undefined reference to [`'](?P<sym>[^'`]+)'",
        "Link misses a definition",
        "an object calls a function no library or object in the link defines: a library "
        "missing from target_link_libraries (libtvm_ffi, libcuda, ...), or one built "
        "against other headers.",
        "add the library that defines it to the link (target_link_libraries / -l), in an "
        "order where it comes after its users.",
        "GNU ld; captured with g++",
        toolchain.missing_symbol,
    ),
    Rule(
        "missing-header", "build", ("No such file or directory", "file not found"),
        r"fatal error: (?P<header>[\w./+-]+\.h(?:pp|h)?): No such file or directory|"
        r"'(?P<header2>[\w./+-]+\.h(?:pp|h)?)' file not found",
        "Header not found",
        "a header the build includes is not installed or not on the include path (a "
        "missing -dev package, or a submodule not checked out).",
        "install the package that provides it, or git submodule update --init --recursive.",
        "gcc/clang; as printed in ninja logs",
        toolchain.header,
    ),
    Rule(
        "cuda-header-not-found", "build", ("No such file or directory", "file not found"),
        r"(?P<header>(?:nvrtc|cuda|cuda_runtime|cuda_runtime_api|cuda_fp16|cuda_bf16|cuda_fp8|"
        r"cublas_v2|cublas|cublasLt|cudnn|curand|cusparse|cufft|cusolverDn|nvml|nvToolsExt|"
        r"cuda_profiler_api|driver_types|vector_types)\.h)['\"]?(?::? No such file or directory|"
        r" file not found)",
        "CUDA header not found",
        "the CUDA toolkit's include directory is not on the compiler's include path.",
        "point the build at the CUDA toolkit (USE_CUDA / CUDA_PATH).",
        "gcc/clang/nvcc; the include flags of TVM's CMake (USE_CUDA) and old Makefile build "
        "(CUDA_PATH, ADD_CFLAGS in config.mk)",
        toolchain.cuda_header,
        rank=55,
    ),
    Rule(
        "alternative-linker-unsupported", "build", "-fuse-ld=",
        r"(?:unrecognized (?:command[- ]line )?option|invalid linker name in argument) "
        r"[‘'\"`]-fuse-ld=(?P<ld>[\w.]+)",
        "The compiler cannot use the linker TVM's CMake chose",
        "TVM's CMake (cmake/utils/Linker.cmake, option USE_ALTERNATIVE_LINKER, default AUTO, "
        "from v0.9.0) uses mold or lld when it finds one on the machine and adds -fuse-ld=... "
        "to the link flags, and this compiler does not accept that linker (GCC takes "
        "-fuse-ld=lld from GCC 9 and -fuse-ld=mold from GCC 12.1).",
        "configure with -DUSE_ALTERNATIVE_LINKER=OFF (or set(USE_ALTERNATIVE_LINKER OFF) in "
        "config.cmake) in a fresh build directory, or build with a newer GCC or with clang.",
        "gcc/clang driver; apache/tvm cmake/utils/Linker.cmake (added by apache/tvm#10683)",
    ),
    Rule(
        "stale-dependency-file", "build", ("No rule to make target", "missing and no known rule"),
        r"No rule to make target [`'‘\"](?P<target>[^`'’\"\s]+\.(?:h|hh|hpp|cuh|inc|cc|cpp|c|cu))"
        r"[`'’\"], needed by [`'‘\"](?P<obj>[^`'’\"\s]+)|"
        r"'(?P<target2>[^'\s]+\.(?:h|hh|hpp|cuh|inc|cc|cpp|c|cu))', needed by '(?P<obj2>[^'\s]+)', "
        r"missing and no known rule to make it",
        "Stale dependency files in the build directory",
        "the build directory's dependency records (the .d files an earlier make wrote with -MM, "
        "or ninja's .ninja_deps) still list a source or header that the tree no longer has (it "
        "moved or was removed by a pull or checkout): the build cache is stale, and make does "
        "not know how to make the missing file.",
        "make a clean build: make clean (the old Makefile build: rm -rf build lib), or remove "
        "the CMake build directory and configure again.",
        "GNU make / ninja",
        toolchain.stale_dependency,
    ),
    Rule(
        "runtime-off-source-module", "build", "not enabled, return a source module",
        r"(?P<rt>\w+) runtime (?:is )?not enabled, return a source module",
        "TVM was built without this target's runtime",
        "the runtime is off in this build, so the module is source only.",
        "turn the runtime's USE_ option on and rebuild TVM.",
        "TVM's src/target/opt/build_*_off.cc (src/codegen/opt/ before v0.7): "
        "LOG(WARNING) << \"OpenCL runtime not enabled, return a source module...\"",
        toolchain.runtime_off,
        rank=50,
        one_line=True,
    ),
    Rule(
        "installed-library-missing", "build", ("No rule to make target", "没有规则可制作目标"),
        _make_no_rule(r"(?:/usr|/opt|/lib|/lib64)/[^`'’\"”\s]+\.(?:a|so|dylib)"),
        "A library an installed package lists is not installed",
        "the link names a file in the system's folders that is not there.",
        "install the package that ships it.",
        "GNU make's 'No rule to make target X, needed by Y' (and its Chinese translation); "
        "LLVMExports.cmake and llvm-config --libs list every component LLVM was built with, "
        "while Debian's and apt.llvm.org's packages ship Polly, MLIR, clang and lld apart "
        "(libpolly-N-dev, ...)",
        toolchain.installed_file_missing,
        rank=55,
        one_line=True,
    ),
    Rule(
        "make-library-not-built-first", "build", ("No rule to make target", "没有规则可制作目标"),
        _make_no_rule(r"[^`'’\"”\s]+\.(?:a|so|dylib|lib)"),
        "A library is linked before anything builds it",
        "make links a library that another target builds, with no dependency on that target.",
        "build that target first, or use Ninja.",
        "GNU make's 'No rule to make target X, needed by Y'; CMake's Unix Makefiles generator, "
        "which orders a link after a library only through target dependencies (add_dependencies"
        " or linking the target by name); apache/tvm#6524 (host_standalone_crt, v0.7.0)",
        toolchain.library_not_built_first,
        rank=50,
        one_line=True,
    ),
    Rule(
        "cxx11-abi-mismatch", "library", "undefined symbol: ",
        r"(?P<lib>[^\s:'\"]+\.so[.\d]*)?:? undefined symbol: (?P<sym>_Z\w+)",
        "The two libraries use different libstdc++ ABIs",
        "the library was built with another _GLIBCXX_USE_CXX11_ABI than the one it links to.",
        "build both with the same _GLIBCXX_USE_CXX11_ABI.",
        "the glibc loader; Itanium C++ mangling of std::string in libstdc++'s two ABIs",
        lambda groups, text: toolchain.cxx_abi(groups, text) or NOT_THIS,
        rank=65,
    ),
    Rule(
        "ffi-type-attr-registered-twice", "library", "is already registered for type index",
        r"TypeAttr `?(?P<attr>\w+)`? is already registered for type index (?P<index>\d+)",
        "A type attribute registered twice: two tvm-ffi generations",
        "a package built for another apache-tvm-ffi registers what the installed tvm-ffi "
        "already does.",
        "install the apache-tvm-ffi version the package was built against.",
        "tvm-ffi src/ffi/object.cc (TypeAttr registration); PyPI wheel table",
        toolchain.ffi_registered_twice,
        rank=60,
    ),
    Rule(
        "no-wheel-for-this-python", "packaging",
        ("No matching distribution found for", "Could not find a version that satisfies",
         "no wheels with a matching", "we only found wheels for"),
        r"Could not find a version that satisfies the requirement (?P<package>[\w.-]+)"
        r"(?:\[[^\]]*\])?(?:==(?P<version>[\w.+]+))?[^\n(]*\(from versions: (?P<versions>[^)]*)\)|"
        r"No matching distribution found for (?P<package2>[\w.-]+)(?:==(?P<version2>[\w.+]+))?|"
        r"all versions of (?P<package3>[\w.-]+) have no wheels with a matching Python ABI tag"
        r"[^\n]*?`(?P<tag>cp\d+)`|"
        r"You require CPython [\d.]+ \(`(?P<tag2>cp\d+)`\), but we only found wheels for "
        r"`(?P<package4>[\w.-]+)`",
        "No wheel of this release for this Python and platform",
        "pip finds no wheel of the package for this interpreter's Python version and platform.",
        "use a release that has a wheel for it, another Python, or build from source.",
        "pip and uv resolver messages; tk's table of PyPI's wheels (scripts/pypi_wheels.py)",
        lambda groups, text: toolchain.wheel_missing(
            {"package": next((groups[k] for k in ("package", "package2", "package3", "package4")
                              if groups.get(k)), ""),
             "version": groups.get("version") or groups.get("version2") or "",
             "versions": groups.get("versions") or "",
             "tag": groups.get("tag") or groups.get("tag2") or ""}, text) or NOT_THIS,
        rank=55,
        origin="PyPI wheel table",
    ),
    Rule(
        "tensor-intrin-not-registered", "schedule", "is not registered",
        r"TensorIntrin [`'‘\"](?P<name>\w+)[`'’\"] is not registered",
        "A tensor intrinsic used before its module was imported",
        "the intrinsic is registered when its target's tensor_intrin module is imported.",
        "import tvm.s_tir.tensor_intrin (tvm.tir.tensor_intrin before v0.24.0) first.",
        "TVM's python/tvm/tir/tensor_intrin/ (python/tvm/s_tir/tensor_intrin/ from v0.24.0): "
        "TensorIntrin.register at import of each target's module; TensorIntrin::Get's check "
        "(src/tir/ir/function.cc, src/s_tir/tensor_intrin.cc); apache/tvm#17066",
        tensor_intrins.unregistered,
        rank=52,
        one_line=True,
    ),
    Rule(
        "device-low-precision-store", "codegen", 'no operator "=" matches these operands',
        r'no operator "=" matches these operands\s*(?:/\s*)?operand types are: (?P<lhs>[\w:<>]+) = '
        r"(?P<rhs>[\w:<>]+)",
        "A printed kernel stores a float into a narrow float type",
        "an operation promoted narrow floats to float and the store has no cast back.",
        "cast the result back, or compute wider and convert at the store.",
        "nvcc's overload resolution for a struct's operator= (no implicit conversion from "
        "float in TileLang's fp8_e4_t, CUTLASS's float_e4m3_t); C++'s usual arithmetic "
        "conversions, which make max/min and arithmetic on such types float",
        codegen.narrow_store,
        rank=58,
    ),
    Rule(
        "tilelang-template-name", "tilelang", "is undefined",
        r"identifier \"(?P<ident>\w+)\" is undefined",
        "A name TileLang's CUDA templates lack in this release",
        "the kernel uses a name the TileLang templates (or the CUDA) in use do not declare.",
        "use the TileLang (or CUDA) release that declares it.",
        "tile-ai/tilelang's src/tl_templates/cuda/ headers at each release and main, and the "
        "CUDA-version checks around the CUDA names they use (toolkit/data/explain/"
        "tilelang_templates.json, by scripts/tilelang_templates.py)",
        tilelang_templates.undefined,
        rank=56,
    ),
    Rule(
        "device-compiler-rejects-generated-source", "codegen",
        ("ndeclared", "is undefined", "undeclared identifier"),
        r"(?P<diag>(?i:error: (?:use of )?undeclared(?: identifier)?) [`'\"]?(?P<ident>\w+)[`'\"]?|"
        r"error: identifier \"(?P<ident2>\w+)\" is undefined)",
        "The device compiler rejects the source TVM generated",
        "the GPU compiler rejects kernel source that TVM's code generator printed.",
        "upgrade TVM, or report the printed kernel to apache/tvm.",
        "clang-based OpenCL/Metal compilers (use of undeclared identifier) and NVRTC/nvcc "
        "(identifier \"x\" is undefined) on the kernels TVM's source codegens print",
        lambda groups, text: toolchain.device_source(groups, text) or NOT_THIS,
        rank=48,
    ),
    Rule(
        "python-library-skew", "import", ("TVM_LIBRARY_PATH", "TVM_HOME"),
        r"\b(?:TVM_LIBRARY_PATH|TVM_HOME)\s*[=:]\s*\S+",
        "Python of one TVM tree, library of another",
        "PYTHONPATH and TVM_LIBRARY_PATH name two TVM trees.",
        "point PYTHONPATH and TVM_LIBRARY_PATH at the same tree.",
        "the environment a log shows (export lines, printed variables); python/tvm/libinfo.py "
        "reads TVM_LIBRARY_PATH, Python reads PYTHONPATH",
        lambda groups, text: toolchain.python_library_skew(groups, text) or NOT_THIS,
        rank=52,
    ),
    Rule(
        "tvm-library-not-found", "library", "Cannot find ",
        # tvm_ffi's libinfo ("Cannot find library libtvm_runtime.so"), TVM's own libinfo.py of
        # v0.9-v0.21 ("Cannot find libraries: ['libtvm.so', ...") and of v0.6-v0.8 ("Cannot
        # find the files.\nList of candidates:\n.../libtvm.so")
        r"Cannot find (?:library |libraries: \[?'?)?(?P<lib>libtvm\w*)|"
        r"Cannot find the files\.\s*\n\s*List of candidates:\s*\n\s*\S*?(?P<lib2>libtvm\w*)",
        "TVM's shared library not found",
        "the tvm Python package found no libtvm_runtime/libtvm_ffi next to it, in "
        "TVM_LIBRARY_PATH or on the loader path.",
        "export TVM_LIBRARY_PATH=<build dir> (tk env KEY prints the exports for a stored "
        "build), or pip install apache-tvm; tk doctor shows what was searched.",
        "python/tvm/base.py via tvm_ffi/libinfo.py; captured with 0.27.0.post1 (the package "
        "without its lib/)",
    ),
    Rule(
        "library-not-found", "library", "cannot open shared object file",
        r"(?P<lib>\S+\.so[.\d]*): cannot open shared object file: No such file or directory",
        "Shared library not found",
        "a library (or one it needs) is not on the loader path.",
        "add its directory to LD_LIBRARY_PATH, or load it by absolute path; "
        "`tk ext check LIB.so` resolves every dependency.",
        "glibc dynamic loader (dlopen error)",
        toolchain.library,
        rank=20,
    ),
    Rule(
        "windows-dll-dependency-missing", "library", "(or one of its dependencies)",
        r"Could not find module '(?P<dll>[^']+)' \(or one of its dependencies\)",
        "Windows cannot load a DLL, or a DLL it depends on",
        "Python's ctypes loads the DLL with Windows' safe search, where PATH no longer counts "
        "(Python 3.8+): only the DLL's own folder, System32 and folders added with "
        "os.add_dll_directory. When the file exists, a DLL it links is what is missing: for "
        "TVM's tvm.dll, those of the LLVM it was built with (cmake/utils/FindLLVM.cmake links "
        "LLVM's zstd.dll and zlib from v0.13.0) or the MSVC runtime.",
        "list what it links (dumpbin /dependents, or the Dependencies tool) and provide the "
        "one missing: conda install zstd zlib in the environment whose LLVM built it, the MSVC "
        "redistributable, or os.add_dll_directory(folder) before the import.",
        "CPython's ctypes on Windows (Modules/_ctypes/callproc.c: \"Could not find module "
        "'%s' (or one of its dependencies). Try using the full path with constructor "
        "syntax.\"); TVM's cmake/utils/FindLLVM.cmake (zstd.dll.lib, apache/tvm#15164)",
        rank=30,
    ),
    Rule(
        "mlc-unknown-model-type", "packaging", "Unknown model type: ",
        r"Unknown model type: (?P<model>[^\s.]+(?:\.[^\s.]+)*)\. Available ones:",
        "MLC-LLM has no model definition for this architecture",
        "MLC-LLM's detect_model_type (python/mlc_llm/support/auto_config.py) read the model "
        "type from the model's config.json (or --model-type) and its model registry (MODELS, "
        "python/mlc_llm/model/) has no such entry: this MLC-LLM does not support that "
        "architecture. The list printed after it is what it does support.",
        "convert a model of an architecture in that list, or use an MLC-LLM whose MODELS has "
        "it; if the model is one of those under another name, pass --model-type NAME; "
        "otherwise the architecture must be implemented in python/mlc_llm/model/ and added to "
        "MODELS.",
        "MLC-LLM's python/mlc_llm/support/auto_config.py (detect_model_type, from March 2024)",
        one_line=True,
    ),
    # --- RPC.
    Rule(
        "rpc-connect-failed", "rpc", "Connect to ",
        r"Connect to (?P<addr>[\w.:\[\]-]+:\d+) failed",
        "RPC server not reachable",
        "nothing accepts connections at that address: the RPC server is not running, "
        "listens on another port, or a firewall refuses.",
        "start it there (python -m tvm.exec.rpc_server --host 0.0.0.0 --port 9090) and check "
        "the port; through a tracker, use rpc.connect_tracker and request(key).",
        "src/runtime/rpc/rpc_socket_impl.cc (RPCConnect); captured with 0.27.0.post1",
    ),
    Rule(
        "rpc-session-ended", "rpc", ("kShutdown", "RPCSessionTimeoutError",
                                     "timeout in RPC session", "RPCCode::kReturn"),
        # the client's check after a call (rpc_endpoint.cc: `code == RPCCode::kReturn`, code
        # 1 is kShutdown, printed as a number or, in older TVM, by name), and what the server
        # says when its session timeout kills the session (python/tvm/rpc/server.py)
        r"RPCCode::kReturn\)?\s*(?:is false)?\s*:?\s*code\s*=\s*(?:kShutdown|1)\b|"
        r"code\s*=\s*kShutdown|RPCSessionTimeoutError[^\n]*|timeout in RPC session",
        "RPC session ended by the server",
        "the RPC server shut the session down while the client waited for a call's result "
        "(RPCCode::kShutdown): its session timeout ran out during a long call (a measurement "
        "of a slow kernel, a long compile on the device), or the server process died there "
        "(killed for memory, a crash on the device).",
        "raise the session timeout (rpc.connect(..., session_timeout=S), "
        "tracker.request(key, session_timeout=S), MetaSchedule's RPCConfig(session_timeout_sec"
        "=S), AutoTVM's RPCRunner(timeout=...)), or shorten the call; the server's log says "
        "'timeout in RPC session, kill..' when the timeout ended it.",
        "src/runtime/rpc/rpc_endpoint.cc (CallFunc's check), python/tvm/rpc/server.py",
        rank=55,
    ),
    Rule(
        "rpc-tracker-unreachable", "rpc", "Failed to connect to server",
        r"Failed to connect to server \((?P<addr>[^)]*)\)",
        "RPC tracker or server not reachable",
        "tvm.rpc retried connecting (rpc.connect_tracker, or a runner's connect_server) and "
        "gave up: nothing listens at that address.",
        "start the tracker (python -m tvm.exec.rpc_tracker --host 0.0.0.0 --port 9190) and "
        "register devices with rpc_server --tracker HOST:9190 --key KEY; check host and port.",
        "python/tvm/rpc/base.py (connect_with_retry); captured with 0.27.0.post1",
    ),
    Rule(
        "ffi-object-slots", "packaging", "has no attribute '_inst'",
        r"'(?P<cls>\w+)' object has no attribute '_inst'",
        "A Python subclass of a TVM object cannot keep its attributes (tvm-ffi's object layout)",
        "TVM's Python wrappers that subclass an FFI object (derived_object, behind the Python "
        "visitors and mutators, MetaSchedule's Py* classes and TileLang's visitors; the class "
        "forms of function passes) store the wrapped instance as self._inst in __init__; the "
        "object has no _inst, so that assignment found no place to go: its class has no "
        "__dict__. apache-tvm-ffi 0.1.10 gave every Object subclass __slots__ = () "
        "(apache/tvm-ffi#480, _ObjectSlotsMeta), so a TVM, TileLang or MLC-LLM whose Python "
        "was written for tvm-ffi 0.1.9 or older fails this way with a newer apache-tvm-ffi.",
        "install the apache-tvm-ffi the package was released with (pip show apache-tvm-ffi "
        "shows the installed one; for code written before 0.1.10: pip install "
        "'apache-tvm-ffi<=0.1.9'), or upgrade TVM / TileLang to a release made for the newer "
        "tvm-ffi.",
        "apache/tvm-ffi v0.1.10 (#480, __slots__ on Object subclasses); the self._inst of "
        "derived_object (python/tvm/runtime/support.py, tvm/ir/utils.py) and of "
        "_wrap_class_function_pass",
        rank=60,
    ),
    Rule(
        "onnx-pytorch-fallback-op", "frontend", ("ATen", "PythonOp"),
        r"not supported for frontend ONNX ?[:：] ?[^\n]*?\b(?P<op>ATen|PythonOp)\b",
        "The ONNX model holds PyTorch's own operators, not ONNX ones",
        "",
        "",
        "torch.onnx.export's operator_export_type (ONNX_ATEN, ONNX_ATEN_FALLBACK, "
        "ONNX_FALLTHROUGH) as PyTorch documents it; apache/tvm#4918",
        toolchain.pytorch_fallback_op,
        rank=60,
    ),
    Rule(
        "onnx-op-not-supported", "frontend", "are not supported for frontend ONNX",
        r"The following operators are not supported for frontend ONNX ?[:：] ?(?P<ops>.*)",
        "ONNX operators the Relax frontend does not convert",
        "the model uses operators (custom domains, or ones the Relax ONNX frontend has no "
        "converter for) that from_onnx cannot translate.",
        "replace them in the model (onnx-simplifier, or export without custom ops), or add a "
        "converter to tvm.relax.frontend.onnx's convert map for them.",
        "python/tvm/relax/frontend/onnx/onnx_frontend.py (_check_for_unsupported_ops); "
        "captured with 0.27.0.post1 through tk run",
    ),
    Rule(
        "codegen-not-enabled", "build", " is not enabled",
        r"(?:target\.build\.|Target )(?P<kind>\w+) is not enabled",
        "TVM built without this code generator",
        "the TVM in use has no code generator for the target kind (built with USE_LLVM OFF "
        "for llvm, USE_CUDA OFF for cuda, ...).",
        "rebuild TVM with it on (for llvm: set(USE_LLVM \"llvm-config-16 --ignore-libllvm "
        "--link-static\")), or pip install apache-tvm, whose wheel has all of them; "
        "tk doctor lists the codegens this build has.",
        "src/target/codegen.cc (Build: build_f_name is not enabled); as in apache/tvm#17238 "
        "and #346",
        toolchain.codegen,
    ),
    Rule(
        "module-no-function", "runtime-args", "has no function",
        r"Module has no function '(?P<name>[^']+)'",
        "Compiled module lacks that function",
        "the function name is not one the compiled module exports (a typo, a Relax function "
        "that was not public, or a PrimFunc compiled under another name).",
        "use the name as the IRModule has it: a Relax function through the VM "
        "(relax.VirtualMachine(ex, dev)['main']), a PrimFunc by its global symbol; "
        "mod.implements_function(name) checks one.",
        "python/tvm/runtime/module.py (__getitem__); captured with 0.27.0.post1",
    ),
    # --- MetaSchedule.
    Rule(
        "ms-builder-failed", "meta-schedule", "LocalBuilder: ",
        r"LocalBuilder: (?:An exception occurred|Timeout, killed after (?P<secs>[\d.]+) seconds)",
        "MetaSchedule builder failed on candidates",
        "compiling some tuning candidates raised or timed out; the tuner skips them, but if "
        "every candidate fails the space itself is broken.",
        "read the exception below the line (often a target the builder's process cannot "
        "compile for); raise timeout_sec for big kernels.",
        "python/tvm/s_tir/meta_schedule/builder/local_builder.py",
        rank=40,  # the exception it wraps, when recognised, says more
    ),
    Rule(
        "ms-runner-failed", "meta-schedule", "Runner: ",
        r"(?P<runner>Local|RPC)Runner: (?:An exception occurred|Timeout, killed after "
        r"(?P<secs>[\d.]+) seconds)",
        "MetaSchedule runner failed on candidates",
        "running tuning candidates raised or timed out (an invalid kernel, a device that is "
        "absent or unreachable over RPC).",
        "check the device (tk doctor / the RPC tracker) and the exception below the line.",
        "python/tvm/s_tir/meta_schedule/runner/{local,rpc}_runner.py",
        rank=40,  # the exception it wraps, when recognised, says more
    ),
    Rule(
        "vm-function-not-found", "library", ("Cannot find ffi::Function", "Cannot find PackedFunc"),
        r"Cannot find (?:ffi::Function|PackedFunc) (?P<name>[\w.$]+) in either Relax VM kernel "
        r"library",
        "The VM executable calls a function no loaded library registers",
        "the compiled module calls an external function (a kernel of an extension or of an "
        "optional library: flashinfer, cutlass, a project's own ops) that neither the compiled "
        "library nor anything loaded in this process registers.",
        "load the library that registers it before creating relax.VirtualMachine (import its "
        "package, tvm.runtime.load_module(lib), or toolkit.ext.loader.load_extension(lib)); "
        "`tk ext check LIB.so` lists what a library registers.",
        "src/runtime/vm/vm.cc (VirtualMachineImpl::InitFuncPool); captured with 0.27.0.post1",
    ),
    # --- Cross compiling, the web runtime, targets.
    Rule(
        "elf-wrong-arch", "toolchain", ("Relocations in generic ELF", "n wrong format"),
        r"(?:(?P<obj>\S+): Relocations in generic ELF \(EM: (?P<em>\d+)\)|"
        r"(?P<lib>[^\s:]+): error adding symbols: [Ff]ile in wrong format)",
        "Linked an object of another architecture",
        "an object for another architecture was given to the linker.",
        "link it with the toolchain of its architecture.",
        "GNU ld / lld (bfd: 'Relocations in generic ELF', 'file in wrong format'); captured with "
        "aarch64-linux-gnu-gcc and the host's gcc",
        _elf_arch_fix,
        rank=55,
    ),
    Rule(
        "web-runtime-not-built", "webgpu", ("wasm_runtime.bc", "tvmjs_support.bc",
                                            "webgpu_runtime.bc"),
        r"Cannot find libraries:? \[?(?P<libs>[^\n]*(?:wasm_runtime|tvmjs_support|webgpu_runtime)\.bc)",
        "TVM's web runtime is not built",
        "exporting a WebAssembly/WebGPU library links TVM's web runtime (wasm_runtime.bc, "
        "tvmjs_support.bc, webgpu_runtime.bc), which is built separately with emscripten and "
        "was not found.",
        "build the web runtime: source emsdk_env.sh, then make -C $TVM_HOME/web (MLC-LLM: "
        "./scripts/prep_emcc_deps.sh), and set TVM_HOME to that tree",
        "python/tvm/contrib/emcc.py (create_tvmjs_wasm: find_lib_path); as in "
        "mlc-ai/mlc-llm#452",
    ),
    Rule(
        "target-attr-missing", "target", ('self.attrs["', "'Target' object has no attribute"),
        r"(?:self\.attrs\[\"(?P<attr>\w+)\"\][^\n]*\n(?:[^\n]*\n){0,3}?[^\n]*KeyError|"
        r"'Target' object has no attribute '(?P<attr2>\w+)')",
        "The target lacks an attribute the code reads",
        "the target has no such attribute.",
        "give the target the attribute.",
        "python/tvm/target/target.py (attribute access: KeyError 'key is not in Map' before "
        "0.27, AttributeError from __getattr__ since); captured with 0.27.0.post1",
        lambda groups, text: _target_attr_fix(
            {"attr": groups.get("attr") or groups.get("attr2", "")}, text),
    ),
    # --- Crashes.
    Rule(
        "jit-symbols-not-found", "library", "Symbols not found",
        r"JIT session error: Symbols not found: \[ ?(?P<syms>[^\]]*?) ?\]",
        "LLVM JIT could not resolve symbols",
        "code compiled for the host calls functions no loaded library defines (an extern "
        "or packed function of an extension that is not loaded); the crash follows.",
        "load the library that defines them before running, or compile without the call.",
        "LLVM ORC JIT (llvm/ExecutionEngine/Orc/Core.cpp) via TVM's llvm module",
    ),
    # --- Toolchains, vendored code, packaging: the tables are in toolkit/explain/toolchain.py.
    Rule(
        "tvm-source-compile-error", "build", (": error: ", "): error: "),
        # any C/C++ file: TVM's sources, or a program built on TVM's headers (compile_error
        # answers the latter only from TVM's history of the names its headers declare)
        r"(?P<file>[^\s:\"'(]+\.(?:cc|h|cpp|cxx|cu|cuh|hpp|mm|inc))"
        r"(?::(?P<line>\d+)(?::\d+)?: |\((?P<line2>\d+)\): )(?:fatal )?error: (?P<msg>[^\n]*)",
        "Does not compile against the headers found",
        "a compile error in TVM's sources (or a header they include): a dependency's API or a "
        "vendored submodule differs from what the tree was written for.",
        "update the submodules (git submodule update --init --recursive) and use dependency "
        "versions this TVM supports.",
        "gcc/clang/nvcc diagnostics (FILE:LINE:COL: error: ...); captured with g++ 12 here",
        lambda groups, text: toolchain.compile_error(groups, text) or NOT_THIS,
        rank=48,  # below rules that know the exact message (stale-dlpack, missing-header)
        one_line=True,
    ),
    Rule(
        "llvm-crash", "toolchain", ("free(): ", "double free", "Segmentation fault", "SIGSEGV",
                                    "SIGABRT", "Aborted"),
        # glibc's heap abort or a signal, then a debugger's or backtrace's frame in libLLVM
        r"(?:free\(\): [^\n]*|double free[^\n]*|Segmentation fault|SIGSEGV|SIGABRT|Aborted)"
        r"(?:[^\n]*\n){1,12}?[^\n]*?in (?P<fn>llvm::[\w:~]+)[^\n]*?libLLVM-?(?P<ver>\d+)",
        "Crash inside LLVM",
        "the process crashed in LLVM's own code while TVM drove it.",
        "use another LLVM release for TVM.",
        "glibc heap checks and gdb/backtrace frames naming libLLVM",
        toolchain.llvm_crash,
        rank=45,
    ),
    Rule(
        "python-dependency-attribute", "packaging",
        ("has no attribute", "cannot import name", "No module named"),
        r"(?:(?:module )?'?(?P<mod>[A-Za-z_][\w.]*)'? has no attribute '?(?P<attr>\w+)'?|"
        r"cannot import name '(?P<attr2>\w+)' from '(?P<mod2>[A-Za-z_][\w.]*)'|"
        r"No module named '(?P<mod3>[A-Za-z_][\w.]*)')",
        "A package TVM uses is missing or of another version",
        "a package TVM imports is of another version than TVM was written for.",
        "install the version TVM requires.",
        "CPython's AttributeError and ImportError; tk's table of each TVM release's "
        "requirements (scripts/explain_index.py)",
        lambda groups, text: toolchain.dependency_attribute(
            {"mod": groups.get("mod") or groups.get("mod2") or groups.get("mod3", ""),
             "attr": groups.get("attr") or groups.get("attr2", "")}, text) or NOT_THIS,
        origin="requirements table", one_line=True,
    ),
    Rule(
        "numpy-array-to-scalar", "packaging",
        "only 0-dimensional arrays can be converted to Python scalars",
        r"only 0-dimensional arrays can be converted to Python scalars",
        "NumPy 2.4 no longer turns a one-element array into a Python number",
        "int() or float() got a NumPy array of one element whose ndim is above 0 (shape [1], "
        "a 1-D single-element tensor, as ONNX exporters write scalar inputs). NumPy 1.25 "
        "deprecated that conversion and NumPy 2.4.0 made it this TypeError (2.3.5 only warns); "
        "the code converting it was written for an older NumPy.",
        "take the element first (arr.item(), or arr[0]) where the traceback converts it; when "
        "that code is TVM's or a library's, use a release of it that does, or pin numpy<2.4 "
        "meanwhile.",
        "NumPy's TypeError since 2.4.0 (numpy 2.3.5 warns, 2.4.0 raises: each wheel run here); "
        "captured with numpy 2.4.6",
        one_line=True,
    ),
    Rule(
        "browser-library-in-node", "toolchain", ("Cannot read properties of undefined",
                                                 "is not defined"),
        r"(?:TypeError: Cannot read properties of undefined \(reading '(?P<prop>\w+)'\)|"
        r"ReferenceError: (?P<glob>window|document|navigator|location|self) is not defined)",
        "A browser library ran under Node.js",
        "the code reads a global only a browser (a page or a Web Worker) defines, and Node.js "
        "does not.",
        "run it in a browser page, a Web Worker or an extension (headless Chrome for a script), "
        "not in bare Node.js.",
        "Node.js' globals (no window, document or location; navigator without gpu); WebLLM and "
        "TVM's web runtime run on WebGPU in a browser; captured with Node.js 20",
        toolchain.browser_global,
        one_line=True,
    ),
    Rule(
        "ffi-python-object-unpassable", "api", "Don't know how to handle type",
        r"Don't know how to handle type <class '(?P<cls>[\w.]+)'>",
        "A packed function was given a Python object the FFI cannot pass",
        "an argument of a packed function is a Python object TVM's FFI (ctypes or Cython) "
        "cannot turn into a TVM value.",
        "pass a TVM object (a tvm.runtime.Module, a tvm.nd array, a string or a number): the "
        "Python wrapper's module or array, not the wrapper.",
        "TVM's _make_tvm_args (python/tvm/_ffi/_ctypes/packed_func.py and the Cython twin, "
        "v0.7.0-v0.19.0); relay.build's result in each release (python/tvm/relay/build_module.py)",
        lambda groups, text: (_unpassable(groups["cls"]) or NOT_THIS),
        one_line=True,
    ),
    Rule(
        "webgpu-workgroup-too-large", "codegen", ("workgroup invocations", "uses workgroup_size"),
        # Chrome's (Dawn's) two checks: the product of the sizes, and each dimension
        r"(?:total number of workgroup invocations \((?P<n>\d+)\) exceeds the maximum allowed "
        r"\((?P<max>\d+)\)|uses workgroup_size\((?P<size>[\d, ]+)\) that exceeds the maximum "
        r"allowed \((?P<maxes>[\d, ]+)\))",
        "A WebGPU kernel has more threads per workgroup than the device allows",
        "a compute kernel of the module was compiled with more invocations per workgroup (threads "
        "per block) than the device's limit (WebGPU's default maxComputeInvocationsPerWorkgroup "
        "is 256): the schedule that bound its threads (a dlight rule such as GEMV, or a hand "
        "schedule) did not keep to the target's max_num_threads.",
        "compile for a target whose max_num_threads is the device's limit (webgpu "
        "-max_num_threads=256) with a TVM/MLC whose schedules keep to it (a newer nightly), then "
        "recompile the wasm; or use the prebuilt library.",
        "Chrome's WebGPU (Dawn) pipeline checks; captured with Chromium 156 headless on "
        "SwiftShader",
        one_line=True,
    ),
    Rule(
        "rayon-thread-pool-unavailable", "runtime", "global thread pool has not been initialized",
        r"The global thread pool has not been initialized\.?(?:: ThreadPoolBuildError[^\n]*)?",
        "A Rust library could not start its thread pool",
        "a Rust library (rayon's global pool) could not start threads.",
        "let it start threads, or turn its parallelism off.",
        "rayon-core's global registry; HuggingFace tokenizers runs encode_batch on it; captured "
        "with tokenizers 0.23.3 under `ulimit -u 1`",
        toolchain.rayon_pool,
        one_line=True,
    ),
    Rule(
        "wasm-import-unresolved", "toolchain", "function import requires a callable",
        # V8's two wordings: Chrome's 'Import #4 "env" "NAME": ...' and Node 20's
        # 'Import #0 module="env" function="NAME" error: ...'
        r'Import #\d+ (?:module=)?"(?P<mod>[^"\n]*)" (?:function=)?"(?P<sym>[^"\n]*)"(?: error)?:'
        r" function import requires a callable",
        "The WebAssembly module imports a function nothing provides",
        "the wasm was linked with an undefined symbol, which emcc leaves as an import (module "
        "\"env\"), and the JavaScript that instantiates it (TVM's web runtime, WebLLM) does not "
        "provide it: the code that defines it was not compiled into the wasm.",
        "rebuild the wasm with the code that defines the symbol linked in (for MLC-LLM/WebLLM, "
        "recompile the model library with an MLC-LLM whose web runtime has it, or use the "
        "prebuilt wasm made for your web-llm); emcc -sERROR_ON_UNDEFINED_SYMBOLS=1 fails the "
        "build on such a symbol instead.",
        "V8's WebAssembly link check (Chrome's and Node.js' wording); emscripten turns an "
        "undefined symbol into an import of module env; captured with Node.js 20",
        toolchain.wasm_import,
        one_line=True,
    ),
    Rule(
        "wasm-initial-memory", "toolchain", "initial memory too small",
        r"wasm-ld: error: initial memory too small(?:, (?P<need>\d+) bytes needed)?",
        "WebAssembly module larger than its initial memory",
        "wasm-ld places the module's static data and stack in the initial memory emcc gives it, "
        "and this module does not fit: a WebGPU/wasm build of a large model (in MLC-LLM the "
        "prefill chunk and the context window size the buffers compiled into the module).",
        "make the module smaller: for MLC-LLM compile with a smaller prefill chunk (mlc_llm "
        "compile ... --overrides \"prefill_chunk_size=1024\", or the older build.py's "
        "--prefill_chunk_size 1024) or context_window_size; for an emcc link of your own, pass "
        "-sINITIAL_MEMORY=<bytes> (at least what wasm-ld says is needed).",
        "wasm-ld (LLVM lld for WebAssembly, run by emcc)",
    ),
    Rule(
        "llvm-target-not-built", "toolchain", ("No available targets are compatible with triple",
                                               "unable to get target for"),
        r"No available targets are compatible with triple \"(?P<triple>[^\"]+)\"|"
        r"unable to get target for '(?P<triple2>[^']+)'",
        "LLVM was built without this target",
        "the LLVM that TVM links has no backend for the target triple.",
        "use an LLVM built with that target (`llvm-config --targets-built` lists them).",
        "LLVM TargetRegistry::lookupTarget, via src/target/llvm/llvm_instance.cc; captured with "
        "0.27.0.post1 and with llc 14",
        toolchain.llvm_target,
        rank=55,
    ),
    Rule(
        "llvm-unknown-processor", "toolchain", "is not a recognized processor for this target",
        r"'(?P<cpu>[\w.+-]+)' is not a recognized processor for this target",
        "LLVM does not know this processor",
        "the LLVM that compiles the code is older than the processor named (-mcpu, or a GPU "
        "target's arch), so it ignores it and compiles for a generic one.",
        "use an LLVM that knows it (rebuild TVM with a newer LLVM), or name a processor it "
        "lists (llc -march=nvptx64 -mcpu=help).",
        "LLVM MCSubtargetInfo's warning; captured with llc 14 -mcpu=sm_90",
        lambda groups, _text: (
            f"the LLVM that compiles the code does not know '{groups['cpu']}' (it is older than "
            "that processor), so it ignores it and compiles for a generic one.",
            f"use an LLVM that knows {groups['cpu']} (rebuild TVM with a newer LLVM: "
            "USE_LLVM=/path/to/llvm-config), or target a processor it lists (llc -mcpu=help)"),
    ),
    Rule(
        "llvm-cannot-select", "toolchain", "Cannot select: ",
        r"LLVM ERROR: Cannot select: (?:intrinsic )?(?P<what>%?[\w.]+)",
        "LLVM has no instruction for an operation TVM emitted",
        "LLVM's backend cannot generate code for an intrinsic or operation on this target: an "
        "instruction that needs a newer GPU arch or PTX version than the target names (the "
        "llvm.nvvm.* intrinsics of tensor cores, redux, cp.async), or an LLVM too old for it.",
        "give the target the GPU's real arch (cuda: \"arch\": \"sm_80\"; nvptx: -mcpu=sm_80), or "
        "schedule without that intrinsic; if the arch is right, build TVM with a newer LLVM.",
        "LLVM SelectionDAG (LLVM ERROR: Cannot select); captured with llc 14 -mcpu=sm_50 on "
        "llvm.nvvm.redux.sync.add",
        rank=52,
    ),
    Rule(
        "two-llvms-loaded", "library", "registered more than once",
        r"CommandLine Error: Option '(?P<opt>[^']+)' registered more than once",
        "Two copies of LLVM in one process",
        "two libraries in this process each carry their own LLVM (libtvm built with LLVM, and "
        "another: PyTorch/Triton, Mesa's GPU driver, numba's llvmlite, a second TVM), and both "
        "register LLVM's command-line options in one registry.",
        "keep one LLVM per process: build TVM with LLVM linked statically and its symbols hidden "
        "(USE_LLVM=\"llvm-config --link-static\", HIDE_PRIVATE_SYMBOLS=ON), or make both use the "
        "same shared libLLVM; failing that, do not load the other library in the same process.",
        "LLVM's cl::opt registry (lib/Support/CommandLine.cpp); captured here: two libraries "
        "each linking LLVM 14's libLLVMSupport.a, loaded into one process",
        rank=58,
    ),
    Rule(
        "link-needs-fpic", "build", "recompile with -fPIC",
        r"(?P<obj>[^\s:]+)?:? ?relocation (?P<reloc>R_\w+) against [^\n]*?can ?not be used when "
        r"making a shared object; recompile with -fPIC",
        "A static library without position-independent code in a shared library",
        "a static library (.a) whose objects were compiled without -fPIC is linked into a shared "
        "library (libtvm.so, an extension): a static LLVM or another dependency built for "
        "executables only.",
        "link that dependency as a shared library (for LLVM: USE_LLVM=\"llvm-config "
        "--link-shared\"), or rebuild it with position-independent code "
        "(CMAKE_POSITION_INDEPENDENT_CODE=ON; LLVM: -DLLVM_ENABLE_PIC=ON).",
        "GNU ld; captured here (an archive of an object compiled with -fno-PIC linked by gcc "
        "-shared)",
    ),
    Rule(
        "libstdcxx-too-old", "library", ("GLIBCXX_", "GLIBC_", "CXXABI_"),
        r"version [`'](?P<which>GLIBCXX|GLIBC|CXXABI)_(?P<ver>[\d.]+)' not found"
        r"(?: \(required by (?P<by>[^)\n]+)\))?",
        "The C/C++ runtime loaded is older than a library needs",
        "a library was built against a newer libstdc++/glibc than the one this process loaded.",
        "load a newer libstdc++ (conda install -c conda-forge libstdcxx-ng) or rebuild the "
        "library with the older toolchain.",
        "glibc dynamic loader (dl-version.c: \"version `%s' not found (required by %s)\")",
        toolchain.glibcxx,
        rank=55,
    ),
    Rule(
        "python-distribution-missing", "packaging", ("PackageNotFoundError",
                                                     "No package metadata was found for"),
        r"(?:PackageNotFoundError: |No package metadata was found for )(?:No package metadata "
        r"was found for )?(?P<dist>[\w.-]+)",
        "A Python distribution is not installed",
        "importlib.metadata found no installed distribution of that name: the package may be "
        "importable from a path (PYTHONPATH, a source tree) without having been pip-installed.",
        "pip install it (pip install -e for a source tree) into the interpreter that runs.",
        "importlib.metadata (Python's standard library); captured with Python 3.11 here",
        toolchain.distribution,
    ),
    Rule(
        "tool-not-found", "toolchain", ("not found", "No such file or directory"),
        toolchain.TOOL_PATTERN,
        "A program TVM runs is not on PATH",
        "a compiler or tool that TVM (or the project on it) calls is not installed or not on "
        "PATH.",
        "install it and put it on PATH.",
        "Python's subprocess (FileNotFoundError) and the shell; captured here (emcc)",
        toolchain.tool,
        rank=52,
        one_line=True,
    ),
    Rule(
        "cuda-arch-undetected", "cuda", "Unable to detect CUDA version",
        r"Unable to detect CUDA version, default to \"-(?:arch|mcpu)=(?P<arch>sm_\d+)\"",
        "TVM could not detect the GPU's CUDA arch",
        "TVM asked the CUDA device API for the GPU's compute version and got none: this libtvm "
        "was built without CUDA (USE_CUDA OFF), or no GPU and driver are visible to it. It fell "
        "back to an old default arch, which a current nvcc refuses.",
        "build TVM with set(USE_CUDA ON) and run where the GPU is visible (nvidia-smi), or give "
        "the arch explicitly: a target with \"arch\": \"sm_80\" (-arch=sm_80 in old TVM).",
        "src/target/target_kind.cc UpdateCUDAAttrs (LOG(WARNING), v0.9.0-v0.14.0; sm_50 from "
        "v0.13.0), followed by nvcc's refusal",
        rank=55,
    ),
    Rule(
        "compiler-killed", "build", ("Killed signal terminated program",
                                     "internal compiler error: Killed", "out of memory allocating",
                                     "virtual memory exhausted"),
        r"(?:fatal error: Killed signal terminated program|internal compiler error: Killed "
        r"\(program) (?P<prog>[\w+-]+)|(?P<prog2>cc1plus|cc1|cicc|ptxas): out of memory "
        r"allocating|virtual memory exhausted: Cannot allocate memory",
        "The compiler ran out of memory",
        "the compiler was killed by the kernel's out-of-memory killer, or ran out of memory: "
        "TVM's larger sources take 2-4 GB per parallel compile job.",
        "build with fewer parallel jobs (tk build --jobs 2, cmake --build build -j 2, make -j2), "
        "add swap, or build Release (Debug objects are larger).",
        "GCC's driver and cc1plus (SIGKILL: 'Killed signal terminated program'; GCC < 8: "
        "'internal compiler error: Killed'); captured with g++ 12 here (kill -9 of cc1plus, "
        "and ulimit -v)",
        rank=55,
    ),
    Rule(
        "cuda-half-math-undefined", "cuda", " is undefined",
        r"identifier \"(?P<fn>(?:__)?h(?:a?sin|a?cos|a?tan|sinh|cosh|tanh|asinh|acosh|atanh|"
        r"exp2?|exp10|expm1|log2?|log10|log1p|sqrt|rsqrt|fabs|abs|erfc?|pow|fmod|floor|ceil|"
        r"trunc|round|rint|isnan|isinf|max|min|div))\" is undefined|"
        r"\"(?P<fn2>(?:__)?h(?:sinh|cosh|asinh|acosh|atanh|erfc?|pow|fabs|fmod|a?sin|a?cos|a?tan|"
        r"log10|exp10|expm1|log1p))\" is undefined",
        "CUDA has no such half-precision math function",
        "the CUDA code TVM generated calls a float16 math function that cuda_fp16.h does not "
        "define.",
        "upgrade TVM, or compute that operator in float32.",
        "nvcc (CUDA's cuda_fp16.h); captured with CUDA 13 nvcc on a TVM-style kernel calling herf",
        lambda groups, _text: (
            f"the CUDA code TVM generated calls {groups.get('fn') or groups.get('fn2')} for a "
            "float16 (half) operation, and cuda_fp16.h defines no such function: TVM's CUDA "
            "codegen supplies the missing half-precision math functions itself (its prelude's "
            "CUDA_UNSUPPORTED_HALF_MATH macros), and the TVM in use lacks this one.",
            "upgrade TVM to a version whose CUDA prelude defines it, or compute that operator in "
            "float32 (cast to float32 around it: relax.op.astype), or keep the model in float32"),
        rank=55,
    ),
    Rule(
        "nvcc-host-compiler-unsupported", "cuda", "-- unsupported ",
        r"#error -- unsupported (?P<cc>GNU|clang|Microsoft Visual Studio) version!(?P<msg>[^\n]*)",
        "nvcc does not support this host compiler",
        "the CUDA toolkit checks the host C++ compiler's version (crt/host_config.h), and this "
        "compiler is newer (or older) than the toolkit supports.",
        "give nvcc a supported compiler: -ccbin g++-12 (CUDAHOSTCXX=/usr/bin/g++-12, or "
        "CMAKE_CUDA_HOST_COMPILER for CMake), or use a CUDA toolkit that supports this compiler; "
        "-allow-unsupported-compiler skips the check at your own risk.",
        "CUDA's crt/host_config.h; captured with CUDA 13 nvcc and a g++ reporting GCC 99",
        rank=55,
    ),
    Rule(
        "cuda-driver-insufficient", "cuda", ("driver version is insufficient",
                                             "cudaErrorInsufficientDriver",
                                             "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"),
        r"CUDA driver version is insufficient for CUDA runtime version|"
        r"cudaErrorInsufficientDriver|CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        "NVIDIA driver missing or older than the CUDA runtime",
        "the CUDA runtime found no NVIDIA driver, or one older than this CUDA version needs "
        "(each CUDA release needs a minimum driver; nvidia-smi shows the newest CUDA the driver "
        "supports).",
        "install or update the NVIDIA driver (in a container: run with --gpus all and the "
        "NVIDIA container toolkit), or use a TVM/CUDA build for the CUDA version the driver "
        "supports.",
        "libcudart (cudaGetErrorString); captured here with CUDA 13 and no NVIDIA driver",
        rank=55,
    ),
    Rule(
        "cuda-no-device", "cuda", ("no CUDA-capable device", "CUDA_ERROR_NO_DEVICE",
                                   "cudaErrorNoDevice"),
        r"no CUDA-capable device is detected|CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice",
        "No GPU visible to this process",
        "the driver is there but shows this process no GPU: CUDA_VISIBLE_DEVICES is empty or "
        "wrong, a container was started without GPUs, or the GPU is not bound to the driver.",
        "check nvidia-smi in the same environment; unset or fix CUDA_VISIBLE_DEVICES; start "
        "containers with --gpus all.",
        "libcudart / the CUDA driver API (cudaErrorNoDevice, CUDA_ERROR_NO_DEVICE: strings of "
        "CUDA 13's libcudart)",
        rank=55,
    ),
    Rule(
        "rocm-no-code-object", "rocm", ("hipErrorNoBinaryForGpu", "Unable to find code object",
                                        "HSA_STATUS_ERROR_INVALID_ISA"),
        r"hipErrorNoBinaryForGpu|Unable to find code object for all current devices|"
        r"HSA_STATUS_ERROR_INVALID_ISA",
        "Code compiled for another AMD GPU",
        "the kernels were compiled for another gfx architecture than the GPU here (the ROCm "
        "target's -mcpu), or the GPU is not one ROCm ships code for.",
        "compile for the GPU's arch ({\"kind\": \"rocm\", \"mcpu\": \"gfx1100\"}; rocminfo "
        "names it); for a consumer GPU ROCm does not list, HSA_OVERRIDE_GFX_VERSION=<the nearest "
        "supported one> and the matching -mcpu.",
        "the HIP runtime's and HSA's error names (hipErrorNoBinaryForGpu, "
        "HSA_STATUS_ERROR_INVALID_ISA) as ROCm prints them",
        rank=55,
    ),
    Rule(
        "vulkan-error", "vulkan", "VK_ERROR_",
        r"(?:Vulkan Error, code=(?P<code>-?\d+): )?(?P<vk>VK_ERROR_[A-Z0-9_]+)",
        "Vulkan call failed",
        "a Vulkan call of TVM's Vulkan runtime failed.",
        "check the Vulkan installation with vulkaninfo.",
        "src/runtime/vulkan/vulkan_common.h (VULKAN_CHECK_ERROR: \"Vulkan Error, code=\") with "
        "VkResult names",
        toolchain.vulkan,
        rank=55,
    ),
    Rule(
        "cmake-package-not-found", "build", ("Cannot find ", "Could NOT find "),
        r"Cannot find (?P<dep>[\w.]+), (?P<opt>USE_\w+)=(?P<val>\S*)|"
        r"(?<!-- )Could NOT find (?P<pkg>\w+)",  # "-- Could NOT find": an optional package
        "CMake cannot find a dependency",
        "the dependency a build option asks for is not installed, or not where the option "
        "points.",
        "install its development files, or point the option (or CMAKE_PREFIX_PATH) at them.",
        "TVM's cmake/modules/*.cmake (\"Cannot find Vulkan, USE_VULKAN=\") and CMake's "
        "find_package; captured with TVM main's Vulkan.cmake and CMake 3.25 here",
        toolchain.cmake_package,
        rank=45,
    ),
    Rule(
        "android-library-not-found", "toolchain", "dlopen failed: library",
        r"dlopen failed: library \"(?P<lib>[^\"]+)\" not found",
        "Android cannot find a library on the device",
        "Android's loader found no such library on the device: it was not pushed (or packaged "
        "in the app), or it is the NDK's C++ runtime.",
        "push it beside the program (adb push LIB /data/local/tmp) and run with "
        "LD_LIBRARY_PATH=/data/local/tmp, or package it in the app's jniLibs; libc++_shared.so "
        "comes from the NDK (or link with -static-libstdc++).",
        "Android's bionic linker (dlopen failed: library \"...\" not found)",
        lambda groups, _text: None if groups["lib"] != "libc++_shared.so" else (
            "the module was linked against the NDK's shared C++ runtime, libc++_shared.so, "
            "which the device does not have on its loader path.",
            "push the NDK's libc++_shared.so (toolchains/llvm/prebuilt/*/sysroot/usr/lib/"
            "<arch>/) beside the program, or build with the static C++ runtime "
            "(-static-libstdc++, ANDROID_STL=c++_static)"),
        rank=55,
    ),
    Rule(
        "tvm-ffi-builtin-type-unregistered", "library", "Cannot find type info for type_index=",
        r"Cannot find type info for type_index=(?P<index>\d+)",
        "tvm-ffi has no type info for one of its own builtin types",
        "a value of a builtin tvm-ffi type reached code that looks up its type info, and this "
        "apache-tvm-ffi's type table has no entry for it.",
        "update apache-tvm-ffi.",
        "apache/tvm-ffi include/tvm/ffi/c_api.h (TVMFFITypeIndex) and src/ffi/object.cc "
        "(TypeTable: ReserveBuiltinTypeIndex; kTVMFFIDLTensorPtr from v0.1.2, apache/tvm-ffi#239)",
        toolchain.ffi_builtin_type,
        rank=50,
        one_line=True,
    ),
    Rule(
        "cute-atom-not-enabled", "cuda", "without CUTE_ARCH_",
        r"Attempting to use (?P<atom>\w+) without (?P<macro>CUTE_ARCH_\w+_ENABLED)",
        "A CuTe instruction used where CUTLASS did not enable it",
        "CUTLASS compiled the atom's body out: the arch macro it needs was not defined.",
        "compile for the architecture the atom needs, with an nvcc that supports it.",
        "CUTLASS's cute/arch/mma_sm*.hpp and copy_sm*.hpp (the atom's fallback: "
        "CUTE_INVALID_CONTROL_PATH(\"Attempting to use X without CUTE_ARCH_..._ENABLED\"); "
        "_ENABLED from __CUDA_ARCH__ and the nvcc version's _SUPPORTED)",
        toolchain.cute_atom_not_enabled,
        rank=55,
        one_line=True,
    ),
    Rule(
        "ffi-function-arity", "library", ("arguments, but", "Mismatched number of arguments"),
        # TVM's TypedPackedFunc (include/tvm/runtime/packed_func.h) and tvm-ffi's
        # (include/tvm/ffi/function_details.h) words
        r"Function (?P<name>[\w.$]+)[^\n]*? expects (?P<want>\d+) arguments, but (?P<got>\d+) "
        r"(?:were|was) provided|Mismatched number of arguments when calling: `(?P<name2>[\w.$]+)"
        r"[^`\n]*`\. Expected (?P<want2>\d+) but got (?P<got2>\d+) arguments",
        "A registered function called with another number of arguments",
        "the caller passes another number of arguments than the function's registration takes.",
        "use a caller and a library of the same version.",
        "TVM's TypedPackedFunc::AssignTypedLambda (include/tvm/runtime/packed_func.h: \"Function "
        "X expects N arguments, but M were provided\") and tvm-ffi's unpacked call "
        "(include/tvm/ffi/function_details.h: \"Mismatched number of arguments when calling\")",
        toolchain.ffi_arity,
        rank=50,
        one_line=True,
    ),
    Rule(
        "cmake-target-no-sources", "build", "No SOURCES given to target: ",
        r"No SOURCES given to target: (?P<target>[\w.+-]+)",
        "A CMake target's list of sources is empty",
        "the list of sources given to the target is empty.",
        "check the file(GLOB) pattern that fills it.",
        "CMake's add_executable/add_library error; TVM's cmake/modules/OpenCL.cmake "
        "(opencl-cpptest: ${CMAKE_SOURCE_DIR}/tests/cpp-runtime/opencl up to v0.15.0)",
        toolchain.cmake_no_sources,
        rank=55,
        one_line=True,
    ),
    Rule(
        "cmake-unknown-command", "build", 'Unknown CMake command "',
        r'Unknown CMake command "(?P<command>\w+)"',
        "CMake does not know a command the project uses",
        "the CMake that ran does not know a command the project's CMake files call.",
        "check which CMake the project needs against `cmake --version`.",
        "CMake's error for an unknown command; toolchain.CMAKE_COMMANDS (cmake.org command docs) "
        "and TVM_CMAKE (apache/tvm CMakeLists.txt at each tag)",
        toolchain.cmake_command,
        rank=55,
    ),
    Rule(
        "cmake-invalid-standard", "build", "_STANDARD is set to invalid value '",
        r"\b(?P<lang>[A-Z]+)_STANDARD is set to invalid value '(?P<value>\w+)'",
        "CMake does not know that language standard",
        "the CMake that ran does not accept this value of the language standard property.",
        "use a CMake that knows the standard (see cmake.org, prop_tgt/<LANG>_STANDARD).",
        "CMake's check of <LANG>_STANDARD; toolchain.CMAKE_STANDARDS (cmake.org prop_tgt docs)",
        toolchain.cmake_standard,
        rank=55,
    ),
    Rule(
        "cmake-dialect-unsupported", "build", 'requires the language dialect "',
        r'requires the language dialect "(?P<lang>[A-Z]+)(?P<value>\d+)"[^"]*?the current '
        r'compiler\s+"(?P<compiler>[^"]+)"',
        "the compiler or CMake cannot build that language standard",
        "the compiler does not support the language standard the target asks for, or this "
        "CMake does not know its flags.",
        "use a compiler that supports the standard, and a CMake that knows it.",
        "CMake's check of a target's language dialect; toolchain.COMPILER_STANDARDS and "
        "CMAKE_STANDARDS",
        toolchain.cmake_dialect,
        rank=55,
    ),
    Rule(
        "nvcc-unknown-option", "cuda", ("nvcc fatal", "is not defined for option"),
        # an architecture value (sm_XX) is nvcc-unsupported-arch's
        r"nvcc fatal\s*:\s*(?:Unknown option '-*(?P<option>[\w-]+)'|"
        r"Value '(?P<value>(?!sm_|compute_|lto_)[^']+)' is not defined for option "
        r"'(?P<option2>[\w-]+)')",
        "nvcc does not know an option the build passes",
        "the nvcc that ran does not accept an option or value the build passes to it.",
        "check `nvcc --version` against what the build's CUDA flags need.",
        "nvcc's option parser; toolchain.NVCC_OPTIONS (NVIDIA's nvcc manual per CUDA release)",
        lambda groups, text: toolchain.nvcc_option(
            {"option": groups.get("option") or groups.get("option2", ""),
             **({"value": groups["value"]} if "value" in groups else {})}, text),
        rank=55,
    ),
    Rule(
        "libdevice-name-parse", "cuda", "find_libdevice_path",
        r"find_libdevice_path[\s\S]{0,600}?ValueError: invalid literal for int\(\) with base "
        r"10: '(?P<part>[^'\n]*)'",
        "TVM does not know this CUDA's libdevice layout",
        "find_libdevice_path could not read libdevice's file name.",
        "update TVM.",
        "python/tvm/contrib/nvcc.py find_libdevice_path at each tag; toolchain.LIBDEVICE_KNOWN",
        toolchain.libdevice,
    ),
    Rule(
        "opencl-library-missing", "library", "Cannot open libOpenCL",
        r"Cannot open libOpenCL",
        "TVM was built with OpenCL and this machine has no libOpenCL",
        "this TVM was built with OpenCL (USE_OPENCL ON); from v0.11.0 it opens the OpenCL ICD "
        "loader, libOpenCL.so, at run time (src/runtime/opencl/opencl_wrapper), and this machine "
        "has none: no OpenCL driver or ICD loader (common in WSL, containers and build hosts).",
        "install an OpenCL ICD loader and the GPU's OpenCL driver (ocl-icd-libopencl1 plus the "
        "vendor's ICD), or, on a machine that only compiles for another device (cross-compiling "
        "for Android), build the host TVM with set(USE_OPENCL OFF) and keep OpenCL for the "
        "device's runtime.",
        "src/runtime/opencl/opencl_wrapper/opencl_wrapper.cc (LibOpenCLWrapper::openLibOpenCL)",
    ),
    Rule(
        "tool-candidates-not-found", "toolchain", "cannot find ",
        r"cannot find (?P<tool>ld\.lld|clang), \w+ are: (?P<list>\[[^\]\n]*\])",
        "TVM did not find a program it runs",
        "TVM looked for a program under the names it lists and found none on PATH.",
        "install it and put its directory on PATH.",
        "python/tvm/contrib/rocm.py find_lld and clang.py find_clang at each tag",
        toolchain.lld_candidates,
    ),
    Rule(
        "vulkan-capability-missing", "vulkan", "Vulkan target does not support ",
        r"Vulkan target does not support (?P<cap>Float16|Float64|Int8|Int16|Int64|"
        r"StorageBuffer8BitAccess|StorageBuffer16BitAccess|integer dot product)",
        "the Vulkan device lacks a capability the code needs",
        "the Vulkan target lacks a capability the generated code needs.",
        "check the device's Vulkan features with vulkaninfo.",
        "src/target/spirv/ir_builder.cc (IRBuilder::AddCapabilityFor)",
        toolchain.vulkan_capability,
    ),
    Rule(
        "cmake-subdirectory-empty", "build", "The source directory",
        r"The source directory\s+(?P<dir>\S+)\s+does not contain a CMakeLists\.txt file",
        "A directory the build adds has no CMakeLists.txt",
        "add_subdirectory() names a directory that is empty or not there.",
        "check the path, or check out what belongs there.",
        "CMake's add_subdirectory error; captured with cmake 3.25 here (an empty 3rdparty/ "
        "directory)",
        toolchain.empty_subdirectory,
        rank=60,
    ),
    Rule(
        "libbacktrace-link", "build", ("backtrace_", "libbacktrace.a"),
        r"(?:undefined reference to [`']|\"_?|ignoring file \S*)(?P<sym>backtrace_"
        r"(?:create_state|full|syminfo|pcinfo|simple)|libbacktrace\.a)",
        "TVM's bundled libbacktrace did not link",
        "the runtime's logging.cc calls libbacktrace (backtrace_create_state, backtrace_full), "
        "which TVM's build compiles from 3rdparty/libbacktrace into libbacktrace.a; that "
        "archive is missing or in a format this linker does not read (on macOS, ld says it "
        "ignores it), so libtvm_runtime misses its symbols. libbacktrace came into TVM with "
        "apache/tvm#7153; apache/tvm#7706 made it optional (USE_LIBBACKTRACE, AUTO: off on "
        "macOS and where it cannot be built), first released in v0.8.0; from v0.21.0 the "
        "libbacktrace is tvm-ffi's, switched by TVM_FFI_USE_LIBBACKTRACE.",
        "configure with -DUSE_LIBBACKTRACE=OFF (v0.8.0-v0.20.0; TVM_FFI_USE_LIBBACKTRACE=OFF "
        "from v0.21.0) and rebuild from a clean build directory; a 0.8.dev tree before "
        "apache/tvm#7706 has no such option: update TVM to v0.8.0 or newer.",
        "cmake/modules/Libbacktrace.cmake and src/runtime/logging.cc (apache/tvm v0.8.0); "
        "captured with GNU ld here (a program calling backtrace_full, libbacktrace not linked)",
        rank=60,
    ),
    Rule(
        "half-float-helper-missing", "library", ("hftf2", "hfsf2", "fhf2", "_ieee"),
        r"(?:undefined symbol:?|undefined reference to [`'])\s*(?P<sym>__(?:extendhf[sdtx]f2|"
        r"trunc[sdtx]fhf2|gnu_h2f_ieee|gnu_f2h_ieee))\b",
        "A half-precision (fp16) conversion helper of the compiler's runtime is missing",
        "",
        "",
        "libgcc / compiler-rt helper names (gcc's soft-fp); apache/tvm#6415 and #6431; "
        "captured here with ctypes.CDLL of a g++-built library calling __extendhftf2",
        toolchain.half_float_helper,
        rank=60,
    ),
    Rule(
        "cxx-compiler-missing", "build", "cc1plus",
        r"(?:cannot execute|error trying to exec) ['\u2018]?cc1plus['\u2019]?",
        "The C++ compiler is not installed (gcc has no C++ front end)",
        "gcc was asked to compile C++ and found no cc1plus, its C++ front end: the C compiler "
        "is installed without the C++ one (the g++ / gcc-c++ package, or conda's gxx), or the "
        "gcc on PATH belongs to another installation. Whatever compiles C++ through it fails: "
        "nvcc (which preprocesses with the host compiler), TVM's tvm.contrib.cc and a source "
        "build of TVM.",
        "install the C++ compiler of the same gcc (apt install g++, dnf install gcc-c++, "
        "apk add g++, conda install gxx_linux-64), or point CXX (and nvcc -ccbin) at a "
        "complete one; `g++ --version` must work.",
        "GCC's driver (\"cannot execute 'cc1plus'\" / \"error trying to exec 'cc1plus'\"), "
        "then nvcc's \"Failed to preprocess host compiler properties\"",
        rank=60,
    ),
    Rule(
        "metal-compiler-missing", "metal", "unable to find utility",
        r"xcrun: error: unable to find utility \"(?P<tool>metal(?:lib)?)\"",
        "Xcode's Metal compiler is not installed (or not selected)",
        "TVM compiles Metal kernels with `xcrun -sdk macosx metal` and `metallib` "
        "(tvm.contrib.xcode.compile_metal, used by Metal and iPhone targets), and xcrun found "
        "no Metal compiler: xcode-select points at the Command Line Tools, which ship none, "
        "or the installed Xcode lacks its Metal toolchain.",
        "install Xcode (the full app), select it with "
        "`sudo xcode-select --switch /Applications/Xcode.app/Contents/Developer`, and accept "
        "its license (`sudo xcodebuild -license accept`); `xcrun -sdk macosx metal --version` "
        "must then work.",
        "xcrun's message; python/tvm/contrib/xcode.py compile_metal (the xcrun metal / metallib "
        "commands, apache/tvm v0.20.0)",
        rank=60,
    ),
    Rule(
        "opencl-error", "opencl", "OpenCL Error",
        r"OpenCL Error, code=(?P<code>-?\d+): (?P<cl>CL_[A-Z_]+)",
        "OpenCL call failed",
        "an OpenCL call of TVM's OpenCL runtime failed.",
        "check the OpenCL installation with clinfo.",
        "src/runtime/opencl/opencl_common.h (OPENCL_CHECK_ERROR: \"OpenCL Error, code=\", "
        "CLGetErrorString) with the Khronos CL/cl.h error codes",
        toolchain.opencl,
        rank=55,
    ),
    Rule(
        "shared-memory-over-device-limit", "cuda",
        ("allowed dynamic shared memory size", "Thread group memory requested"),
        r"Failed to set the allowed dynamic shared memory size to (?P<size>\d+)|"
        r"Thread group memory requested is more than (?:the )?MAX allowed",
        "A kernel asks for more shared memory than this GPU has",
        "the kernel was built to use more shared memory per block (threadgroup memory on "
        "Metal) than this GPU grants: it was compiled, tuned or pre-built for a bigger GPU "
        "(a target with another arch or max_shared_memory_per_block, a prebuilt model library "
        "or tuning database made on another card), so the driver refuses the launch.",
        "compile for this GPU's own target (the arch and max_shared_memory_per_block it "
        "reports; tvm.target.Target.from_device, v0.20.0 on, or the device's tag), so dlight / MetaSchedule "
        "size their tiles for it, and do not reuse libraries or tuning records made on "
        "another GPU.",
        "src/runtime/cuda/cuda_module.cc (CUDAWrappedFunc: \"Failed to set the allowed dynamic "
        "shared memory size to\", v0.9.0 on) and the Metal driver's pipeline-state error "
        "through src/runtime/metal/metal_module.mm (\"cannot get state:\")",
        rank=60,
    ),
    Rule(
        "cxx-standard-too-old", "build",
        (" in namespace 'std'", " in namespace \u2018std\u2019", "is only available from C++"),
        r"(?:no (?:template|member) named|error:) ['\u2018](?P<name>\w+)['\u2019] in namespace "
        r"['\u2018]std['\u2019]|['\u2018]std::(?P<name2>\w+)['\u2019] is only available from "
        r"C\+\+(?P<std>\d+) onwards",
        "Compiled with an older C++ standard than TVM's headers need",
        "",
        "",
        "gcc's and clang's diagnostics for a std:: name the selected standard lacks; the "
        "standard of each TVM release from `git show TAG:CMakeLists.txt` (apache/tvm)",
        lambda groups, text: toolchain.cxx_standard(groups, text) or NOT_THIS,
        rank=52,  # above tvm-source-compile-error (48): it knows which standard
    ),
    Rule(
        "llvm-api-changed", "build", "llvm::",
        # MSVC ("error C2660: 'llvm::X::Y': ..."), GCC ("error: 'llvm::X' has not been
        # declared"), Clang ("error: no member named 'Y' in 'llvm::X'")
        r"\berror\b(?P<rest>[^\n]*\bllvm::[^\n]*)",
        "An LLVM API the TVM sources call differently for another LLVM",
        "TVM's sources and the LLVM they are compiled against disagree about an LLVM API.",
        "use an LLVM this TVM release supports, or update TVM.",
        "tk's table of TVM_LLVM_VERSION tests around LLVM calls in apache/tvm's sources at each "
        "release (scripts/llvm_guards.py)",
        llvm_guards.changed_api,
        rank=53,  # above tvm-source-compile-error (48): it knows which LLVM changed the API
        origin="LLVM guard table",
        one_line=True,
    ),
    Rule(
        "rust-target-missing", "build", "can't find crate for",
        r"can't find crate for [`'](?P<crate>core|std|alloc)[`']",
        "Rust has no standard library for the target it builds for",
        "",
        "",
        "rustc's error E0463 with its note for a target whose rust-std is not installed; "
        "MLC-LLM builds its tokenizers (Rust) for Android and iOS",
        toolchain.rust_target,
        rank=60,
    ),
    Rule(
        "apple-platform-mismatch", "build", "but linking in object file built for",
        r"building for (?P<want>[\w ]+?), but linking in (?:object )?file built for "
        r"(?P<have>[\w ]+?)(?:,|\s+file\b)",
        "Libraries built for one Apple platform are linked into an app for another",
        "an archive (the TVM runtime, MLC-LLM's libraries, a model library) was built for one "
        "Apple platform (a device, the simulator, macOS) and the app is linked for another: "
        "the linker refuses to mix them even when both are arm64.",
        "build the libraries for the platform the app is built for (iOS device vs simulator: "
        "a separate build with the simulator SDK), or run the app on the platform they were "
        "built for (MLC-LLM's prebuilt iOS libraries are for a device, not the simulator).",
        "Apple ld's message (\"building for iOS Simulator, but linking in object file built "
        "for iOS\")",
        rank=60,
    ),
    # Generic, so last and lowest: any CMake error, with the message lines under its header.
    Rule(
        "cmake-error", "build", "CMake Error",
        r"^CMake Error(?: at (?P<where>\S+)(?: \((?P<command>\w+)\))?)?:[ \t]*(?P<head>.*)\n"
        r"(?P<message>(?:(?:  |\t).*\n?)*)",
        "CMake stopped configuring",
        "CMake reported an error (the message is in the lines under 'CMake Error').",
        "fix what the message says, then run tk build again (the configure step is retried).",
        "CMake's message() and error output format "
        "(cmake.org/cmake/help/latest/command/message.html)",
        lambda groups, _text: _cmake_error_cause(groups),
        rank=10,
        span=12,
    ),
    # Round 6: the build tools' own failures and what was fed to them (explain/buildtools.py).
    Rule(
        "compiler-internal-error", "build",
        ("internal compiler error", "Internal compiler error", "error C1001"),
        # "Killed (program cc1plus)" is the kernel's OOM kill: compiler-killed's
        r"(?:(?P<file>[^\s:]+\.\w+):\d+(?::\d+)?: )?internal compiler error: (?!Killed)[^\n]*|"
        r"(?P<file2>[^\s()]+)\(\d+\)\s*: fatal error C(?P<msvc>1001): (?:Internal compiler error|"
        r"An internal error has occurred in the compiler)",
        "The compiler itself crashed (an internal compiler error)",
        "the compiler crashed on a source file: a compiler bug.",
        "build with another version of the compiler.",
        "GCC's diagnostic for its own crashes (gcc.gnu.org/bugs); MSVC's fatal error C1001 "
        "(learn.microsoft.com, Fatal Error C1001)",
        buildtools.compiler_crash,
        rank=60,
    ),
    Rule(
        "space-in-build-path", "build", ("is not a directory", "No such file or directory",
                                         "Not a directory"),
        # coreutils 8 says "is not a directory", 9 "No such file or directory"
        r"(?:install|cp|mv|ln): target [`'‘\"](?P<tail>[^`'’\"\n]+)[`'’\"](?: is not a directory|"
        r": No such file or directory|: Not a directory)",
        "The build path holds a space a tool split it at",
        "a tool of the build was given a path with a space, unquoted.",
        "build in a path without spaces.",
        "GNU coreutils' install/cp/mv ('target X is not a directory' when given several "
        "sources); libtool's and autoconf's install rules, which pass $(DESTDIR)$(libdir) "
        "unquoted; TVM's cmake/libs/Libbacktrace.cmake (ExternalProject_Add of libbacktrace's "
        "own configure)",
        buildtools.space_in_path,
        rank=60,
        one_line=True,
    ),
    Rule(
        "finalizer-at-interpreter-exit", "runtime", "Exception ignored in: <function",
        r"Exception ignored in: <function (?P<func>[\w.]+\.__del__) at 0x[0-9a-f]+>\n"
        r"(?:[^\n]*\n){0,40}?(?:KeyError: '(?P<key>[\w.]+)'|(?P<meta>ImportError: sys\.meta_path is "
        r"None)|NameError: name '(?P<name>\w+)' is not defined)",
        "A finalizer ran while Python was shutting down",
        "a __del__ ran at interpreter exit, after a module it uses was torn down.",
        "import what the finalizer needs lazily, and close the object before exit.",
        "CPython's interpreter shutdown (PyImport_Cleanup / finalize_modules: modules cleared "
        "in no promised order, then remaining objects' finalizers run; 'Exception ignored in' "
        "is sys.unraisablehook's header); apache/tvm#16752 (psutil in Disco's process pool)",
        interpreter_exit.finalizer,
        rank=60,
    ),
    Rule(
        "linker-unknown-flag", "build",
        ("unrecognized option", "unknown option", "unknown argument", "Unknown linker flag",
         "unable to disambiguate"),
        r"(?:^|[\s/])(?:ld|ld\.bfd|ld\.gold|ld64|ld\.lld|lld|ld-classic)(?:\.exe)?: (?:error: )?"
        r"(?:unrecognized option [‘'\"`](?P<flag>[^’'\"`\s]+)|unknown option:? (?P<flag2>-\S+)|"
        r"unknown argument:? [‘'\"`]?(?P<flag3>-[^’'\"`\s]+)|"
        r"Error: unable to disambiguate: (?P<flag5>-\S+))|"
        r"Unknown linker flag [`'\"‘](?P<flag4>[^`'\"’\s]+)",
        "The linker does not accept a flag the build passes",
        "the linker rejected one of the build's linker flags.",
        "remove the flag from the linker flags.",
        "GNU ld's, lld's and Apple ld's wording of an option they do not know; captured with "
        "GNU ld here",
        buildtools.unknown_linker_flag,
        rank=60,
    ),
    Rule(
        "cmake-literal-escape", "build", "got unquoted argument with text",
        r"got unquoted argument with text\s+\"(?P<escape>\\[ntr][^\"\n]*)\"",
        "A CMake file holds a literal \\n where a line break was meant",
        "CMake read a backslash escape where a command should start.",
        "replace the escape with a real line break.",
        "CMake's parser error for an argument where a command name belongs; captured with "
        "cmake 3.25 here",
        buildtools.cmake_literal_escape,
        rank=60,
    ),
    Rule(
        "config-key-missing", "library", ('Key "', "Key '", 'key "', "key '"),
        r"(?P<file>[^\s:]+\.(?:cc|cpp|cxx|h|hpp|mm)):\d+: Check failed: [^\n]*?[Kk]ey "
        r"[\"'](?P<key>[^\"'\n]+)[\"'] (?:not found|is missing|missing)",
        "A configuration lacks a key the code that reads it requires",
        "a check outside TVM says a configuration key is missing.",
        "add the key to the configuration.",
        "the check-failed format of TVM and the projects built on it; buildtools.CONFIG_READERS",
        buildtools.config_key,
        rank=60,
    ),
    Rule(
        "llvm-header-moved", "build", ("No such file or directory", "file not found"),
        r"fatal error: (?P<header>llvm/[\w./+-]+\.h): No such file or directory|"
        r"'(?P<header2>llvm/[\w./+-]+\.h)' file not found",
        "An LLVM header TVM includes is not in this LLVM",
        "the LLVM in use keeps the header elsewhere, or has none.",
        "match the TVM and LLVM versions.",
        "TVM's #if TVM_LLVM_VERSION guards around LLVM includes at each release "
        "(toolkit/data/explain/llvm_headers.json, by scripts/llvm_headers.py)",
        buildtools.llvm_header,
        rank=55,
        origin="LLVM header table",
    ),
    # Round 9: what a code generator cannot emit (explain/codegen.py)
    Rule(
        "cuda-vector-type-unsupported", "codegen", "to CUDA type",
        r"Cannot convert type (?:T\.)?(?P<dtype>[a-z]+\d*(?:_[a-z0-9]+)*)x(?P<lanes>\d+) "
        r"to CUDA type",
        "The CUDA code generator has no type for this vector",
        "a loop was vectorized to a width of a type CUDA's codegen cannot print.",
        "vectorize fewer lanes.",
        "CodeGenCUDA::PrintType's LOG(FATAL) (src/target/source/codegen_cuda.cc; "
        "src/backend/cuda/codegen/ in 0.27); captured with apache-tvm 0.27.0.post1",
        codegen.vector_type,
        one_line=True,
    ),
    Rule(
        "cuda-vector-operator", "codegen", "matches these operands",
        r'no operator "(?P<op>[^"\n]+)" matches these operands\s*\n\s*operand types are: '
        r"(?P<types>[^\n]+)",
        "Generated CUDA applies a scalar operator to a vector",
        "the code generator printed a vectorized expression as one scalar operator.",
        "do not vectorize that statement.",
        "nvcc's message for an operator on a CUDA vector type; captured with nvcc 13",
        codegen.vector_operator,
    ),
    Rule(
        "cuda-make-vector-arguments", "codegen",
        ("matches the argument list", "too many arguments in function call"),
        r'no instance of overloaded function "make_(?P<base>[a-z]+?)(?P<n>[1-4])" matches the '
        r"argument list|too many arguments in function call\s*\n[^\n]*?\bmake_"
        r"(?P<base2>[a-z]+?)(?P<n2>[1-4])\(",
        "Generated CUDA builds a vector from the wrong number of parts",
        "the code generator passed one argument per lane of a narrower vector.",
        "vectorize fewer lanes of the narrow type.",
        "nvcc's messages for a make_<type><n> call; captured with nvcc 13",
        codegen.make_vector,
    ),
    Rule(
        "intrinsic-not-lowered", "codegen", ("unknown intrinsic ", "Unresolved call "),
        r"(?:unknown intrinsic|Unresolved call) +Op\(tir\.(?P<op>\w+)\)",
        "The backend has no lowering for this TIR intrinsic",
        "the backend's code generator met a tir intrinsic no rule lowered.",
        "use a TVM whose backend lowers it.",
        "TVM's intrinsic rule files at each release (toolkit/data/explain/intrin_rules.json, "
        "by scripts/intrin_rules.py); CodeGenLLVM's and CodeGenC's LOG(FATAL)",
        codegen.intrinsic,
        one_line=True,
        origin="intrinsic rule table",
    ),
    # Round 7: an optional library TVM links only with its USE_X option (explain/optional_libs.py)
    Rule(
        "optional-library-unlinked", "library", "undefined symbol: ",
        r"(?P<lib>\S+\.so[.\d]*): undefined symbol: (?P<sym>[A-Za-z]\w+)",
        "A symbol of an optional library TVM links only with its USE_ option is missing",
        "the library calls an optional library that was not linked.",
        "link the library, or build with its option off.",
        "the libraries' C API prefixes (optional_libs.SYMBOL_PREFIXES) and TVM's CMake "
        "options by release (toolkit/data/explain/optional_libs.json, by "
        "scripts/optional_libs.py)",
        optional_libs.undefined_symbol,
        rank=35,
        origin="TVM CMake option table",
    ),
    Rule(
        "optional-library-function-missing", "library",
        ("Cannot find ffi::Function", "Cannot find PackedFunc"),
        r"Cannot find (?:ffi::Function|PackedFunc) (?P<name>[\w.$]+) in either Relax VM kernel "
        r"library",
        "The model calls an optional library's function the runtime was built without",
        "the runtime was built without the library the model calls.",
        "rebuild the runtime with the library's USE_ option on.",
        "src/runtime/vm/vm.cc (VirtualMachineImpl::InitFuncPool) and TVM's CMake options by "
        "release (toolkit/data/explain/optional_libs.json, by scripts/optional_libs.py)",
        optional_libs.missing_function,
        rank=55,
        origin="TVM CMake option table",
    ),
    # Round 7: the Python each TVM release requires (explain/python_versions.py)
    Rule(
        "python-too-old-for-tvm", "packaging", "minimal Python requirement is Python",
        r"minimal Python requirement is Python (?P<ver>\d+\.\d+)",
        "The Python in use is older than this TVM requires",
        "TVM's import-time check refused this Python.",
        "use a newer Python.",
        "TVM's _pyversion.py / base.py check at each release (toolkit/data/explain/"
        "python_versions.json, by scripts/python_versions.py)",
        python_versions.python_check,
        rank=60,
        origin="TVM Python version table",
    ),
    Rule(
        "pip-python-too-old-for-tvm", "packaging", "requires a different Python",
        r"[Pp]ackage '(?P<dist>[\w.-]+)' requires a different Python: (?P<have>[\w.+]+) not in "
        r"'>=\s*(?P<need>\d+\.\d+)[^']*'",
        "pip will not install TVM for this Python",
        "TVM's packaging asks for a newer Python.",
        "use a newer Python.",
        "pip's requires-python check; TVM's pyproject.toml at each release (toolkit/data/"
        "explain/python_versions.json, by scripts/python_versions.py)",
        python_versions.pip_python,
        rank=60,
        origin="TVM Python version table",
    ),
    # Round 7: a check TVM's own CMake modules make, by release (explain/cmake_checks.py)
    Rule(
        "tvm-cmake-check", "build", "CMake Error at",
        r"^CMake Error at (?P<where>\S*cmake/\S+\.cmake:\d+) \(message\):[ \t]*(?P<head>.*)\n"
        r"(?P<message>(?:(?:  |\t).*\n?)*)",
        "A check in TVM's own CMake modules stopped the configure",
        "TVM's CMake module rejected the configuration.",
        "give the option a value the check accepts.",
        "message(FATAL_ERROR) of TVM's cmake/ modules at each release (toolkit/data/explain/"
        "cmake_checks.json, by scripts/cmake_checks.py) and the options' defaults "
        "(optional_libs.json)",
        cmake_checks.tvm_check,
        rank=12,
        span=12,
        origin="TVM CMake check table",
    ),
    Rule(
        "cython-too-old", "build", (".pxi:", ".pyx:", ".pxd:"),
        r"(?P<file>\S*tvm\S*\.(?:pyx|pxi|pxd)):\d+:\d+: (?P<msg>(?:Syntax error|Expected)[^\n]*)",
        "Cython rejects the syntax of TVM's own Cython sources",
        "the Cython in use cannot read TVM's Cython sources.",
        "upgrade Cython.",
        "Cython's compile error format (file:line:col: message); TVM's python/tvm/_ffi/_cython "
        "and tvm-ffi's python/tvm_ffi/cython sources",
        buildtools.cython_syntax,
        rank=55,
    ),
    Rule(
        "msvc-stl-acknowledge-macro", "build", ("C2338", "static_assert failed"),
        r"(?:C2338|static_assert failed)[^\n]*?define (?:either )?(?:\(1\)\s+)?"
        r"(?P<macro>_(?:ENABLE|SILENCE|DISABLE|ALLOW)_[A-Z0-9_]+)"
        r"(?:[^\n]*?\(2\)\s+(?P<other>_[A-Z][A-Z0-9_]+))?",
        "MSVC's standard library asks for a macro that acknowledges a change",
        "a static_assert of MSVC's standard library stopped the build.",
        "define the macro it names.",
        "MSVC STL's static_asserts that name an _ENABLE_/_SILENCE_/_DISABLE_ macro (C2338, "
        "'static_assert failed' in newer compilers)",
        buildtools.stl_acknowledge_macro,
        rank=55,
    ),
    Rule(
        "frontend-attribute-passed-on", "frontend", "got an unexpected keyword argument",
        r"(?P<op>\w+)\(\) got an unexpected keyword argument '(?P<kw>\w+)'",
        "A model attribute the frontend does not know reached a Relay op",
        "the frontend passed a model attribute to an op that does not take it.",
        "update TVM, or export the model with an older framework.",
        "python/tvm/relay/frontend/common.py (AttrCvt passes unknown attributes on) and the "
        "traceback's frontend frames",
        frontend_attrs.passed_attribute,
        rank=45,
    ),
    Rule(
        "tvm-java-artifact-unbuilt", "packaging", ("Could not find org.apache.tvm",
                                                   "Could not find ai.mlc",
                                                   "Could not find artifact org.apache.tvm",
                                                   "Could not find artifact ai.mlc"),
        r"Could not find (?:artifact (?P<coord2>(?:org\.apache\.tvm|ai\.mlc)[\w.]*:[\w.:+-]+?) "
        r"in |(?P<coord>(?:org\.apache\.tvm|ai\.mlc)[\w.]*:[\w.-]+(?::[\w.+-]*\w)?))",
        "A TVM Java/Android library is not in any repository the build searches",
        "TVM's Java/Android libraries are built locally, not published.",
        "build them first.",
        "Gradle's and Maven's unresolved-dependency wording; TVM's Makefile (jvmpkg, jvminstall) "
        "and jvm/ poms; MLC-LLM's Android docs (mlc_llm package)",
        android_artifacts.unresolved,
        rank=45,
    ),
    Rule(
        "mlc-model-library-not-found", "mlc-llm", ("Cannot find the model library",
                                                  "Cannot find system lib with",
                                                  "-lmodel_", "'model_"),
        r"(?:Cannot find the model library that corresponds to `(?P<lib>[^`\n]*)`|"
        r"Cannot find system lib with (?P<syslib>\w+)|"
        r"[Ll]ibrary not found for -l(?P<link>model_(?:iphone|android)\w*)|"
        r"[Ll]ibrary '(?P<link2>model_(?:iphone|android)\w*)' not found)",
        "MLC-LLM has no compiled model library for this model",
        "the model library (compiled from the model for one device) was not found.",
        "compile it with mlc_llm compile, or package the app with mlc_llm package.",
        "MLC-LLM's model-library lookups: python/mlc_llm/chat_module.py "
        "(_get_lib_module_path), cpp/cli_main.cc, cpp/serve/function_table.cc (system lib), "
        "and the iOS/Android packaging (mlc_llm package writes libmodel_iphone.a)",
        mlc_model_libs.not_found,
        rank=45,
    ),
    Rule(
        "tvm-java-bindings-unbuilt", "packaging", ("package org.apache.tvm", "tvm4j",
                                                   "LibInfo.java"),
        r"(?:error: package org\.apache\.tvm(?:\.\w+)* does not exist|"
        r"Couldn't find (?:the resource |native library )(?P<native>(?:lib)?tvm4j)|"
        r"(?P<libinfo>\S*/jvm/core/src/main/java/org/apache/tvm/LibInfo\.java))",
        "TVM's Java bindings (tvm4j) were not built for the app",
        "the app's build or run found no tvm4j.",
        "build tvm4j first (MLC-LLM: mlc_llm package).",
        "javac's missing-package error, the JNI loader's words in logcat, TVM's jvm/ tree "
        "(org.apache.tvm, LibInfo.java, libtvm4j_runtime_packed); MLC-LLM's Android docs",
        android_artifacts.java_bindings_unbuilt,
        rank=45,
    ),
    Rule(
        "tilelang-layout-not-inferred", "tilelang", ("no available layout found",
                                                     "can not be inferred correctly"),
        r"(?:no available layout found|The layout for fragment (?P<buffer>\w+) can not be "
        r"inferred correctly)",
        "TileLang could not infer a fragment buffer's layout",
        "TileLang's LayoutInference pass found no layout for a fragment buffer.",
        "annotate the layout, or change the fragment's shape.",
        "TileLang's src/transform/layout_inference.cc (its two checks: a fragment without a "
        "layout, no candidate layout for a T.Parallel loop)",
        tilelang_layouts.not_inferred,
        rank=45,
    ),
    Rule(
        "posix-only-module", "packaging", "No module named",
        r"No module named '(?P<mod>fcntl|termios|pwd|grp|resource|crypt|pty|tty|syslog|posix|"
        r"readline)'",
        "A POSIX-only Python module imported on Windows",
        "the code imports a standard-library module that Python has only on POSIX systems "
        "(Linux, macOS, the BSDs); Windows' Python has none.",
        "run it on Linux or macOS (or WSL on Windows), or use a version of the code that "
        "imports that module only off Windows.",
        "the Python standard library's Unix-only modules (docs.python.org/3/library/unix.html);"
        " TVM's python/tvm/contrib/util.py imported fcntl at the top in 2018",
        toolchain.posix_only_module,
        rank=52,
        one_line=True,
    ),
    Rule(
        "tvm-backend-package-missing", "packaging", "No module named",
        r"No module named '(?P<pkg>[\w.]+)'",
        "A TVM backend's own package is not installed",
        "a TVM module imports a package that is not among TVM's requirements.",
        "install the backend's package.",
        "the traceback's TVM frame and its import line; tk's table of each TVM release's "
        "requirements (a package in none of them)",
        backend_packages.unlisted,
        rank=45,
    ),
    Rule(
        "device-codegen-host-function", "target", "expect calling_conv equals CallingConv::",
        r"(?P<codegen>Code[Gg]en\w+):\s*expect calling_conv equals CallingConv::"
        r"kDeviceKernelLaunch",
        "A device code generator was given a host function",
        "a source/device code generator (its Build function) compiles only device kernels "
        "(calling convention kDeviceKernelLaunch); the host side of the module reached it, "
        "which happens when the host target (target_host, or Target(..., host=...)) is itself "
        "a device target such as \"opencl\" or \"cuda\".",
        "set target_host (the target's host) to a CPU target such as \"llvm\" and keep the "
        "device target for the kernels.",
        "the calling-convention check of each device codegen's Build function in TVM "
        "(src/target/source/codegen_opencl.cc BuildOpenCL, codegen_metal.cc, spirv, webgpu)",
        rank=50,
    ),
    Rule(
        "torch-scripted-graph", "frontend", "operators are not implemented",
        r"operators are not implemented: [\[{](?P<ops>[^\]}\n]*)[\]}]",
        "The PyTorch frontend was given a scripted graph",
        "the graph was made by torch.jit.script.",
        "trace the model with torch.jit.trace.",
        "TorchScript's script-only ops (torch/csrc/jit/frontend/ir_emitter.cpp); TVM's "
        "relay/frontend/pytorch.py (from_pytorch reads traced graphs)",
        torch_script.scripted_graph,
        rank=48,
    ),
    Rule(
        "vm-builtin-missing", "library", ("Cannot find ffi::Function vm.builtin.",
                                          "Cannot find PackedFunc vm.builtin."),
        r"Cannot find (?:ffi::Function|PackedFunc) (?P<name>vm\.builtin\.[\w.$]+) in either "
        r"Relax VM",
        "The model library calls a VM builtin this runtime does not have",
        "vm.builtin.* functions are the Relax VM runtime's own (src/runtime/relax_vm/"
        "builtin.cc); the compiled model library calls one the TVM runtime loaded here lacks: "
        "it was compiled by a newer TVM (or MLC-LLM, tvm-based package) than the runtime that "
        "runs it - a version mismatch, the runtime is older.",
        "update (upgrade) the runtime that loads the model - the tvm / mlc-llm package or "
        "nightly - to the release that compiled the library, or recompile the library with "
        "the TVM of the runtime.",
        "src/runtime/relax_vm/vm.cc (VirtualMachineImpl::InitFuncPool) and builtin.cc (the "
        "vm.builtin.* registry)",
        rank=51,
    ),
    Rule(
        "header-library-mismatch", "build", ("in function `", "in function '"),
        r"in function [`'](?P<ns>[A-Za-z]\w*)::[^\n]*(?:\n[^\n]*?)?undefined reference to "
        r"[`'](?P<sym>(?P=ns)_\w+)",
        "A library's C++ header calls a C function its library does not define",
        "an inline function of the library's C++ header calls the library's C API, and the "
        "library being linked does not define it: the headers and the library are from two "
        "versions (headers of an older or newer install found first on the include path, "
        "e.g. under /usr/local/include).",
        "make the include path and the library one install: remove the stale install or "
        "point the include path at the headers that came with the library linked.",
        "GNU ld's 'in function ... undefined reference to' for a C++ wrapper over a C API "
        "(oneDNN's dnnl.hpp over dnnl_*, TVM's cmake/modules/contrib/DNNL.cmake)",
        toolchain.header_library_mismatch,
        rank=52,
    ),
    Rule(
        "isolated-build-missing-module", "packaging", "No module named",
        r"No module named '(?P<mod>[\w.]+)'",
        "A module the build script imports is missing from the isolated build environment",
        "pip/uv's build isolation installs only the declared build requirements.",
        "build with --no-build-isolation after installing the module.",
        "PEP 517 build isolation (pip, uv) and setuptools.build_meta's frames; TVM's "
        "python/setup.py and pyproject.toml per release (scripts/build_requires.py)",
        build_isolation.missing_in_isolation,
        rank=53,
        origin="TVM build requirements table",
    ),
    Rule(
        "tilelang-arch-not-supported", "version", "Not supported cuda",
        r"Not supported (?P<target>cuda\b[^\n]*?-arch=sm_(?P<arch>\d+)\w*)",
        "The installed TileLang release does not know this GPU architecture",
        "TileLang's architecture checks do not cover it.",
        "upgrade TileLang.",
        "TileLang's src/op/gemm.cc (\"Not supported \" << target) and its TargetIs* "
        "predicates per release (scripts/tilelang_archs.py)",
        tilelang_archs.arch_not_supported,
        rank=50,
        origin="TileLang architecture table",
    ),
    Rule(
        "tvmc-codegen-option-without-target", "target", "but did not specify",
        r"Passed --target-(?P<kind>[A-Za-z0-9-]+?)-(?P<opt>\w+) but did not specify (?P=kind) "
        r"target",
        "tvmc was given a codegen's option without that codegen's target",
        "tvmc applies a codegen's options only to its own target.",
        "name the codegen's target in --target.",
        "python/tvm/driver/tvmc/target.py (validate_targets) and composite_target.py; TVM's "
        "CMake options (scripts/optional_libs.py)",
        tvmc_options.option_without_target,
        rank=50,
    ),
    Rule(
        "runtime-needs-compiler-symbol", "build", "unresolved external symbol",
        r"\w+\.obj : error LNK20(?:01|19): unresolved external symbol \"[^\"\n]*?"
        r"(?P<sym>tvm::(?:parser|relay|tir|te|transform|codegen|target|ir)::\w+|"
        r"tvm::(?:Target|IRModule|PrimExpr|SourceName|GlobalVar)\b)",
        "TVM's runtime library needs a compiler symbol",
        "a runtime source includes a compiler header.",
        "remove the compiler header from the runtime source, or update TVM.",
        "MSVC's LNK2001/LNK2019 while linking tvm_runtime; TVM's split of src/runtime "
        "(libtvm_runtime) from the compiler (libtvm) and TVM_DLL in include/tvm/runtime/base.h",
        runtime_link.compiler_symbol_in_runtime,
        rank=52,
    ),
    Rule(
        "cython3-exception-spec", "build", (".pxi:", ".pyx:", ".pxd:"),
        r"(?P<file>\S*tvm\S*\.(?:pyx|pxi|pxd)):\d+:\d+: (?P<msg>Cannot assign type "
        r"'[^'\n]*(?:except \*|noexcept)[^'\n]*' to '[^'\n]+')",
        "Cython 3 rejects a callback type in TVM's Cython sources",
        "Cython 3.0 changed the default exception specification.",
        "pin Cython below 3.",
        "Cython 3.0's migration notes (exception propagation by default, noexcept); TVM's "
        "python/tvm/_ffi/_cython sources",
        buildtools.cython3_exception_spec,
        rank=56,
    ),
    Rule(
        "hexagon-qfloat-arch", "build", "undeclared identifier 'Q6_",
        r"use of undeclared identifier '(?P<intr>Q6_\w*?[Qq][Ff](?:16|32)\w*)'",
        "An HVX qfloat instruction the Hexagon architecture being built for lacks",
        "the HVX qf16/qf32 (qfloat) instructions (Q6_*qf16*, Q6_*qf32*) exist from Hexagon "
        "v68 on; the build targets an older architecture (USE_HEXAGON_ARCH v65 or v66), whose "
        "compiler declares no such intrinsic, and still compiles TVM's HVX fp16 runtime ops "
        "and the SDK's qhl_hvx math that use them.",
        "set USE_HEXAGON_ARCH to v68 or newer if the device has it; for a v65/v66 device, "
        "update TVM: from v0.18.0 cmake/modules/Hexagon.cmake compiles src/runtime/hexagon/ops "
        "only for v68 and newer (htp_supported_archs).",
        "Hexagon SDK's HVX intrinsics (Q6_V*qf16*/qf32* need __HVX_ARCH__ >= 68); TVM's "
        "cmake/modules/Hexagon.cmake (git show v0.17.0 / v0.18.0)",
        rank=50,
    ),
    Rule(
        "cargo-step-not-found", "build", "Generating ",
        r"Generating (?P<out>\S*\b(?:release|debug)/lib(?P<crate>\w+)\.a)[^\n]*\n"
        r"(?:[^\n]*\n){0,3}?[^\n]*[Nn]o such file or directory\s*$",
        "The build step that runs cargo (Rust) could not start",
        "the step that generates a Rust static library (cargo's <profile>/lib<crate>.a layout, "
        "as tokenizers-cpp's libtokenizers_c.a for MLC-LLM) runs `cargo build`, and the OS "
        "found no such program: no Rust toolchain is installed, or cargo is not on the PATH "
        "of the build.",
        "install Rust with rustup (curl https://sh.rustup.rs -sSf | sh), open a new shell "
        "(or source ~/.cargo/env) so cargo is on PATH, and rerun the build.",
        "cargo's output layout (target/<profile>/lib<crate>.a) in a CMake custom command; "
        "make's report of a command the OS could not execute",
        rank=50,
    ),
    Rule(
        "msvc-symbol-not-exported", "build", "unresolved external symbol",
        r"\w+\.obj : error LNK20(?:01|19): unresolved external symbol \"[^\"\n]*?"
        r"(?P<sym>(?:tvm|dmlc)::[\w:<>* ]+?)(?:\(|\\\"| \*)",
        "A symbol of TVM's DLL is not exported",
        "Windows DLLs export only symbols marked dllexport (TVM_DLL).",
        "mark the declaration TVM_DLL.",
        "MSVC's LNK2001/LNK2019 against tvm.dll; TVM_DLL in include/tvm/runtime/base.h "
        "(c_runtime_api.h in older trees)",
        runtime_link.not_exported,
        rank=40,
    ),
    Rule(
        "mlc-prepare-libs-by-hand", "packaging", "prepare_libs.py",
        r"File \"(?P<path>[^\"\n]*android[/\\]mlc4j[/\\]prepare_libs\.py)\", line \d+, "
        r"in <module>",
        "MLC-LLM's Android build script was run by hand",
        "prepare_libs.py is a step of `mlc_llm package`.",
        "run `mlc_llm package` instead.",
        "MLC-LLM's python/mlc_llm/cli/package.py (build_android_binding runs "
        "android/mlc4j/prepare_libs.py) and its Android docs",
        android_artifacts.prepare_libs_by_hand,
        rank=45,
    ),
    Rule(
        "llvm-system-lib-not-found", "build", ("cannot find -l", "library not found for -l"),
        # GNU ld's words, and Apple ld's
        r"(?:cannot find|library not found for) -l(?P<lib>edit|tinfo|ncurses|terminfo|xml2|z|"
        r"zstd|ffi)\b",
        "The link of libtvm misses a library LLVM depends on",
        "a library of `llvm-config --system-libs` has no development package here.",
        "install its -dev package.",
        "TVM's cmake/utils/FindLLVM.cmake (llvm-config --system-libs); LLVM's LLVM_ENABLE_* "
        "options for libedit, terminfo, libxml2, zlib, zstd (LLVM 15 on), libffi; GNU ld's and "
        "Apple ld's words",
        llvm_link.system_lib_missing,
        rank=52,
    ),
    Rule(
        "conda-llvm-libstdcxx", "build", "undefined reference",
        r"undefined references? to [`'](?P<sym>std::[^'`\n]+)'",
        "A conda environment's C++ library against an older libstdc++",
        "libraries built by conda's compiler need its newer libstdc++.",
        "build outside the conda environment, or with conda's compilers.",
        "GNU ld's undefined-reference report; conda-forge's toolchain (its GCC and "
        "libstdc++) against the system's",
        llvm_link.conda_libstdcxx,
        rank=54,
    ),
    Rule(
        "link-made-executable", "build", "crt1.o",
        r"crt1\.o\S*[^\n]*(?:\n[^\n]*)?[`'‘’]main['’]",
        "A shared library was linked as an executable",
        "the link lacked -shared, so it needed a main.",
        "link with -shared.",
        "glibc's crt1.o (_start calls main); TVM's python/tvm/contrib/cc.py _linux_compile "
        "(git show v0.6.0 / v0.7.0)",
        shared_output.no_shared_flag,
        rank=55,
    ),
    Rule(
        "mlc-tvm-without-relax", "install",
        ("cannot import name 'relax' from 'tvm'", "module 'tvm' has no attribute 'relax'"),
        r"cannot import name 'relax' from 'tvm'|module 'tvm' has no attribute 'relax'",
        "MLC-LLM runs on a TVM without Relax (not TVM Unity)",
        "MLC-LLM needs TVM Unity.",
        "install TVM Unity (mlc-ai-nightly).",
        "MLC-LLM's install docs (TVM Unity, mlc-ai-nightly wheels); TVM's python/tvm/relax "
        "(from v0.16.0, tk's API history)",
        mlc_skew.tvm_without_relax,
        rank=53,
    ),
    Rule(
        "web-runtime-lacks-global", "library", "Cannot find global function",
        r"Cannot find global function (?P<name>[\w.]+)",
        "The web runtime (wasm) does not register a function the page calls",
        "the web-llm code is newer than its web runtime.",
        "use matching web-llm and model libraries.",
        "TVM's web runtime (web/src/runtime.ts, getGlobalFuncInternal); web-llm's releases "
        "and their prebuilt model libraries",
        mlc_skew.runtime_lacks_global,
        rank=56,
    ),
    Rule(
        "vm-executable-version-mismatch", "runtime", "Invalid VM file format in the version",
        r"(?:\(version == \"?(?P<runtime>[^\"()\s]+)\"?\) is false: )?Invalid VM file format "
        r"in the version section",
        "The VM executable was written by another TVM version than the runtime",
        "the executable's version differs from the runtime's.",
        "rebuild the library or the runtime from one TVM.",
        "TVM's src/runtime/relax_vm/executable.cc and src/runtime/vm/executable.cc "
        "(LoadHeader, STREAM_CHECK(version == ..., \"version\"))",
        mlc_skew.vm_version_mismatch,
        rank=50,
    ),
    Rule(
        "webgpu-shader-f16-missing", "runtime", ("shader-f16", "extension 'f16'"),
        # web-llm's own check, or (where it does not check) the browser's WGSL compiler
        # rejecting the kernels' `enable f16;` (Tint's wording)
        r"requires WebGPU extension shader-f16[^\n]*not enabled|"
        r"extension 'f16' is not allowed in the current environment",
        "The browser's WebGPU lacks shader-f16 for a float16 model",
        "the adapter does not expose shader-f16.",
        "use the model's f32 variant.",
        "web-llm's check of the model's required WebGPU features (shader-f16); WebGPU's "
        "adapter.features; Tint's WGSL error for `enable f16;` without the feature",
        mlc_skew.webgpu_f16,
        rank=50,
    ),
    Rule(
        "webgpu-no-adapter", "runtime", "Cannot find adapter that matches the request",
        r"Cannot find adapter that matches the request",
        "The browser gives no WebGPU adapter",
        "TVM's web runtime (and web-llm, which loads models through it) asked the browser for a "
        "WebGPU adapter (navigator.gpu.requestAdapter()) and got none: this browser exposes no "
        "WebGPU on this machine - not supported or turned off for this OS, GPU or driver (on "
        "Linux, Chrome keeps WebGPU behind flags), or the GPU is blocklisted.",
        "check what the browser says of WebGPU (chrome://gpu, webgpureport.org); on Linux "
        "enable the chrome://flags #enable-unsafe-webgpu and #enable-vulkan, update the GPU "
        "driver, or use a browser and OS where WebGPU is on",
        "TVM's web runtime (web/src/webgpu.ts, detectGPUDevice) and web-llm's copy of it",
        rank=50,
    ),
    Rule(
        "webllm-device-lost-in-reload", "runtime", "Device was lost during reload",
        r"Device was lost during reload",
        "The WebGPU device was lost while the model loaded",
        "web-llm lost the browser's WebGPU device while loading the model (its engine's "
        "reload): the browser takes the device away when the GPU cannot hold what is asked, "
        "most often the model's weights and KV cache needing more GPU memory than this device "
        "gives (a model too large for the GPU, or a previous model still holding its memory).",
        "unload the previous model first, and use a smaller model, the model's `-1k` variant "
        "(a smaller KV cache: a 1k context window) or q4f16_1 in place of q4f32_1 where the "
        "adapter has shader-f16",
        "web-llm's engine (src/engine.ts, reload: device.lost)",
        rank=50,
    ),
    Rule(
        "webllm-unknown-conv-template", "runtime", "Unknown conv template ",
        r"Unknown conv template (?P<name>[\w.-]+)",
        "The model names a conversation template this web-llm does not know",
        "the model's config names a conversation template this web-llm lacks.",
        "use a web-llm release that defines it.",
        "web-llm's getConversation (src/conversation.ts): `Unknown conv template ` + name",
        mlc_skew.webllm_conv_template,
        rank=50,
    ),
    Rule(
        "cli-unknown-option", "usage", "Unknown argument: ",
        r"Unknown argument: (?P<opt>--?[\w-]+)[^\n]*\n(?:[^\n]*\n){0,2}?Usage: (?P<prog>\S+) "
        r"(?P<usage>[^\n]*)",
        "The program does not know this option (another version's command line)",
        "the option is not one this version accepts.",
        "use the options its usage lists.",
        "p-ranav/argparse's 'Unknown argument' and usage (MLC-LLM's C++ CLI)",
        cli_options.unknown_option,
        rank=50,
    ),
    Rule(
        "graph-param-not-an-input", "runtime", " among input",
        r"cannot find (?P<name>\S+) among input",
        "set_input was given a parameter the built graph does not have",
        "the params passed are not the ones the build returned: the build folds constants "
        "and precomputes part of the graph, which removes or renames parameters (such as "
        "_param_N), so the frontend's params no longer match the graph's inputs.",
        "pass the params dict the build returned (nnvm.compiler.build's / relay.build's "
        "params, lib.get_params() for a factory module), not the one the frontend returned",
        "TVM's src/runtime/graph/graph_runtime.cc GetInputIndex (v0.2-v0.7.0: 'cannot find "
        "... among input'); nnvm.compiler.build's precompute (returns new params)",
        rank=50,
    ),
    Rule(
        "msvc-link-llvm-comdat", "build", "COMDAT section",
        r"LNK1143: invalid or corrupt file: no symbol for COMDAT section",
        "Microsoft's linker rejects an object LLVM wrote",
        "link.exe rejects LLVM's COMDAT sections.",
        "link with lld-link.",
        "MSVC's LNK1143; TVM's python/tvm/contrib/cc.py _windows_shared (link in v0.5, "
        "lld-link from v0.6.0)",
        windows_build.comdat_with_link_exe,
        rank=50,
    ),
    Rule(
        "cmake-windows-path-escape", "build", "Invalid character escape",
        r"Invalid character escape '\\(?P<ch>.)'",
        "A Windows path's backslashes read as escapes by CMake",
        "CMake parsed a path with backslashes as a string.",
        "write the path with forward slashes.",
        "CMake's string parser (cmListFileLexer: 'Invalid character escape'); TVM's "
        "cmake/utils/FindLLVM.cmake (`llvm-config --cmakedir`, cmake_path from v0.15.0)",
        windows_build.backslash_path_in_cmake,
        rank=55,
        one_line=True,
    ),
    Rule(
        "msvc-posix-type", "build", "C2065",
        r"(?P<file>[^\s(]+)\(\d+(?:,\d+)?\): error C2065:\s+'(?P<type>uint|ushort|ulong|u_int|"
        r"ssize_t)': undeclared identifier",
        "A POSIX-only type in a source MSVC compiles",
        "MSVC does not define this POSIX typedef.",
        "use a <cstdint> type.",
        "MSVC's C2065; glibc's sys/types.h typedefs (uint, ushort, ulong)",
        windows_build.posix_type_on_msvc,
        rank=50,
    ),
    Rule(
        "opencl-qcom-symbol", "runtime", "QCOM",
        r"undefined (?:symbol:?\s*|reference to [`'])(?P<sym>cl\w+QCOM)\b",
        "TVM's OpenCL runtime calls a Qualcomm-only extension",
        "the OpenCL library lacks a QCOM extension function.",
        "use TVM v0.23.0 or newer.",
        "TVM's src/runtime/opencl/opencl_device_api.cc SetPerfHint (git show v0.22.0 / "
        "v0.23.0: USE_OPENCL_EXTN_QCOM)",
        opencl_extensions.qcom_symbol,
        rank=52,
    ),
    Rule(
        "tvm-import-partially-initialized", "install", "from partially initialized module",
        r"cannot import name '(?P<name>\w+)' from partially initialized module "
        r"'(?P<module>[\w.]+)'",
        "An import inside TVM's package found a module still initializing",
        "a circular import, or a subpackage missing from the install.",
        "update TVM or reinstall it.",
        "CPython's ImportError for a partially initialized module; the traceback's frames; "
        "setuptools' package discovery (directories with __init__.py)",
        import_cycles.partially_initialized,
        rank=50,
    ),
    Rule(
        "topi-cpp-unregistered", "install", "cannot import name",
        r"ImportError: cannot import name '(?P<name>\w+)'",
        "A TOPI C++ function is not registered (topi without its library)",
        "topi.cpp found no TOPI C++ library.",
        "use PYTHONPATH to the source tree.",
        "TVM's topi/python/topi/cpp (git show v0.6.0: impl.py loads libtvm_topi, "
        "_init_api_prefix fills the modules); TVM's install-from-source docs (PYTHONPATH)",
        native_halves.topi_cpp_unregistered,
        rank=51,
    ),
    Rule(
        "cuda-driver-not-initialized", "cuda", "CUDA_ERROR_NOT_INITIALIZED",
        r"(?:(?P<call>cu[A-Z]\w+)\([^\n]*\) failed with error: )?CUDA_ERROR_NOT_INITIALIZED",
        "The CUDA driver is not initialized under TVM's CUDA module",
        "two CUDA installations in one process, or a broken driver.",
        "use one CUDA installation.",
        "TVM's src/runtime/cuda/cuda_module.cc (CUDA_DRIVER_CALL(cuModuleLoadData), git show "
        "v0.7.0); CUDA's CUDA_ERROR_NOT_INITIALIZED",
        native_halves.cuda_driver_not_initialized,
        rank=51,
    ),
    Rule(
        "metaschedule-replay-escaped", "tuning", "ScheduleError",
        r"ScheduleError",
        "A ScheduleError escaped MetaSchedule's parallel search",
        "a failed trace replay aborted the evolutionary search.",
        "update TVM to v0.24.0 or newer.",
        "TVM's src/s_tir/support/parallel_for.h and EvolutionarySearch; apache/tvm#19438 "
        "(git tag --contains: v0.24.0)",
        native_halves.metaschedule_replay,
        rank=51,
    ),
    Rule(
        "frontend-attr-dropped", "frontend", "object has no attribute",
        r"'(?P<cls>\w+)' object has no attribute '(?P<attr>" + frontend_reads.NAMES + ")'",
        "The framework dropped an attribute this TVM's frontend reads",
        "the framework is newer than the frontend.",
        "update TVM.",
        "tk's table of TVM's frontends (scripts/frontend_reads.py: reads later guarded with "
        "hasattr, per release tag)",
        frontend_reads.guarded_read,
        rank=48,
        origin="frontend reads table", one_line=True,
    ),
]


def _cmake_error_cause(groups: dict[str, str]) -> tuple[str, str] | None:
    """The message under ``CMake Error at FILE:LINE (cmd):``, joined into one line."""
    lines = [groups.get("head", "")] + groups.get("message", "").splitlines()
    message = " ".join(" ".join(lines).split())
    if not message:
        return None
    where = f" ({groups['where']})" if groups.get("where") else ""
    return f"{message}{where}", "fix what the message says, then run tk build again."
