"""tk dump-ir on real compiles: the index against independent counts, the store, the CLI."""

from __future__ import annotations

import gzip
import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_tk

from toolkit.dumpir import store

UNSCHEDULED = '''\
"""A PrimFunc without a root block: dlight's ApplyDefaultSchedule raises on it for GPUs."""
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T


@I.ir_module
class Module:
    @T.prim_func
    def double(x: T.Buffer((16,), "float32"), y: T.Buffer((16,), "float32")):
        for i in range(16):
            y[i] = x[i] * T.float32(2)

    @R.function
    def main(x: R.Tensor((16,), "float32")) -> R.Tensor((16,), "float32"):
        cls = Module
        y = R.call_tir(cls.double, (x,), out_ty=R.Tensor((16,), "float32"))
        return y


mod = Module
'''


CUSTOM_PASS = '''\
"""A small MLP whose pipeline carries the user's own pass, which raises."""
import tvm
from tvm import relax
from tvm.relax.frontend import nn


class MLP(nn.Module):
    def __init__(self):
        self.fc1 = nn.Linear(8, 4)

    def forward(self, x):
        return nn.relu(self.fc1(x))


model = MLP()
spec = {"forward": {"x": nn.spec.Tensor((1, 8), "float32")}}


@tvm.transform.module_pass(opt_level=0, name="FuseMyOps")
def fuse_my_ops(mod, ctx):
    if any("matmul" in gv.name_hint for gv in mod.get_global_vars()):
        raise ValueError("FuseMyOps: cannot fuse matmul yet")
    return mod


pipeline = tvm.transform.Sequential([
    relax.transform.LegalizeOps(), fuse_my_ops, relax.get_pipeline("default_build"),
])
'''


CUSTOM_LEGALIZE = '''\
"""A small MLP whose pipeline legalizes relu the user's own way, which raises."""
import tvm
from tvm import relax, topi
from tvm.relax.frontend import nn


class MLP(nn.Module):
    def __init__(self):
        self.fc1 = nn.Linear(8, 4)

    def forward(self, x):
        return nn.relu(self.fc1(x))


model = MLP()
spec = {"forward": {"x": nn.spec.Tensor((1, 8), "float32")}}


def legalize_relu(bb, call):
    if True:  # the second case makes it raise inside tk only
        raise ValueError("my relu legalization: no kernel for this shape")
    return bb.call_te(topi.nn.relu, call.args[0])


pipeline = tvm.transform.Sequential([
    relax.transform.LegalizeOps({"relax.nn.relu": legalize_relu}),
    relax.get_pipeline("default_build"),
])
'''


RENAMING = '''\
"""An unreferenced helper PrimFunc and a user pass that only renames it."""
import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T


@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def helper(x: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.sblock("b"):
                vi = T.axis.spatial(4, i)
                x[vi] = T.float32(0)

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        y = R.add(x, x)
        return y


mod = Module


@tvm.transform.module_pass(opt_level=0, name="RenameHelper")
def rename_helper(mod, ctx):
    funcs = {}
    for gv, func in mod.functions.items():
        funcs[tvm.ir.GlobalVar("helper_v2") if gv.name_hint == "helper" else gv] = func
    return tvm.IRModule(funcs, attrs=mod.attrs)


pipeline = tvm.transform.Sequential([rename_helper, relax.get_pipeline("default_build")])
'''


def dump_ir(out: Path, workload: str = "builtin:mlp", target: str = "llvm", *extra: str):
    return run_tk("dump-ir", workload, "--target", target, "-o", str(out), "--json", *extra)


@pytest.fixture(scope="module")
def mlp_dump(tmp_path_factory) -> Path:
    """A dump of builtin:mlp with its texts rendered (``tk dump-ir page``)."""
    out = tmp_path_factory.mktemp("mlp") / "dump"
    r = dump_ir(out)
    assert r.returncode == 0, r.stderr
    r = run_tk("dump-ir", "page", str(out))
    assert r.returncode == 0 and r.stdout.strip() == str(out / "index.html"), r.stderr
    return out


def load_index(directory: Path) -> dict:
    return json.loads((directory / "index.json").read_text())


