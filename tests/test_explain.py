"""`tk explain` and toolkit.explain against real failure messages.

Logs under tests/fixtures/explain/ were captured here or copied verbatim from TVM sources and
reports (SOURCES.md there says which). The `live_*` tests re-create the failures that can
happen on this machine and feed what the tool really printed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toolkit.explain import RULES, best, explain, first_cause, hint

FIXTURES = Path(__file__).parent / "fixtures" / "explain"
LOGS = sorted(FIXTURES.glob("*.log"))


def rule_of(log: Path) -> str:
    """The rule a sample is for: its name, less any ``--variant`` suffix."""
    return log.stem.split("--")[0]


@pytest.mark.parametrize("log", LOGS, ids=[p.stem for p in LOGS])
def test_sample_is_claimed_by_its_rule_alone_at_the_top_rank(log: Path) -> None:
    findings = explain(log.read_text())
    assert rule_of(log) in {f.id for f in findings}, f"its rule does not fire on {log.name}"
    top = max(f.rank for f in findings)
    leaders = {f.id for f in findings if f.rank == top}
    assert leaders == {rule_of(log)}, f"{log.name} is claimed at rank {top} by {leaders}"
    assert best(log.read_text()).id == rule_of(log)


def test_every_rule_has_a_sample() -> None:
    covered = {rule_of(p) for p in LOGS}
    assert not {r.id for r in RULES} - covered


def test_every_sample_says_where_it_came_from() -> None:
    sources = (FIXTURES / "SOURCES.md").read_text()
    for log in [*LOGS, *sorted((FIXTURES / "unmatched").glob("*.log"))]:
        base, _, variant = log.stem.partition("--")
        named = log.name in sources or (variant and f"--{variant}.log" in sources
                                          and base in sources)
        assert named, f"SOURCES.md does not say where {log.name} came from"


def test_rule_ids_and_needles_are_sound() -> None:
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    for rule in RULES:
        assert "--" not in rule.id and all(rule.needles())


def test_target_fix_names_the_dict_form() -> None:
    f = best((FIXTURES / "target-string-refused.log").read_text())
    assert '{"kind": "cuda", "arch": "sm_80"}' in f.fix


def test_launch_over_1024_threads_is_named() -> None:
    f = best((FIXTURES / "cuda-launch-error.log").read_text())
    assert "2048 threads per block" in f.cause and "1024" in f.cause


def test_device_fixes_name_the_device() -> None:
    old = best((FIXTURES / "device-type-constraint.log").read_text())
    new = best((FIXTURES / "device-type-mismatch.log").read_text())
    assert "cuda" in old.cause and "mmult.A" in old.cause
    assert "expects a cpu array" in new.cause


def test_generic_pattern_yields_to_specific_one() -> None:
    ids = [f.id for f in explain((FIXTURES / "undefined-tvm-ffi-symbol.log").read_text())]
    assert ids == ["undefined-tvm-ffi-symbol"]


def test_hint_reads_exception_chain() -> None:
    try:
        try:
            raise OSError("/x/libtvm_runtime.so: undefined symbol: "
                          "_ZN3tvm3ffi9ReprPrintERKNS0_3AnyE")
        except OSError as inner:
            raise RuntimeError("import tvm failed") from inner
    except RuntimeError as e:
        line = hint(e)
    assert line and line.startswith("explain: libtvm and tvm-ffi do not match")
    assert hint("all good") is None


def test_cmake_error_gives_the_message_under_its_header() -> None:
    """Real output (tk build --ccache on TVM main, before tk stopped adding launchers):
    the header line alone says nothing; the cause is the indented message under it."""
    f = best((FIXTURES / "cmake-error.log").read_text())
    assert f.id == "cmake-error"
    assert f.cause.startswith("CMAKE_C_COMPILER_LAUNCHER already defined. Refusing to override "
                              "with ccache. Either unset or disable ccache.")
    assert "cmake/utils/CCache.cmake:24" in f.cause


def test_cli_reads_stdin_and_file(tk) -> None:
    text = (FIXTURES / "domain-already-inferred.log").read_text()
    r = tk("explain", "-", input=text)
    assert r.returncode == 0, r.stderr
    assert "Thread axis bound twice" in r.stdout and "fix:" in r.stdout
    r = tk("explain", str(FIXTURES / "zstd-not-found.log"), "--json")
    data = json.loads(r.stdout)
    top = data["findings"][0]
    assert top["id"] == "zstd-not-found" and "libzstd-dev" in top["fix"]
    assert data["cause"]["kind"] == "CMake Error" and "zstd" in data["cause"]["text"]


def test_cli_unknown_log_and_missing_file(tk, tmp_path: Path) -> None:
    log = tmp_path / "ok.log"
    log.write_text("everything compiled\n")
    assert tk("explain", str(log)).returncode == 1
    r = tk("explain", str(tmp_path / "absent.log"))
    assert r.returncode == 2 and "no such log file" in r.stderr


# (sample, what its first cause says, attribute checks): one per log shape.
CAUSES = [
    ("sch-output-block", "The block s_tir.SBlock#0 is an output block",
     {"kind": "ScheduleError", "primitive": "compute-at"}),
    ("dlight-root-block", "ValueError: The function body is expected to be the root block",
     {"pass_name": "dlight"}),
    ("memory-unbound", "Did you forget to bind?",
     {"pass_name": "VerifyMemory", "source": "src/tirx/analysis/verify_memory.cc:216"}),
    ("fusetir-not-schedulable", "Only schedulable functions", {"pass_name": "FuseTIR"}),
    ("vm-arg-count", "Invoking function main expects 1 arguments",
     {"source": "src/runtime/vm/vm.cc:674"}),
    ("relax-not-broadcastable", "which are not broadcastable", {"kind": "ValueError"}),
    ("module-loader-not-registered", "TVMError: Binary was created using cuda",
     {"source": "src/runtime/library_module.cc:116"}),
    ("missing-header", "fatal error: tk_absent_header.h: No such file or directory",
     {"kind": "compiler"}),
    ("stale-dlpack", "'DLPackManagedTensorAllocator' was not declared", {"kind": "compiler"}),
    ("cmake-no-cuda-compiler", "(enable_language): No CMAKE_CUDA_COMPILER could be found.",
     {"kind": "CMake Error"}),
    ("nvcc-unsupported-arch", "nvcc fatal   : Unsupported gpu architecture 'sm_20'",
     {"kind": "nvcc"}),
    ("jit-symbols-not-found", "Symbols not found: [ tk_no_such_symbol ]", {}),
    ("rpc-connect-failed", "Connect to 127.0.0.1:9 failed",
     {"source": "src/runtime/rpc/rpc_socket_impl.cc:75"}),
    ("unmatched/nvcc-compile-error", 'bad.cu(1): error: identifier "undefined_thing" is undefined',
     {"kind": "compiler"}),
    ("link-library-not-found", "cannot find -ltk_absent_lib", {"kind": "linker"}),
    ("undefined-reference", "undefined reference to `f()'", {"kind": "linker"}),
]


@pytest.mark.parametrize("sample,says,attrs", CAUSES, ids=[c[0] for c in CAUSES])
def test_first_cause_of_each_log_shape(sample: str, says: str, attrs: dict[str, str]) -> None:
    cause = first_cause((FIXTURES / f"{sample}.log").read_text())
    assert says in cause.text
    for name, want in attrs.items():
        assert getattr(cause, name) == want, (name, cause)


def test_first_cause_is_never_an_echo_of_ir() -> None:
    # What dlight raised through tk compile: the IR printed after the message, at column 0.
    text = ("ValueError: The function body is expected to be the root block, but got:\n"
            "for k, tx in T.grid(4, 256):\n"
            "    B[k * 1024 + tx] = S[k * 1024 + tx] * T.float32(2.0)\n")
    assert first_cause(text).text == (
        "ValueError: The function body is expected to be the root block")


def test_first_cause_of_a_chain_is_its_first_exception() -> None:
    log = (FIXTURES / "api-t-block.log").read_text()
    assert "During handling of the above exception" in log
    assert first_cause(log).kind == "AttributeError"


def test_first_cause_of_a_live_exception_reads_tvm_frames() -> None:
    import tvm
    from tvm import s_tir

    sch = s_tir.Schedule(tvm.IRModule())
    with pytest.raises(Exception) as info:
        sch.get_sblock("nope", func_name="main")
    cause = first_cause(info.value)
    assert "nope" in cause.text or "main" in cause.text
    assert "Traceback" not in cause.text and "\n" not in cause.text


def test_long_log_first_cause_is_the_first_failure_not_the_last() -> None:
    noise = "[12/3000] Building CXX object src/foo.cc.o\n" * 3000
    text = noise + (FIXTURES / "missing-header.log").read_text() + noise + \
        (FIXTURES / "cmake-no-cuda-compiler.log").read_text()
    cause = first_cause(text)
    assert cause.line == 3013 and "tk_absent_header.h" in cause.text


def test_unmatched_log_still_names_cause_and_search_terms(tk) -> None:
    log = FIXTURES / "unmatched" / "nvcc-compile-error.log"
    assert not explain(log.read_text())
    r = tk("explain", str(log))
    assert r.returncode == 1
    assert ('first cause (line 1): bad.cu(1): error: identifier "undefined_thing" is '
            "undefined") in r.stdout
    assert "no known failure matches; search for: bad.cu error: identifier is undefined" \
        in r.stdout
    assert "https://github.com/apache/tvm/issues?q=" in r.stdout
    r = tk("explain", str(log), "--json")
    assert r.returncode == 1 and json.loads(r.stdout)["cause"]["search_terms"]


NO_LEGALIZATION = textwrap.dedent('''
    import tvm
    from tvm.script import relax as R

    @tvm.script.ir_module
    class mod:
        @R.function
        def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
            return R.ewise_fma(x, y, x)
''')


def test_unsupported_onnx_operator_is_explained(tk, tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    vec = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [4]) for n in ("x", "y")]
    graph = helper.make_graph([helper.make_node("MyCustomOp", ["x"], ["y"])], "g",
                              vec[:1], vec[1:])
    model = tmp_path / "custom.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    env = {"TK_CACHE": str(tmp_path / "cache")}
    r = tk("run", str(model), env=env)
    assert r.returncode == 1
    assert "explain: ONNX operators the Relax frontend does not convert" in r.stderr
    r = tk("explain", "--last", env=env)
    assert r.returncode == 0 and "frontend ONNX: MyCustomOp" in r.stdout


PLAIN_GPU_KERNEL = textwrap.dedent('''
    from tvm.script import ir as I, relax as R, tirx as T

    @I.ir_module
    class mod:
        @T.prim_func(private=True)
        def scale(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
            {attr}
            for k in {outer}:
                for tx in {inner}:
                    B[k * 256 + tx] = A[k * 256 + tx] * T.float32(2.0)

        @R.function
        def main(x: R.Tensor((1024,), "float32")) -> R.Tensor((1024,), "float32"):
            cls = mod
            return R.call_tir(cls.scale, (x,), R.Tensor((1024,), "float32"))
''')


def test_dlight_failure_names_its_cause_not_the_ir(tk, tmp_path: Path) -> None:
    """Issue 10: this failure was reported as the IR line dlight printed after its message."""
    plain = tmp_path / "plain.py"
    plain.write_text(PLAIN_GPU_KERNEL.format(attr="pass", outer="range(4)", inner="range(256)"))
    r = tk("compile", str(plain), "--target", "cuda -arch=sm_80", "-o", str(tmp_path / "a.so"))
    assert r.returncode == 1
    first = r.stderr.splitlines()[0]
    assert first.endswith("failed: ValueError: The function body is expected to be the root block")
    assert "B[k * 256 + tx]" not in r.stderr
    assert "explain: dlight needs a block-structured PrimFunc" in r.stderr


@pytest.mark.gpu
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="compiling CUDA code needs nvcc")
def test_dlight_rule_fix_compiles(tk, tmp_path: Path) -> None:
    """The fix the rule gives: bind the loops and mark the kernel scheduled."""
    plain = tmp_path / "plain.py"
    plain.write_text(PLAIN_GPU_KERNEL.format(
        attr='T.func_attr({"tirx.is_scheduled": True})',
        outer='T.thread_binding(4, thread="blockIdx.x")',
        inner='T.thread_binding(256, thread="threadIdx.x")'))
    r = tk("compile", str(plain), "--target", "cuda -arch=sm_80", "-o", str(tmp_path / "b.so"))
    assert r.returncode == 0, r.stderr


def test_last_failure_is_explained(tk, tmp_path: Path) -> None:
    env = {"TK_CACHE": str(tmp_path / "cache")}
    r = tk("explain", "--last", env=env)
    assert r.returncode == 2 and "no failed tk command recorded yet" in r.stderr
    workload = tmp_path / "fma.py"
    workload.write_text(NO_LEGALIZATION)
    r = tk("compile", str(workload), "--target", "llvm", env=env)
    assert r.returncode == 1
    # The one-line error is the cause, not the IR the error prints after it.
    assert "CodeGenVM cannot emit this Relax operator directly" in r.stderr
    assert "R.ewise_fma(x, y, x)" not in r.stderr
    r = tk("explain", "--last", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    heading, rest = r.stdout.split("\n", 1)
    assert heading.startswith("the last failure recorded, at ")
    assert heading.endswith(f": $ tk compile {workload} --target llvm")
    assert rest.startswith("first cause (line ")
    assert "src/relax/backend/vm/codegen_vm.cc" in r.stdout
    assert "High-level op reached the VM codegen" in r.stdout
    # Explaining does not replace the failure it explains.
    tk("explain", str(tmp_path / "absent.log"), env=env)
    assert "ewise_fma" in (tmp_path / "cache" / "last-failure.log").read_text()


def _run(cmd: list[str], cwd: Path | None = None) -> str:
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
    return p.stdout + p.stderr


def test_live_target_string_refused() -> None:
    out = _run([sys.executable, "-c", "import tvm; tvm.target.Target('llvm -mcpu=skylake')"])
    f = best(out)
    assert f and f.id == "target-string-refused"
    assert '{"kind": "llvm", "mcpu": "skylake"}' in f.fix


DEVICE_SCRIPT = textwrap.dedent('''
    import ctypes, os, sys, traceback
    import numpy as np, tvm, tvm_ffi
    from tvm.script import tirx as T

    @T.prim_func
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i] + T.float32(1)

    f = tvm.compile(tvm.IRModule({"add_one": add_one}), target="llvm")

    class Dev(ctypes.Structure):
        _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]
    class DType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                    ("lanes", ctypes.c_uint16)]
    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device", Dev), ("ndim", ctypes.c_int32),
                    ("dtype", DType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                    ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]
    class Managed(ctypes.Structure):
        pass
    Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(Managed))
    Managed._fields_ = [("dl_tensor", DLTensor), ("ctx", ctypes.c_void_p), ("deleter", Deleter)]

    # A host buffer that claims to live on cuda:0: what a user passes by forgetting .copyto(dev).
    host = np.zeros(4, dtype="float32")
    shape = (ctypes.c_int64 * 1)(4)
    m = Managed()
    m.dl_tensor = DLTensor(host.ctypes.data, Dev(2, 0), 1, DType(2, 32, 1), shape, None, 0)
    keep = Deleter(lambda p: None)
    m.deleter = keep
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    cap = new(ctypes.addressof(m), b"dltensor", None)

    class OnCuda:
        def __dlpack__(self, **kw):
            return cap
        def __dlpack_device__(self):
            return (2, 0)

    try:
        f["add_one"](tvm_ffi.from_dlpack(OnCuda()), tvm.runtime.tensor(np.zeros(4, "float32")))
    except Exception:
        traceback.print_exc()
    sys.stderr.flush()
    os._exit(0)  # the fake capsule must not be released by the interpreter
''')


@pytest.mark.slow
def test_live_device_type_mismatch(tmp_path: Path) -> None:
    script = tmp_path / "dev.py"
    script.write_text(DEVICE_SCRIPT)
    f = best(_run([sys.executable, str(script)]))
    assert f and f.id == "device-type-mismatch" and "A" in f.cause


@pytest.mark.gpu
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_live_ptxas(tmp_path: Path) -> None:
    (tmp_path / "smem.cu").write_text(
        "__global__ void big(float* o) { __shared__ float b[20000]; b[threadIdx.x] = o[0];"
        " __syncthreads(); o[threadIdx.x] = b[threadIdx.x + 1]; }\n")
    (tmp_path / "tma.cu").write_text(
        '__global__ void k(float* o) { asm volatile("cp.async.bulk.tensor.1d.shared::cluster'
        '.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];" :: "r"(0), '
        '"l"(o), "r"(0), "r"(0)); }\n')
    smem = _run(["nvcc", "-arch=sm_80", "-c", "smem.cu", "-o", "smem.o"], cwd=tmp_path)
    assert best(smem).id == "too-much-shared-data"
    tma = _run(["nvcc", "-arch=sm_80", "-c", "tma.cu", "-o", "tma.o"], cwd=tmp_path)
    f = best(tma)
    assert f.id == "ptxas-error" and "sm_90" in f.fix


def _cmake_project(tmp_path: Path, body: str, extra: dict[str, str] | None = None) -> str:
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(body)
    for name, text in (extra or {}).items():
        (src / name).write_text(text)
    return _run(["cmake", "-S", str(src), "-B", str(tmp_path / "build")])


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_live_cmake_too_old(tmp_path: Path) -> None:
    out = _cmake_project(tmp_path, "cmake_minimum_required(VERSION 99.0)\nproject(x NONE)\n")
    f = best(out)
    assert f.id == "cmake-too-old" and f.groups["need"] == "99.0"


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_live_zstd_not_found(tmp_path: Path) -> None:
    finder = ("find_library(zstd_LIBRARY NAMES zstd_tk_absent)\n"
              "find_path(zstd_INCLUDE_DIR NAMES zstd_tk_absent.h)\n"
              "include(FindPackageHandleStandardArgs)\n"
              "find_package_handle_standard_args(zstd REQUIRED_VARS zstd_LIBRARY "
              "zstd_INCLUDE_DIR)\n")
    out = _cmake_project(tmp_path, "cmake_minimum_required(VERSION 3.20)\nproject(z NONE)\n"
                         "list(APPEND CMAKE_MODULE_PATH ${CMAKE_CURRENT_SOURCE_DIR})\n"
                         "find_package(zstd REQUIRED)\n", {"Findzstd.cmake": finder})
    assert best(out).id == "zstd-not-found"


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_live_llvm_too_old_from_the_wheels_find_llvm(tmp_path: Path) -> None:
    import tvm

    utils = Path(tvm.__file__).parent / "cmake" / "utils"
    if not (utils / "FindLLVM.cmake").exists():
        pytest.skip("this TVM ships no FindLLVM.cmake")
    fake = tmp_path / "llvm-config"
    fake.write_text("#!/bin/sh\ncase \"$1\" in\n --version) echo 14.0.6;;\n"
                    " --prefix) echo /usr/lib/llvm-14;;\n --libdir) echo /usr/lib/llvm-14/lib;;\n"
                    " --targets-built) echo X86;;\n *) echo;;\nesac\n")
    fake.chmod(0o755)
    out = _cmake_project(tmp_path, f"cmake_minimum_required(VERSION 3.18)\nproject(l NONE)\n"
                         f"include({utils}/Utils.cmake)\ninclude({utils}/FindLLVM.cmake)\n"
                         f"find_llvm(\"{fake}\")\n")
    assert best(out).id == "llvm-too-old"


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_live_undefined_tvm_ffi_symbol(tmp_path: Path) -> None:
    (tmp_path / "u.cc").write_text(
        "namespace tvm { namespace ffi { struct Any; void ReprPrint(const Any&); } }\n"
        "void tk_probe(const tvm::ffi::Any& a) { tvm::ffi::ReprPrint(a); }\n")
    lib = tmp_path / "libtvm_runtime.so"
    subprocess.run(["g++", "-shared", "-fPIC", "u.cc", "-o", str(lib)], cwd=tmp_path, check=True)
    out = _run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(lib)!r})"])
    f = best(out)
    assert f.id == "undefined-tvm-ffi-symbol" and "ReprPrint" in f.cause


def test_line_numbers_in_a_long_build_log() -> None:
    noise = "[12/3000] Building CXX object src/foo.cc.o\n" * 5000
    text = noise + (FIXTURES / "ptxas-error.log").read_text() + noise + \
        (FIXTURES / "llvm-too-old.log").read_text()
    found: dict[str, object] = {}
    for f in explain(text):
        found.setdefault(f.id, f)
    assert found["ptxas-error"].line == 5001 and found["ptxas-error"].also_lines == [
        5002, 5003, 5004]
    llvm_line = next(i for i, ln in enumerate(text.splitlines(), 1) if "TVM requires LLVM" in ln)
    assert found["llvm-too-old"].line == llvm_line


def test_a_long_run_of_spaces_is_read_in_linear_time() -> None:
    """160k spaces before a word took 12 s (400k: 73 s): the IR-echo pattern backtracked through
    the run of spaces once per space. 1.6M spaces would take about 20 minutes that way; read in
    linear time it is milliseconds, so this bound only catches the quadratic shape."""
    code = ("import sys; from toolkit.explain import explain, first_cause; "
            "t = ' ' * 1_600_000 + 'x\\n'; explain(t); first_cause(t); print('ok')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).resolve().parent.parent)
    assert proc.stdout.strip() == "ok", proc.stderr


def test_a_typo_in_the_users_own_file_is_not_blamed_on_the_toolchain() -> None:
    """A compile error in a user's ``src/my_pass.cc`` was answered "does not compile against
    the headers found ... a compiler TVM supports": the rule is for TVM's own sources."""
    log = ("/home/u/ext/src/my_pass.cc:12:10: error: 'retrun' was not declared in this scope\n"
           "   12 |   return retrun mod;\n")
    assert not [f for f in explain(log) if f.id == "tvm-source-compile-error"]
    theirs = log.replace("ext/src/my_pass.cc", "tvm/src/relax/transform/legalize_ops.cc")
    assert [f for f in explain(theirs) if f.id == "tvm-source-compile-error"]


