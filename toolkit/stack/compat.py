"""What the TVM at hand can do, probed by feature rather than by version string.

Forks lag or lead upstream, so a version number says little; each probe asks for the
thing itself. Where each one moved is in the docstrings below, with the apache/tvm pull
request that moved it where there is one (``tvm.tirx``/``tvm.s_tir``: #18913; ``vm.profile``
deleted: #19455; ``structural_hash`` into tvm-ffi in v0.25).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any


@functools.cache
def tvm() -> ModuleType:
    import tvm as _tvm

    return _tvm


def first_module(*names: str) -> ModuleType | None:
    """The first of ``names`` that imports: where a module lives differs across generations."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


@functools.cache
def tir() -> ModuleType:
    """``tvm.tirx`` from v0.24 on, ``tvm.tir`` before."""
    mod = first_module("tvm.tirx", "tvm.tir")
    if mod is None:
        raise ImportError("this TVM has neither tvm.tirx nor tvm.tir")
    return mod


@functools.cache
def dlight() -> ModuleType | None:
    """TVM's default GPU schedules: ``tvm.s_tir.dlight`` (v0.24+) or ``tvm.dlight``."""
    return first_module("tvm.s_tir.dlight", "tvm.dlight")


@functools.cache
def compile_fn() -> Callable[..., Any]:
    """``tvm.compile`` where it exists, else ``relax.build``."""
    t = tvm()
    if hasattr(t, "compile"):
        return t.compile
    from tvm import relax

    return relax.build


@functools.cache
def tensor_fn() -> Callable[..., Any]:
    """Host array -> device tensor: ``tvm.runtime.tensor`` or the older ``tvm.nd.array``."""
    t = tvm()
    if hasattr(t.runtime, "tensor"):
        return t.runtime.tensor
    return t.nd.array


@functools.cache
def structural_hash() -> Callable[[Any], int]:
    """``tvm_ffi.structural_hash`` (v0.25+) or ``tvm.ir.structural_hash``."""
    ffi = first_module("tvm_ffi")
    if ffi is not None and hasattr(ffi, "structural_hash"):
        return ffi.structural_hash
    return tvm().ir.structural_hash


def same_children(a: Any, b: Any) -> bool:
    """Whether two IR objects of one type hold the very same children, field by field.

    True proves them structurally equal for the cost of a few field reads, where a structural
    hash walks the whole function (about 60 us a function on mlp40): a pass handed a function
    that something else still references copies it before changing it (copy on write), and
    when it then changes nothing it hands back a copy whose fields are the original's. False
    proves nothing. Always False on a TVM whose FFI does not describe its objects' fields
    (tvm-ffi's reflection, v0.25+).
    """
    if type(a) is not type(b):
        return False
    getters = _compared_fields(type(a))
    if not getters:
        return False
    for getter in getters:
        x, y = getter(a), getter(b)
        if x is y:
            continue
        if x is None or y is None:
            return False
        same = getattr(x, "same_as", None)
        if not (same(y) if same is not None else x == y):
            return False
    return True


@functools.cache
def _compared_fields(cls: type) -> tuple[Callable[[Any], Any], ...]:
    """Getters of the fields structural equality compares (all but those it ignores: spans)."""
    info = getattr(cls, "__tvm_ffi_type_info__", None)
    getters = []
    while info is not None:
        getters += [f.getter for f in info.fields
                    if getattr(f, "c_structural_eq", None) != "ignore"]
        info = info.parent_type_info
    return tuple(getters)


@functools.cache
def structural_equal() -> Callable[[Any, Any], bool]:
    ffi = first_module("tvm_ffi")
    if ffi is not None and hasattr(ffi, "structural_equal"):
        return ffi.structural_equal
    return tvm().ir.structural_equal


def vm_has_instrument() -> bool:
    """``VirtualMachine.set_instrument`` (v0.16+): the per-call hook profiling relies on."""
    from tvm import relax

    return hasattr(relax.VirtualMachine, "set_instrument")


def vm_has_profiler() -> bool:
    """The built-in ``vm.profile()`` (removed in v0.24)."""
    from tvm import relax

    return hasattr(relax.VirtualMachine, "profile")


def target_strings_with_options() -> bool:
    """Whether ``Target("llvm -mcpu=generic")`` is still accepted (refused from 0.27.0.post1)."""
    try:
        tvm().target.Target("llvm -mcpu=generic")
        return True
    except Exception:  # noqa: BLE001 - any refusal means "use the dict form"
        return False


