"""__NAME__'s code generator: the device functions of a compile, as C.

TVM hands the PrimFuncs it split off for the device (``SplitHostDevice``: here the whole body
of each function, which ``target.tir_pipeline`` marks as device code) to the global function
``target.build.<kind>``. This one prints them as C, adds for each a packed-function entry
(``__tvm_ffi_<name>``, the symbol the host code's ``TVMBackendGetFuncFromEnv`` looks up),
compiles that into a shared object and hands both to the device module
(src/device_module.cc), which the host module imports. Its kernels run on the memory
``device_api.ext_dev`` (src/device_api.cc) handed out.

It prints the statements and expressions TVM's default lowering leaves in a scalar device
function (loops, loads, stores, arithmetic, math calls); anything else stops the compile with
``UnsupportedNode`` naming what to add here. In-tree, this is a ``CodeGenC`` subclass in
``src/target/source/`` and its ``target.build.<kind>``.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import tempfile
from pathlib import Path

import tvm
import tvm_ffi
import tvm_ffi.libinfo
from tvm import tirx

KIND = "ext_dev"  # the target kind this codegen builds for (see target.py for why ext_dev)

C_TYPES = {"float32": "float", "float64": "double", "bool": "bool", "int8": "int8_t",
           "int16": "int16_t", "int32": "int32_t", "int64": "int64_t", "uint8": "uint8_t",
           "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t"}
BINARY = {tirx.Add: "+", tirx.Sub: "-", tirx.Mul: "*", tirx.EQ: "==", tirx.NE: "!=",
          tirx.LT: "<", tirx.LE: "<=", tirx.GT: ">", tirx.GE: ">=", tirx.And: "&&",
          tirx.Or: "||"}
# TIR math ops -> the C math function (float32 gets the f-suffixed one).
MATH = {name: name for name in ("exp", "exp2", "log", "log2", "log10", "sqrt", "tanh", "sin",
                                "cos", "tan", "erf", "floor", "ceil", "round", "trunc", "pow",
                                "fabs", "fmod", "atan", "atan2", "asin", "acos")}
MATH["nearbyint"] = "nearbyint"
PRELUDE = """\
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "tvm/ffi/c_api.h"