# Toolchain versions: what a message of an older CMake / nvcc / TVM helper names. The samples
# are real output; these put another name of the tables into the same wording.
def _sample(name: str) -> str:
    return (FIXTURES / f"{name}.log").read_text()


def _cause(log: str, rule: str) -> str:
    [f] = [f for f in explain(log) if f.id == rule]
    return f"{f.cause} {f.fix}"


def test_unknown_cmake_command_names_the_cmake_that_added_it() -> None:
    log = _sample("cmake-unknown-command").replace("cmake_pkg_config", "cmake_path")
    said = _cause(log, "cmake-unknown-command")
    assert "CMake 3.20" in said and "v0.15.0" in said and "cmake>=3.20" in said
    unknown = _cause(log.replace("cmake_path", "tk_no_such_command"), "cmake-unknown-command")
    assert "3.20" not in unknown and "tk_no_such_command" in unknown


def test_invalid_language_standard_names_the_cmake_that_accepts_it() -> None:
    log = _sample("cmake-invalid-standard").replace("CXX_STANDARD is set to invalid value '29'",
                                                    "CUDA_STANDARD is set to invalid value '17'")
    said = _cause(log, "cmake-invalid-standard")
    assert "CMake 3.18" in said and "v0.10.0" in said
    assert "3.18" not in _cause(_sample("cmake-invalid-standard"), "cmake-invalid-standard")