def var_name(var: Any) -> str:
    """A Relax/TIR variable's name: ``name`` on the unified IR (0.27), ``name_hint`` before."""
    name = getattr(var, "name_hint", None)
    return str(name if name is not None else var.name)


def var_tensor_info(var: Any) -> tuple[Any, str] | None:
    """(shape values, dtype) of a Relax tensor variable, or None when it is not a tensor.

    0.27's unified IR puts the annotation on ``var.ty``; earlier ones on ``struct_info``.
    """
    info = getattr(var, "struct_info", None)
    if info is None:
        info = getattr(var, "ty", None)
    shape = getattr(info, "shape", None)
    values = getattr(shape, "values", None)
    if values is None:
        return None
    return values, str(info.dtype)


def gpu_pipeline_schedules() -> bool:
    """Whether the default Relax pipeline schedules GPU kernels itself (per-target backends).

    Older TVMs' default pipeline leaves PrimFuncs unscheduled, so tk applies dlight first.
    """
    try:
        from tvm.relax.backend import cuda
    except ImportError:
        return False
    return hasattr(cuda, "get_default_pipeline")


def object_handle(obj: Any) -> int:
    """The address of the C++ object behind a Python wrapper (stable while the object lives).

    tvm_ffi objects expose ``__chandle__()``; the older ctypes FFI kept it in ``.handle``.
    """
    chandle = getattr(obj, "__chandle__", None)
    if chandle is not None:
        return int(chandle())
    return int(obj.handle.value)


def pass_factory(name: str) -> str | None:
    """Python expression constructing the pass that reports ``name``, when one takes no arguments.

    ``tirx.FlattenBuffer`` -> ``tvm.tirx.transform.FlattenBuffer()``; Relax passes report bare
    names (``LegalizeOps``). None when no module of this TVM has a constructor by that name.
    """
    prefix, dot, attr = name.rpartition(".")
    if prefix in ("tir", "tirx", "s_tir"):
        candidates = ["tvm.s_tir.transform", "tvm.tirx.transform", "tvm.tir.transform"]
        if prefix != "s_tir":
            candidates.reverse()
    elif not dot:
        candidates = ["tvm.relax.transform", "tvm.transform"]
    else:
        candidates = [f"tvm.{prefix}.transform"]
    for module_name in candidates:
        module = first_module(module_name)
        factory = getattr(module, attr, None) if module else None
        if not callable(factory):
            continue
        try:
            factory()
        except Exception:  # noqa: BLE001 - needs arguments: the repro must say so instead
            continue
        return f"{module_name}.{attr}()"
    return None


@functools.cache
def flops_estimator() -> Callable[[Any], float] | None:
    """PrimFunc -> estimated FLOPs: ``s_tir.analysis`` (v0.24+, IRModule only) or ``tir.analysis``."""
    mod = first_module("tvm.s_tir.analysis", "tvm.tir.analysis")
    estimate = getattr(mod, "estimate_tir_flops", None) if mod else None
    if estimate is None:
        return None
    make_module = tvm().IRModule
    return lambda func: estimate(make_module({"main": func}))


def script_printer() -> Callable[[Any, str], str]:
    """``(func, name) -> TVMScript``, reusing one printer config per name where possible.

    ``obj.script(name=...)`` builds a fresh PrinterConfig through the FFI on every call, about
    a tenth of the cost of printing one function; dump-ir prints thousands.
    """
    try:
        from tvm.runtime.script_printer import PrinterConfig, _script
    except ImportError:
        return lambda obj, name: obj.script(name=name)
    configs: dict[str, Any] = {}

    def print_with_cached_config(obj: Any, name: str) -> str:
        config = configs.get(name)
        if config is None:
            config = configs[name] = PrinterConfig(name=name)
        return _script(obj, config)

    return print_with_cached_config


def prim_func_buffers(func: Any) -> list[tuple[tuple[str, Any, str] | None, bool]]:
    """Per PrimFunc argument: ((name, shape, dtype) or None for a scalar, whether it is written).

    Before the unified IR (0.27) arguments are handles mapped to buffers by ``buffer_map``;
    on it the argument is the buffer. What is written comes from TVM's access analysis
    (``DomainTouchedAccessMap``: buffer -> [reads, writes]).
    """
    touched = None
    for name in ("s_tir.DomainTouchedAccessMap", "tir.analysis.DomainTouchedAccessMap"):
        touched = tvm().get_global_func(name, allow_missing=True)
        if touched is not None:
            break
    if touched is None:
        raise ImportError("this TVM has no DomainTouchedAccessMap to find a PrimFunc's outputs")
    access = touched(func)
    buffer_map = getattr(func, "buffer_map", None)
    out: list[tuple[tuple[str, Any, str] | None, bool]] = []
    for param in func.params:
        buf = buffer_map.get(param) if buffer_map is not None else param
        ty = getattr(buf, "ty", None) if buffer_map is None else buf
        if buf is None or getattr(ty, "shape", None) is None:
            out.append((None, False))
            continue
        written = any(b.same_as(buf) and len(rw[1]) > 0 for b, rw in access.items())
        out.append(((var_name(buf), list(ty.shape), str(ty.dtype)), written))
    return out


