"""``tk build`` for real: cmake + ninja compiles of the miniature fork, the store, manifests."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from minifork import (
    add_doc_commit,
    add_ffi_registry,
    add_python_commit,
    add_source_commit,
    break_build_commit,
    commit_file,
    git,
    make_minifork,
)

from toolkit.builds.backends import BuildFailed, BuildJob, read_cmake_cache
from toolkit.builds.recipes import Request
from toolkit.builds.source import inspect, tree_key, tree_keys
from toolkit.builds.tools import PLAIN_WRAPPERS
from toolkit.errors import TkError, UserError

pytestmark = pytest.mark.skipif(not (shutil.which("cmake") and shutil.which("ninja")),
                                reason="needs cmake and ninja")


@pytest.fixture
def cache(tmp_path) -> dict[str, str]:
    return {"TK_CACHE": str(tmp_path / "cache")}


def build_json(tk, fork: Path, cache: dict[str, str], *args: str) -> dict:
    r = tk("build", "-C", str(fork), *args, "--json", env=cache)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def in_build_env(tk, build_id: str, cache: dict[str, str], code: str, cwd: Path) -> str:
    """Run Python in a shell after ``eval "$(tk env ID)"``, as a user would."""
    exports = tk("env", build_id, env=cache)
    assert exports.returncode == 0, exports.stderr
    script = f'{exports.stdout}\nexec {sys.executable} -c "$0"'
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TVM_LIBRARY_PATH")}
    proc = subprocess.run(["bash", "-c", script, code], capture_output=True, text=True, env=env,
                          cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_build_manifest_store_and_env(tk, tmp_path, cache):
    fork = make_minifork(tmp_path / "tvm")
    m = build_json(tk, fork, cache, "--llvm")
    assert m["from_store"] is False
    store = Path(cache["TK_CACHE"]) / "builds" / m["id"]
    assert json.loads((store / "manifest.json").read_text())["id"] == m["id"]
    # Artifacts: the stored copies are what the manifest says, byte for byte, and so is the
    # build directory's own library.
    assert {a["name"] for a in m["artifacts"]} == {"libtvm.so", "libtvm_runtime.so"}
    for art in m["artifacts"]:
        assert Path(art["path"]).parent == store / "lib"
        assert sha256(art["path"]) == art["sha256"] == sha256(art["built"])
        assert Path(art["path"]).stat().st_size == art["size"]
    # What CMake used (TVMBuildOptions.txt / CMakeCache.txt), not what was asked for.
    used = m["cmake_values"]
    assert used["USE_LLVM"] == "llvm-config --ignore-libllvm --link-static"
    assert used["CMAKE_BUILD_TYPE"] == "RelWithDebInfo" and used["USE_CUDA"] == "OFF"
    assert m["mismatches"] == []
    assert m["source"]["commit"] == git(fork, "rev-parse", "HEAD")
    assert m["source"]["dirty"] is False and m["source"]["tree_key"] == tree_key(fork)
    assert m["toolchain"]["cmake"].startswith("cmake version")
    assert "llvm" in m["toolchain"] and m["toolchain"]["cxx"]
    assert Path(m["log"]).exists() and "Linking CXX shared library" in Path(m["log"]).read_text()
    assert m["timings"]["compile"] > 0 and m["build_dir"].startswith(str(fork / "build-"))
    if shutil.which("ccache"):  # used when available, outside the plan (it changes nothing built)
        assert "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache" in m["commands"][0]
        assert used["CMAKE_CXX_COMPILER_LAUNCHER"] == "ccache" and "ccache" in m["toolchain"]
    # The post-build check ran in the build's own environment and saw the fork's library.
    chk = m["check"]
    assert chk["ok"], chk
    assert chk["tvm_file"] == str(fork / "python/tvm/__init__.py")
    assert chk["libinfo"]["USE_LLVM"] == used["USE_LLVM"]
    assert chk["libinfo"]["LLVM_VERSION"] != "none"
    # eval "$(tk env ID)" from elsewhere puts exactly this build in use.
    out = in_build_env(tk, m["id"], cache,
                       "import tvm; print(tvm._LIB_PATHS[1]); print(tvm.support.libinfo()['USE_LLVM'])",
                       cwd=tmp_path)
    assert out.splitlines() == [str(store / "lib/libtvm.so"), used["USE_LLVM"]]
    # ls and show list it.
    ls = json.loads(tk("build", "ls", "--json", env=cache).stdout)
    assert [b["id"] for b in ls["builds"]] == [m["id"]]
    assert ls["builds"][0]["bytes"] >= sum(a["size"] for a in m["artifacts"])
    show = tk("build", "show", m["id"][:6], env=cache)
    assert show.returncode == 0 and f"sha256 {m['artifacts'][0]['sha256']}" in show.stdout
    assert tk("build", "show", "zzzz", env=cache).returncode == 2


def test_repeat_is_served_from_the_store_and_python_only_commits_reuse_it(tk, tmp_path, cache):
    fork = make_minifork(tmp_path / "tvm")
    first = build_json(tk, fork, cache)
    again = build_json(tk, fork, cache)
    assert again["from_store"] is True and again["id"] == first["id"]
    parent = git(fork, "rev-parse", "HEAD")
    add_python_commit(fork)
    add_doc_commit(fork)
    assert tree_key(fork, "HEAD") == tree_key(fork, parent)
    reused = build_json(tk, fork, cache)
    assert reused["from_store"] is True and reused["id"] == first["id"]
    add_source_commit(fork, "v2")
    assert tree_key(fork, "HEAD") != tree_key(fork, parent)
    rebuilt = build_json(tk, fork, cache)
    assert rebuilt["from_store"] is False and rebuilt["id"] != first["id"]
    assert rebuilt["build_dir"] == first["build_dir"]  # same plan, same incremental build dir
    log = Path(rebuilt["log"]).read_text()
    assert log.count("Building CXX object") == 1, log  # only module.cc recompiled
    assert rebuilt["timings"]["configure"] == 0.0  # Ninja alone: the plan was configured here


def cmake_steps(record: dict) -> list[str]:
    """The programs the build log says ran the configure and the build."""
    return [ln.split()[1] for ln in Path(record["log"]).read_text().splitlines()
            if ln.startswith("$ ") and (" -S " in ln or " --build " in ln)]


def test_builds_run_cmake_itself_not_the_plain_wrapper_in_front_of_it(tk, tmp_path, cache):
    """`cmake` on PATH is often a pyenv shim or pip's console script (0.2-0.4 s a call, and
    they add nothing): tk asks it once where CMake is and runs that; reproduce lines say
    `cmake`."""
    on_path = shutil.which("cmake")
    head = Path(os.path.realpath(on_path)).read_bytes()[:4096]
    if not (head.startswith(b"#!") and any(w in head for w in PLAIN_WRAPPERS)):
        pytest.skip(f"cmake on PATH ({on_path}) is CMake itself here: no wrapper to skip")
    m = build_json(tk, make_minifork(tmp_path / "tvm"), cache)
    ran = cmake_steps(m)
    assert len(ran) == 2, ran  # configure, build
    assert all(Path(r).is_absolute() and Path(r) != Path(on_path) and
               Path(r).read_bytes()[:4] == b"\x7fELF" for r in ran), ran
    assert all(c.startswith("cmake ") for c in m["commands"]), m["commands"]


def test_a_wrapper_of_the_sites_own_is_run_as_it_is(tk, tmp_path, cache):
    """A wrapper tk does not know may set what its CMake needs: the build goes through it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "wrapper-calls"
    wrapper = bin_dir / "cmake"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {shutil.which("cmake")} "$@"\n')
    wrapper.chmod(0o755)
    env = {**cache, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    m = build_json(tk, make_minifork(tmp_path / "tvm"), env)
    assert cmake_steps(m) == ["cmake", "cmake"]
    asked = calls.read_text().splitlines()
    assert any(a.startswith("-S ") for a in asked) and any(a.startswith("--build ") for a in asked)


def test_keys_of_a_range_at_once_are_each_commits_own(tmp_path):
    """A bisection keys its whole range with one diff from the first commit: each key must
    be the one the commit's own listing gives, through edits, deletions, renames and adds."""
    fork = make_minifork(tmp_path / "tvm")
    shas = [git(fork, "rev-parse", "HEAD"), add_source_commit(fork, "v2")]
    shas.append(add_python_commit(fork))
    cc = sorted((fork / "src").rglob("*.cc"))
    git(fork, "mv", str(cc[0].relative_to(fork)), "src/renamed_file.cc")
    git(fork, "commit", "-q", "-m", "rename")
    shas.append(git(fork, "rev-parse", "HEAD"))
    git(fork, "rm", "-q", str(cc[1].relative_to(fork)))
    git(fork, "commit", "-q", "-m", "delete")
    shas.append(git(fork, "rev-parse", "HEAD"))
    shas.append(commit_file(fork, "src/new_file.cc", "int added() { return 1; }\n"))
    alone = {sha: tree_key(fork, sha) for sha in shas}
    assert tree_keys(fork, shas) == alone
    assert tree_keys(fork, shas[::-1]) == alone  # any commit may be the one diffed from
    assert len(set(alone.values())) == len(shas) - 1  # the Python-only commit shares a key
    assert tree_keys(fork, ["HEAD~1", "HEAD"]) == {"HEAD~1": alone[shas[-2]],
                                                    "HEAD": alone[shas[-1]]}
    with pytest.raises(UserError, match="no-such-ref"):
        tree_keys(fork, [shas[0], "no-such-ref"])


def packing_done(cache: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Wait for the packing a tk build left to a process of its own."""
    from toolkit.builds import gc

    monkeypatch.setenv("TK_CACHE", cache["TK_CACHE"])
    gc.wait_for_packing()


def test_older_builds_are_packed_and_unpacked_when_used(tk, tmp_path, cache, monkeypatch):
    """Storing a build packs the others' libraries (compressed, out of lib/, in the
    background); using one again (tk env, a store hit) puts them back byte for byte; rm and
    gc keep what others need."""
    fork = make_minifork(tmp_path / "tvm")
    first = build_json(tk, fork, cache)
    parent = git(fork, "rev-parse", "HEAD")
    add_source_commit(fork, "v2")
    second = build_json(tk, fork, cache)
    packing_done(cache, monkeypatch)
    root = Path(cache["TK_CACHE"])
    old_entry = root / "builds" / first["id"]
    second_shas = {a["sha256"] for a in second["artifacts"]}
    # libtvm.so changed with the C++ commit; libtvm_runtime.so is the same in both builds.
    changed = next(a for a in first["artifacts"] if a["name"] == "libtvm.so")
    shared = next(a for a in first["artifacts"] if a["name"] == "libtvm_runtime.so")
    assert changed["sha256"] not in second_shas and shared["sha256"] in second_shas
    # The first build's libraries are out of its lib/; the changed one is packed, the shared
    # one stays a full file (the second links it); the second's are all full files.
    assert not Path(changed["path"]).exists() and not Path(shared["path"]).exists()
    links = json.loads((old_entry / ".packed").read_text())
    assert links["lib/libtvm.so"] == changed["sha256"]
    assert links["lib/libtvm_runtime.so"] == shared["sha256"]
    assert (root / "packs" / changed["sha256"][:2] / f"{changed['sha256']}.xz").is_file()
    assert not (root / "packs" / shared["sha256"][:2] / f"{shared['sha256']}.xz").exists()
    assert all(Path(a["path"]).is_file() for a in second["artifacts"] if not a["link"])
    ls = json.loads(tk("build", "ls", "--json", env=cache).stdout)
    sizes = {b["id"]: b for b in ls["builds"]}
    assert set(sizes) == {first["id"], second["id"]}
    assert sizes[first["id"]]["packed"] and not sizes[second["id"]]["packed"]
    assert 0 < sizes[first["id"]]["unique_bytes"] < changed["size"]  # the pack, compressed
    assert " packed" in tk("build", "ls", env=cache).stdout
    # tk env unpacks it: the shell imports the first build, its library as it was built.
    out = in_build_env(tk, first["id"], cache, "import tvm; print(tvm._LIB_PATHS[1])",
                       cwd=tmp_path)
    assert out == str(old_entry / "lib/libtvm.so")
    assert all(sha256(a["path"]) == a["sha256"] for a in (changed, shared))
    assert not (old_entry / ".packed").exists()
    # A build handed to a shell stays unpacked when another is stored; a store hit of the
    # other serves it as it is.
    git(fork, "checkout", "-q", parent)
    assert build_json(tk, fork, cache)["from_store"] is True
    git(fork, "checkout", "-q", "-")
    hit = build_json(tk, fork, cache)
    assert hit["from_store"] is True and hit["id"] == second["id"]
    assert Path(changed["path"]).is_file()
    # rm of the second keeps what the first needs; gc leaves the one build unpacked.
    assert tk("build", "rm", second["id"], env=cache).returncode == 0
    assert tk("build", "gc", env=cache).returncode == 0
    out = in_build_env(tk, first["id"], cache, "import tvm; print(tvm.__file__)", cwd=tmp_path)
    assert out == str(fork / "python/tvm/__init__.py")
    assert all(sha256(a["path"]) == a["sha256"] for a in (changed, shared))
    assert not list((root / "packs").glob("*/*")) or all(
        p.name.split(".")[0] in {a["sha256"] for a in first["artifacts"]}
        for p in (root / "packs").glob("*/*"))


def test_forced_rebuild_of_unchanged_tree_reuses_the_check_of_the_same_bytes(tk, tmp_path, cache):
    fork = make_minifork(tmp_path / "tvm")
    first = build_json(tk, fork, cache)
    again = build_json(tk, fork, cache, "--force")
    assert again["from_store"] is False and again["id"] == first["id"]
    assert [a["sha256"] for a in again["artifacts"]] == [a["sha256"] for a in first["artifacts"]]
    assert again["check"] == first["check"] and again["timings"]["check"] == 0.0
    assert again["timings"]["configure"] == 0.0
    # A source edit is another build (another key): nothing checked before, so checked.
    src = fork / "src/runtime/device_api.cc"
    src.write_text(src.read_text() + "// edited\n")
    changed = build_json(tk, fork, cache, "--force")
    assert changed["check"]["ok"] and changed["timings"]["check"] > 0


def test_a_rebuild_with_the_same_surface_stands_on_the_earlier_import(tk, tmp_path, cache):
    """The edit-rebuild loop: a relinked library that loads and registers what the previous
    build's did, with the same Python sources, is not imported again; any change to what the
    import meets is."""
    fork = make_minifork(tmp_path / "tvm", layout="main")
    add_ffi_registry(fork, ["mini.alpha", "mini.beta"])
    first = build_json(tk, fork, cache)
    assert first["check"]["ok"] and first["check"]["import_from"] is None
    assert first["check"]["surface"]["functions"] == 2
    add_source_commit(fork, "v2")  # C++ edited, the same registrations
    r = tk("build", "-C", str(fork), "--json", env=cache)
    edited = json.loads(r.stdout)
    assert edited["id"] != first["id"] and edited["check"]["ok"]
    assert edited["check"]["import_from"] == first["id"]
    assert edited["check"]["surface"] == first["check"]["surface"]
    assert f"register what build {first['id']}'s did (2 functions" in r.stderr
    # Its record says so, and tk env hands it out as checked.
    shown = tk("build", "show", edited["id"], env=cache).stdout
    assert f"its libraries load and register what build {first['id']}'s did" in shown
    assert tk("env", edited["id"], env=cache).returncode == 0
    # A registration more: another surface, so TVM is imported again.
    add_ffi_registry(fork, ["mini.alpha", "mini.beta", "mini.gamma"])
    more = build_json(tk, fork, cache)
    assert more["check"]["import_from"] is None and more["check"]["surface"]["functions"] == 3
    # C++ edited again and the tree's Python changed: imported again.
    add_source_commit(fork, "v3")
    add_python_commit(fork)
    python = build_json(tk, fork, cache)
    assert python["check"]["import_from"] is None
    assert python["check"]["surface"]["registry"] == more["check"]["surface"]["registry"]
    assert python["check"]["surface"]["python_sources"] != more["check"]["surface"]["python_sources"]
    # A relinked library that no longer loads (a symbol nobody defines): no surface, the full
    # import runs and fails; nothing stands on the earlier one.
    commit_file(fork, "src/ir/module.cc", 'extern "C" int MiniUndefined();\n'
                "int MiniModuleFunctions() { return MiniUndefined(); }\n", "undefined symbol")
    r = tk("build", "-C", str(fork), "--json", env=cache)
    assert r.returncode == 1, r.stderr
    [bad] = [b["id"] for b in json.loads(tk("build", "ls", "--json", env=cache).stdout)["builds"]
             if not b["ok"]]
    check = json.loads((Path(cache["TK_CACHE"]) / "builds" / bad / "manifest.json").read_text())[
        "check"]
    assert check["import_from"] is None and check["surface"] is None
    assert "MiniUndefined" in " ".join(check["problems"])


def test_an_edit_to_a_tree_without_git_does_not_configure_again(tk, tmp_path, cache):
    """A release tarball's tree has no git: editing a source is another build (its content
    key), but the same files exist, so CMake is not run again; a new file needs it."""
    fork = make_minifork(tmp_path / "tvm")
    shutil.rmtree(fork / ".git")
    first = build_json(tk, fork, cache)
    assert first["source"]["commit"] is None and first["timings"]["configure"] > 0
    src = fork / "src/runtime/device_api.cc"
    src.write_text(src.read_text() + "// edited\n")
    edited = build_json(tk, fork, cache)
    assert edited["id"] != first["id"] and edited["timings"]["configure"] == 0.0
    (fork / "src/ir/extra.cc").write_text("int MiniExtra() { return 2; }\n")
    added = build_json(tk, fork, cache)
    assert added["timings"]["configure"] > 0


def test_a_damaged_pack_is_built_again(tk, tmp_path, cache, monkeypatch):
    fork = make_minifork(tmp_path / "tvm")
    first = build_json(tk, fork, cache)
    parent = git(fork, "rev-parse", "HEAD")
    add_source_commit(fork, "v2")
    build_json(tk, fork, cache)
    packing_done(cache, monkeypatch)
    changed = next(a for a in first["artifacts"] if a["name"] == "libtvm.so")
    pack = Path(cache["TK_CACHE"]) / "packs" / changed["sha256"][:2] / f"{changed['sha256']}.xz"
    pack.chmod(0o644)
    pack.write_bytes(pack.read_bytes()[:-64] + b"\0" * 64)
    git(fork, "checkout", "-q", parent)
    again = build_json(tk, fork, cache)
    assert again["from_store"] is False and again["id"] == first["id"]
    lib = next(a for a in again["artifacts"] if a["name"] == "libtvm.so")
    assert sha256(lib["path"]) == lib["sha256"] and again["check"]["ok"]


def test_uncommitted_source_change_rebuilds_incrementally(tk, tmp_path, cache):
    fork = make_minifork(tmp_path / "tvm")
    first = build_json(tk, fork, cache, "--debug")
    src = fork / "src/runtime/device_api.cc"
    src.write_text(src.read_text().replace("a + b", "b + a"))
    m = build_json(tk, fork, cache, "--debug")
    assert m["from_store"] is False and m["id"] != first["id"]
    assert m["source"]["dirty"] is True and m["source"]["dirty_paths"] == [
        "src/runtime/device_api.cc"]
    assert Path(m["log"]).read_text().count("Building CXX object") == 1
    # Debug is visible inside the library, and the note about HIDE_PRIVATE_SYMBOLS is kept.
    assert m["check"]["libinfo"]["CMAKE_BUILD_TYPE"] == "Debug"
    assert m["check"]["libinfo"]["ASSERTS"] == "ON"
    assert any("inert" in n for n in m["plan"]["notes"])
    assert git(fork, "status", "--porcelain") == "M src/runtime/device_api.cc"  # tree untouched


def test_stray_config_cmake_cannot_lie(tk, tmp_path, cache):
    fork = make_minifork(tmp_path / "tvm")
    # A leftover ./config.cmake at the root is ignored: the build dir's own one wins...
    (fork / "config.cmake").write_text("set(USE_LLVM OFF)\nset(USE_CUBLAS ON)\n")
    m = build_json(tk, fork, cache, "--llvm")
    assert m["cmake_values"]["USE_LLVM"].startswith("llvm-config")
    assert m["check"]["libinfo"]["USE_LLVM"] == m["cmake_values"]["USE_LLVM"]
    # ...but a fork file that overrides options after config.cmake does win, and the
    # manifest records what CMake really used, with the disagreement.
    (fork / "cmake/site.cmake").write_text("set(HIDE_PRIVATE_SYMBOLS OFF)\n")
    m = build_json(tk, fork, cache, "--llvm")
    assert m["cmake_values"]["HIDE_PRIVATE_SYMBOLS"] == "OFF"
    assert m["check"]["libinfo"]["HIDE_PRIVATE_SYMBOLS"] == "OFF"
    assert m["mismatches"] == [
        {"option": "HIDE_PRIVATE_SYMBOLS", "requested": "ON", "used": "OFF"}]
    text = tk("build", "-C", str(fork), "--llvm", env=cache)
    assert "warning    HIDE_PRIVATE_SYMBOLS: asked ON, CMake used OFF" in text.stdout


def test_cuda_requested_but_missing_from_the_runtime_fails_loudly(tk, tmp_path, cache):
    fork = make_minifork(tmp_path / "tvm")
    (fork / "cmake/site.cmake").write_text("set(USE_CUDA OFF)\n")
    # --no-llvm: a GPU machine need not have LLVM's development files.
    r = tk("build", "-C", str(fork), "--cuda", "--no-llvm", env=cache)
    assert r.returncode == 1, r.stderr
    assert "cuda: the runtime loads but registers no device_api.cuda" in r.stderr
    assert "CMake used USE_CUDA=OFF" in r.stderr
    # Asking again does not quietly serve the broken build.
    again = tk("build", "-C", str(fork), "--cuda", "--no-llvm", env=cache)
    assert again.returncode == 1 and "registers no device_api.cuda" in again.stderr
    # Nor does tk env hand it out: refused with the failed check, unless told otherwise.
    build_id = json.loads(tk("build", "ls", "--json", env=cache).stdout)["builds"][0]["id"]
    env = tk("env", build_id, env=cache)
    assert env.returncode == 1 and env.stdout == ""
    [line] = env.stderr.strip().splitlines()[:1]
    assert line.startswith(f"tk: error: build {build_id} failed its post-build check: cuda: "
                           "the runtime loads but registers no device_api.cuda")
    assert f"use it all the same: tk env {build_id} --ignore-check" in env.stderr
    anyway = tk("env", build_id, "--ignore-check", env=cache)
    assert anyway.returncode == 0 and "export TVM_LIBRARY_PATH=" in anyway.stdout
    assert anyway.stderr.startswith(f"warning: build {build_id} failed its post-build "
                                    "check: cuda: ")


def test_env_says_when_a_build_was_never_checked(tk, tmp_path, cache):
    m = build_json(tk, make_minifork(tmp_path / "tvm"), cache, "--no-check")
    assert m["check"] is None
    r = tk("env", m["id"], env=cache)
    assert r.returncode == 0 and "export TVM_LIBRARY_PATH=" in r.stdout
    assert r.stderr == (f"warning: build {m['id']} was never checked (built with --no-check, "
                        "or by a bisection): nothing says it works\n")


@pytest.mark.slow
@pytest.mark.gpu
@pytest.mark.skipif(not shutil.which("nvcc"), reason="needs the CUDA toolkit (nvcc)")
def test_cuda_build_has_cuda(tk, tmp_path, cache):
    fork = make_minifork(tmp_path / "tvm")
    m = build_json(tk, fork, cache, "--cuda", "--cuda-arch", "80", "--no-llvm")
    assert m["check"]["ok"] and m["check"]["cuda"] is True
    # The runtime check asked the build's own registry, not whatever tvm_ffi is installed.
    [rt] = m["check"]["runtimes"]
    assert rt["kind"] == "cuda" and rt["loads"] and rt["device_api"] is True
    # tk doctor in the build's shell knows the build asked for CUDA: the fork's Python side
    # does not load a CUDA runtime, and that is a failure, not a compile-only PASS.
    exports = tk("env", m["id"], env=cache).stdout
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TVM_LIBRARY_PATH")}
    env["TK_CACHE"] = cache["TK_CACHE"]
    script = (f'{exports}\nexport PYTHONPATH="$PYTHONPATH:{Path(__file__).parent.parent}"\n'
              f"exec {sys.executable} -m toolkit doctor --json")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    rows = json.loads(proc.stdout)["checks"]
    cuda = [c for c in rows if c["name"] == "runtime cuda"]
    assert cuda and cuda[0]["status"] == "fail", " | ".join(f"{c['name']}={c['status']}" for c in rows)
    assert f"build {m['id']} was asked for cuda" in cuda[0]["detail"]
    assert m["cmake_values"]["USE_CUDA"] == "ON"
    assert m["cmake_values"]["CMAKE_CUDA_ARCHITECTURES"] == "80"
    assert m["toolchain"]["nvcc"] != "absent"


def test_compile_failure_exits_1_with_log_and_reproduce(tk, tmp_path, cache):
    fork = make_minifork(tmp_path / "tvm")
    break_build_commit(fork)
    r = tk("build", "-C", str(fork), env=cache)
    assert r.returncode == 1
    assert "compile failed" in r.stderr and "(log: " in r.stderr
    log = Path(r.stderr.split("(log: ")[1].split(")")[0])
    assert "module.cc" in log.read_text()
    reproduce = r.stderr.split("reproduce: ")[1].strip()
    assert reproduce.startswith("cmake --build ")
    proc = subprocess.run(reproduce, shell=True, capture_output=True, text=True)
    assert proc.returncode != 0 and "module.cc" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_main_layout_and_runtime_only(tk, tmp_path, cache):
    fork = make_minifork(tmp_path / "tvm", layout="main")
    full = build_json(tk, fork, cache)
    assert {a["name"] for a in full["artifacts"]} == {"libtvm_compiler.so", "libtvm_runtime.so"}
    assert all("/lib/" in a["built"] for a in full["artifacts"])
    assert full["source"]["layout"] == "main" and full["check"]["ok"]
    rt = build_json(tk, fork, cache, "--runtime-only")
    assert [a["name"] for a in rt["artifacts"]] == ["libtvm_runtime.so"]
    assert rt["check"]["ok"] and rt["check"]["load_only"]
    assert rt["build_dir"] != full["build_dir"]


def test_submodules_recorded_and_checked(tk, tmp_path, cache):
    fork = make_minifork(tmp_path / "tvm", ffi_submodule=True)
    recorded = git(fork, "rev-parse", "HEAD:3rdparty/tvm-ffi")
    r = tk("build", "-C", str(fork), "--dry-run", "--json", env=cache)
    info = json.loads(r.stdout)
    assert info["source"]["submodules"]["3rdparty/tvm-ffi"]["recorded"] == recorded
    clean = build_json(tk, fork, cache)
    # Moved away from the recorded SHA, as a fork developer working inside tvm-ffi does: a
    # warning (never a failure), and the record says what was built.
    sub = fork / "3rdparty/tvm-ffi"
    (sub / "extra.h").write_text("// moved\n")
    git(sub, "add", "extra.h")
    git(sub, "commit", "-q", "-m", "move")
    moved_sha = git(sub, "rev-parse", "HEAD")
    r = tk("build", "-C", str(fork), "--json", env=cache)
    assert r.returncode == 0, r.stderr
    assert f"warning: submodule 3rdparty/tvm-ffi: checked out at {moved_sha[:12]}" in r.stderr
    moved = json.loads(r.stdout)
    assert moved["id"] != clean["id"]
    row = moved["source"]["submodules"]["3rdparty/tvm-ffi"]
    assert row == {"recorded": recorded, "checked_out": moved_sha, "state": "moved",
                   "dirty": False, "content": None}
    # Dirty inside the submodule: another build, recorded as dirty.
    (sub / "extra.h").write_text("// moved and edited\n")
    dirty = build_json(tk, fork, cache)
    assert dirty["id"] != moved["id"]
    assert dirty["source"]["submodules"]["3rdparty/tvm-ffi"]["dirty"] is True
    text = tk("build", "show", dirty["id"], env=cache).stdout
    assert f"submodule 3rdparty/tvm-ffi {moved_sha} (moved, dirty)" in text
    # Populated but not registered in .git/config (copied in by hand): judged by content.
    files = {p.relative_to(sub): p.read_bytes() for p in sub.rglob("*")
             if p.is_file() and ".git" not in p.parts}
    git(fork, "submodule", "deinit", "-q", "-f", "3rdparty/tvm-ffi")
    assert "tvm-ffi" not in (fork / ".git/config").read_text()
    for rel, data in files.items():
        (sub / rel).parent.mkdir(parents=True, exist_ok=True)
        (sub / rel).write_bytes(data)
    copied = build_json(tk, fork, cache)
    row = copied["source"]["submodules"]["3rdparty/tvm-ffi"]
    assert row["state"] == "populated" and row["content"] and row["checked_out"] is None
    assert any(c["name"] == "submodule 3rdparty/tvm-ffi" and "judged by its content" in c["detail"]
               for c in copied["preflight"])
    # Empty (never initialised): the one state that cannot build, refused with the fix (the
    # store still serves this commit's clean build: an empty submodule is the commit's).
    for p in sorted(sub.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    assert build_json(tk, fork, cache)["id"] == clean["id"]
    r = tk("build", "-C", str(fork), "--force", env=cache)
    assert r.returncode == 1 and "not initialised" in r.stderr
    assert "git submodule update --init --recursive" in r.stderr


EXT_CMAKELISTS = """cmake_minimum_required(VERSION 3.18)
project(myext CXX)
if(NOT TVM_PREBUILD_PATH)
  message(FATAL_ERROR "set TVM_PREBUILD_PATH to a built TVM's library directory")
