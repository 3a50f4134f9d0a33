"""Workloads: what every model-level command takes, turned into one compile-ready object.

Accepted forms:

* ``builtin:NAME`` - a workload shipped in ``toolkit/stack/workloads/NAME.py``;
* a ``.py`` file defining ``mod`` (an IRModule) or ``model`` + ``spec`` (a
  ``relax.frontend.nn.Module`` and its export spec), optionally ``inputs``, ``params``
  (dicts by name, or lists in argument order) and ``reference`` (a callable taking the
  entry function's arguments as numpy arrays - inputs, then params - or the expected
  output arrays) and ``pipeline`` (a Relax pass given to ``tvm.compile`` as its
  ``relax_pipeline``: how a workload brings a fork's own passes into the compile);
* an ``.onnx`` file, through TVM's ONNX frontend;
* a ``.so`` written by ``tk compile -o``, with the ``.params.npz`` written beside it.

A ``mod`` holding only PrimFuncs (TVMScript, or ``te.create_prim_func``; a bare PrimFunc is
taken too) is a TIR workload: the entry is called directly, the buffers it writes are its
outputs (tk allocates them), the others its inputs, and ``reference`` takes the inputs and
returns the outputs.
"""

from __future__ import annotations

import json
import runpy
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from toolkit.cause import one_line
from toolkit.errors import UserError

BUILTIN_DIR = Path(__file__).parent / "workloads"


@dataclass(frozen=True)
class ArgSpec:
    name: str
    shape: tuple[int, ...]
    dtype: str


RELAX = "relax"
TIR = "tir"
PARAMS_SUFFIX = ".params.npz"
META_KEY = "__tk__"  # the npz entry holding what a library needs to be run again