def test_index_matches_an_independent_count_of_the_passes(mlp_dump: Path):
    from tvm.ir.instrument import pass_instrument

    from toolkit import stack
    from toolkit.stack import compat, workload

    equal = compat.structural_equal()
    seen: list[str] = []
    unchanged: dict[int, bool] = {}
    pending: list[tuple[int, dict]] = []

    @pass_instrument
    class Witness:
        def run_before_pass(self, mod, info):
            pending.append((len(seen), {gv.name_hint: f for gv, f in mod.functions.items()}))
            seen.append(info.name)

        def run_after_pass(self, mod, info):
            seq, before = pending.pop()
            after = {gv.name_hint: f for gv, f in mod.functions.items()}
            unchanged[seq] = before.keys() == after.keys() and all(
                equal(before[n], after[n]) for n in before)

    stack.compile(workload.load("builtin:mlp"), "llvm", instruments=[Witness()])
    index = load_index(mlp_dump)
    # The passes TVM ran, in order; the dump adds records of wrappers' own work and codegen.
    records = [p for p in index["passes"] if p["kind"] in ("pass", "wrapper")]
    assert [p["name"] for p in records] == seen
    assert [p["change"] == "unchanged" for p in records] == [unchanged[i] for i in range(len(seen))]
    leaves = [p for p in index["passes"] if p["kind"] in ("pass", "own")]
    assert index["summary"]["passes"] == len(leaves)
    assert index["summary"]["changed_passes"] == sum(p["change"] != "unchanged" for p in leaves)
    wrappers = {p["seq"] for p in records if p["kind"] == "wrapper"}
    assert {p["name"] for p in records if p["seq"] in wrappers} >= {"_pipeline", "sequential"}
    assert all(p["parent"] in wrappers for p in records if p["parent"] is not None)
    legalize = next(p for p in leaves if p["name"] == "LegalizeOps")
    assert legalize["change"] == "changed" and legalize["added"]
    assert all(p["change"] == "unchanged" for p in leaves if p["name"] == "NormalizeGlobalVar")
    # FP8StorageLegalize re-nests statements: structure changes, the text does not.
    fp8 = next(p for p in leaves if p["name"] == "tirx.FP8StorageLegalize")
    assert fp8["change"] == "prints-identically"
    assert all(c["prints_identically"] and c["before"] == c["after"] for c in fp8["changed"])


def test_store_holds_each_distinct_text_once(mlp_dump: Path):
    index = load_index(mlp_dump)
    keys = set(index["input"].values())
    for p in index["passes"]:
        keys |= set(p["added"].values()) | set(p["removed"].values())
        keys |= {k for c in p["changed"] for k in (c["before"], c["after"])}
        keys |= set((p["received"] or {}).values()) | set((p["sources"] or {}).values())
    stored = json.loads(gzip.decompress((mlp_dump / "store.json.gz").read_bytes()))
    assert set(stored) == keys
    assert all(store.text_key(text) == key for key, text in stored.items())
    assert index["summary"]["functions_stored"] == len(stored)
    printed_by_dumpir = sum(p["functions"] for p in index["passes"] if p["kind"] == "pass")
    assert len(stored) * 5 < printed_by_dumpir  # most passes leave most functions alone
    assert sorted(p.name for p in mlp_dump.iterdir()) == [
        ".tk-dump", "index.html", "index.json", "store.json.gz"]  # one pack, not a file each
    assert "forward" in index["input"] and len(index["input"]) == 1


def test_show_prints_ir_and_diffs(mlp_dump: Path):
    r = run_tk("dump-ir", "show", str(mlp_dump))
    assert r.returncode == 0 and "LegalizeOps" in r.stdout and "changed" in r.stdout
    r = run_tk("dump-ir", "show", str(mlp_dump), "--pass", "LegalizeOps", "--diff")
    assert r.returncode == 0, r.stderr
    assert "+++ forward (after" in r.stdout and "= R.call_tir(matmul, (x, permute_dims)" in r.stdout
    assert "+++ matmul (after" in r.stdout  # added by the pass
    r = run_tk("dump-ir", "show", str(mlp_dump), "--pass", "tirx.FlattenBuffer", "--func", "matmul")
    assert r.returncode == 0, r.stderr
    assert "def matmul(" in r.stdout and ".view(" in r.stdout and "def add(" not in r.stdout
    r = run_tk("dump-ir", "show", str(mlp_dump), "--pass", "input")
    assert r.returncode == 0 and "R.matmul(x, permute_dims" in r.stdout
    r = run_tk("dump-ir", "show", str(mlp_dump), "--pass", "s_tir.ThreadSync")
    assert r.returncode == 2 and "pass a number" in r.stderr


def test_find_reports_where_a_pattern_appears_and_goes(mlp_dump: Path):
    r = run_tk("dump-ir", "find", str(mlp_dump), r"R\.call_tir", "--json")
    assert r.returncode == 0, r.stderr
    (hit,) = json.loads(r.stdout)
    assert (hit["function"], hit["appears"], hit["disappears"]) == (
        "forward", "LegalizeOps", "CallTIRRewrite")
    r = run_tk("dump-ir", "find", str(mlp_dump), r"T\.handle", "--func", "matmul*")
    assert r.returncode == 0, r.stderr
    assert "matmul: appears after" in r.stdout and "MakePackedAPI" in r.stdout