endif()
find_library(TVM_RUNTIME tvm_runtime PATHS ${TVM_PREBUILD_PATH} NO_DEFAULT_PATH REQUIRED)
add_library(myext SHARED ext.cc)
target_link_libraries(myext ${TVM_RUNTIME})
"""


@pytest.mark.slow
def test_extension_against_a_prebuilt_tvm(tk, tmp_path, cache):
    tvm = build_json(tk, make_minifork(tmp_path / "tvm"), cache)
    ext = tmp_path / "ext"
    ext.mkdir()
    (ext / "CMakeLists.txt").write_text(EXT_CMAKELISTS)
    (ext / "ext.cc").write_text('extern "C" int TVMMiniAdd(int, int);\n'
                                'extern "C" int MyExtTwice(int a) { return TVMMiniAdd(a, a); }\n')
    prebuilt = Path(tvm["artifacts"][0]["path"]).parent
    m = build_json(tk, ext, cache, "--set", f"TVM_PREBUILD_PATH={prebuilt}")
    assert m["source"]["layout"] == "extension"
    assert f"-DTVM_PREBUILD_PATH={prebuilt}" in m["plan"]["cmake_args"]
    assert [a["name"] for a in m["artifacts"]] == ["libmyext.so"]
    assert m["check"]["ok"] and m["check"]["load_only"]
    code = ("import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); "
            "print(lib.MyExtTwice(21))")
    proc = subprocess.run([sys.executable, "-c", code, m["artifacts"][0]["path"]],
                          capture_output=True, text=True)
    assert proc.stdout.strip() == "42", proc.stderr


def test_cmake4_gets_a_policy_minimum_for_old_vendored_projects(tk, tmp_path, cache):
    from toolkit.builds.preflight import version_of

    if (version_of(["cmake", "--version"]) or (0,)) < (4, 0):
        pytest.skip("cmake here is older than 4")
    fork = make_minifork(tmp_path / "tvm")
    commit_file(fork, "3rdparty/olddep/CMakeLists.txt",
                "cmake_minimum_required(VERSION 2.8)\nproject(olddep C)\n")
    lists = (fork / "CMakeLists.txt").read_text()
    commit_file(fork, "CMakeLists.txt", lists + "add_subdirectory(3rdparty/olddep)\n")
    m = build_json(tk, fork, cache)
    assert "-DCMAKE_POLICY_VERSION_MINIMUM=3.5" in m["plan"]["cmake_args"]
    assert any("3rdparty/olddep/CMakeLists.txt" in n for n in m["plan"]["notes"])


def test_named_build_dir_with_a_hand_written_config_is_left_alone(tk, tmp_path, cache):
    fork = make_minifork(tmp_path / "tvm")
    (fork / "build").mkdir()
    mine = "set(USE_LLVM ON)  # my own\n"
    (fork / "build/config.cmake").write_text(mine)
    r = tk("build", "-C", str(fork), "--build-dir", "build", env=cache)
    assert r.returncode == 2 and "was not written by tk build" in r.stderr
    assert (fork / "build/config.cmake").read_text() == mine
    m = build_json(tk, fork, cache, "--build-dir", "build2")
    assert m["build_dir"] == str(fork / "build2")
    assert (fork / "build2/config.cmake").read_text().startswith("# Written by tk build")


def exported(library: str, symbol: str) -> bool:
    """Does ``library`` define ``symbol`` (looked up in a fresh process: no TVM of ours)?"""
    code = "import ctypes, sys; print(hasattr(ctypes.CDLL(sys.argv[1]), sys.argv[2]))"
    proc = subprocess.run([sys.executable, "-c", code, library, symbol], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip() == "True"


COPIED_SOURCE = "TVM_MINI_DLL int TVMMiniCopied() { return 7; }\n"


def copy_and_change(fork: Path, copy: Path) -> None:
    """cp -a the built tree (build directories and all), then commit a runtime change there."""
    subprocess.run(["cp", "-a", str(fork), str(copy)], check=True)
    src = copy / "src/runtime/device_api.cc"
    commit_file(copy, "src/runtime/device_api.cc", src.read_text() + COPIED_SOURCE)


def test_a_tree_copied_with_its_build_directory_builds_its_own_sources(tk, tmp_path, cache):
    """The maintainer's scenario: `cp -a tvm tvm2` copies build-<plan>/, whose CMake cache
    names tvm/; a change committed in tvm2 must be in tvm2's library."""
    fork = make_minifork(tmp_path / "tvm")
    first = build_json(tk, fork, cache)
    copy = tmp_path / "tvm2"
    copy_and_change(fork, copy)
    r = tk("build", "-C", str(copy), "--json", env=cache)
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    bdir = copy / Path(first["build_dir"]).name
    assert m["build_dir"] == str(bdir) and m["id"] != first["id"]
    assert (f"tk: {bdir} was configured for another tree (its CMake cache was made for the "
            f"sources in {fork}): emptied, configured afresh") in r.stderr
    runtime = next(a["path"] for a in m["artifacts"] if a["name"] == "libtvm_runtime.so")
    assert exported(runtime, "TVMMiniCopied")
    assert m["timings"]["configure"] > 0
    assert read_cmake_cache(bdir)["CMAKE_HOME_DIRECTORY"] == str(copy)
    # The check says where the build file's objects are compiled from.
    assert m["check"]["ok"] and m["check"]["provenance"]["outside"] == []
    assert m["check"]["provenance"]["objects"] == 4
    # The first tree and its build directory are as they were.
    assert read_cmake_cache(Path(first["build_dir"]))["CMAKE_HOME_DIRECTORY"] == str(fork)
    old = next(a["built"] for a in first["artifacts"] if a["name"] == "libtvm_runtime.so")
    assert not exported(old, "TVMMiniCopied")


