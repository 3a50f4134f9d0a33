"""Compile and run a tiny kernel on device 0 of one GPU kind with the TVM on sys.path.

Run by path (``python kernel.py cuda``) in a build's own environment; one JSON line:
``{"ok": true|false|null, "detail": ...}`` (null: no such device on this machine).
"""

import json
import sys


def main():
    kind = sys.argv[1]
    try:
        import tvm

        present = bool(tvm.device(kind, 0).exist)
    except Exception as exc:  # noqa: BLE001 - no way to ask: not a kernel failure
        print(json.dumps({"ok": None, "detail": f"cannot ask for a {kind} device: "
                          f"{type(exc).__name__}: {exc}"[:500]}))
        return
    if not present:
        print(json.dumps({"ok": None, "detail": f"no {kind} device 0 here"}))
        return
    try:
        import numpy as np
        from tvm import te

        n = 64
        a = te.placeholder((n,), name="a", dtype="float32")
        b = te.compute((n,), lambda i: a[i] + 1.0, name="b")
        func = te.create_prim_func([a, b])
        sch = tvm.s_tir.Schedule(func) if hasattr(tvm, "s_tir") else tvm.tir.Schedule(func)
        (i,) = sch.get_loops(sch.get_block("b"))
        bx, tx = sch.split(i, [None, 32])
        sch.bind(bx, "blockIdx.x")
        sch.bind(tx, "threadIdx.x")
        lib = tvm.compile(sch.mod, target=tvm.target.Target(kind))
        dev = tvm.device(kind, 0)
        make = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
        x = make(np.arange(n, dtype="float32"), dev)
        y = make(np.zeros(n, dtype="float32"), dev)
        lib(x, y)
        ok = bool(np.allclose(y.numpy(), np.arange(n, dtype="float32") + 1.0))
        print(json.dumps({"ok": ok, "detail": "a + 1 over 64 floats" + ("" if ok else ": wrong")}))
    except Exception as exc:  # noqa: BLE001 - the failure is the fact
        print(json.dumps({"ok": False, "detail": f"{type(exc).__name__}: {exc}"[:500]}))


if __name__ == "__main__":
    main()
