"""__NAME__'s own tests: python -m pytest tests"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import __NAME__  # noqa: E402
import tvm  # noqa: E402
from tvm import relax  # noqa: E402
from tvm.script import relax as R  # noqa: E402


def _module():
    @tvm.script.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32")):
            return R.add(x, y)

    return Module


def test_relax_pass_tags_relax_functions():
    mod = __NAME__.TagRelaxFunctions(_module())
    assert bool(mod["main"].attrs["__NAME__.tagged"])


def test_tir_pass_tags_the_legalized_primfuncs():
    mod = __NAME__.TagPrimFuncs(relax.transform.LegalizeOps()(_module()))
    prims = [f for f in mod.functions.values() if isinstance(f, __NAME__.tir_passes.PrimFunc)]
    assert prims and all(int(f.attrs["__NAME__.num_params"]) == 3 for f in prims)


def test_the_pipeline_compiles_and_runs():
    exe = tvm.compile(_module(), target="llvm", relax_pipeline=__NAME__.pipeline)
    vm = relax.VirtualMachine(exe, tvm.cpu())
    a = np.ones((2, 3), "float32")
    out = vm["main"](tvm.runtime.tensor(a), tvm.runtime.tensor(a))
    np.testing.assert_allclose(out.numpy(), a + a)