static inline int64_t __NAME___floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t __NAME___floormod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
"""


class UnsupportedNode(ValueError):
    """A TIR node this code generator does not print yet."""


def dtype_of(node) -> str:
    """The element dtype of an expression or a variable (pointers: what they point to)."""
    ty = node.ty
    if hasattr(ty, "element_type"):  # a pointer
        ty = ty.element_type
    return str(ty.dtype)


def c_type(dtype: str) -> str:
    if dtype not in C_TYPES:
        raise UnsupportedNode(f"dtype {dtype} (this codegen prints {', '.join(C_TYPES)})")
    return C_TYPES[dtype]


class FunctionPrinter:
    """Prints one device PrimFunc as a C function returning 0 (or -1 after an assert)."""

    def __init__(self, name: str, func: tirx.PrimFunc) -> None:
        self.name = name
        self.func = func
        self.names: dict = {}  # Var -> C identifier
        self.used: set[str] = set()
        self.pointers: dict = {}  # buffer Var -> the C pointer (or array) holding its data
        self.lines: list[str] = []
        self.indent = 1

    def ident(self, var) -> str:
        if var not in self.names:
            base = re.sub(r"\W", "_", str(var.name)) or "v"
            base = base if not base[0].isdigit() else "v" + base
            name, n = base, 1
            while name in self.used:
                n += 1
                name = f"{base}_{n}"
            self.used.add(name)
            self.names[var] = name
        return self.names[var]

    def param(self, var) -> str:
        if hasattr(var.ty, "element_type"):
            return f"{c_type(dtype_of(var))}* __restrict__ {self.ident(var)}"
        return f"{c_type(dtype_of(var))} {self.ident(var)}"

    def print(self) -> str:
        params = ", ".join(self.param(p) for p in self.func.params) or "void"
        self.stmt(self.func.body)
        body = "\n".join(self.lines)
        return f"static int32_t {self.name}_body({params}) {{\n{body}\n  return 0;\n}}\n"

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.indent + line)

    def block(self, stmt) -> None:
        self.indent += 1
        self.stmt(stmt)
        self.indent -= 1

    def stmt(self, s) -> None:  # noqa: C901 - one branch per statement kind, as CodeGenC has
        if isinstance(s, tirx.SeqStmt):
            for part in s.seq:
                self.stmt(part)
        elif isinstance(s, tirx.DeclBuffer):
            self.pointers[s.buffer] = self.expr(s.data)
        elif isinstance(s, tirx.AllocBuffer):
            shape = [int(d) for d in s.buffer.ty.shape]
            name = self.ident(s.buffer)
            self.emit(f"{c_type(str(s.buffer.ty.dtype))} {name}[{math.prod(shape)}];")
            self.pointers[s.buffer] = name
        elif isinstance(s, tirx.AttrStmt):
            self.stmt(s.body)  # device_scope and pragmas: no code of their own
        elif isinstance(s, tirx.For):
            v, lo = self.ident(s.loop_var), self.expr(s.min)
            step = f"{v} += {self.expr(s.step)}" if s.step is not None else f"++{v}"
            self.emit(f"for ({c_type(dtype_of(s.loop_var))} {v} = {lo}; "
                      f"{v} < {lo} + {self.expr(s.extent)}; {step}) {{")
            self.block(s.body)
            self.emit("}")
        elif isinstance(s, tirx.While):
            self.emit(f"while ({self.expr(s.condition)}) {{")
            self.block(s.body)
            self.emit("}")
        elif isinstance(s, (tirx.Bind, tirx.LetStmt)):
            self.emit(f"{c_type(dtype_of(s.var))} {self.ident(s.var)} = {self.expr(s.value)};")
        elif isinstance(s, tirx.IfThenElse):
            self.emit(f"if ({self.expr(s.condition)}) {{")
            self.block(s.then_case)
            if s.else_case is not None:
                self.emit("} else {")
                self.block(s.else_case)
            self.emit("}")
        elif isinstance(s, tirx.BufferStore):
            self.emit(f"{self.element(s.buffer, s.indices)} = {self.expr(s.value)};")
        elif isinstance(s, tirx.Evaluate):
            if not isinstance(s.value, tirx.IntImm):
                self.emit(f"{self.expr(s.value)};")
        elif isinstance(s, tirx.AssertStmt):
            message = "".join(str(p.value) for p in s.message_parts).replace('"', "'")
            self.emit(f"if (!({self.expr(s.condition)})) {{ "
                      f"TVMFFIErrorSetRaisedFromCStr(\"{s.kind.value}\", \"{message}\"); "
                      "return -1; }")
        elif isinstance(s, tirx.Break):
            self.emit("break;")
        elif isinstance(s, tirx.Continue):
            self.emit("continue;")
        else:
            raise UnsupportedNode(f"statement {type(s).__name__} in {self.name}")

    def element(self, buffer, indices) -> str:
        if buffer not in self.pointers:
            raise UnsupportedNode(f"buffer {buffer.name} used without a DeclBuffer/AllocBuffer")
        if len(indices) != 1:
            raise UnsupportedNode(f"{len(indices)}-d access to {buffer.name} (expects flattened "
                                  "buffers: FlattenBuffer runs in the TIR pipeline)")
        return f"{self.pointers[buffer]}[{self.expr(indices[0])}]"

    def expr(self, e) -> str:  # noqa: C901 - one branch per expression kind
        if isinstance(e, tirx.IntImm):
            dtype = dtype_of(e)
            if dtype == "bool":
                return "true" if e.value else "false"
            return f"INT64_C({e.value})" if dtype in ("int64", "uint64") else str(e.value)
        if isinstance(e, tirx.FloatImm):
            return self.float_literal(float(e.value), dtype_of(e))
        if isinstance(e, tvm.ir.Var):
            return self.ident(e)
        if isinstance(e, tvm.ir.TensorLoad):
            return self.element(e.source, e.indices)
        op = BINARY.get(type(e))
        if op is not None:
            return f"({self.expr(e.a)} {op} {self.expr(e.b)})"
        if isinstance(e, (tirx.Div, tirx.Mod)):
            a, b = self.expr(e.a), self.expr(e.b)
            if isinstance(e, tirx.Mod) and dtype_of(e).startswith("float"):
                return f"{self.math('fmod', dtype_of(e))}({a}, {b})"
            return f"({a} {'/' if isinstance(e, tirx.Div) else '%'} {b})"
        if isinstance(e, (tirx.FloorDiv, tirx.FloorMod)):
            a, b, dtype = self.expr(e.a), self.expr(e.b), dtype_of(e)
            if dtype.startswith("float"):
                q = f"{self.math('floor', dtype)}({a} / {b})"
                return q if isinstance(e, tirx.FloorDiv) else f"({a} - {q} * {b})"
            helper = "floordiv" if isinstance(e, tirx.FloorDiv) else "floormod"
            return f"(({c_type(dtype)})__NAME___{helper}({a}, {b}))"
        if isinstance(e, (tirx.Min, tirx.Max)):
            a, b = self.expr(e.a), self.expr(e.b)
            return f"(({a}) {'<' if isinstance(e, tirx.Min) else '>'} ({b}) ? ({a}) : ({b}))"
        if isinstance(e, tirx.Not):
            return f"(!{self.expr(e.a)})"
        if isinstance(e, tirx.Select):
            return (f"({self.expr(e.condition)} ? {self.expr(e.true_value)} : "
                    f"{self.expr(e.false_value)})")
        if isinstance(e, tirx.Cast):
            return f"(({c_type(dtype_of(e))})({self.expr(e.value)}))"
        if isinstance(e, tvm.ir.Call):
            return self.call(e)
        raise UnsupportedNode(f"expression {type(e).__name__} in {self.name}: {e}")

    def call(self, e) -> str:
        name = str(e.op.name) if hasattr(e.op, "name") else str(e.op)
        short = name.rsplit(".", 1)[-1]  # tirx.exp, prim.if_then_else
        if short == "buffer_data":  # a buffer's data pointer: what holds it here
            if e.args[0] not in self.pointers:
                raise UnsupportedNode(f"data of buffer {e.args[0].name}, not declared here")
            return self.pointers[e.args[0]]
        args = [self.expr(a) for a in e.args if not isinstance(a, tvm.ir.StringImm)]
        if short in MATH:
            return f"{self.math(MATH[short], dtype_of(e))}({', '.join(args)})"
        if short == "rsqrt":
            return f"(1 / {self.math('sqrt', dtype_of(e))}({args[0]}))"
        if short == "sigmoid":
            return f"(1 / (1 + {self.math('exp', dtype_of(e))}(-{args[0]})))"
        if short in ("call_pure_extern", "call_extern"):
            return f"{e.args[0].value}({', '.join(args)})"
        if short == "if_then_else":
            return f"({args[0]} ? {args[1]} : {args[2]})"
        if short == "likely":
            return args[0]
        raise UnsupportedNode(f"call to {name} in {self.name}")

    @staticmethod
    def math(fn: str, dtype: str) -> str:
        return fn + "f" if dtype == "float32" else fn

    @staticmethod
    def float_literal(value: float, dtype: str) -> str:
        if math.isnan(value):
            return "NAN"
        if math.isinf(value):
            return "INFINITY" if value > 0 else "(-INFINITY)"
        return repr(value) + ("f" if dtype == "float32" else "")


def packed_entry(name: str, func: tirx.PrimFunc) -> str:
    """``__tvm_ffi_<name>``: unpack the host's packed call (data pointers, scalars) and run."""
    checks, values = [], []
    for i, p in enumerate(func.params):
        if hasattr(p.ty, "element_type"):
            allowed, value = "kTVMFFIOpaquePtr", f"({c_type(dtype_of(p))}*)a[{i}].v_ptr"
            ok = f"a[{i}].type_index == kTVMFFIOpaquePtr || a[{i}].type_index == kTVMFFINone"
        elif dtype_of(p).startswith("float"):
            allowed, value = "kTVMFFIFloat", f"({c_type(dtype_of(p))})a[{i}].v_float64"
            ok = f"a[{i}].type_index == kTVMFFIFloat"
        else:
            allowed, value = "kTVMFFIInt", f"({c_type(dtype_of(p))})a[{i}].v_int64"
            ok = f"a[{i}].type_index == kTVMFFIInt || a[{i}].type_index == kTVMFFIBool"
        checks.append(f"  if (!({ok})) {{ TVMFFIErrorSetRaisedFromCStr(\"TypeError\", "
                      f"\"{name}: argument {i} is not a {allowed}\"); return -1; }}")
        values.append(value)
    n = len(func.params)
    return "\n".join([
        f"int32_t __tvm_ffi_{name}(void* self, void* args, int32_t num_args, void* result) {{",
        "  const TVMFFIAny* a = (const TVMFFIAny*)args;",
        f"  if (num_args != {n}) {{ TVMFFIErrorSetRaisedFromCStr(\"TypeError\", "
        f"\"{name}: expects {n} arguments\"); return -1; }}",
        *checks,
        f"  return {name}_body({', '.join(values)});",
        "}",
        "",
    ])