@pytest.mark.slow
def test_compare_aligns_pipelines_and_finds_the_divergent_pass(mlp_dump: Path, tmp_path: Path):
    other = tmp_path / "x86"
    r = dump_ir(other, "builtin:mlp", '{"kind": "llvm", "mcpu": "x86-64"}')
    assert r.returncode == 0, r.stderr
    r = run_tk("dump-ir", "compare", str(mlp_dump), str(other), "--json", "--raw", "target")
    result = json.loads(r.stdout)
    assert result["only_a"] == result["only_b"] == result["reordered"] == []
    # Relax passes ignore -mcpu; binding the target is the first pass to differ (when target
    # attributes are not normalised away).
    assert result["first_divergence"]["name"] == "tirx.BindTarget"

    # A fork whose pipeline lacks one pass and runs two others in the other order.
    fork = tmp_path / "fork"
    shutil.copytree(mlp_dump, fork)
    index = load_index(fork)
    leaves = [p for p in index["passes"] if p["kind"] == "pass"]
    names = [p["name"] for p in leaves]
    dropped = names.index("RewriteCUDAGraph")
    a, b = names.index("s_tir.LiftThreadBinding"), names.index("s_tir.LowerAutoCopy")
    leaves[a]["name"], leaves[b]["name"] = leaves[b]["name"], leaves[a]["name"]
    index["passes"] = [p for p in index["passes"] if p["seq"] != leaves[dropped]["seq"]]
    (fork / "index.json").write_text(json.dumps(index))
    r = run_tk("dump-ir", "compare", str(mlp_dump), str(fork))
    assert r.returncode == 0, r.stderr
    assert "only in A: " in r.stdout and "RewriteCUDAGraph" in r.stdout
    assert "reordered: s_tir.LiftThreadBinding" in r.stdout or \
        "reordered: s_tir.LowerAutoCopy" in r.stdout


@pytest.mark.slow
def test_cuda_dump_follows_host_and_device_modules(tmp_path: Path):
    out = tmp_path / "cuda"
    r = dump_ir(out, "builtin:mlp", "cuda -arch=sm_80")
    assert r.returncode == 0, r.stderr
    index = load_index(out)
    names = [p["name"] for p in index["passes"]]
    assert "tirx.SplitHostDevice" in names and "ApplyDefaultSchedule" in names
    schedule = next(p for p in index["passes"] if p["name"] == "ApplyDefaultSchedule")
    assert schedule["change"] == "changed"
    # Which dlight rule scheduled each function it changed.
    changed = {c["name"] for c in schedule["changed"]}
    assert set(schedule["schedule_rules"]) == changed
    assert set(schedule["schedule_rules"].values()) <= {
        "Matmul", "GEMV", "Reduction", "GeneralReduction", "Fallback", "LowBatchGEMV",
        "RMSNorm", "Transpose"}
    assert schedule["schedule_rules"]["transpose"] == "Fallback"
    r = run_tk("dump-ir", "show", str(out), "--pass", "ApplyDefaultSchedule", "--diff",
               "--func", "transpose")
    assert r.stdout.startswith("# transpose: scheduled by dlight rule Fallback\n")
    assert any(p["received"] for p in index["passes"])  # moved on to the device module
    r = run_tk("dump-ir", "find", str(out), "threadIdx.x", "--json")
    assert any(h["appears"] == "ApplyDefaultSchedule" for h in json.loads(r.stdout))


@pytest.mark.slow
def test_cuda_kernels_appear_at_split_host_device_and_modules_are_followed(tmp_path: Path):
    out = tmp_path / "cuda"
    r = dump_ir(out, "builtin:mlp", "cuda -arch=sm_80", "--asm")
    assert r.returncode == 0, r.stderr
    passes = load_index(out)["passes"]
    split = next(p for p in passes if p["name"] == "tirx.SplitHostDevice" and p["kind"] == "wrapper")
    own = [p for p in passes if p["parent"] == split["seq"] and p["kind"] == "own"]
    kernels = sorted(n for p in own for n in p["added"])
    assert kernels and all(n.endswith("_kernel") for n in kernels)
    # find and show --diff see the wrapper's own work, not "no function diff".
    r = run_tk("dump-ir", "find", str(out), "is_global_func", "--json")
    hits = {h["function"]: h for h in json.loads(r.stdout)}
    assert sorted(hits) == kernels
    assert {h["appears"] for h in hits.values()} == {"tirx.SplitHostDevice"}
    assert {h["appears_seq"] for h in hits.values()} == {own[0]["seq"]}
    r = run_tk("dump-ir", "show", str(out), "--pass", "tirx.SplitHostDevice", "--diff")
    assert all(f"+++ {k} (after #{split['seq']} tirx.SplitHostDevice)" in r.stdout for k in kernels)
    # After the split each record names the module it ran on: host (llvm) or device (cuda).
    filters = [p for p in passes if p["name"] == "tirx.Filter"]
    assert [(p["lane"], p["lane_target"]) for p in filters] == [
        ("host", "llvm"), ("device", "cuda -arch=sm_80")]
    assert split["seq"] > 0 and all(
        p["lane"] == "main" for p in passes if p["kind"] == "pass" and p["seq"] < split["seq"])
    # Codegen: the last records, one per module, with the generated source.
    codegen = [p for p in passes if p["kind"] == "codegen"]
    assert passes[-len(codegen):] == codegen
    assert {(p["lane"], tuple(sorted(p["sources"]))) for p in codegen} == {
        ("device", ("cuda.cu",)), ("host", ("host.ll", "host.s"))}
    cuda = next(p for p in codegen if p["lane"] == "device")
    r = run_tk("dump-ir", "show", str(out), "--pass", str(cuda["seq"]), "--func", "cuda.cu")
    assert all("void __launch_bounds__" in r.stdout and f" {k}(" in r.stdout for k in kernels)