def test_a_named_build_directory_of_another_tree_is_refused(tk, tmp_path, cache):
    """A --build-dir the user named is theirs: tk does not empty it, it says why it will not
    build there."""
    fork = make_minifork(tmp_path / "tvm")
    build_json(tk, fork, cache, "--build-dir", "build")
    copy = tmp_path / "tvm2"
    copy_and_change(fork, copy)
    before = (copy / "build/CMakeCache.txt").read_text()
    r = tk("build", "-C", str(copy), "--build-dir", "build", env=cache)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        f"tk: error: {copy / 'build'} holds the build of another tree (its CMake cache was "
        f"made for the sources in {fork}): building there would compile that tree's sources; "
        "remove it, or pick another --build-dir"]
    assert (copy / "build/CMakeCache.txt").read_text() == before


def test_cmake_errors_fail_a_step_that_exits_0(tk, tmp_path, cache, monkeypatch):
    """`cmake --build` in a build directory copied from another tree prints "CMake Error: The
    current CMakeCache.txt directory ... is different" and exits 0, having compiled the other
    tree's sources: the backend fails the step on CMake's error."""
    from toolkit.builds import driver
    from toolkit.builds.backends import native

    monkeypatch.setenv("TK_CACHE", cache["TK_CACHE"])
    fork = make_minifork(tmp_path / "tvm")
    first = build_json(tk, fork, cache)
    copy = tmp_path / "tvm2"
    copy_and_change(fork, copy)
    tree = inspect(copy)
    job = BuildJob(plan=driver.plan_for(Request(), copy), source_dir=copy,
                   build_dir=copy / Path(first["build_dir"]).name, log=tmp_path / "build.log",
                   files_key=tree.files_key)
    assert job.configured  # the copied stamp says so: straight to `cmake --build`
    with pytest.raises(BuildFailed, match=r"compile failed: CMake Error: The current "
                                          r"CMakeCache.txt directory .* is different"):
        native.build(job)


