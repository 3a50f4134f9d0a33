"""The hosted compile stack: workload -> Relax -> TIR -> codegen -> runtime.

Every model-level command (compile, run, tune, dump-ir, profile, trace, pass and function
bisection) goes through ``compile`` and ``run`` here, so each can be pointed at any workload
the loader accepts. The package runs inside the TVM under test and imports only the bottom
layer: ``workload`` (loading any workload; the builtins in ``workloads/``, checked against
``reference``), ``target`` (targets in either form for the TVM at hand), ``compat`` (one
place for what differs between TVM versions), ``tune`` (MetaSchedule), ``remote`` (RPC
devices), and the seams the chores' in-TVM halves attach: ``numbering`` (the pass numbers
dump-ir, trace and pass bisection share) and ``codegen`` (generated code and dlight rules).
"""

from __future__ import annotations

import contextlib
import json
import platform
import shlex
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from toolkit import outputs, process, reproduce
from toolkit.cause import one_line
from toolkit.errors import TkError, TvmFailure, UserError, suggest
from toolkit.stack import compat
from toolkit.stack import target as targets
from toolkit.stack.workload import TIR, Workload, flatten_outputs, params_path, save_params

SOURCE_SUFFIX = {"llvm": ".ll", "cuda": ".cu", "c": ".c", "opencl": ".cl", "metal": ".metal"}
OPT_LEVELS = range(0, 4)


@dataclass(frozen=True)
class CompileOptions:
    """How to compile, beyond the target: what ``--opt-level``, ``--pass-config``,
    ``--pipeline``, ``--db`` and ``--host`` ask for (checked by ``compile_options``)."""

    opt_level: int = 3
    pass_config: Mapping[str, Any] = field(default_factory=dict)
    pipeline: str | None = None  # a TVM pipeline name; None: the workload's, else "default"
    database: Path | None = None  # a MetaSchedule database directory (tk tune -o)
    host: str | None = None  # the target's host, e.g. 'llvm -mtriple=aarch64-linux-gnu'

    def flags(self) -> list[str]:
        """The command-line flags that ask for these options (for reproduce lines)."""
        out = [] if self.opt_level == 3 else ["--opt-level", str(self.opt_level)]
        for key, value in self.pass_config.items():
            out += ["--pass-config", f"{key}={json.dumps(value)}"]
        if self.pipeline:
            out += ["--pipeline", self.pipeline]
        if self.database:
            out += ["--db", str(self.database)]
        if self.host:
            out += ["--host", self.host]
        return out


def compile_options(
    pass_config: Sequence[str] = (), opt_level: int = 3, pipeline: str | None = None,
    database: Path | None = None, host: str | None = None,
) -> CompileOptions:
    """Check what the user asked for against this TVM: config keys, types, pipelines, db."""
    if opt_level not in OPT_LEVELS:
        raise UserError(f"--opt-level {opt_level}: TVM's levels are 0..3")
    config = dict(parse_pass_config(item) for item in pass_config)
    if pipeline is not None:
        known = sorted(set(_relax_pipelines()) | set(_tir_pipelines()))
        if pipeline not in known:
            raise UserError(f"--pipeline {pipeline!r} is not a pipeline this TVM has"
                            f"{suggest(pipeline, known)} (pipelines: {', '.join(known)})")
    if database is not None:
        from toolkit.stack import tune

        tune.open_database(database)  # refuse an empty or missing one before compiling
    if host is not None:
        targets.to_tvm(host)
    return CompileOptions(opt_level, config, pipeline, database, host)


