"""Workloads: what every model-level command takes, turned into one compile-ready object.

Accepted forms:

* ``builtin:NAME`` - a workload shipped in ``toolkit/workloads/NAME.py``;
* a ``.py`` file defining ``mod`` (an IRModule) or ``model`` + ``spec`` (a
  ``relax.frontend.nn.Module`` and its export spec), optionally ``inputs``, ``params``
  (dicts by name, or lists in argument order) and ``reference`` (a callable taking the
  entry function's arguments as numpy arrays - inputs, then params - or the expected
  output arrays) and ``pipeline`` (a Relax pass given to ``tvm.compile`` as its
  ``relax_pipeline``: how a workload brings a fork's own passes into the compile);
* an ``.onnx`` file, through TVM's ONNX frontend.
"""

from __future__ import annotations

import runpy
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from toolkit.errors import UserError

BUILTIN_DIR = Path(__file__).parent / "workloads"


@dataclass(frozen=True)
class ArgSpec:
    name: str
    shape: tuple[int, ...]
    dtype: str


@dataclass
class Workload:
    """A Relax module plus everything needed to call its entry function."""

    name: str
    source: str  # what the user typed: reproduces the load
    mod: Any  # tvm.IRModule
    entry: str
    input_specs: list[ArgSpec]
    params: list[np.ndarray] = field(default_factory=list)
    inputs: list[np.ndarray] | None = None
    reference: Callable[..., Any] | Sequence[np.ndarray] | None = None
    pipeline: Any = None  # tvm.transform.Pass replacing the target's default Relax pipeline

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


def load(source: str, seed: int = 0) -> Workload:
    """Load a workload from ``builtin:NAME``, a ``.py`` file or an ``.onnx`` file."""
    if source.startswith("builtin:"):
        name = source.split(":", 1)[1]
        path = BUILTIN_DIR / f"{name}.py"
        if name not in builtin_names():
            raise UserError(
                f"unknown builtin workload {name!r}; available: {', '.join(builtin_names())}"
            )
        return _from_namespace(_run_file(path, source), name, source, seed)
    path = Path(source)
    if not path.exists():
        raise UserError(f"workload file {source!r} does not exist")
    if path.suffix == ".onnx":
        return _from_onnx(path, source)
    if path.suffix != ".py":
        raise UserError(
            f"workload {source!r}: expected a .py or .onnx file, or builtin:NAME "
            f"({', '.join(builtin_names())})"
        )
    return _from_namespace(_run_file(path, source), path.stem, source, seed)


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
    except Exception as e:  # noqa: BLE001 - anything the user's file raises is their error
        frame = traceback.extract_tb(e.__traceback__)[-1]
        raise UserError(
            f"workload {source} raised {type(e).__name__}: {e} "
            f"(at {Path(frame.filename).name}:{frame.lineno})"
        ) from None


def _from_namespace(ns: dict[str, Any], name: str, source: str, seed: int) -> Workload:
    """Both file shapes (``mod``, or ``model`` + ``spec``) end in the same Workload."""
    from tvm import IRModule

    if "model" in ns:
        if "spec" not in ns:
            raise UserError(f"workload {source} defines 'model' but no 'spec' to export it with")
        mod, param_names, default_params = _export_nn(ns, source, seed)
        entry = next(iter(ns["spec"]))
    else:
        mod = ns.get("mod")
        if mod is None:
            raise UserError(
                f"workload {source} defines neither 'mod' (an IRModule) nor 'model' + 'spec'"
            )
        if not isinstance(mod, IRModule):
            raise UserError(f"workload {source}: 'mod' is a {type(mod).__name__}, not an IRModule")
        entry = _entry_of(mod, source)
        param_names, default_params = None, []
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


def _entry_of(mod: Any, source: str) -> str:
    from tvm import relax

    names = [gv.name_hint for gv, f in mod.functions.items() if isinstance(f, relax.Function)]
    if not names:
        raise UserError(f"workload {source}: the IRModule has no Relax function to run")
    for preferred in ("main", "forward"):
        if preferred in names:
            return preferred
    return sorted(names)[0]


def _arg_specs(func: Any, source: str, need_static: bool) -> tuple[list[ArgSpec], int]:
    from toolkit.tvm_side import compat

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


def _from_onnx(path: Path, source: str) -> Workload:
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
    entry = _entry_of(mod, source)
    specs, num_input = _arg_specs(mod[entry], source, need_static=True)
    return Workload(
        name=path.stem, source=source, mod=mod, entry=entry, input_specs=specs[:num_input]
    )