def test_unknown_nvcc_option_names_the_cuda_that_has_it() -> None:
    log = _sample("nvcc-unknown-option").replace("'--tk-no-such-option'", "'-extended-lambda'")
    said = _cause(log, "nvcc-unknown-option")
    assert "CUDA 10.2" in said and "--expt-extended-lambda" in said
    value = _sample("nvcc-unknown-option--value").replace("c++29", "c++20")
    assert "CUDA 12.0" in _cause(value, "nvcc-unknown-option")
    assert "CUDA 1" not in _cause(_sample("nvcc-unknown-option"), "nvcc-unknown-option")


def test_find_lld_listing_a_directory_is_tvm_v0_16s_bug() -> None:
    said = _cause(_sample("tool-candidates-not-found"), "tool-candidates-not-found")
    assert "v0.17.0" in said and "/opt/rocm/llvm/bin/ld.lld" in said
    fixed = _sample("tool-candidates-not-found").replace(", '/opt/rocm/llvm/bin']", "]")
    said = _cause(fixed, "tool-candidates-not-found")
    assert "v0.17.0" not in said and "rocm.py" in said


def test_vulkan_capability_names_the_dtype_and_target_attribute() -> None:
    log = _sample("vulkan-capability-missing").replace("Int64", "Float16").replace(
        "int64", "float16")
    said = _cause(log, "vulkan-capability-missing")
    assert "float16" in said and "supports_float16" in said and "driver" in said


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_live_cmake_command_newer_than_the_cmake_on_path(tmp_path: Path) -> None:
    from toolkit.explain.toolchain import CMAKE_COMMANDS

    have = tuple(int(x) for x in _run(["cmake", "--version"]).split()[2].split(".")[:2])
    newer = [c for c, v in CMAKE_COMMANDS.items() if tuple(map(int, v.split("."))) > have
             and c != "endblock"]
    if not newer:
        pytest.skip(f"cmake {have} knows every command in the table")
    out = _cmake_project(tmp_path, f"cmake_minimum_required(VERSION 3.10)\nproject(x NONE)\n"
                                   f"{newer[0]}(x)\n")
    f = best(out)
    assert f.id == "cmake-unknown-command" and f"CMake {CMAKE_COMMANDS[newer[0]]}" in f.cause