def test_a_build_of_sources_outside_its_tree_fails_its_check(tk, tmp_path, cache):
    """The check proves where the compiled sources came from (Ninja's compilation database)."""
    fork = make_minifork(tmp_path / "tvm")
    outside = tmp_path / "elsewhere" / "outside.cc"
    outside.parent.mkdir()
    outside.write_text("int MiniOutside() { return 1; }\n")
    lists = (fork / "CMakeLists.txt").read_text()
    commit_file(fork, "CMakeLists.txt", lists + f"target_sources(tvm_runtime PRIVATE {outside})\n")
    r = tk("build", "-C", str(fork), env=cache)
    assert r.returncode == 1, r.stderr
    assert f"1 of the 5 objects {fork}/build-" in r.stderr
    assert f"builds are compiled from outside {fork} (first: {outside})" in r.stderr


def test_linking_where_the_link_is_already_leaves_no_temporary(tmp_path, monkeypatch):
    """Two `tk env ID` of one packed build link the same objects into one lib/, and the second
    finds links the first made: rename(2) of one hard link onto another of the same file does
    nothing, which left the temporary in the directory LD_LIBRARY_PATH names."""
    from toolkit.builds import store

    monkeypatch.setenv("TK_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "libx.so"
    src.write_bytes(b"\x7fELF" + os.urandom(64))
    _, obj = store.put_object(src)
    lib = tmp_path / "entry" / "lib"
    lib.mkdir(parents=True)
    for _ in range(2):
        store.link_object(obj, lib / "libx.so")
        assert os.listdir(lib) == ["libx.so"] and (lib / "libx.so").samefile(obj)
    # Over another file: replaced, still nothing else in lib/.
    (lib / "liby.so").write_bytes(b"other")
    store.link_object(obj, lib / "liby.so")
    assert sorted(os.listdir(lib)) == ["libx.so", "liby.so"] and (lib / "liby.so").samefile(obj)


def test_gc_removes_temporaries_their_writer_left(tk, tmp_path, cache, monkeypatch):
    """A temporary file whose process is gone (killed mid-link, or an older tk's) is nobody's:
    tk build gc removes it, and packing never takes it for one of the build's libraries."""
    fork = make_minifork(tmp_path / "tvm")
    m = build_json(tk, fork, cache)
    lib = Path(m["artifacts"][0]["path"]).parent
    gone = subprocess.Popen(["true"])
    gone.wait()
    leftover = lib / f"libtvm_runtime.so.{gone.pid}.{gone.pid}.tmp"
    os.link(lib / "libtvm_runtime.so", leftover)
    writing = lib / f"libtvm.so.{os.getpid()}.{os.getpid()}.tmp"  # its writer is alive: kept
    os.link(lib / "libtvm.so", writing)
    add_source_commit(fork, "v2")
    build_json(tk, fork, cache)  # packs the first build
    packing_done(cache, monkeypatch)
    packed = json.loads((lib.parent / ".packed").read_text())
    assert sorted(packed) == ["lib/libtvm.so", "lib/libtvm_runtime.so"]
    r = tk("build", "gc", env=cache)
    assert r.returncode == 0, r.stderr
    assert "1 temporary file left by a process that is gone" in r.stdout
    assert not leftover.exists() and writing.exists()
    writing.unlink()


def test_storing_keeps_what_ninja_relinked_as_built_and_the_rest_as_it_was(tk, tmp_path, cache):
    """A library Ninja relinked is stored as the very file the build wrote (one file, read
    once for its sha256); one it left alone is the object it already was, not read again.
    Writing into a built library in place writes into the stored one: that build is never
    served again, and building it again relinks the library rather than storing it so."""
    fork = make_minifork(tmp_path / "tvm")
    first = {a["name"]: a for a in build_json(tk, fork, cache)["artifacts"]}
    add_source_commit(fork, "v2")  # libtvm.so is relinked, libtvm_runtime.so is not
    second = build_json(tk, fork, cache)
    arts = {a["name"]: a for a in second["artifacts"]}
    objects = Path(cache["TK_CACHE"]) / "objects"

    def obj(art: dict) -> Path:
        return objects / art["sha256"][:2] / art["sha256"]

    relinked, same = arts["libtvm.so"], arts["libtvm_runtime.so"]
    assert Path(relinked["path"]).samefile(relinked["built"])
    assert Path(relinked["path"]).samefile(obj(relinked))
    assert sha256(relinked["path"]) == relinked["sha256"] != first["libtvm.so"]["sha256"]
    assert same["sha256"] == first["libtvm_runtime.so"]["sha256"]
    assert Path(same["path"]).samefile(obj(same)) and Path(same["path"]).samefile(same["built"])
    assert second["timings"]["hash"] >= 0 and second["check"]["ok"]

    built = Path(same["built"])
    built.chmod(0o755)  # the store made it read-only, for whoever is not root
    data = bytearray(built.read_bytes())
    data[len(data) // 2] ^= 0xFF
    built.write_bytes(bytes(data))  # in place, as patchelf does
    r = tk("env", second["id"], env=cache)
    assert r.returncode == 1 and "is damaged" in r.stderr, r.stderr
    again = build_json(tk, fork, cache)
    assert again["from_store"] is False and again["id"] == second["id"]
    lib = next(a for a in again["artifacts"] if a["name"] == "libtvm_runtime.so")
    assert sha256(lib["path"]) == lib["sha256"] == same["sha256"]  # relinked as it was
    assert "Linking" in Path(again["log"]).read_text()


def test_a_new_builds_tvm_ffi_package_is_linked_from_the_wheels_first_unpack(tmp_path,
                                                                            monkeypatch):
    """The tvm-ffi package of each build of one tvm-ffi source is the same wheel's files: the
    first unpack stores them and lists their sha256 beside the wheel, the next builds link
    those objects without opening the wheel; the package's libtvm_ffi.so is each build's."""
    import zipfile

    from toolkit.builds import python as pypkg
    from toolkit.builds import store

    monkeypatch.setenv("TK_CACHE", str(tmp_path / "cache"))
    wheel = tmp_path / "apache_tvm_ffi-0.1.14+tree.abc-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("tvm_ffi/__init__.py", "from .core import *\n")
        zf.writestr("tvm_ffi/core.cpython-311-x86_64-linux-gnu.so", b"\x7fELF core")
        zf.writestr("tvm_ffi/lib/libtvm_ffi.so", b"\x7fELF the wheel's own")
    sha = sha256(wheel)
    builds = []
    for name in ("first", "second"):
        lib = tmp_path / name / "libtvm_ffi.so"
        lib.parent.mkdir()
        lib.write_bytes(b"\x7fELF " + name.encode())
        builds.append((lib, tmp_path / name / "python"))
    pypkg.install(wheel, builds[0][1], builds[0][0], sha)
    wheel.write_bytes(b"not a zip any more")  # the second install must not open it
    pypkg.install(wheel, builds[1][1], builds[1][0], sha)
    for name in ("tvm_ffi/__init__.py", "tvm_ffi/core.cpython-311-x86_64-linux-gnu.so"):
        one, two = (site / name for _, site in builds)
        assert one.samefile(two) and one.samefile(store.object_path(sha256(one)))
    for lib, site in builds:
        assert (site / "tvm_ffi/lib/libtvm_ffi.so").samefile(lib)
    # Its objects gone (collected): the wheel is read again, and it is not a wheel now.
    for path in (tmp_path / "cache" / "objects").glob("*/*"):
        path.unlink()
    with pytest.raises(zipfile.BadZipFile):
        pypkg.install(wheel, tmp_path / "third", None, sha)


# A tvm-ffi project whose build backend (in the tree, no requirements: pip needs no index)
# says how it was run, writes into the source as setuptools-scm does, waits while ``slow``
# exists, then makes a wheel.
FFI_BACKEND = """import os, time, zipfile

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "started"), "w") as f:
        f.write(f"{os.getpid()} {os.getpriority(os.PRIO_PROCESS, 0)} "
                f"{os.environ.get('CMAKE_BUILD_PARALLEL_LEVEL')}")
    with open(os.path.join(here, "python", "tvm_ffi", "_version.py"), "w") as f:
        f.write("version = 'x'\\n")
    while os.path.exists(os.path.join(here, "slow")):
        time.sleep(0.1)
    version = os.environ["SETUPTOOLS_SCM_PRETEND_VERSION_FOR_APACHE_TVM_FFI"]
    info = f"apache_tvm_ffi-{version}.dist-info"
    name = f"apache_tvm_ffi-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as zf:
        zf.writestr("tvm_ffi/__init__.py", "")
        zf.writestr("tvm_ffi/lib/libtvm_ffi.so", b"the wheel's own")
        zf.writestr(f"{info}/METADATA",
                    f"Metadata-Version: 2.1\\nName: apache-tvm-ffi\\nVersion: {version}\\n")
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\n"
                                     "Tag: py3-none-any\\n")
        zf.writestr(f"{info}/RECORD", "")
    return name
"""


def ffi_project(root: Path) -> Path:
    src = root / "3rdparty" / "tvm-ffi"
    (src / "python" / "tvm_ffi").mkdir(parents=True)
    (src / "pyproject.toml").write_text(
        '[project]\nname = "apache-tvm-ffi"\ndynamic = ["version"]\n\n[build-system]\n'
        'requires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n')
    (src / "backend.py").write_text(FFI_BACKEND)
    return src


def running(pid: int) -> bool:
    """Alive and not a zombie (a killed child whose parent died is reaped by init, later),
    a few seconds given for SIGKILL to land: killpg returns before a process in the group has
    been scheduled to die (on a busy machine the backend still read as running, in CI)."""
    import time

    for _ in range(100):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return False
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
        time.sleep(0.05)
    return True


def started(src: Path) -> list[str]:
    """What the backend says of its process once pip has started it: pid, nice, jobs."""
    import time

    for _ in range(600):
        said = (src / "started").read_text().split() if (src / "started").exists() else []
        if len(said) == 3:
            return said
        time.sleep(0.1)
    raise AssertionError("pip never started the backend")


def tree_files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if "__pycache__" not in p.parts}


def test_the_tvm_ffi_wheel_is_built_beside_the_compile_at_the_lowest_priority(tmp_path,
                                                                             monkeypatch):
    """The wheel starts when asked, not after the compile: pip and what it runs at priority
    19 with two jobs; the package is taken once the compile is done, with the build's own
    libtvm_ffi.so; the tree is left as it was."""
    from toolkit.builds import python as pypkg

    monkeypatch.setenv("TK_CACHE", str(tmp_path / "cache"))
    src = ffi_project(tmp_path / "tvm")
    before = tree_files(src)
    (src / "slow").touch()  # the "compile" has not finished: the wheel must be under way
    wheel = pypkg.WheelBuild(tmp_path / "tvm", tmp_path / "python.log")
    _, nice, jobs = started(src)
    assert (int(nice), jobs) == (19, "2")
    (src / "slow").unlink()
    ffi = tmp_path / "build" / "libtvm_ffi.so"
    ffi.parent.mkdir()
    ffi.write_bytes(b"the build's")
    package = wheel.package(tmp_path / "entry", ffi)
    assert package is not None and package.version.endswith(package.wheel.split("+tree.")[1]
                                                            .split("-")[0])
    assert (Path(package.site) / "tvm_ffi" / "lib" / "libtvm_ffi.so").samefile(ffi)
    assert tree_files(src) == before - {"slow"}  # _version.py and the rest taken back
    assert "pip wheel" in (tmp_path / "python.log").read_text()


def test_a_failed_compile_stops_the_tvm_ffi_wheel_and_leaves_the_tree_as_it_was(tmp_path,
                                                                                monkeypatch):
    from toolkit.builds import python as pypkg

    monkeypatch.setenv("TK_CACHE", str(tmp_path / "cache"))
    src = ffi_project(tmp_path / "tvm")
    before = tree_files(src)
    (src / "slow").touch()  # a backend that would never finish
    wheel = pypkg.WheelBuild(tmp_path / "tvm", tmp_path / "python.log")
    pid = int(started(src)[0])
    wheel.cancel()
    assert not running(pid)  # the backend pip ran is gone, not left building
    assert tree_files(src) == before | {"slow"}
    assert not list((tmp_path / "cache").rglob("*.whl"))
    with pytest.raises(TkError, match="stopped: the compile beside it failed"):
        wheel.package(tmp_path / "entry", None)


@pytest.mark.parametrize("name, version", [
    # What pip wheel names the tree's tvm-ffi: the name's "-" written "_", a local version.
    ("apache_tvm_ffi-0.1.14+tree.01fec944841f-cp312-cp312-linux_x86_64.whl",
     "0.1.14+tree.01fec944841f"),
    ("apache_tvm_ffi-0.1.14-1-cp312-cp312-linux_x86_64.whl", "0.1.14"),  # a build tag
    # Not the wheel format: the "tvm" of a name left with its "-" is no version.
    ("apache-tvm-ffi-0.1.14-cp312-cp312-linux_x86_64.whl", "?"),
    ("apache_tvm_ffi-0.1.14.tar.gz", "?"),
])
def test_a_wheels_version_is_read_from_its_name_as_the_wheel_format_writes_it(name, version):
    from toolkit.builds.python import wheel_version

    assert wheel_version(Path(name)) == version