def parse_pass_config(item: str) -> tuple[str, Any]:
    """``KEY=VALUE`` -> (key, value typed as TVM registered the key: bool, int or JSON)."""
    import tvm

    key, eq, text = item.partition("=")
    registered = {str(k): str(v) for k, v in tvm.transform.PassContext.list_configs().items()}
    if not eq or not key:
        raise UserError(f"--pass-config {item!r}: expected KEY=VALUE, e.g. tirx.disable_vectorize=1")
    if key not in registered:
        raise UserError(f"--pass-config: TVM has no config key {key!r}{suggest(key, registered)}")
    kind = json.loads(registered[key]).get("type", "")
    try:
        if kind == "bool":
            lowered = text.lower()
            if lowered not in ("1", "0", "true", "false", "on", "off", "yes", "no"):
                raise ValueError("expected true or false")
            return key, lowered in ("1", "true", "on", "yes")
        if kind in ("int", "ir.IntImm", "IntImm"):
            return key, int(text)
        return key, json.loads(text)  # config objects and arrays: their JSON form
    except ValueError as e:
        raise UserError(f"--pass-config {key}: {text!r} is not a {kind or 'value'} ({e})") from None


BUILD_PIPELINES = ("default", "default_build")  # Relax pipelines that lower all the way


def _relax_pipelines() -> list[str]:
    """Named Relax pipelines that need no arguments (``static_shape_tuning`` needs a target
    and a work directory: ``tk tune`` and ``--db`` are its command-line form)."""
    from tvm.relax import pipeline

    names = []
    for name, factory in getattr(pipeline, "PIPELINE_MAP", {}).items():
        try:
            factory()
        except TypeError:
            continue
        names.append(name)
    return names


def _tir_pipelines() -> list[str]:
    module = compat.tir()
    maps = getattr(getattr(module, "compilation_pipeline", None), "PIPELINE_MAP", None)
    return list(maps or {})


@dataclass
class Compiled:
    workload: Workload
    target_spec: str
    target: Any  # tvm.target.Target
    executable: Any  # relax VMExecutable; a runtime Executable/Module for TIR and libraries
    seconds: float
    options: CompileOptions = field(default_factory=CompileOptions)
    notes: list[str] = field(default_factory=list)  # what the caller should say about it


def _gpu_schedule(mod: Any, target: Any, workload: Workload) -> Any:
    """TVM's default GPU schedules (dlight) for the PrimFuncs that bind no GPU thread.

    Relax workloads need this on TVMs whose pipeline does not schedule for the target; TIR
    workloads always, since ``tvm.compile`` takes a TIR module straight to the TIR pipeline,
    which builds an unbound function for a GPU target as host code over device memory: it
    compiles, and dies of SIGSEGV when run. Functions that bind threads are the user's own
    schedule and are left as written.
    """
    from tvm import relax

    dl = compat.dlight()
    if dl is None:
        raise UserError("this TVM has no dlight; GPU targets need scheduled PrimFuncs")
    tir = compat.tir()
    scheduled = f"{tir.__name__.rpartition('.')[2]}.is_scheduled"  # dlight's mark
    with target:
        mod = relax.transform.LegalizeOps()(mod)
        for gv, func in list(mod.functions.items()):
            if isinstance(func, tir.PrimFunc) and _binds_threads(func):
                mod[gv] = func.with_attr(scheduled, True)
        mod = dl.ApplyDefaultSchedule(
            dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.Reduction(),
            dl.gpu.GeneralReduction(), dl.gpu.Fallback(),
        )(mod)
    if workload.kind == TIR:
        unbound = [gv.name_hint for gv, func in mod.functions.items()
                   if isinstance(func, tir.PrimFunc) and not _binds_threads(func)]
        if unbound:
            raise UserError(
                f"{workload.source}: {', '.join(unbound)} bind(s) no GPU thread and TVM's "
                f"default schedules (dlight) found none; for {target.kind.name} TVM would "
                "build it as host code reading device memory, which crashes when run: bind "
                "its loops to blockIdx/threadIdx, or compile it for a CPU target")
    return mod


def _binds_threads(func: Any) -> bool:
    """Whether a PrimFunc binds a GPU thread (a loop bound by a schedule, or a
    ``launch_thread``), read from its TVMScript: no TVM version exposes a statement visitor
    to Python under one name."""
    text = func.script()
    return "T.thread_binding(" in text or "T.launch_thread(" in text or "thread_extent" in text


