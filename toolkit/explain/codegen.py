"""What a code generator could not emit: a vector type CUDA has no name for, an operator CUDA
does not define on a vector type, a CUDA vector built from the wrong number of parts, and a
TIR intrinsic the backend has no lowering for (from tk's table of TVM's intrinsic rules at
each release, ``scripts/intrin_rules.py``). TVM's and its forks' (TileLang's) codegens fail
the same ways.

Each function takes a rule's matched groups and the text near the match and returns
``(cause, fix)`` (:mod:`toolkit.explain.rules`), or ``NOT_THIS`` when the match is not that
failure after all.
"""

from __future__ import annotations

import re

from toolkit.explain.refine import NOT_THIS
from toolkit.explain.tables import table

# CUDA's vector types: a scalar type and 1-4 lanes (cuda's vector_types.h, cuda_fp16.h).
CUDA_VECTOR = re.compile(r"\b(?P<base>u?char|u?short|u?int|u?long|u?longlong|float|double|"
                         r"half|__half|bfloat16|__nv_bfloat16)(?P<n>[1-4])(?:_\d+a)?\b")
SCALAR_BITS = {"char": 8, "short": 16, "int": 32, "long": 64, "longlong": 64, "float": 32,
               "double": 64, "half": 16, "__half": 16, "bfloat16": 16, "__nv_bfloat16": 16}
OPERATORS = {"~": "the bitwise complement", "!": "the logical not", "-": "negation",
             "+": "addition", "*": "multiplication", "/": "division", "%": "remainder",
             "&": "bitwise and", "|": "bitwise or", "^": "bitwise xor", "<<": "a left shift",
             ">>": "a right shift", "&&": "the logical and", "||": "the logical or",
             "<": "a comparison", ">": "a comparison", "<=": "a comparison",
             ">=": "a comparison", "==": "a comparison", "!=": "a comparison"}


def _bits(dtype: str) -> int | None:
    """An element's width from a TVM dtype name (int4, float8_e4m3fn, bool)."""
    if dtype == "bool":
        return 8
    m = re.search(r"(\d+)", dtype)
    return int(m.group(1)) if m else None