@dataclass
class Workload:
    """A Relax or TIR module plus everything needed to call its entry function."""

    name: str
    source: str  # what the user typed: reproduces the load
    mod: Any  # tvm.IRModule
    entry: str
    input_specs: list[ArgSpec]
    params: list[np.ndarray] = field(default_factory=list)
    inputs: list[np.ndarray] | None = None
    reference: Callable[..., Any] | Sequence[np.ndarray] | None = None
    pipeline: Any = None  # tvm.transform.Pass replacing the target's default Relax pipeline
    kind: str = RELAX  # RELAX: entry run by the VM; TIR: a PrimFunc called directly
    output_specs: list[ArgSpec] = field(default_factory=list)  # TIR: buffers the entry writes
    output_positions: tuple[int, ...] = ()  # TIR: where those sit among the arguments
    param_names: list[str] = field(default_factory=list)
    library: Path | None = None  # already compiled (tk compile -o); mod is then its source's
    library_target: str | None = None  # the target that library was compiled for
    # A library's workload that did not load here (a runtime-only TVM cannot import a model
    # file): why. The library still runs, on seeded-random inputs, without a reference.
    origin_problem: str | None = None

    def entries(self) -> list[str]:
        """The functions ``--entry`` may name."""
        return [] if self.mod is None else _entries(self.mod)

    def make_outputs(self) -> list[np.ndarray]:
        """Zeroed buffers for a TIR entry's outputs (none for Relax: the VM allocates)."""
        return [np.zeros(s.shape, s.dtype) for s in self.output_specs]

    def call_args(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> list[Any]:
        """A TIR entry's arguments in signature order: outputs slotted between inputs."""
        args, ins, outs = [], iter(inputs), iter(outputs)
        for i in range(len(self.input_specs) + len(self.output_specs)):
            args.append(next(outs) if i in self.output_positions else next(ins))
        return args

    def make_inputs(self, seed: int = 0) -> list[np.ndarray]:
        """The workload's own inputs, or seeded random ones of the declared shapes."""
        if self.inputs is not None:
            return [np.asarray(a) for a in self.inputs]
        rng = np.random.default_rng(seed)
        return [random_array(rng, s.shape, s.dtype) for s in self.input_specs]

    def reference_outputs(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray] | None:
        if self.reference is None:
            return None
        args = [*inputs, *self.params]
        if self.kind == TIR:
            args = list(inputs)
        out = self.reference(*args) if callable(self.reference) else self.reference
        return flatten_outputs(out)


def random_array(rng: np.random.Generator, shape: Sequence[int], dtype: str) -> np.ndarray:
    if dtype.startswith(("float", "bfloat")):
        return rng.standard_normal(shape).astype("float32" if dtype == "bfloat16" else dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    return rng.integers(0, 10, size=shape).astype(dtype)


def flatten_outputs(value: Any) -> list[np.ndarray]:
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in flatten_outputs(v)]
    if hasattr(value, "numpy"):
        return [value.numpy()]
    return [np.asarray(value)]


def builtin_names() -> list[str]:
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.py") if not p.stem.startswith("_"))


def load(source: str, seed: int = 0, entry: str | None = None) -> Workload:
    """Load a workload from ``builtin:NAME``, a ``.py``, ``.onnx`` or ``tk compile -o`` ``.so``.

    ``entry`` names the function to run (default: ``main``, else ``forward``, else the first).
    """
    if source.startswith("builtin:"):
        name = source.split(":", 1)[1]
        path = BUILTIN_DIR / f"{name}.py"
        if name not in builtin_names():
            raise UserError(
                f"unknown builtin workload {name!r}; available: {', '.join(builtin_names())}"
            )
        return _from_namespace(_run_file(path, source), name, source, seed, entry)
    path = Path(source)
    if not path.exists():
        raise UserError(f"workload file {source!r} does not exist")
    if path.suffix == ".onnx":
        return _from_onnx(path, source, entry)
    if path.suffix == ".so":
        return _from_library(path, source, seed, entry)
    if path.suffix != ".py":
        raise UserError(
            f"workload {source!r}: expected a .py, .onnx or .so (from tk compile -o) file, or "
            f"builtin:NAME ({', '.join(builtin_names())})"
        )
    return _from_namespace(_run_file(path, source), path.stem, source, seed, entry)


def params_path(library: Path) -> Path:
    """``model.so`` -> ``model.params.npz``: the file ``tk compile -o`` writes beside it."""
    return library.with_name(library.stem + PARAMS_SUFFIX)


def save_params(wl: Workload, path: Path, target_spec: str) -> Path:
    """Write the params, by name, and what running the library needs, to ``path`` (the
    library's ``params_path``, or a temporary name to be renamed into it)."""
    # Absolute, so the library finds its workload (and reference) from any directory.
    source = wl.source if wl.source.startswith("builtin:") else str(Path(wl.source).resolve())
    meta = {
        "source": source, "entry": wl.entry, "kind": wl.kind, "target": target_spec,
        "inputs": [[s.name, list(s.shape), s.dtype] for s in wl.input_specs],
        "outputs": [[s.name, list(s.shape), s.dtype] for s in wl.output_specs],
        "output_positions": list(wl.output_positions), "params": wl.param_names,
    }
    arrays = dict(zip(wl.param_names, wl.params))
    np.savez(path, **arrays, **{META_KEY: np.array(json.dumps(meta))})
    return path


def _from_library(path: Path, source: str, seed: int, entry: str | None) -> Workload:
    """A library from ``tk compile -o``: run it as compiled, with the params saved beside it.

    The workload it was compiled from is loaded too when it is still there and loads here:
    it brings its inputs, the reference (and the module a ``--check`` baseline compiles). Where
    it does not load (a runtime-only TVM cannot import a model file), the library still runs
    on what it needs; ``origin_problem`` says what is missing and why.
    """
    npz = params_path(path)
    if not npz.exists():
        raise UserError(f"library {source}: no {npz.name} beside it; run it through "
                        f"'tk compile WORKLOAD -o {path.name}', which writes both")
    try:
        with np.load(npz, allow_pickle=False) as data:
            meta = json.loads(str(data[META_KEY]))
            params = [data[n] for n in meta["params"]]
    except Exception as e:  # noqa: BLE001 - a foreign or truncated npz
        raise UserError(f"library {source}: {npz.name} is not one tk wrote ({e})") from None
    if entry is not None and entry != meta["entry"]:
        raise UserError(f"library {source} was compiled with entry {meta['entry']!r}; "
                        f"recompile with --entry {entry}")
    origin, problem = None, None
    if meta["source"].startswith("builtin:") or Path(meta["source"]).exists():
        try:
            origin = load(meta["source"], seed, meta["entry"])
        except Exception as e:  # noqa: BLE001 - running the library does not need it
            problem = f"{meta['source']}, which it was compiled from, does not load here " \
                      f"({one_line(e)})"
    return Workload(
        name=path.stem, source=source, mod=origin.mod if origin else None, entry=meta["entry"],
        input_specs=[ArgSpec(n, tuple(s), d) for n, s, d in meta["inputs"]],
        params=params, inputs=origin.inputs if origin else None,
        reference=origin.reference if origin else None, kind=meta["kind"],
        output_specs=[ArgSpec(n, tuple(s), d) for n, s, d in meta["outputs"]],
        output_positions=tuple(meta["output_positions"]), param_names=meta["params"],
        library=path, library_target=meta["target"], origin_problem=problem,
    )


def _run_file(path: Path, source: str) -> dict[str, Any]:
    try:
        return runpy.run_path(str(path), run_name="__tk_workload__")
    except SyntaxError as e:
        raise UserError(
            f"workload {source}: syntax error at line {e.lineno}: {e.msg}; fix the file"
        ) from None
    except SystemExit as e:
        # Left alone it would end tk with the workload's code: sys.exit(0) a silent pass.
        raise UserError(
            f"workload {source} called sys.exit({e.code!r}) while being loaded; a workload "
            "file defines 'mod' (or 'model' + 'spec') and must not exit"
        ) from None
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - anything the user's file raises is their error
        # (BaseException: a file's own subclass of it would otherwise end tk in a traceback)
        frame = traceback.extract_tb(e.__traceback__)[-1]
        raise UserError(
            f"workload {source} raised {type(e).__name__}: {e} "
            f"(at {Path(frame.filename).name}:{frame.lineno})"
        ) from None


def _from_namespace(
    ns: dict[str, Any], name: str, source: str, seed: int, entry: str | None
) -> Workload:
    """Both file shapes (``mod``, or ``model`` + ``spec``) end in the same Workload."""
    from tvm import IRModule

    from toolkit.stack import compat

    if "model" in ns:
        if "spec" not in ns:
            raise UserError(f"workload {source} defines 'model' but no 'spec' to export it with")
        mod, param_names, default_params = _export_nn(ns, source, seed)
        entry = _entry_of(mod, source, entry, prefer=next(iter(ns["spec"])))
    else:
        mod = ns.get("mod")
        if mod is None:
            raise UserError(
                f"workload {source} defines neither 'mod' (an IRModule) nor 'model' + 'spec'"
            )
        if isinstance(mod, compat.tir().PrimFunc):
            mod = IRModule({"main": mod})
        if not isinstance(mod, IRModule):
            raise UserError(f"workload {source}: 'mod' is a {type(mod).__name__}, not an IRModule")
        entry = _entry_of(mod, source, entry)
        param_names, default_params = None, []
        if not _relax_functions(mod):
            return _tir_workload(ns, name, source, mod, entry)
    specs, num_input = _arg_specs(mod[entry], source, need_static=ns.get("inputs") is None)
    if param_names is None:
        param_names = [s.name for s in specs[num_input:]]
    params = _ordered(ns.get("params"), param_names, "params", source)
    return Workload(
        name=name,
        source=source,
        mod=mod,
        entry=entry,
        input_specs=specs[:num_input],
        params=default_params if params is None else params,
        inputs=_ordered(ns.get("inputs"), [s.name for s in specs[:num_input]], "inputs", source),
        reference=ns.get("reference"),
        pipeline=ns.get("pipeline"),
        param_names=param_names,
    )


def _tir_workload(
    ns: dict[str, Any], name: str, source: str, mod: Any, entry: str
) -> Workload:
    """A PrimFunc entry: the buffers it writes are outputs, the ones it only reads inputs."""
    from toolkit.stack import compat

    inputs, outputs, positions = [], [], []
    for i, (arg, written) in enumerate(compat.prim_func_buffers(mod[entry])):
        if arg is None:
            raise UserError(f"workload {source}: {entry} takes a scalar argument; tk calls "
                            f"PrimFuncs whose arguments are all buffers")
        shape = tuple(int(d) if hasattr(d, "__int__") else -1 for d in arg[1])
        if -1 in shape:
            raise UserError(f"workload {source}: buffer {arg[0]} of {entry} has a symbolic "
                            f"shape; tk sizes TIR arguments from static buffer shapes")
        spec = ArgSpec(arg[0], shape, arg[2])
        if written:
            outputs.append(spec)
            positions.append(i)
        else:
            inputs.append(spec)
    if not outputs:
        raise UserError(f"workload {source}: {entry} writes none of its buffers: nothing to run")
    return Workload(
        name=name, source=source, mod=mod, entry=entry, input_specs=inputs,
        inputs=_ordered(ns.get("inputs"), [s.name for s in inputs], "inputs", source),
        reference=ns.get("reference"), pipeline=ns.get("pipeline"), kind=TIR,
        output_specs=outputs, output_positions=tuple(positions),
    )


def _export_nn(ns: dict[str, Any], source: str, seed: int) -> tuple[Any, list[str], list[np.ndarray]]:
    """The exported module, its parameter names, and seeded weights for them."""
    try:
        mod, named_params = ns["model"].export_tvm(spec=ns["spec"])
    except Exception as e:  # noqa: BLE001 - a bad spec is the user's to fix
        raise UserError(f"workload {source}: exporting 'model' failed: {e}") from None
    rng = np.random.default_rng(seed + 1)
    weights = [] if ns.get("params") is not None else \
        [_init_param(rng, n, p) for n, p in named_params]
    return mod, [n for n, _ in named_params], weights


def _init_param(rng: np.random.Generator, name: str, param: Any) -> np.ndarray:
    """Seeded weights scaled so deep stacks stay finite (1/sqrt(fan_in) like nn.Linear)."""
    shape = tuple(int(d) for d in param.shape)
    dtype = str(param.dtype)
    if len(shape) == 1:
        leaf = name.rsplit(".", 1)[-1]
        if "norm" in name and leaf == "weight":
            return np.ones(shape, dtype)
        return (0.02 * rng.standard_normal(shape)).astype(dtype)
    fan_in = int(np.prod(shape[1:]))
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(dtype)


def _relax_functions(mod: Any) -> list[str]:
    from tvm import relax

    return sorted(gv.name_hint for gv, f in mod.functions.items()
                  if isinstance(f, relax.Function))


def _entries(mod: Any) -> list[str]:
    """Relax functions when there are any (PrimFuncs are then their kernels), else PrimFuncs."""
    from toolkit.stack import compat

    relax_names = _relax_functions(mod)
    if relax_names:
        return relax_names
    prim = compat.tir().PrimFunc
    return sorted(gv.name_hint for gv, f in mod.functions.items() if isinstance(f, prim))


def _entry_of(mod: Any, source: str, entry: str | None, prefer: str | None = None) -> str:
    from toolkit.errors import suggest

    names = _entries(mod)
    if not names:
        raise UserError(f"workload {source}: the IRModule has no Relax function or PrimFunc "
                        f"to run")
    if entry is not None:
        if entry not in names:
            raise UserError(f"workload {source} has no entry {entry!r}{suggest(entry, names)} "
                            f"(entries: {', '.join(names)})")
        return entry
    for preferred in (prefer, "main", "forward"):
        if preferred in names:
            return preferred
    return names[0]


def _arg_specs(func: Any, source: str, need_static: bool) -> tuple[list[ArgSpec], int]:
    from toolkit.stack import compat

    specs = []
    for param in func.params:
        name = compat.var_name(param)
        info = compat.var_tensor_info(param)
        if info is None:
            raise UserError(f"workload {source}: argument {name} is not a tensor")
        values, dtype = info
        dims = []
        for v in values:
            if hasattr(v, "value"):
                dims.append(int(v.value))
            elif need_static:
                raise UserError(
                    f"workload {source}: argument {name} has symbolic shape "
                    f"{list(values)}; give 'inputs' in the workload file"
                )
            else:
                dims.append(-1)
        specs.append(ArgSpec(name, tuple(dims), dtype))
    attrs = func.attrs
    num_input = len(specs)
    if attrs is not None and "num_input" in attrs:
        num_input = int(attrs["num_input"])
    return specs, num_input


def _ordered(
    value: Any, names: list[str], what: str, source: str
) -> list[np.ndarray] | None:
    if value is None:
        return None
    if isinstance(value, dict):
        missing = [n for n in names if n not in value]
        if missing:
            raise UserError(f"workload {source}: '{what}' lacks {', '.join(missing)}")
        return [np.asarray(value[n]) for n in names]
    arrays = [np.asarray(v) for v in value]
    if len(arrays) != len(names):
        raise UserError(
            f"workload {source}: '{what}' has {len(arrays)} arrays, the function takes {len(names)}"
        )
    return arrays


def _from_onnx(path: Path, source: str, entry: str | None) -> Workload:
    try:
        import onnx
    except ImportError:
        raise UserError(
            f"workload {source} is ONNX: install the onnx package (pip install onnx)"
        ) from None
    from tvm.relax.frontend.onnx import from_onnx

    try:
        model = onnx.load(str(path))
    except Exception as e:  # noqa: BLE001 - protobuf raises several kinds
        raise UserError(f"workload {source}: not a readable ONNX model: {e}") from None
    if not model.graph.node:
        # protobuf reads an empty (or foreign) file as an empty model without complaint.
        raise UserError(f"workload {source}: not an ONNX model (no graph nodes; "
                        f"{path.stat().st_size} bytes)")
    initializers = {i.name for i in model.graph.initializer}
    shapes, dtypes = {}, {}
    for inp in model.graph.input:
        if inp.name in initializers:
            continue
        ttype = inp.type.tensor_type
        shapes[inp.name] = [d.dim_value if d.dim_value > 0 else 1 for d in ttype.shape.dim]
        dtypes[inp.name] = onnx.helper.tensor_dtype_to_np_dtype(ttype.elem_type).name
    mod = from_onnx(model, shape_dict=shapes, dtype_dict=dtypes, keep_params_in_input=False)
    entry = _entry_of(mod, source, entry)
    specs, num_input = _arg_specs(mod[entry], source, need_static=True)
    return Workload(
        name=path.stem, source=source, mod=mod, entry=entry, input_specs=specs[:num_input]
    )