def test_cmake_and_llvm_minimums_name_the_tvm_releases_that_ask_for_them() -> None:
    log = _sample("cmake-too-old").replace("CMake 3.26 or higher", "CMake 3.18 or higher")
    said = _cause(log, "cmake-too-old")
    assert "CMake 3.18" in said and "v0.11.0" in said and "cmake>=3.18" in said
    assert "3rdparty/tvm-ffi" in _cause(_sample("cmake-too-old"), "cmake-too-old")
    old = _sample("llvm-too-old").replace("LLVM 15.0 or higher", "LLVM 4.0 or higher")
    assert "v0.6.0" in _cause(old, "llvm-too-old")
    assert "v0.24.0" in _cause(_sample("llvm-too-old"), "llvm-too-old")


def test_a_language_dialect_names_the_compiler_and_cmake_that_have_it() -> None:
    said = _cause(_sample("cmake-dialect-unsupported"), "cmake-dialect-unsupported")
    assert "GCC 14" in said and "CMake 3.25" in said
    cuda = _sample("cmake-dialect-unsupported").replace('"CXX26"', '"CUDA17"').replace(
        '"GNU"', '"NVIDIA"')
    said = _cause(cuda, "cmake-dialect-unsupported")
    assert "CUDA 11.0" in said and "CMake 3.18" in said and "v0.10.0" in said


def test_no_wheel_names_what_pypi_publishes_for_the_release_and_the_python() -> None:
    from toolkit.explain import toolchain

    table = json.loads((Path(toolchain.__file__).parent.parent / "data" / "explain"
                        / "wheels.json").read_text())
    latest = max((v for v in table["packages"]["apache-tvm"] if "rc" not in v),
                 key=lambda v: [int(x) for x in re.findall(r"\d+", v)])
    sample = _sample("no-wheel-for-this-python").replace("0.27.0", latest)
    f = best(sample)
    assert f.origin == "PyPI wheel table" and f"read {table['fetched']}" in f.cause
    assert "linux-x86_64" in f.cause and "macos-arm64" in f.cause  # the release's wheels
    gone = best(sample.replace(latest, "0.12.0"))
    assert "PyPI no longer lists 0.12.0" in gone.cause and "linux-x86_64" not in gone.cause
    uv = best("  × No solution found when resolving dependencies:\n  ╰─▶ Because all versions of "
              "apache-tvm-ffi have no wheels with a matching Python ABI tag (e.g., `cp36`)\n")
    assert "CPython 3.6 (cp36)" in uv.cause and "none has a wheel it installs" in uv.cause
    assert toolchain._installs_on("cp312 abi3 linux-x86_64", "cp313")
    assert not toolchain._installs_on("cp312 abi3 linux-x86_64", "cp311")
    # a package tk has no table for is not answered from it
    assert best("ERROR: No matching distribution found for numpyy==9.0\n") is None or \
        best("ERROR: No matching distribution found for numpyy==9.0\n").id != "no-wheel-for-this-python"