def compile(
    workload: Workload,
    target: str | targets.Target,
    *,
    instruments: Sequence[Any] = (),
    pass_config: dict[str, Any] | None = None,
    options: CompileOptions | None = None,
    remote: bool = False,
) -> Compiled:
    """Compile a workload's module for a target through TVM's default pipeline.

    ``instruments`` are PassInstruments attached to the PassContext of the whole compile,
    Relax and TIR alike: the seam dump-ir and pass bisection plug into. ``pass_config``
    adds to ``options.pass_config``. A library workload (``tk compile -o``) is loaded as
    compiled, for the target it was compiled for; with ``remote`` (it runs on an RPC server)
    it is not loaded here at all, since it may hold another architecture's code: its
    ``executable`` is None and ``remote.Session.load`` uploads the file. ``target`` is parsed
    here unless it comes as a ``Target`` (``toolkit.stack.target.resolve``), as commands
    pass it.
    """
    import tvm

    options = options or CompileOptions()
    if pass_config:
        options = replace(options, pass_config={**options.pass_config, **pass_config})
    if workload.library is not None:
        return _load_library(workload, options, here=not remote)
    resolved = targets.resolve(target)
    target_spec, target = resolved.spec, resolved.tvm
    if options.host is not None:
        target = tvm.target.Target(target, host=targets.to_tvm(options.host))
    repeat = reproduce.tk_command("compile", workload.source, target_spec, *options.flags())
    mod = workload.mod
    notes: list[str] = []
    start = time.perf_counter()
    try:
        with tvm.transform.PassContext(
            opt_level=options.opt_level, instruments=list(instruments),
            config=dict(options.pass_config),
        ):
            if options.database is not None:
                from toolkit.stack import tune

                applied = tune.apply_database(mod, target, options.database)
                notes += _tuning_notes(applied, workload, options.database)
                mod = applied.mod
            elif targets.is_gpu(target) and (workload.kind == TIR
                                             or not compat.gpu_pipeline_schedules()):
                mod = _gpu_schedule(mod, target, workload)
            pipelines = _pipelines(workload, options, target)
            executable = compat.compile_fn()(mod, target=target, **pipelines)
    except (UserError, KeyboardInterrupt):
        raise
    except Exception as e:  # noqa: BLE001 - any TVM error is a compile failure to report
        if process.stopped_by():  # a Ctrl-C inside a Python pass comes back as TVM's error
            raise KeyboardInterrupt from e
        raise TvmFailure(
            f"compiling {workload.source} for {target_spec} failed: {one_line(e)}",
            reproduce=repeat,
        ) from e
    return Compiled(workload, target_spec, target, executable, time.perf_counter() - start,
                    options, notes)


def _tuning_notes(applied: Any, workload: Workload, database: Path) -> list[str]:
    """What a tuning database did to this compile: refused when it tunes nothing here."""
    if not applied.tuned:
        raise UserError(f"--db {database}: it holds no schedule for any of the {applied.kernels} "
                        f"kernel(s) of {workload.source} for this target (it was tuned for "
                        f"another workload or target); tune this one: tk tune "
                        f"{shlex.quote(workload.source)} -o DIR")
    if len(applied.tuned) < applied.kernels:
        return [f"--db {database}: {len(applied.tuned)} of {applied.kernels} kernels have a "
                f"tuned schedule ({', '.join(applied.tuned)}); the others are compiled untuned"]
    return []


def _pipelines(workload: Workload, options: CompileOptions, target: Any) -> dict[str, Any]:
    """``tvm.compile``'s pipeline arguments: ``--pipeline`` wins over the workload's own, and
    both over the TIR pipeline an out-of-tree device brings (``_device_tir_pipeline``)."""
    chosen = _chosen_pipelines(workload, options, target)
    device = _device_tir_pipeline(target)
    if device is not None and "tir_pipeline" not in chosen:
        chosen["tir_pipeline"] = device
    return chosen