def cc_module() -> ModuleType:
    """TVM's C compiler driver (``cross_compiler``, ``create_shared``): ``tvm.support.cc``
    on 0.27, ``tvm.contrib.cc`` before."""
    mod = first_module("tvm.support.cc", "tvm.contrib.cc")
    if mod is None:
        raise ImportError("this TVM has neither tvm.support.cc nor tvm.contrib.cc")
    return mod


def tir_transforms() -> ModuleType | None:
    """The scheduled-TIR passes: ``tvm.s_tir.transform`` (v0.24+) or ``tvm.tir.transform``."""
    return first_module("tvm.s_tir.transform", "tvm.tir.transform")


def clear_foreign_any_hash_hooks() -> list[str]:
    """Drop the ``__any_hash__``/``__any_equal__`` hooks that a library other than tvm-ffi
    registered as raw function pointers; returns the type keys whose hooks went.

    tvm-ffi 0.1.15 changed how such a pointer is called: it now returns a ``TVMFFIAny``
    (``TVMFFIAny (*)(const Any&) noexcept``) where 0.1.14 returned ``int64_t``/``bool``.
    A TVM compiled against 0.1.14 headers (the apache-tvm 0.27.0.post1 wheel registers one
    for ``ir.PrimType``, src/ir/type.cc) but run with libtvm_ffi 0.1.15 has its hash read
    as a type index and the hash's register as an error object: any hash of a PrimType
    inside tvm-ffi segfaults - ``ToJSONGraph`` (``tvm.ir.save_json``) hashes every node,
    and every PrimExpr holds a PrimType. Without the hook a PrimType hashes and compares
    by identity, as every other object does; TVM caches one PrimType node per dtype.
    Hooks inside libtvm_ffi itself were compiled with its own convention and stay.
    """
    import ctypes
    import os

    import tvm_ffi
    from tvm_ffi import core

    class ByteArray(ctypes.Structure):
        _fields_ = [("data", ctypes.c_char_p), ("size", ctypes.c_size_t)]

    class AnyPod(ctypes.Structure):  # TVMFFIAny: type index, padding, 8-byte value
        _fields_ = [("type_index", ctypes.c_int32), ("padding", ctypes.c_uint32),
                    ("value", ctypes.c_uint64)]

    class Column(ctypes.Structure):  # TVMFFITypeAttrColumn
        _fields_ = [("data", ctypes.POINTER(AnyPod)), ("size", ctypes.c_int32),
                    ("begin_index", ctypes.c_int32)]

    class DlInfo(ctypes.Structure):
        _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p),
                    ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]

    opaque_ptr = 4  # kTVMFFIOpaquePtr
    ffi_path = os.path.realpath(tvm_ffi.libinfo.find_libtvm_ffi())
    ffi = ctypes.CDLL(ffi_path)
    ffi.TVMFFIGetTypeAttrColumn.restype = ctypes.POINTER(Column)
    ffi.TVMFFIGetTypeAttrColumn.argtypes = [ctypes.POINTER(ByteArray)]
    dladdr = ctypes.CDLL(None).dladdr
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]

    cleared: list[str] = []
    for name in (b"__any_hash__", b"__any_equal__"):
        column = ffi.TVMFFIGetTypeAttrColumn(ctypes.byref(ByteArray(name, len(name))))
        if not column:
            continue
        for offset in range(column.contents.size):
            slot = column.contents.data[offset]
            if slot.type_index != opaque_ptr:
                continue
            info = DlInfo()
            if not dladdr(ctypes.c_void_p(slot.value), ctypes.byref(info)) or not info.fname:
                continue
            if os.path.realpath(info.fname.decode()) == ffi_path:
                continue
            # The slot holds a plain pointer (no reference count): overwriting it with None
            # in place is what registering None would have stored.
            column.contents.data[offset] = AnyPod(0, 0, 0)
            type_info = core._type_index_to_type_info(offset + column.contents.begin_index)
            key = type_info.type_key if type_info is not None else str(offset)
            if key not in cleared:
                cleared.append(key)
    return cleared