def test_build_failures_name_flags_linker_and_stale_files() -> None:
    cuda = _sample("cuda-header-not-found").replace("-I/include", "-l/usr/local/cuda/include")
    f = best(cuda)
    assert "-l/usr/local/cuda/include" in f.cause and "/include is" not in f.cause
    assert "cuDNN" in best("x.cc:3:10: fatal error: cudnn.h: No such file or directory\n").cause
    clang = best("clang++: error: invalid linker name in argument '-fuse-ld=mold'\n")
    assert clang.id == "alternative-linker-unsupported" and "USE_ALTERNATIVE_LINKER" in clang.fix
    ninja = best("ninja: error: '../include/tvm/runtime/base.h', needed by "
                 "'CMakeFiles/tvm_objs.dir/src/a.cc.o', missing and no known rule to make it\n")
    assert ninja.id == "stale-dependency-file" and "clean build" in ninja.fix
    # a library target make cannot make is not a stale header
    assert best("make: *** No rule to make target 'libfoo.so', needed by 'all'.  Stop.\n") is None \
        or best("make: *** No rule to make target 'libfoo.so', needed by 'all'.  Stop.\n").id \
        != "stale-dependency-file"


def test_the_cxx11_abi_is_read_from_the_mangled_string() -> None:
    f = best(_sample("cxx11-abi-mismatch"))
    assert "tvm::runtime::Registry::Get" in f.cause and "_GLIBCXX_USE_CXX11_ABI" in f.fix
    new_abi = ("libx.so: undefined symbol: "
               "_ZN3tvm7runtime8Registry3GetERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE\n")
    # the C++11 ABI's string alone proves nothing; beside TensorFlow it is the likely cause
    assert "cxx11-abi-mismatch" not in {x.id for x in explain(new_abi)}
    assert best("import tensorflow as tf\n" + new_abi).id == "cxx11-abi-mismatch"
    # a substitution's number (S3_) is not read as a name's length
    said = best("a.so: undefined symbol: _ZN3tvm7runtime6Module12LoadFromFileERKSsS3_\n").cause
    assert "tvm::runtime::Module::LoadFromFile with" in said


def test_a_type_attribute_registered_twice_names_the_versions_the_log_shows() -> None:
    f = best("apache-tvm-ffi 0.1.12\ntilelang 0.1.11\n" + _sample("ffi-type-attr-registered-twice"))
    assert "apache-tvm-ffi 0.1.12, tilelang 0.1.11" in f.cause
    assert "pip install 'apache-tvm-ffi<0.1.12'" in f.fix
    header = best(_sample("missing-header--clang"))
    assert "engine/runtime_bridge.h" in header.cause and "tvm-ffi" in header.cause


def test_a_vendored_file_make_cannot_make_names_the_submodule() -> None:
    log = ("make: *** No rule to make target '3rdparty/dmlc-core/include/dmlc/logging.h', "
           "needed by 'build/runtime/c_runtime_api.o'.  Stop.\n")
    f = best(log)
    assert f.id == "stale-dependency-file" and "3rdparty/dmlc-core" in f.cause
    assert "git submodule update --init --recursive" in f.fix
    assert "submodule" not in best(_sample("stale-dependency-file")).cause


def test_no_wheel_names_the_platform_the_log_shows() -> None:
    log = "C:\\Users\\u> " + _sample("no-wheel-for-this-python").replace("0.27.0", "0.26.0")
    f = best(log.replace("C:\\Users\\u> ", "(venv) u@mac:~ % uname -m\nx86_64\n% darwin\n"))
    assert "none for macos-x86_64" in f.cause
    # a platform the release has wheels for: no such claim
    assert "none for" not in best(log).cause


def test_a_tvm_ffi_symbol_skew_names_the_versions_the_log_shows() -> None:
    plain = best(_sample("ext-tvm-ffi-skew"))
    assert plain.id == "ext-tvm-ffi-skew" and "the log shows" not in plain.cause
    f = best("$ pip list | grep tvm\napache-tvm-ffi     0.1.15\ntilelang 0.1.8\n"
             + _sample("ext-tvm-ffi-skew"))
    assert "apache-tvm-ffi 0.1.15, tilelang 0.1.8" in f.cause and "downgrade" in f.fix


def test_opencl_error_names_what_the_code_means() -> None:
    f = best((FIXTURES / "opencl-error.log").read_text())
    assert f.id == "opencl-error"
    assert "CL_OUT_OF_RESOURCES (-5)" in f.cause and "work-group" in f.cause
    assert "-device=mali" in f.fix


def test_opencl_code_outside_the_table_keeps_the_generic_answer() -> None:
    text = "InternalError: Check failed: (e == CL_SUCCESS) is false: OpenCL Error, code=-30: " \
           "CL_INVALID_VALUE\n"
    f = best(text)
    assert f.id == "opencl-error"
    assert f.cause == "an OpenCL call of TVM's OpenCL runtime failed."


def test_missing_cc1plus_outranks_nvccs_own_line() -> None:
    f = best((FIXTURES / "cxx-compiler-missing.log").read_text())
    assert f.id == "cxx-compiler-missing"
    assert "g++" in f.fix and "cc1plus" in f.cause


def test_nvrtcs_error_after_pages_of_header_warnings_is_the_cause() -> None:
    """TVM's NVRTC path raises with NVRTC's whole log, which CUDA 13's cuda_fp8.hpp starts with
    dozens of deprecation warnings (as on a lent H200): the cause is ptxas' error at the end,
    not the first warning."""
    warning = ('/usr/local/cuda-13.0/include/cuda_fp8.hpp({n}): warning #1444-D: class "double4" '
               'was declared deprecated ("use double4_16a or double4_32a")\n'
               '  explicit __CUDA_HOSTDEVICE_FP8__ __nv_fp8x4_e5m2(const double4 f) {{\n'
               '                                                        ^\n\n')
    log = ("Traceback (most recent call last):\n"
           '  File "/x/tvm/support/nvcc.py", line 633, in _compile_cuda_nvrtc\n'
           "    raise RuntimeError(f\"NVRTC compilation failed: {log}\")\n"
           "RuntimeError: NVRTC compilation failed:\n" + "".join(
               warning.format(n=1461 + 10 * i) for i in range(30))
           + "ptxas info    : Used 32 registers, used 1 barriers, 262144 bytes smem\n"
           # NVRTC's log buffer, decoded whole, puts a NUL before ptxas' error (on an H200)
           + "\0ptxas error   : Entry function 'stage_kernel' uses too much shared data "
             "(0x40000 bytes, 0x38c00 max)\n\0\0")
    cause = first_cause(log)
    assert cause.definite and "too much shared data" in cause.text, cause.text
    # The same log quoted on the exception's own line, as a one-line message would be.
    cause = first_cause(log.replace("failed:\n", "failed: "))
    assert "too much shared data" in cause.text, cause.text
    # A warning quoted alone is still reported when nothing after it is an error.
    only = "RuntimeError: NVRTC compilation failed: a.cu(3): warning #1444-D: deprecated\n"
    assert "warning #1444-D" in first_cause(only).text