def _device_tir_pipeline(target: Any) -> str | None:
    """The TIR pipeline of an extension's device: an ``ext_dev`` target (an out-of-tree
    device, ``tk ext new --kind target``) whose key names a TIR pipeline the extension
    registered (``register_tir_pipeline``). In-tree, TVM's ``get_default_tir_pipeline(target)``
    would return it, as it does adreno's for the key adreno."""
    if target.kind.name != "ext_dev":
        return None
    known = _tir_pipelines()
    return next((str(key) for key in target.keys if str(key) in known), None)


def _chosen_pipelines(workload: Workload, options: CompileOptions, target: Any) -> dict[str, Any]:
    """The pipelines asked for: ``--pipeline``, else the workload's own.

    A Relax pipeline other than the build pipelines (``zero``: legalize + fuse) only
    transforms, so it runs before the target's default one, as TVM's tutorials chain them.
    """
    if options.pipeline is None:
        if workload.pipeline is None:
            return {}
        return {"tir_pipeline" if workload.kind == TIR else "relax_pipeline": workload.pipeline}
    known = _tir_pipelines() if workload.kind == TIR else _relax_pipelines()
    if options.pipeline not in known:
        raise UserError(f"--pipeline {options.pipeline!r} is not a {workload.kind} pipeline "
                        f"(those are: {', '.join(known)})")
    if workload.kind == TIR:
        return {"tir_pipeline": options.pipeline}
    if options.pipeline in BUILD_PIPELINES:
        return {"relax_pipeline": options.pipeline}
    import tvm
    from tvm import relax

    default = relax.get_pipeline("default")
    if targets.is_gpu(target) and hasattr(relax, "get_default_pipeline"):
        default = relax.get_default_pipeline(target)
    return {"relax_pipeline": tvm.transform.Sequential(
        [relax.get_pipeline(options.pipeline), default])}


def _load_library(workload: Workload, options: CompileOptions, here: bool = True) -> Compiled:
    import tvm

    assert workload.library is not None and workload.library_target is not None
    if options != CompileOptions():
        raise UserError(f"{workload.source} is already compiled; build options apply to "
                        f"'tk compile', not to running a library")
    target = targets.to_tvm(workload.library_target)
    if not here:
        return Compiled(workload, workload.library_target, target, None, 0.0, options)
    machine = elf_machine(workload.library)
    if machine is not None and machine != _llvm_arch():
        raise UserError(f"{workload.source} holds {machine} code and this machine is "
                        f"{_llvm_arch()}: run it on {machine} hardware through --rpc HOST:PORT or "
                        f"--tracker HOST:PORT --key KEY")
    start = time.perf_counter()
    try:
        module = tvm.runtime.load_module(str(workload.library))
    except Exception as e:  # noqa: BLE001 - a cross-compiled or foreign library
        raise UserError(f"cannot load {workload.source} here: {one_line(e)}") from None
    return Compiled(workload, workload.library_target, target, module,
                    time.perf_counter() - start, options)


@dataclass
class Exported:
    library: Path
    params: Path
    cross_compiler: str | None  # None: the host's own compiler


def export(compiled: Compiled, path: Path, cc: str | None = None) -> Exported:
    """Write the executable as a shared library loadable by ``tvm.runtime.load_module``, and
    the params (and what running it needs) beside it: ``model.so`` + ``model.params.npz``."""
    if compiled.workload.library is not None:
        raise UserError(f"{compiled.workload.source} is already a library; nothing to export")
    params = params_path(path)
    # Both whole or neither: a full disk or a kill leaves no half library under its name.
    with outputs.writing(path, f"-o {path}") as library, \
            outputs.writing(params, f"-o {path}") as params_file:
        cc = write_library(compiled, library, cc, shown=path)
        save_params(compiled.workload, params_file, compiled.target_spec)
    return Exported(path, params, cc)