BIG_SHARED = '''\
"""A CUDA kernel staging 256 KiB through shared memory: more than any GPU has per block."""
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T


@I.ir_module
class Module:
    @T.prim_func
    def stage(x: T.Buffer((65536,), "float32"), y: T.Buffer((65536,), "float32")):
        T.func_attr({"tirx.is_scheduled": True, "tirx.noalias": True})
        tx = T.launch_thread("threadIdx.x", 256)
        s = T.decl_buffer((65536,), "float32", scope="shared")
        for i in range(256):
            s[i * 256 + tx] = x[i * 256 + tx]
        for i in range(256):
            y[i * 256 + tx] = s[65535 - i * 256 - tx]

    @R.function
    def main(x: R.Tensor((65536,), "float32")) -> R.Tensor((65536,), "float32"):
        cls = Module
        y = R.call_tir(cls.stage, (x,), out_ty=R.Tensor((65536,), "float32"))
        return y


mod = Module
'''


@pytest.mark.gpu
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_verify_surfaces_what_ptxas_rejects_without_a_gpu(tmp_path: Path):
    workload = tmp_path / "big_shared.py"
    workload.write_text(BIG_SHARED)
    out = tmp_path / "dump"
    r = run_tk("dump-ir", str(workload), "--target", "cuda -arch=sm_80", "-o", str(out))
    if r.returncode:
        # TVM compiled the kernel itself to a cubin (NVRTC, with cuda-bindings installed, as
        # on a GPU machine): ptxas' refusal is the cause named, not NVRTC's first warning.
        assert r.returncode == 1 and "too much shared data" in r.stderr, r.stderr
        return
    # TVM handed the CUDA source on unchecked (no cuda-bindings): only --verify runs ptxas.
    r = run_tk("dump-ir", str(workload), "--target", "cuda -arch=sm_80", "-o", str(out),
               "--verify")
    assert r.returncode == 1
    assert "too much shared data" in r.stderr and "reproduce: nvcc -cubin -arch=sm_80" in r.stderr
    index = load_index(out)
    failed = index["passes"][index["summary"]["failed_pass"]]
    assert failed["kind"] == "codegen" and failed["verify"]["ok"] is False
    assert "stage_kernel" in (out / "failed" / "cuda.cu").read_text()
    reproduce = r.stderr.split("reproduce: ")[1].split()
    proc = subprocess.run(reproduce, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "too much shared data" in proc.stderr


@pytest.mark.slow
def test_a_pass_that_raises_leaves_a_dump_and_a_repro(tmp_path: Path):
    workload = tmp_path / "unscheduled.py"
    workload.write_text(UNSCHEDULED)
    out = tmp_path / "dump"
    r = run_tk("dump-ir", str(workload), "--target", "cuda -arch=sm_80", "-o", str(out))
    assert r.returncode == 1
    assert "pass ApplyDefaultSchedule" in r.stderr and "repro.py" in r.stderr
    index = load_index(out)
    assert index["summary"]["status"] == "failed"
    failed = index["passes"][index["summary"]["failed_pass"]]
    assert failed["name"] == "ApplyDefaultSchedule" and failed["status"] == "failed"
    assert "root block" in failed["error"]
    assert all(p["status"] == "ok" for p in index["passes"] if p["seq"] < failed["seq"]
               and p["seq"] not in _ancestors(index, failed))
    received = (out / "failed" / "input.py").read_text()
    assert "def double(" in received and '"op_pattern"' in received  # after AnnotateTIROpPattern
    proc = subprocess.run([sys.executable, str(out / "repro.py")], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert proc.returncode != 0 and "root block" in proc.stderr
    assert not (out / "index.html").exists()  # the texts and the page come on first ask
    # The second compile fails at the same pass, as expected: every text before it renders.
    r = run_tk("dump-ir", "show", str(out), "--pass", "ApplyDefaultSchedule", "--func", "double")
    assert r.returncode == 0, r.stderr
    assert "rendering texts" in r.stderr and "warning" not in r.stderr
    assert "def double(" in r.stdout and (out / "index.html").exists()


def _ancestors(index: dict, record: dict) -> set[int]:
    found = set()
    parent = record["parent"]
    while parent is not None:
        found.add(parent)
        parent = index["passes"][parent]["parent"]
    return found


def test_output_directory_is_never_mixed_with_other_files(tmp_path: Path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    r = dump_ir(mine)
    assert r.returncode == 2 and "not a tk dump" in r.stderr
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]

    out = tmp_path / "dump"
    assert dump_ir(out).returncode == 0
    (out / "failed").mkdir()
    (out / "failed" / "stray").write_text("not written by tk")
    r = dump_ir(out, "builtin:mlp", "llvm", "--funcs", "matmul*")
    assert r.returncode == 2 and "holds failed, which tk did not write" in r.stderr
    shutil.rmtree(out / "failed")
    r = dump_ir(out, "builtin:mlp", "llvm", "--funcs", "matmul*")
    assert r.returncode == 0, r.stderr  # replaced whole, not merged
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dump", "mine"]
    index = load_index(out)
    assert index["summary"]["func_filter"] == "matmul*"
    assert index["input"] == {"forward": None}


def test_all_writes_every_module_and_passes_filter_limits_storage(tmp_path: Path):
    out = tmp_path / "dump"
    r = dump_ir(out, "builtin:mlp", "llvm", "--all", "--passes", "tirx.*")
    assert r.returncode == 0, r.stderr
    index = load_index(out)
    modules = sorted(p.name for p in (out / "modules").iterdir())
    stored = [p for p in index["passes"] if p["kind"] == "pass" and p["stored"]]
    assert "input.py" in modules and len(modules) == len(stored) + 1
    assert all(p["name"].startswith("tirx.") for p in stored)
    legalize = next(p for p in index["passes"] if p["name"] == "LegalizeOps")
    assert not legalize["stored"] and set(legalize["added"].values()) == {None}


def test_a_users_own_pass_that_raises_is_reproduced_alone(tmp_path: Path):
    workload = tmp_path / "custom.py"
    workload.write_text(CUSTOM_PASS)
    out = tmp_path / "dump"
    r = run_tk("dump-ir", str(workload), "-o", str(out))
    assert r.returncode == 1 and "pass FuseMyOps" in r.stderr
    index = load_index(out)
    names = [(p["name"], p["status"]) for p in index["passes"]]
    assert names == [("sequential", "failed"), ("LegalizeOps", "ok"), ("FuseMyOps", "failed")]
    assert "cannot fuse matmul yet" in index["passes"][2]["error"]
    assert "def matmul(" in (out / "failed" / "input.py").read_text()  # LegalizeOps' output
    proc = subprocess.run([sys.executable, str(out / "repro.py")], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert proc.returncode != 0
    assert "running only FuseMyOps" in proc.stdout and "cannot fuse matmul yet" in proc.stderr


def test_a_repro_in_a_relative_output_directory_is_verified(tmp_path: Path):
    """-o dump, relative: tk ran the repro as dump/repro.py from inside dump (a path that is
    not there) and said it did not reproduce."""
    (tmp_path / "custom.py").write_text(CUSTOM_PASS)
    r = run_tk("dump-ir", "custom.py", "-o", "dump", cwd=tmp_path)
    assert r.returncode == 1 and "does not reproduce" not in r.stderr, r.stderr
    assert "reproduce: python dump/repro.py" in r.stderr
    assert load_index(tmp_path / "dump")["passes"][2]["repro"] == "reproduces"


def test_a_repro_reproduces_a_pass_configured_by_the_user_or_says_it_does_not(tmp_path: Path):
    """A plain LegalizeOps() rebuilt by name does not raise where the user's LegalizeOps({...})
    did: repro.py goes on to the compile with the workload's pipeline, which does; tk ran it
    and says so. Where nothing reproduces, tk says that instead of pointing at repro.py."""
    workload = tmp_path / "legalize.py"
    workload.write_text(CUSTOM_LEGALIZE)
    out = tmp_path / "dump"
    r = run_tk("dump-ir", str(workload), "-o", str(out))
    assert r.returncode == 1 and "pass LegalizeOps" in r.stderr
    assert f"reproduce: python {out / 'repro.py'}" in r.stderr
    failed = load_index(out)["passes"][load_index(out)["summary"]["failed_pass"]]
    assert failed["repro"] == "reproduces"
    proc = subprocess.run([sys.executable, str(out / "repro.py")], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert proc.returncode != 0 and "no kernel for this shape" in proc.stderr
    assert "running only LegalizeOps" in proc.stdout  # tried first, ran clean
    assert "LegalizeOps on failed/input.py ran without raising" in proc.stdout

    # A failure that only happens inside tk (the legalization raises only where toolkit is
    # imported) is not reproduced by repro.py: tk says so, and the reproduce line is the dump.
    again = tmp_path / "again"
    flaky = tmp_path / "only_in_tk.py"
    flaky.write_text(CUSTOM_LEGALIZE.replace(
        "if True:", 'if "toolkit" in __import__("sys").modules:'))
    r = run_tk("dump-ir", str(flaky), "-o", str(again))
    assert r.returncode == 1, r.stderr
    assert "repro.py does not reproduce it (it runs without raising here)" in r.stderr
    assert f"reproduce: tk --debug dump-ir {flaky}" in r.stderr
    failed = load_index(again)["passes"][load_index(again)["summary"]["failed_pass"]]
    assert failed["repro"] == "does not reproduce: it runs without raising here"


def test_reproduce_lines_quote_the_paths_they_name(tmp_path: Path):
    """An output directory named 'dd$(touch X)' is a word in the reproduce line, not a command."""
    workload = tmp_path / "custom.py"
    workload.write_text(CUSTOM_PASS)
    out = tmp_path / "dd$(touch X)"
    r = run_tk("dump-ir", str(workload), "-o", str(out))
    assert r.returncode == 1
    line = r.stderr.split("reproduce: ", 1)[1].splitlines()[0]
    proc = subprocess.run(line, shell=True, capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode != 0 and "cannot fuse matmul yet" in proc.stderr
    assert not (tmp_path / "X").exists()


def test_a_pass_that_only_renames_is_classified_renamed_only(tmp_path: Path):
    workload = tmp_path / "renaming.py"
    workload.write_text(RENAMING)
    out = tmp_path / "dump"
    r = run_tk("dump-ir", str(workload), "-o", str(out))
    assert r.returncode == 0, r.stderr
    rename = next(p for p in load_index(out)["passes"] if p["name"] == "RenameHelper")
    assert rename["change"] == "renamed-only" and not rename["changed"]
    assert [(x["old"], x["new"]) for x in rename["renamed"]] == [("helper", "helper_v2")]
    r = run_tk("dump-ir", "show", str(out), "--pass", "RenameHelper", "--diff")
    assert r.stdout == "# helper -> helper_v2: renamed, body unchanged\n"


SEGFAULT = CUSTOM_PASS.replace(
    '        raise ValueError("FuseMyOps: cannot fuse matmul yet")',
    '        tvm.ir.save_json(mod)  # segfaults in tvm::ffi::ToJSONGraph on the 0.27 wheel',
)


def test_a_pass_that_segfaults_leaves_the_dump_before_it_and_the_module_it_received(
        tmp_path: Path):
    """The texts were in the process the segfault killed: tk runs the compile again, stops
    before the pass that crashed, and keeps what a pass that raises keeps."""
    out = tmp_path / "dump"
    assert dump_ir(out).returncode == 0
    workload = tmp_path / "segv.py"
    workload.write_text(SEGFAULT)
    r = run_tk("dump-ir", str(workload), "-o", str(out))
    if r.returncode == 0:
        pytest.skip("this TVM's save_json does not crash: no segfaulting pass to test with")
    assert r.returncode == 1, r.stderr
    assert "killed by SIGSEGV; running the work again up to where it crashed" in r.stderr
    assert (f"the process died of SIGSEGV while pass FuseMyOps (#2) ran, compiling {workload} "
            "for llvm; a second run stopped before that pass") in r.stderr
    assert f"reproduce: python {out / 'repro.py'}" in r.stderr
    index = load_index(out)  # the earlier dump is replaced by this one, as a raising pass's
    assert index["summary"]["status"] == "failed" and index["summary"]["failed_pass"] == 2
    assert index["summary"]["first_run_crash"] == {
        "signal": "SIGSEGV", "seq": 2, "pass": "FuseMyOps", "stopped_before_it": True}
    names = [(p["name"], p["status"]) for p in index["passes"]]
    assert names == [("sequential", "failed"), ("LegalizeOps", "ok"), ("FuseMyOps", "failed")]
    assert index["passes"][2]["error"] == "the process died of SIGSEGV while this pass ran"
    assert index["passes"][2]["repro"] == "reproduces"
    assert "def matmul(" in (out / "failed" / "input.py").read_text()  # LegalizeOps' output
    r = run_tk("dump-ir", "show", str(out), "--pass", "LegalizeOps", "--func", "matmul")
    assert r.returncode == 0 and "def matmul(" in r.stdout
    # The texts' compile stopped before the pass that crashes, as the dump's second run did.
    assert "rendering texts" in r.stderr and "warning" not in r.stderr
    proc = subprocess.run([sys.executable, str(out / "repro.py")], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == -signal.SIGSEGV and "running only FuseMyOps" in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dump", "segv.py"]  # no leftovers


ONCE = CUSTOM_PASS.replace(
    '        raise ValueError("FuseMyOps: cannot fuse matmul yet")',
    '        import os, pathlib\n'
    '        marker = pathlib.Path(os.environ["TK_TEST_MARKER"])\n'
    '        if not marker.exists():\n'
    '            marker.touch()\n'
    '            os.kill(os.getpid(), 11)  # SIGSEGV, the first time only',
)


def test_a_crash_that_does_not_repeat_gets_a_repro_said_not_to_reproduce(tmp_path: Path):
    """The second run stops before the pass, so it cannot tell; the repro it writes is run,
    and runs clean: tk says so instead of pointing at it."""
    workload = tmp_path / "once.py"
    workload.write_text(ONCE)
    out = tmp_path / "dump"
    r = run_tk("dump-ir", str(workload), "-o", str(out),
               env={"TK_TEST_MARKER": str(tmp_path / "crashed")})
    assert r.returncode == 1, r.stderr
    assert "the process died of SIGSEGV while pass FuseMyOps (#2) ran" in r.stderr
    assert f"{out / 'repro.py'} does not reproduce it (it runs without crashing here)" in r.stderr
    assert "reproduce: python" not in r.stderr
    failed = load_index(out)["passes"][2]
    assert failed["repro"] == "does not reproduce: it runs without crashing here"


OTHER_PATH = CUSTOM_PASS.replace(
    '        raise ValueError("FuseMyOps: cannot fuse matmul yet")',
    '        import os\n'
    '        os.kill(os.getpid(), 11)  # SIGSEGV',
).replace(
    'pipeline = tvm.transform.Sequential([\n'
    '    relax.transform.LegalizeOps(), fuse_my_ops,',
    'import os, pathlib\n'
    'marker = pathlib.Path(os.environ["TK_TEST_MARKER"])\n'
    'first = not marker.exists()  # the second load of this file takes another pipeline\n'
    'marker.touch()\n'
    'pipeline = tvm.transform.Sequential([\n'
    '    relax.transform.LegalizeOps(), *([fuse_my_ops] if first else []),',
)


def test_a_second_run_that_takes_another_path_is_said_and_is_the_dump(tmp_path: Path):
    workload = tmp_path / "other.py"
    workload.write_text(OTHER_PATH)
    out = tmp_path / "dump"
    r = run_tk("dump-ir", str(workload), "-o", str(out),
               env={"TK_TEST_MARKER": str(tmp_path / "loaded")})
    assert r.returncode == 1, r.stderr
    assert ("the first run died of SIGSEGV inside pass FuseMyOps (#2); the second did not "
            "reach that pass as it was (the crash did not repeat), so this dump is of the "
            "second run") in r.stderr
    summary = load_index(out)["summary"]
    assert summary["status"] == "ok"
    assert summary["first_run_crash"]["stopped_before_it"] is False


def test_show_with_func_alone_lists_the_passes_that_touched_it(tmp_path: Path):
    """--func without --pass printed the whole timeline, whatever it named."""
    out = tmp_path / "dump"
    assert dump_ir(out).returncode == 0
    rows = run_tk("dump-ir", "show", str(out), "--func", "matmul*").stdout.splitlines()
    every = run_tk("dump-ir", "show", str(out)).stdout.splitlines()
    assert rows and len(rows) < len(every) and set(rows) <= set(every)
    assert any(" LegalizeOps " in row for row in rows)  # it adds the matmul kernels
    r = run_tk("dump-ir", "show", str(out), "--func", "nope")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == f"tk: error: no function matching 'nope' in {out}"


NOT_DETERMINISTIC = '''\
"""A module whose constant is the time it was loaded: no two compiles build the same IR."""
import time

from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T

SCALE = float(time.time_ns() % 1000003 + 1)


@I.ir_module
class Module:
    @T.prim_func
    def scale(x: T.Buffer((16,), "float32"), y: T.Buffer((16,), "float32")):
        for i in range(16):
            y[i] = x[i] * T.float32(SCALE)

    @R.function
    def main(x: R.Tensor((16,), "float32")) -> R.Tensor((16,), "float32"):
        cls = Module
        y = R.call_tir(cls.scale, (x,), out_ty=R.Tensor((16,), "float32"))
        return y


mod = Module
'''


def _function_keys(index: dict) -> set[str]:
    keys = {k for k in index["input"].values() if k}
    for p in index["passes"]:
        keys |= {k for k in p["added"].values() if k} | {k for k in p["removed"].values() if k}
        keys |= {k for c in p["changed"] for k in (c["before"], c["after"]) if k}
        keys |= {k for k in (p["received"] or {}).values() if k}
    return keys


def test_texts_are_rendered_on_first_ask_and_cached(tmp_path: Path):
    workload = tmp_path / "model.py"
    workload.write_text(UNSCHEDULED)
    out = tmp_path / "dump"
    r = run_tk("dump-ir", str(workload), "--target", "llvm", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert f"page:  tk dump-ir page {out}" in r.stdout
    # Nothing was printed: the index names versions by version key, the pack holds only
    # the generated LLVM IR, and there is no page yet.
    index = load_index(out)
    keys = _function_keys(index)
    assert keys and all(store.is_version_key(k) for k in keys)
    assert index["recompile"]["workload"] == str(workload)
    assert index["recompile"]["rendered"] is False
    packed = json.loads(gzip.decompress((out / "store.json.gz").read_bytes()))
    assert list(packed) == list(next(p for p in index["passes"] if p["kind"] == "codegen")
                                ["sources"].values())
    assert sorted(p.name for p in out.iterdir()) == [".tk-dump", "index.json", "store.json.gz"]
    # The timeline needs no text: it renders nothing.
    r = run_tk("dump-ir", "show", str(out))
    assert r.returncode == 0 and "LegalizeOps" in r.stdout and "rendering" not in r.stderr
    assert "a change that prints identically shows as changed" in r.stderr
    assert not (out / "index.html").exists()

    r = run_tk("dump-ir", "show", str(out), "--pass", "tirx.FlattenBuffer", "--diff")
    assert r.returncode == 0, r.stderr
    assert f"rendering texts: compiling {workload} again (once; cached in {out})" in r.stderr
    assert "--- double (before #" in r.stdout and "+++ double (after #" in r.stdout
    index = load_index(out)
    assert index["recompile"]["rendered"] is True and index["recompile"]["not_reproduced"] == []
    keys = _function_keys(index)
    packed = json.loads(gzip.decompress((out / "store.json.gz").read_bytes()))
    assert keys <= set(packed) and not any(store.is_version_key(k) for k in keys)
    assert all(store.text_key(text) == key for key, text in packed.items())
    assert (out / "index.html").is_file()
    assert run_tk("dump-ir", "show", str(out)).returncode == 0  # the manifest vouches for all

    # Cached: a later ask compiles nothing, so even a changed workload file does not matter.
    workload.write_text(UNSCHEDULED.replace("T.float32(2)", "T.float32(3)"))
    r = run_tk("dump-ir", "find", str(out), r"T\.float32\(2\.0\)")
    assert r.returncode == 0 and "rendering" not in r.stderr, r.stderr
    assert "double: appears in the input" in r.stdout


def test_a_changed_workload_file_or_another_tvm_is_refused(tmp_path: Path):
    from toolkit.dumpir import directory

    workload = tmp_path / "model.py"
    workload.write_text(UNSCHEDULED)
    out = tmp_path / "dump"
    assert run_tk("dump-ir", str(workload), "--target", "llvm", "-o", str(out)).returncode == 0
    workload.write_text(UNSCHEDULED.replace("T.float32(2)", "T.float32(3)"))
    r = run_tk("dump-ir", "show", str(out), "--pass", "LegalizeOps")
    assert r.returncode == 2 and r.stdout == ""
    assert f"{workload} changed since {out} was dumped" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr

    workload.write_text(UNSCHEDULED)
    index = load_index(out)
    index["recompile"]["tvm_version"] = "0.19.0"
    (out / "index.json").write_text(json.dumps(index))
    directory.write_manifest(out)  # as a dump made by another TVM would carry
    r = run_tk("dump-ir", "diff", str(out), str(out))
    assert r.returncode == 2 and f"{out} was dumped with TVM 0.19.0" in r.stderr
    assert load_index(out)["recompile"]["rendered"] is False


def test_a_version_the_second_compile_does_not_build_is_reported_not_invented(tmp_path: Path):
    workload = tmp_path / "clock.py"
    workload.write_text(NOT_DETERMINISTIC)
    out = tmp_path / "dump"
    assert run_tk("dump-ir", str(workload), "--target", "llvm", "-o", str(out)).returncode == 0
    r = run_tk("dump-ir", "show", str(out), "--pass", "input")
    assert r.returncode == 0, r.stderr
    assert "were not reproduced by the second compile" in r.stderr
    # main calls scale and did not change: it renders; scale's constant did, so its versions
    # are reported, not replaced by the second compile's.
    assert "def main(" in r.stdout
    assert "def scale(" not in r.stdout and "scale: not reproduced by the second compile" in r.stdout
    missing = load_index(out)["recompile"]["not_reproduced"]
    assert missing and all(k.endswith(":scale") for k in missing)


def test_a_version_the_second_compile_made_elsewhere_is_not_taken_for_it(tmp_path: Path):
    """Versions are numbered in the order they appear; a key the second compile made at
    another pass than the index says is reported, never shown as the other version's text."""
    from toolkit.dumpir import directory

    workload = tmp_path / "model.py"
    workload.write_text(UNSCHEDULED)
    out = tmp_path / "dump"
    assert run_tk("dump-ir", str(workload), "--target", "llvm", "-o", str(out)).returncode == 0
    index = load_index(out)
    first = index["input"]["double"]
    later = next(c["after"] for p in index["passes"] for c in p["changed"]
                 if c["name"] == "double" and c["before"] == first)
    assert store.is_version_key(first) and store.is_version_key(later) and first != later
    text = (out / "index.json").read_text()
    swapped = text.replace(first, "\0").replace(later, first).replace("\0", later)
    (out / "index.json").write_text(swapped)
    directory.write_manifest(out)
    r = run_tk("dump-ir", "show", str(out), "--pass", "input", "--func", "double")
    assert r.returncode == 0, r.stderr
    assert "double: not reproduced by the second compile" in r.stdout, r.stdout
    assert "def double(" not in r.stdout
    assert {first, later} <= set(load_index(out)["recompile"]["not_reproduced"])


def test_a_dump_of_the_earlier_format_reads_without_compiling(mlp_dump: Path, tmp_path: Path):
    """tk before rendering-on-ask stored every text as it dumped: no recompile record."""
    from toolkit.dumpir import directory

    old = tmp_path / "old"
    shutil.copytree(mlp_dump, old)
    index = load_index(old)
    del index["recompile"]
    (old / "index.json").write_text(json.dumps(index))
    directory.write_manifest(old)
    r = run_tk("dump-ir", "show", str(old), "--pass", "LegalizeOps", "--func", "forward")
    assert r.returncode == 0 and "rendering" not in r.stderr, r.stderr
    assert "R.call_tir(matmul" in r.stdout
    r = run_tk("dump-ir", "compare", str(old), str(mlp_dump))
    assert r.returncode == 0 and "no aligned pass turns" in r.stdout, r.stdout + r.stderr