def test_an_intrinsic_no_release_lowers_for_the_backend_says_so_and_which_do() -> None:
    """The backend comes from the codegen the log names; the releases from tk's table of
    TVM's intrinsic rule files (scripts/intrin_rules.py)."""
    log = ('  File "/src/tvm/src/target/source/codegen_cuda.cc", line 1210, in VisitExpr_\n'
           "InternalError: Unresolved call Op(tir.ctpop)\n")
    f = best(log)
    assert f.id == "intrinsic-not-lowered" and f.origin == "intrinsic rule table"
    assert "no TVM release lowers tir.ctpop for the cuda backend" in f.cause
    sample = best((FIXTURES / "intrinsic-not-lowered.log").read_text())
    assert "llvm backend has no lowering for tir.erf" in sample.cause
    assert "from v0.21.0" in sample.cause and "intrin_rule_llvm.cc" in sample.cause
    # An operator no rule file knows is not a missing lowering.
    assert all(f.id != "intrinsic-not-lowered"
               for f in explain("TVMError: unknown intrinsic Op(tir.my_own_op)\n"))


def test_a_scalar_operator_on_a_vector_names_the_operator_and_the_lanes() -> None:
    f = best((FIXTURES / "cuda-vector-operator.log").read_text())
    assert "bitwise complement (~) to an int4" in f.cause and "lane by lane" in f.cause
    scalar = 'k.cu(3): error: no operator "~" matches these operands\n  operand types are: ~ S\n'
    assert all(f.id != "cuda-vector-operator" for f in explain(scalar))


def test_missing_metal_compiler_names_xcode_select() -> None:
    f = best((FIXTURES / "metal-compiler-missing.log").read_text())
    assert f.id == "metal-compiler-missing"
    assert "xcode-select --switch" in f.fix and "Command Line Tools" in f.cause


def test_shared_memory_refusal_is_the_device_limit_not_a_tvm_bug() -> None:
    for name in ("shared-memory-over-device-limit.log",
                 "shared-memory-over-device-limit--metal.log"):
        f = best((FIXTURES / name).read_text())
        assert f.id == "shared-memory-over-device-limit", name
        assert "bigger GPU" in f.cause and "max_shared_memory_per_block" in f.fix


def test_a_std_name_of_a_newer_standard_names_the_standard_and_tvms_history() -> None:
    for name, std in (("cxx-standard-too-old.log", "17"), ("cxx-standard-too-old--gcc.log", "17")):
        f = best((FIXTURES / name).read_text())
        assert f.id == "cxx-standard-too-old", name
        assert f"C++{std}" in f.cause and "C++17 from v0.10.0" in f.cause
        assert f"CMAKE_CXX_STANDARD {std}" in f.fix


def test_a_std_name_in_a_file_that_is_not_tvms_is_left_to_other_rules() -> None:
    text = "/home/u/game/src/main.cc:3:10: error: no template named 'is_same_v' in namespace 'std'\n"
    assert "cxx-standard-too-old" not in {f.id for f in explain(text)}


def test_rust_without_the_target_names_the_rustup_command() -> None:
    f = best((FIXTURES / "rust-target-missing.log").read_text())
    assert f.id == "rust-target-missing"
    assert "rustup target add armv7-linux-androideabi" in f.fix and "`core`" in f.cause
    bare = best("error[E0463]: can't find crate for `std`\n")
    assert bare.id == "rust-target-missing" and "<the target triple>" in bare.fix


def test_apple_platform_mismatch_is_named() -> None:
    f = best((FIXTURES / "apple-platform-mismatch.log").read_text())
    assert f.id == "apple-platform-mismatch" and "simulator" in f.fix


def test_libdl_and_libpthread_symbols_name_their_flags() -> None:
    findings = explain((FIXTURES / "undefined-reference--libdl.log").read_text())
    fixes = {f.excerpt.rsplit(" ", 1)[-1]: f.fix for f in findings if f.id == "undefined-reference"}
    assert "-ldl" in fixes["`dlsym'"] and "-ldl" in fixes["`dlopen'"]
    assert "-pthread" in fixes["`pthread_setaffinity_np'"]


def test_a_traced_graphs_missing_operators_are_not_blamed_on_scripting() -> None:
    log = ("NotImplementedError: The following operators are not implemented: "
           "['aten::grid_sampler', 'aten::bucketize']\n")
    assert "torch-scripted-graph" not in {f.id for f in explain(log)}
    scripted = log.replace("'aten::bucketize'", "'prim::unchecked_cast'")
    found = [f for f in explain(scripted) if f.id == "torch-scripted-graph"]
    assert found and "prim::unchecked_cast" in found[0].cause


def test_a_wrapper_calling_another_librarys_function_is_not_a_header_mismatch() -> None:
    # the C++ function and the missing C symbol belong to two libraries: a missing -l, not
    # headers of another version
    log = ("/usr/bin/ld: app.o: in function `cv::Mat::release()':\n"
           "app.cc:(.text+0x10): undefined reference to `jpeg_read_header'\n")
    assert "header-library-mismatch" not in {f.id for f in explain(log)}


def test_tvmc_option_passed_by_the_user_is_told_from_one_tvmc_filled_in() -> None:
    log = (FIXTURES / "tvmc-codegen-option-without-target.log").read_text()
    found = next(f for f in explain(log) if f.id == "tvmc-codegen-option-without-target")
    assert "USE_ETHOSN" in found.cause and "not on the command line" in found.cause
    passed = log.replace("--output", "--target-ethos-n-variant=n78 --output")
    found = next(f for f in explain(passed) if f.id == "tvmc-codegen-option-without-target")
    assert "the command passes" in found.cause and "add ethos-n to --target" in found.fix
    # no command shown: whether it was passed is not stated
    alone = log.splitlines()[1] + "\n"
    found = next(f for f in explain(alone) if f.id == "tvmc-codegen-option-without-target")
    assert "unless the command passed" in found.cause


def test_a_compiler_symbol_is_blamed_on_the_runtime_only_when_tvm_runtime_links() -> None:
    log = (FIXTURES / "runtime-needs-compiler-symbol.log").read_text()
    found = next(f for f in explain(log) if f.id == "runtime-needs-compiler-symbol")
    assert "src/runtime/opencl" in found.cause and "opencl runtime" in found.cause
    # the same symbol missing in the link of a program of one's own is another failure
    app = log.replace("tvm_runtime", "my_app")
    assert "runtime-needs-compiler-symbol" not in {f.id for f in explain(app)}
    # an object that is no runtime source of TVM's
    other = log.replace("opencl_module.obj", "my_plugin.obj")
    assert "runtime-needs-compiler-symbol" not in {f.id for f in explain(other)}


