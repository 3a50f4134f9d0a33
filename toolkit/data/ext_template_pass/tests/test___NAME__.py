"""__NAME__'s own tests: python -m pytest tests (after tk ext build . --tvm-source TREE)."""

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
            with R.dataflow():
                z = R.add(x, y)
                out = R.multiply(z, y)
                R.output(out)
            return out

    return Module


def test_the_passes_are_the_libraries():
    assert __NAME__.transform.CountStores().info.name == "__NAME__.CountStores"
    assert __NAME__.transform.CountCalls().info.name == "__NAME__.CountCalls"


def test_relax_pass_counts_the_calls():
    mod = __NAME__.transform.CountCalls()(_module())
    assert int(mod["main"].attrs["__NAME__.num_calls"]) == 2


def test_tir_pass_counts_the_stores_of_the_legalized_primfuncs():
    mod = __NAME__.transform.CountStores()(relax.transform.LegalizeOps()(_module()))
    prims = {gv.name_hint: f for gv, f in mod.functions.items() if "num_stores" in str(f.attrs)}
    assert set(prims) == {"add", "multiply"}
    assert all(int(f.attrs["__NAME__.num_stores"]) == 1 for f in prims.values())


def test_the_pipeline_compiles_and_runs():
    exe = tvm.compile(_module(), target="llvm", relax_pipeline=__NAME__.pipeline)
    vm = relax.VirtualMachine(exe, tvm.cpu())
    a = np.full((2, 3), 2, "float32")
    out = vm["main"](tvm.runtime.tensor(a), tvm.runtime.tensor(a))
    np.testing.assert_allclose(out.numpy(), (a + a) * a)