def write_library(compiled: Compiled, path: Path, cc: str | None = None,
                  module: Any = None, shown: Path | None = None) -> str | None:
    """Export the executable (or ``module``, a part of it) to ``path``; returns the cross
    compiler that linked it, if any. ``shown``: the name the user asked for, where ``path``
    is a temporary one.

    Code for another architecture is linked by a cross compiler: ``cc``, else the
    ``<triple>-gcc`` named after the target's ``mtriple`` when it is on PATH.
    """
    cc = cross_compiler(compiled.target, cc)
    kwargs: dict[str, Any] = {}
    if cc is not None:
        kwargs["fcompile"] = compat.cc_module().cross_compiler(cc)
    try:
        (compiled.executable if module is None else module).export_library(str(path), **kwargs)
    except Exception as e:  # noqa: BLE001
        shown = shown or path
        why = outputs.environment_refusal(str(e))
        if why is not None:  # the linker could not write it: the disk, not TVM
            raise UserError(f"-o {shown}: cannot write {shown}: {why}") from None
        raise TvmFailure(
            f"exporting {shown} failed: {_link_error(e, cc)}",
            reproduce=reproduce.tk_command(
                "compile", compiled.workload.source, compiled.target_spec,
                *compiled.options.flags(), *(["--cc", cc] if cc else []), "-o", str(shown)
            ),
        ) from e
    return cc


def _link_error(e: BaseException, cc: str | None) -> str:
    """The compiler's complaint, and the package a cross toolchain lacks when it is that."""
    hint = ""
    if cc and "cannot find crt" in str(e):
        arch = cc.split("-")[0]
        hint = f" ({cc} has no target C library: on Debian apt-get install libc6-dev-" \
               f"{'arm64' if arch == 'aarch64' else arch}-cross)"
    return one_line(e) + hint


def target_triple(target: Any) -> str | None:
    """The LLVM triple host code is generated for (the host's, for a device target)."""
    for t in (target.host, target):
        if t is not None and t.kind.name == "llvm":
            triple = t.attrs.get("mtriple")
            return str(triple) if triple else None
    return None


def cross_compiler(target: Any, cc: str | None = None) -> str | None:
    """The compiler that links code for ``target``: ``cc`` when given; for a foreign
    architecture ``<triple>-gcc`` (Debian's cross toolchains), else the host's (None)."""
    if cc is not None:
        if shutil.which(cc) is None:
            raise UserError(f"--cc {cc}: no such compiler on PATH")
        return cc
    triple = target_triple(target)
    if triple is None or triple.split("-")[0] in (platform.machine(), _llvm_arch()):
        return None
    arch = triple.split("-")[0]
    for candidate in (f"{triple}-gcc", f"{arch}-linux-gnu-gcc"):
        if shutil.which(candidate):
            return candidate
    raise UserError(
        f"code for {triple} needs a cross compiler to link: name it with --cc (e.g. --cc "
        f"{arch}-linux-gnu-gcc; on Debian: apt-get install gcc-{arch}-linux-gnu)")


ELF_MACHINES = {3: "i386", 40: "arm", 62: "x86_64", 183: "aarch64", 243: "riscv64"}


def elf_machine(path: Path) -> str | None:
    """The architecture an ELF file holds code for (its e_machine), or None if not ELF."""
    with open(path, "rb") as f:
        header = f.read(20)
    if len(header) < 20 or header[:4] != b"\x7fELF":
        return None
    order = "little" if header[5] == 1 else "big"
    number = int.from_bytes(header[18:20], order)
    return ELF_MACHINES.get(number, f"ELF machine {number}")


def _llvm_arch() -> str:
    """LLVM's spelling of this machine's architecture (x86_64 / aarch64 mostly agree)."""
    return {"arm64": "aarch64", "amd64": "x86_64"}.get(platform.machine().lower(),
                                                       platform.machine())


def _modules(root: Any) -> Iterator[Any]:
    seen: set[int] = set()
    stack = [root]
    while stack:
        mod = stack.pop(0)
        key = id(mod)
        if key in seen:
            continue
        seen.add(key)
        yield mod
        stack.extend(getattr(mod, "imports", []) or [])