def emit_c(mod: tvm.IRModule) -> tuple[str, list[str]]:
    """The C source of every device function in ``mod``, and their names."""
    parts, names = [PRELUDE], []
    for gv, func in sorted(mod.functions.items(), key=lambda kv: kv[0].name_hint):
        name = str(func.attrs["global_symbol"]) if "global_symbol" in func.attrs \
            else gv.name_hint
        parts.append(FunctionPrinter(name, func).print())
        parts.append(packed_entry(name, func))
        names.append(name)
    return "\n".join(parts), names


def compile_shared(code: str, directory: Path) -> Path:
    """Compile the device C into a shared object with the host's C compiler ($CC, else cc)."""
    source, library = directory / "kernels.c", directory / "kernels.so"
    source.write_text(code)
    command = [os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O2", "-std=gnu11",
               f"-I{tvm_ffi.libinfo.find_include_path()}", "-o", str(library), str(source),
               "-lm"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        first = next((line for line in done.stderr.splitlines() if "error" in line),
                     done.stderr.strip()[:500])
        raise RuntimeError(f"__NAME__: compiling the generated C failed: {first}")
    return library


@tvm_ffi.register_global_func(f"target.build.{KIND}")
def build(mod: tvm.IRModule, target: tvm.target.Target) -> tvm.runtime.Module:
    """``target.build.ext_dev``: the device functions printed as C and compiled, as the
    device module (src/device_module.cc) the host module imports. When ``__NAME___DUMP``
    names a directory, the C is also written there."""
    code, _ = emit_c(mod)
    dump = os.environ.get("__NAME___DUMP")
    if dump:
        Path(dump).mkdir(parents=True, exist_ok=True)
        (Path(dump) / "kernels.c").write_text(code)
    with tempfile.TemporaryDirectory(prefix="__NAME__-") as work:
        binary = compile_shared(code, Path(work)).read_bytes()
    return tvm_ffi.get_global_func("__NAME__.module_create")(code, binary)