def vector_type(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """``Cannot convert type int32x16 to CUDA type``: CodeGenCUDA::PrintType has no CUDA type
    for the vector a vectorized loop made."""
    dtype, lanes = groups["dtype"], int(groups["lanes"])
    bits = _bits(dtype)
    size = "" if bits is None else f" ({lanes} x {bits} = {lanes * bits} bits)"
    if bits is not None and lanes * bits < 8:
        why = ("sub-byte lanes must be packed into whole bytes, and the codegen packs no "
               "vector this narrow")
    elif bits is not None and lanes * bits > 256:
        why = ("wider than the 32 bytes the largest CUDA vector type holds (longlong4), into "
               "which the codegen packs the widest vectors it knows")
    else:
        why = ("CUDA's vector types have 1-4 lanes, wider vectors are packed into those, and "
               "the codegen has no case for this width of this type")
    return (f"a loop was vectorized to {lanes} lanes of {dtype}{size}, and the CUDA code "
            f"generator (CodeGenCUDA::PrintType in codegen_cuda.cc, TVM's or a fork's) has no "
            f"CUDA type for that vector: {why}. The vector width comes from the schedule (a "
            "vectorized loop, or the width a copy or parallel loop was given), often chosen "
            "for another element type (a cast's target, a narrower buffer) than this one.",
            f"vectorize fewer lanes of {dtype}: split the vectorized loop (sch.split(loop, "
            "[None, 4]) and vectorize the inner one) or lower the copy's vector width; if "
            "the width is right, the codegen must learn the type (a newer TVM or fork "
            "release, or an issue with this message)")


def vector_operator(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """nvcc's ``no operator "~" matches these operands`` on a CUDA vector type: the codegen
    printed a vectorized expression as one scalar operator."""
    vector = CUDA_VECTOR.search(groups["types"])
    if vector is None:
        return NOT_THIS  # operands that are not CUDA vectors: not a vectorized expression
    op, vtype = groups["op"], vector.group(0)
    name = OPERATORS.get(op, f"the operator {op}")
    bool_note = (" (TVM carries bool vectors in CUDA's unsigned vector types, so a "
                 f"vectorized logical not reaches nvcc as '!' on a {vtype})"
                 if op == "!" and vector.group("base").startswith("u") else "")
    article = "an" if vtype[0] in "aeiou" else "a"
    return (f"the generated CUDA applies {name} ({op}) to {article} {vtype}, a CUDA vector type, for "
            f"which CUDA defines no {op}{bool_note}: the code generator printed a vectorized "
            "expression as the scalar operator on the whole vector instead of lane by lane. "
            "The source is valid; the codegen (TVM's or a fork's CodeGenC/CodeGenCUDA) is "
            "wrong for that operator on vectors.",
            f"keep the statement that applies {op} out of the vectorized loop (do not "
            "vectorize that loop, or split it off), or use a release whose codegen emits it "
            "per lane; report it with the generated kernel")


def make_vector(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """``make_longlong4`` given other than its 4 parts: a narrow-laned vector packed into a
    wide CUDA vector, one argument per lane."""
    base, n = groups.get("base") or groups.get("base2") or "", groups.get("n") or groups.get("n2")
    bits = SCALAR_BITS.get(base.removeprefix("u"))  # uint4 is four 32-bit words, as int4
    if bits is None or n is None:
        return NOT_THIS
    total = int(n) * bits
    return (f"the generated CUDA builds a {base}{n} with make_{base}{n}, which takes exactly "
            f"{n} {base} values ({total} bits in all), and the code generator passed another "
            f"number of arguments: it packs a vector of narrower lanes into a {base}{n} and "
            f"gave one argument per lane (a {total}-bit vector holds {total // 8} lanes of "
            f"int8, {total // 16} of float16 - a broadcast of an int8 scalar to "
            f"{total // 8} lanes is one {base}{n}), where the lanes must first be packed "
            f"into {n} {bits}-bit words.",
            f"vectorize fewer lanes of the narrow type (so no {total}-bit vector is made), "
            "or use a codegen release that packs the lanes; report it with the generated "
            "kernel")


# Which backend a log's codegen is, from the codegen file or function it names.
_BACKENDS = (("nvptx", r"codegen_nvptx|CodeGenNVPTX|nvptx"), ("rocm", r"codegen_amdgpu|rocm"),
             ("cuda", r"codegen_cuda|CodeGenCUDA"), ("metal", r"codegen_metal|CodeGenMetal"),
             ("opencl", r"codegen_opencl|CodeGenOpenCL"), ("webgpu", r"codegen_webgpu|WebGPU"),
             ("vulkan", r"codegen_spirv|CodeGenSPIRV|vulkan|spirv"),
             ("llvm", r"codegen_llvm|CodeGenLLVM|codegen_cpu|CodeGenCPU|unknown intrinsic"))


def intrinsic(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """``unknown intrinsic Op(tir.acos)`` (CodeGenLLVM) / ``Unresolved call Op(tir.X)``
    (CodeGenC, SPIR-V): the backend has no lowering for the operator, by TVM's intrinsic
    rule files at each release."""
    op = groups["op"]
    backend = next((b for b, pattern in _BACKENDS if re.search(pattern, text)), None)
    rules = table("intrin_rules")["ops"].get(op)
    if backend is None or rules is None:
        return NOT_THIS  # an operator the rule files never lower: not a missing lowering
    others = ", ".join(f"{b} from {since}" for b, (since, _) in sorted(rules.items())
                       if b not in (backend, "default"))
    if backend in rules:
        since, file = rules[backend]
        return (f"TVM's {backend} backend has no lowering for tir.{op} in the TVM that ran: "
                f"{file} registers one ({backend}.FLowerIntrinsic / FLegalize) from {since} "
                f"on, and without it the call reaches the code generator, which stops here. "
                f"(Other backends lower it: {others or 'none'}.)",
                f"update TVM to {since} or newer; on this one, write tir.{op} with operators "
                f"the {backend} backend lowers, or register a lowering for it "
                f"(TVM_REGISTER_OP(\"tir.{op}\").set_attr<FLowerIntrinsic>"
                f"(\"{backend}.FLowerIntrinsic\", ...))")
    generic = (f" The generic lowering (default.FLowerIntrinsic, {rules['default'][1]}, from "
               f"{rules['default'][0]}) did not serve it here." if "default" in rules else "")
    return (f"no TVM release lowers tir.{op} for the {backend} backend (its intrinsic rule "
            f"files register none; other backends: {others or 'none'}), so the call reaches "
            f"the code generator, which stops here.{generic}",
            f"write tir.{op} with operators the {backend} backend lowers, or register a "
            f"lowering (TVM_REGISTER_OP(\"tir.{op}\").set_attr<FLowerIntrinsic>"
            f"(\"{backend}.FLowerIntrinsic\", ...))")


_NARROW = re.compile(r"fp8|fp4|fp6|e4m3|e5m2|e2m1|float8|float4|half|bf16|bfloat16|fp16", re.I)


def narrow_store(groups: dict[str, str], _text: str) -> tuple[str, str] | str:
    """nvcc's ``no operator "=" matches these operands / operand types are: fp8_e4_t = float``
    in a printed kernel: a float stored into a narrow float type without a cast."""
    lhs, rhs = groups["lhs"], groups["rhs"]
    if not _NARROW.search(lhs) or rhs not in ("float", "double"):
        return NOT_THIS
    return (f"the kernel stores a {rhs} into a {lhs}, a narrow float type with no implicit "
            f"conversion from {rhs}: an operation on its {lhs} operands has no {lhs} overload "
            "(max, min, clamp, exp and arithmetic on such wrapper types promote them to "
            f"{rhs}), so its result is a {rhs}, and the printed code stores it without a cast "
            "back - a gap in the code generator's coverage of that type, not the kernel's "
            "logic.",
            f"cast the result back where the kernel computes it (T.Cast to the {lhs} type), or "
            "compute in float16/float32 and convert once at the store; report the printed "
            "kernel to the code generator's project (TVM, or TileLang over it)")