def sources(compiled: Compiled) -> dict[str, str]:
    """Generated source per module of the executable: host LLVM IR, CUDA C, ..."""
    out: dict[str, str] = {}
    for mod in _modules(compiled.executable.mod):
        kind = str(getattr(mod, "kind", None) or mod.type_key)
        try:
            text = mod.inspect_source()
        except Exception:  # noqa: BLE001 - binary-only modules (the VM bytecode) have none
            continue
        if not text:
            continue
        name = ("host" if kind == "llvm" else kind) + SOURCE_SUFFIX.get(kind, ".txt")
        n = 1
        while name in out:
            n += 1
            stem, dot, ext = name.partition(".")
            name = f"{stem.rstrip('0123456789_')}_{n}.{ext}"
        out[name] = text
    return out


def emit_sources(compiled: Compiled, directory: Path) -> list[Path]:
    written = []
    for name, text in sources(compiled).items():
        path = directory / name
        with outputs.writing(path, f"--emit-source {directory}") as tmp:
            tmp.write_text(text)
        written.append(path)
    return written


@dataclass
class RunResult:
    outputs: list[np.ndarray]
    seconds: float
    device: str


def to_device(arrays: Sequence[np.ndarray], dev: Any) -> list[Any]:
    make = compat.tensor_fn()
    return [make(np.ascontiguousarray(a), dev) for a in arrays]


def virtual_machine(compiled: Compiled, dev: Any) -> Any:
    from tvm import relax

    return relax.VirtualMachine(compiled.executable, dev)


def entry_function(module: Any, compiled: Compiled, dev: Any) -> Any:
    """The callable that runs the entry: through the VM (Relax) or the kernel itself (TIR)."""
    from tvm import relax

    if compiled.workload.kind == TIR:
        return module[compiled.workload.entry]
    return relax.VirtualMachine(module, dev)[compiled.workload.entry]


def run(compiled: Compiled, inputs: Sequence[np.ndarray], remote: Any = None,
        input_flags: Sequence[str] = ()) -> RunResult:
    """Run the entry function on the target's device (refused when it is absent), or on a
    remote device: ``remote`` is a ``toolkit.stack.remote.Session``. ``input_flags`` are the
    options that chose ``inputs`` (``--inputs FILE``, ``--seed N``), for the reproduce line."""
    wl = compiled.workload
    flags = [*compiled.options.flags(), "--entry", wl.entry, *input_flags]
    if remote is None:
        module, dev = compiled.executable, targets.device_for(compiled.target)
        where, waiting = str(dev), contextlib.nullcontext()
    else:
        flags += remote.remote.flags()
        where = f"{targets.device_kind(compiled.target)}:0 at {remote.address}"
        waiting = remote.step(f"running {wl.source}")
    try:
        if remote is not None:
            module, dev = remote.load(compiled)
        with waiting:
            values, seconds = _call_entry(module, compiled, dev, inputs)
            # A remote module is freed by a call to the server, which waits like any other.
            del module
    except TkError:
        raise
    except Exception as e:  # noqa: BLE001
        if process.stopped_by():  # a Ctrl-C inside a Python function the kernel called
            raise KeyboardInterrupt from e
        raise TvmFailure(
            f"running {wl.source} on {where} failed: {one_line(e)}",
            reproduce=reproduce.tk_command("run", wl.source, compiled.target_spec, *flags),
        ) from e
    return RunResult(values, seconds, where)


def _call_entry(module: Any, compiled: Compiled, dev: Any,
                inputs: Sequence[np.ndarray]) -> tuple[list[np.ndarray], float]:
    """Call the entry function of ``module`` on ``dev``: its outputs, copied here, and the
    seconds the call took. What it put on a remote device is freed as this returns."""
    wl = compiled.workload
    fn = entry_function(module, compiled, dev)
    if wl.kind == TIR:
        outputs = to_device(wl.make_outputs(), dev)
        args = wl.call_args(to_device(inputs, dev), outputs)
    else:
        args = to_device([*inputs, *wl.params], dev)
    start = time.perf_counter()
    out = fn(*args)
    dev.sync()
    seconds = time.perf_counter() - start
    return flatten_outputs(outputs if wl.kind == TIR else out), seconds