def test_an_openblas_kernel_missing_from_lapack_names_numpys_blas() -> None:
    log = ("$ python3 -m tvm.exec.rpc_server --port 9091\n"
           "python3: /usr/lib/aarch64-linux-gnu/liblapack.so.3: undefined symbol: "
           "dgetrs_T_parallel\n"
           "python3: /usr/lib/aarch64-linux-gnu/liblapack.so.3: undefined symbol: "
           "zpotrf_U_single\n")
    found = next(f for f in explain(log) if f.id == "undefined-symbol")
    assert "OpenBLAS" in found.cause and "numpy" in found.fix
    other = "python3: /opt/x/libfoo.so: undefined symbol: dgemm_\n"
    assert "OpenBLAS" not in next(f for f in explain(other) if f.id == "undefined-symbol").cause


def test_a_generated_file_that_is_no_cargo_output_is_not_blamed_on_rust() -> None:
    log = (FIXTURES / "cargo-step-not-found.log").read_text()
    other = log.replace("rust/release/libmodel_tokenizer_ffi.a", "gen/kernels_table.cc")
    assert "cargo-step-not-found" not in {f.id for f in explain(other)}
    ran = log.replace("no such file or directory", "error[E0432]: unresolved import `serde`")
    assert "cargo-step-not-found" not in {f.id for f in explain(ran)}


def test_an_unexported_symbol_names_the_dll_and_leaves_tvm_runtimes_own_link_alone() -> None:
    log = (FIXTURES / "msvc-symbol-not-exported.log").read_text()
    found = next(f for f in explain(log) if f.id == "msvc-symbol-not-exported")
    assert "my_relay_ops.dll" in found.cause and "tvm::OpRegEntry" in found.cause
    runtime = (FIXTURES / "runtime-needs-compiler-symbol.log").read_text()
    assert "msvc-symbol-not-exported" not in {f.id for f in explain(runtime)}


def test_prepare_libs_run_by_mlc_llm_package_is_not_called_run_by_hand() -> None:
    log = (FIXTURES / "mlc-prepare-libs-by-hand.log").read_text()
    assert best(log).id == "mlc-prepare-libs-by-hand"
    by_package = log + (
        "Traceback (most recent call last):\n"
        '  File "/opt/venv/lib/python3.11/site-packages/mlc_llm/cli/package.py", line 88, in '
        "build_android_binding\n"
        "    subprocess.run([sys.executable, mlc4j_path / 'prepare_libs.py'], check=True)\n")
    assert "mlc-prepare-libs-by-hand" not in {f.id for f in explain(by_package)}


def test_a_windows_path_read_as_escapes_by_cmake_names_where_the_path_came_from() -> None:
    def escape(path: str, where: str = "CMakeLists.txt:4 (list)") -> str:
        return (f"CMake Error at {where}:\n  Syntax error in cmake code at\n\n    x:4\n\n"
                f"  when parsing string\n\n    {path}\n\n  Invalid character escape "
                f"'\\{path.split(chr(92))[1][0]}'.\n")

    # LLVM's package folder: TVM's FindLLVM read `llvm-config --cmakedir` raw before v0.15.0
    f = best(escape(r"D:\conda\Library\lib\cmake\llvm", "cmake/utils/FindLLVM.cmake:120 (list)"))
    assert f.id == "cmake-windows-path-escape"
    assert "llvm-config --cmakedir" in f.cause and "v0.15.0" in f.fix
    assert r"`\D`" not in f.cause and r"`\c`" in f.cause  # the escape CMake names: \conda
    # any other path: the generic answer, no claim about where it came from
    f = best(escape(r"C:\Users\me\build"))
    assert "FindLLVM" not in f.cause and "TVM_SOURCE_DIR" not in f.cause
    assert "forward slashes" in f.fix


def _top_alternatives(regex: str) -> list[str]:
    """The alternatives of ``regex`` at its top level (outside groups and classes)."""
    out, depth, cur, i = [], 0, "", 0
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            cur, i = cur + regex[i:i + 2], i + 2
            continue
        if c == "[":
            end = regex.index("]", i + 2)
            cur, i = cur + regex[i:end + 1], end + 1
            continue
        depth += (c == "(") - (c == ")")
        if c == "|" and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    return [*out, cur]


def test_every_alternative_of_a_rule_holds_one_of_its_needles() -> None:
    """A rule is tried only where a needle occurs, so an alternative of its pattern that holds
    none can never fire (cuda-no-binary's runtime-API words, once). Alternatives with a
    character class are not read here."""
    for rule in RULES:
        for alt in _top_alternatives(rule.regex):
            if "[" in alt:
                continue
            bare = re.sub(r"(?<!\\)\(\?(?:P<\w+>|:)|(?<!\\)[()?+*]", "", alt)  # groups, quantifiers
            literal = re.sub(r"\\(.)", r"\1", bare)
            assert any(n in literal for n in rule.needles()), (rule.id, alt)


def test_a_system_library_a_link_names_is_a_package_installed_without_it() -> None:
    # GNU make in Chinese (apt.llvm.org's LLVM 18 without libpolly-18-dev)
    zh = "make[2]: *** 没有规则可制作目标“/usr/lib/llvm-18/lib/libPolly.a”，由“libtvm.so” 需求。 停止。\n"
    f = best(zh)
    assert f.id == "installed-library-missing" and "libpolly-18-dev" in f.fix
    # a library in the build tree is one no target built first, not a package's
    tree = "make[2]: *** No rule to make target 'host_crt/libcommon.a', needed by 'libtvm.so'.\n"
    assert best(tree).id == "make-library-not-built-first"
    other = "make: *** No rule to make target '/usr/lib/x86_64-linux-gnu/libz3.so', needed by 'a'.\n"
    f = best(other)
    assert f.id == "installed-library-missing" and "apt-file search libz3.so" in f.fix


def test_a_path_split_at_a_space_is_named_only_where_the_log_shows_it_whole() -> None:
    # coreutils 8's wording (CentOS 7), the path with its space shown above it
    log = ("libtool: install: /usr/bin/install -c .libs/libbacktrace.lai /w/b/build-GCC 9.3.1/"
           "libbacktrace/lib/libbacktrace.la\n/usr/bin/install: target '9.3.1/libbacktrace/lib/"
           "libbacktrace.la' is not a directory\n")
    f = best(log)
    assert f.id == "space-in-build-path" and "'build-GCC 9.3.1'" in f.cause
    assert "libbacktrace" in f.cause and "build-GCC-9.3.1" in f.fix
    # a target that is no tail of a spaced path is another failure
    plain = "/usr/bin/install: target 'lib/x' is not a directory\n"
    assert "space-in-build-path" not in {f.id for f in explain(plain)}


def test_a_finalizer_at_interpreter_exit_names_the_module_torn_down() -> None:
    # Disco's process pool at exit (apache/tvm#16752): psutil gone from sys.modules
    log = ("Exception ignored in: <function DiscoPopenWorker.__del__ at 0x7f2c922bfe20>\n"
           "Traceback (most recent call last):\n"
           '  File "/t/python/tvm/runtime/disco/process_pool.py", line 67, in __del__\n'
           '  File "/e/site-packages/psutil/_common.py", line 864, in get_procfs_path\n'
           "KeyError: 'psutil'\n")
    f = best(log)
    assert f.id == "finalizer-at-interpreter-exit" and "DiscoPopenWorker.__del__" in f.cause
    assert "module 'psutil' was already removed" in f.cause and "import psutil lazily" in f.fix
    # a KeyError that no finalizer at exit printed is another failure
    assert "finalizer-at-interpreter-exit" not in {f.id for f in explain("KeyError: 'psutil'\n")}