@dataclass
class Comparison:
    against: str  # "reference" or the target compared with
    max_abs: float
    max_rel: float
    ok: bool
    rtol: float
    atol: float


def compare(
    actual: Sequence[np.ndarray], expected: Sequence[np.ndarray], against: str,
    rtol: float = 1e-3, atol: float = 1e-4,
) -> Comparison:
    if len(actual) != len(expected):
        return Comparison(against, float("inf"), float("inf"), False, rtol, atol)
    max_abs = max_rel = 0.0
    ok = True
    for a, e in zip(actual, expected):
        a = np.asarray(a, dtype="float64")
        e = np.asarray(e, dtype="float64")
        if a.shape != e.shape:
            return Comparison(against, float("inf"), float("inf"), False, rtol, atol)
        diff = np.abs(a - e)
        if diff.size:
            max_abs = max(max_abs, float(np.nanmax(diff)))
            max_rel = max(max_rel, float(np.nanmax(diff / np.maximum(np.abs(e), 1e-12))))
        ok = ok and bool(np.all(diff <= atol + rtol * np.abs(e))) and not np.isnan(a).any()
    return Comparison(against, max_abs, max_rel, ok, rtol, atol)


def check(
    compiled: Compiled, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray],
    rtol: float = 1e-3, atol: float = 1e-4,
) -> Comparison:
    """Compare outputs with something that did not compute them the same way.

    In order: the workload's reference; onnxruntime for an ``.onnx`` (when installed); else
    the workload compiled unoptimised (opt_level 0, default pipeline) for a different code
    generator than the one checked - TVM's C backend, or LLVM when C is the one checked.
    """
    wl = compiled.workload
    expected = wl.reference_outputs(inputs)
    if expected is not None:
        return compare(outputs, expected, "reference", rtol, atol)
    if wl.mod is None:
        why = wl.origin_problem or "the workload it was compiled from is not here"
        raise UserError(f"--check: {wl.source} has no reference, and {why} to compile a "
                        f"baseline from")
    expected = _onnxruntime_outputs(wl, inputs)
    if expected is not None:
        return compare(outputs, expected, "onnxruntime", rtol, atol)
    kind = "llvm" if compiled.target.kind.name == "c" or not _c_compiler() else "c"
    if kind == "llvm" and compiled.target.kind.name == "llvm" and compiled.options.opt_level == 0:
        raise UserError("--check: no reference, no C compiler for a C-backend baseline, and "
                        "the run is already unoptimised llvm; give the workload a reference")
    baseline = compile(wl, kind, options=CompileOptions(opt_level=0, pipeline="default"))
    against = f"unoptimised {'C backend' if kind == 'c' else 'LLVM'} (target {kind}, opt_level 0)"
    return compare(outputs, run(baseline, inputs).outputs, against, rtol, atol)


def _c_compiler() -> str | None:
    """TVM's C backend is built into a library by the host's C compiler."""
    return shutil.which("gcc") or shutil.which("cc") or shutil.which("clang")


def _onnxruntime_outputs(wl: Workload, inputs: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    if not wl.source.endswith(".onnx"):
        return None
    try:
        import onnxruntime
    except ImportError:
        return None
    session = onnxruntime.InferenceSession(wl.source, providers=["CPUExecutionProvider"])
    feed = {i.name: np.asarray(a) for i, a in zip(session.get_inputs(), inputs)}
    return [np.asarray(o) for o in session.run(None, feed)]


@contextlib.contextmanager
def timed() -> Iterator[list[float]]:
    box: list[float] = []
    start = time.perf_counter()
    try:
        yield box
    finally:
        box.append(time.perf_counter() - start)