def test_a_name_tilelang_templates_lack_or_cuda_lacks_names_the_release() -> None:
    # __nv_fp8_e8m0 came with CUDA 12.8; TileLang guards it from v0.1.7.post2 (its cuda_fp8.h)
    f = best('k.cu(12): error: identifier "__nv_fp8_e8m0" is undefined\n')
    assert f.id == "tilelang-template-name"
    assert "CUDA 12.8" in f.cause and "TileLang v0.1.7.post2 or newer" in f.fix
    # a name TVM's own CUDA printer writes is TVM's unless the log names TileLang
    assert "tilelang-template-name" not in {
        g.id for g in explain('k.cu(3): error: identifier "fp8_e4_t" is undefined\n')}
    # a name no TileLang release's templates declare stays the codegen answer
    assert "tilelang-template-name" not in {
        g.id for g in explain('k.cu(3): error: identifier "nothing_such_x" is undefined\n')}


def test_a_float_stored_into_a_narrow_float_names_the_promotion_and_a_wide_store_does_not() -> None:
    f = best('no operator "=" matches these operands / operand types are: fp8_e4_t = float\n')
    assert f.id == "device-low-precision-store" and "no fp8_e4_t overload" in f.cause
    # a store between two ordinary types is another failure
    other = 'no operator "=" matches these operands / operand types are: Foo = float\n'
    assert "device-low-precision-store" not in {g.id for g in explain(other)}


def test_a_name_no_printer_writes_is_said_not_to_exist_in_the_kernel_headers() -> None:
    f = best('/tmp/tmpts7207id.cu(44): error: identifier "__dfadd_rn" is undefined\n')
    assert f.id == "device-compiler-rejects-generated-source"
    assert "`__dfadd_rn` does not exist in the headers the kernel includes" in f.cause


def test_a_tensor_intrinsic_not_registered_names_the_package_that_registers_it() -> None:
    f = best("ValueError: TensorIntrin 'dot_4x4_i8i8s32_sdot' is not registered\n")
    assert f.id == "tensor-intrin-not-registered"
    assert "tvm.tir.tensor_intrin (v0.9.0–v0.23.0)" in f.cause and "v0.24.0–main" in f.cause
    assert f.fix.startswith("import tvm.s_tir.tensor_intrin")
    # (the claim that `import tvm` leaves it out is TVM's history's: no release loads it)
    from toolkit.explain.history import api

    assert not api().get("B", "tvm.s_tir.tensor_intrin") and not api().get(
        "B", "tvm.tir.tensor_intrin")


def test_a_package_llvm_links_is_named_as_llvms_dependency() -> None:
    # TVM's FindLLVM says "LLVM links against zlib" before find_package(ZLIB) fails
    f = best((FIXTURES / "cmake-package-not-found--llvm-zlib.log").read_text())
    assert f.id == "cmake-package-not-found"
    assert "FindLLVM" in f.cause and "links ZLIB" in f.cause and "zlib1g-dev" in f.fix
    # the same failure of a package TVM's own CMake asks for says nothing of LLVM
    plain = best("CMake Error at /usr/share/cmake-3.25/Modules/FindPackageHandleStandardArgs.cmake"
                 ":230 (message):\n  Could NOT find ZLIB (missing: ZLIB_LIBRARY ZLIB_INCLUDE_DIR)\n")
    assert plain.id == "cmake-package-not-found" and "LLVM" not in plain.cause


def test_a_browser_global_is_named_only_where_nodejs_ran_and_a_wasm_import_is_demangled():
    node = (FIXTURES / "browser-library-in-node.log").read_text()
    [f] = [f for f in explain(node) if f.id == "browser-library-in-node"]
    assert "`globalThis.location` is undefined" in f.cause and "Node.js" in f.cause
    # the same TypeError in a browser's console (no "Node.js vNN" under it) is another failure
    assert "browser-library-in-node" not in {f.id for f in explain(node.replace("Node.js v", ""))}
    # Chrome's wording of a wasm import nothing provides; the symbol demangled whole
    chrome = ('LinkError: WebAssembly.instantiate(): Import #4 "env" "_ZN3mlc3llm5serve16JSONSchem'
              'aToEBNFENSt3__212basic_stringIcEE": function import requires a callable\n')
    [w] = [f for f in explain(chrome) if f.id == "wasm-import-unresolved"]
    assert "mlc::llm::serve::JSONSchemaToEBNF" in w.cause and "JSONSchemaToEBNF" in w.fix


def test_a_tree_compile_error_of_an_override_or_a_deduction_names_submodules_or_compiler():
    # g++ 12's words here (ov.cc: a 'final'/'override' of a non-virtual base function, and a
    # class template whose arguments cannot be deduced), as if in a TVM tree's file
    for said in ("‘void A::Visit(int)’ marked ‘final’, but is not virtual",
                 "‘void B::Visit(int)’ marked ‘override’, but does not override",
                 "only virtual member functions can be marked 'final'"):
        [f] = [f for f in explain(f"/src/tvm/src/api/dsl_api.cc:3:24: error: {said}\n")
               if f.id == "tvm-source-compile-error"]
        assert "submodules are older than this tree" in f.cause and "submodule update" in f.fix
    for said in ("class template argument deduction failed:",
                 "no viable constructor or deduction guide for deduction of template arguments "
                 "of 'Array'"):
        [f] = [f for f in explain(f"/tvm/src/tir/analysis/identify_memcpy.cc:298:27: error: "
                                  f"{said}\n") if f.id == "tvm-source-compile-error"]
        assert "older compiler" in f.cause and "upgrade the compiler" in f.fix


def test_an_assert_printed_into_a_device_kernel_is_named_as_host_code():
    # nvcc on a kernel whose assert CodeGenC printed with tvm-ffi's host error call (v0.24.0 on)
    [f] = [f for f in explain('error: identifier "TVMFFIErrorSetRaisedFromCStrParts" is '
                              'undefined\n') if f.id == "device-compiler-rejects-generated-source"]
    assert "AssertStmtNode" in f.cause and "host-only" in f.cause and "device_assert" in f.fix


def test_a_tvm_file_that_names_a_name_of_its_own_release_unqualified_is_tvms_bug():
    log = ("tvm/include/tvm/build_module.h:434:29: error: use of undeclared identifier "
           "'TVMArgsSetter'\n")
    [f] = [f for f in explain(log) if f.id == "tvm-source-compile-error"]
    assert "in namespace tvm::runtime" in f.cause and "(v0.2–v0.6.0) names it unqualified" \
        in f.cause and "tvm::runtime::TVMArgsSetter" in f.fix


def test_a_tensorrt_10_build_of_tvms_tensorrt_runtime_names_the_release_written_for_it():
    log = ("src/runtime/contrib/tensorrt/tensorrt_builder.cc:61:15: error: 'class "
           "nvinfer1::IBuilder' has no member named 'setMaxBatchSize'\n")
    [f] = [f for f in explain(log) if f.id == "tvm-source-compile-error"]
    assert "against this TensorRT" in f.cause and "TensorRT 8" in f.fix and "v0.25.0" in f.fix
