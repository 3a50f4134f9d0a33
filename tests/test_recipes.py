"""Recipes, plans and ``tk build --dry-run``: composition, validation, conflicts (no compiling)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from minifork import commit_file, make_minifork

from toolkit.builds.recipes import Request, resolve
from toolkit.errors import UserError


@pytest.fixture(scope="module")
def fork(tmp_path_factory) -> Path:
    return make_minifork(tmp_path_factory.mktemp("recipes") / "tvm",
                         extra_options={"USE_MINI_EXTRA": "OFF"})


@pytest.fixture
def cache(tmp_path, monkeypatch) -> dict[str, str]:
    monkeypatch.setenv("TK_CACHE", str(tmp_path / "cache"))
    return {"TK_CACHE": str(tmp_path / "cache")}


def one_line_exit2(result) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_fragments_compose_in_order_with_origin(fork):
    plan = resolve(Request(fragments={"llvm": "16", "cuda": "", "debug": ""}, sets=["USE_CUBLAS=ON"]), fork)
    assert plan.recipes == ["base", "llvm", "cuda", "debug"]
    assert plan.options["USE_LLVM"] == "llvm-config-16 --ignore-libllvm --link-static"
    assert plan.cmake["CMAKE_BUILD_TYPE"] == "Debug"  # debug wins over base
    assert plan.origin["cmake.CMAKE_BUILD_TYPE"] == "debug"
    assert plan.origin["options.USE_CUBLAS"] == "--set"
    assert plan.cmake["CMAKE_CUDA_ARCHITECTURES"] == "75"
    text = plan.config_cmake()
    assert 'set(USE_LLVM "llvm-config-16 --ignore-libllvm --link-static")  # llvm' in text
    assert "set(USE_CUDA ON)  # cuda" in text
    assert plan.container["llvm"] == "16" and plan.container["dockerfile"] == "cuda"


def test_plan_hash_is_stable_and_ignores_provenance(fork, tmp_path):
    a = resolve(Request(fragments={"cuda": ""}, no_llvm=True), fork)
    b = resolve(Request(fragments={"cuda": ""}, no_llvm=True), fork)
    assert a.hash == b.hash
    # The same values from a user's recipe instead of the built-in fragment: the same build.
    own = tmp_path / "mine.toml"
    own.write_text('[options]\nUSE_CUDA = true\n')
    c = resolve(Request(recipe_files=[own], cuda_arch="75"), fork)
    assert c.options == a.options and c.cmake == a.cmake
    assert c.hash == a.hash
    assert resolve(Request(fragments={"cuda": "", "debug": ""}), fork).hash != a.hash


def test_typo_gets_a_suggestion(tk, fork):
    line = one_line_exit2(tk("build", "-C", str(fork), "--set", "USE_CUDAA=ON", "--dry-run"))
    assert "unknown option USE_CUDAA — did you mean USE_CUDA?" in line


def test_typo_in_a_recipe_file_names_the_file(tk, fork, tmp_path):
    own = tmp_path / "site.toml"
    own.write_text('[options]\nUSE_LLMV = "ON"\n')
    line = one_line_exit2(tk("build", "-C", str(fork), "--recipe", str(own), "--dry-run"))
    assert "unknown option USE_LLMV — did you mean USE_LLVM?" in line and "site.toml" in line


def test_unknown_section_in_recipe(tk, fork, tmp_path):
    own = tmp_path / "bad.toml"
    own.write_text('[option]\nUSE_LLVM = "ON"\n')
    line = one_line_exit2(tk("build", "-C", str(fork), "--recipe", str(own), "--dry-run"))
    assert "unknown section 'option'" in line and "did you mean options?" in line


def test_fork_options_are_known_and_upstream_ones_absent_are_not(fork):
    plan = resolve(Request(sets=["USE_MINI_EXTRA=ON"]), fork)
    assert plan.options["USE_MINI_EXTRA"] == "ON"
    with pytest.raises(UserError, match="unknown option USE_VULKAN"):
        resolve(Request(sets=["USE_VULKAN=ON"]), fork)  # real TVM has it; this fork does not


def test_option_declared_only_in_cmakelists_is_known(fork):
    # HIDE_PRIVATE_SYMBOLS is a tvm_option() in CMakeLists.txt, not in cmake/config.cmake.
    assert "HIDE_PRIVATE_SYMBOLS" not in (fork / "cmake/config.cmake").read_text()
    assert resolve(Request(), fork).options["HIDE_PRIVATE_SYMBOLS"] == "ON"


@pytest.mark.parametrize("args, reason", [
    (["--set", "USE_CUTLASS=ON"], "USE_CUTLASS=ON (from --set) needs USE_CUDA=ON: CUTLASS kernels"),
    (["--set", "USE_CUBLAS=ON", "--llvm"], "USE_CUBLAS=ON (from --set) needs USE_CUDA=ON"),
    (["--cuda", "--cuda-arch", "native"], "CMAKE_CUDA_ARCHITECTURES=native needs a visible GPU"),
    (["--cuda", "--set", "CMAKE_CUDA_ARCHITECTURES=native", "--backend", "docker"],
     "a container build sees none"),
])
def test_conflicts_say_why(tk, fork, args, reason):
    from toolkit.builds.recipes import gpu_visible

    if "--backend" not in args and "native" in " ".join(args) and gpu_visible():
        pytest.skip("a GPU is visible here")
    line = one_line_exit2(tk("build", "-C", str(fork), *args, "--dry-run"))
    assert reason in line


def test_debug_makes_hide_private_symbols_inert_note(fork):
    plan = resolve(Request(fragments={"debug": ""}), fork)
    assert any("HIDE_PRIVATE_SYMBOLS=ON is inert in a Debug build" in n for n in plan.notes)


def test_hide_private_symbols_note_is_true_for_a_tree_that_excludes_libs(tmp_path):
    """TVM main's cmake/utils/Library.cmake links with -Wl,--exclude-libs,ALL in every build
    type: there the Debug note must not claim LLVM's symbols stay exported."""
    fork = make_minifork(tmp_path / "tvm")
    lib = fork / "cmake/utils/Library.cmake"
    lib.parent.mkdir(parents=True, exist_ok=True)
    lib.write_text('target_link_options(${t} PRIVATE "-Wl,--exclude-libs,ALL")\n')
    notes = resolve(Request(fragments={"debug": ""}), fork).notes
    assert not any("inert" in n for n in notes)
    assert any("LLVM's) are hidden in every build type" in n for n in notes)


def test_gpu_backends_bring_llvm_unless_told_not_to(fork):
    plan = resolve(Request(fragments={"cuda": ""}, cuda_arch="80"), fork)
    assert plan.recipes == ["base", "llvm", "cuda"]
    assert plan.options["USE_LLVM"].startswith("llvm-config ")
    assert plan.origin["options.USE_LLVM"] == "llvm (brought by --cuda)"
    assert any(n.startswith("--cuda brings LLVM") for n in plan.notes)
    assert plan.runtimes == ["cuda"]
    # Through --set too.
    via_set = resolve(Request(sets=["USE_CUDA=ON", "CMAKE_CUDA_ARCHITECTURES=80"]), fork)
    assert "USE_LLVM" in via_set.options
    # Not for the runtime alone, nor with --no-llvm (which says what that costs).
    assert "USE_LLVM" not in resolve(Request(fragments={"cuda": "", "runtime-only": ""}, cuda_arch="80"),
                                     fork).options
    bare = resolve(Request(fragments={"cuda": ""}, cuda_arch="80", no_llvm=True), fork)
    assert "USE_LLVM" not in bare.options
    assert any("target.build.llvm is missing" in n for n in bare.notes)
    # An explicit --llvm VER is kept as asked.
    assert resolve(Request(fragments={"cuda": "", "llvm": "16"}, cuda_arch="80"), fork).options[
        "USE_LLVM"].startswith("llvm-config-16 ")
    with pytest.raises(UserError, match="contradict"):
        resolve(Request(fragments={"llvm": ""}, no_llvm=True), fork)


def test_cuda_arch_default_follows_the_gpus_visible(fork):
    from toolkit.builds.recipes import gpu_visible

    plan = resolve(Request(fragments={"cuda": ""}, no_llvm=True), fork)
    want = "native" if gpu_visible() else "75"
    assert plan.cmake["CMAKE_CUDA_ARCHITECTURES"] == want
    # A container sees no GPU: always the pinned default there.
    assert resolve(Request(fragments={"cuda": ""}, no_llvm=True, backend="docker"), fork).cmake[
        "CMAKE_CUDA_ARCHITECTURES"] == "75"


@pytest.mark.parametrize("args, needle", [
    (["--set", "USE_CUDA"], "expected NAME=VALUE"),
    (["--set", "=ON"], "expected NAME=VALUE"),
    (["--recipe", "/nonexistent/x.toml"], "no such file"),
    (["--frobnicate"], "No such option '--frobnicate'"),
    (["--backend", "podman"], "podman"),
])
def test_bad_input_is_one_line_exit_2(tk, fork, args, needle):
    assert needle in one_line_exit2(tk("build", "-C", str(fork), *args, "--dry-run"))


def test_missing_source_dir(tk, tmp_path):
    line = one_line_exit2(tk("build", "-C", str(tmp_path / "nope"), "--dry-run"))
    assert "no such directory" in line


def test_dry_run_text_shows_the_whole_plan(tk, fork, cache):
    r = tk("build", "-C", str(fork), "--llvm", "--debug", "--dry-run", env=cache)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert 'set(USE_LLVM "llvm-config --ignore-libllvm --link-static")  # llvm' in out
    assert "set(HIDE_PRIVATE_SYMBOLS ON)  # base" in out
    assert f"cmake -S {fork} -B {fork}/build-" in out and "-G Ninja -DCMAKE_BUILD_TYPE=Debug" in out
    assert "'-DCMAKE_CXX_FLAGS=-O0 -g'" in out
    assert "HIDE_PRIVATE_SYMBOLS=ON is inert" in out
    assert "pre-flight:" in out and "ok   cmake" in out
    assert ("Dockerfile:" in out) or ('"dockerfile": "cpu"' in out)
    assert not (fork / "build").exists() and not list(fork.glob("build-*"))  # built nothing
    again = tk("build", "-C", str(fork), "--llvm", "--debug", "--dry-run", env=cache)
    assert out.splitlines()[0] == again.stdout.splitlines()[0]  # plan <hash>


def test_dry_run_json(tk, fork, cache):
    r = tk("build", "-C", str(fork), "--cuda", "--runtime-only", "--set", "USE_CUTLASS=ON",
           "--dry-run", "--json", env=cache)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    plan = info["plan"]
    assert plan["targets"] == ["runtime"]
    assert "-DCMAKE_CUDA_ARCHITECTURES=75" in plan["cmake_args"]
    assert "set(USE_CUTLASS ON)  # --set" in plan["config_cmake"]
    assert info["plan_hash"] == plan["hash"] and len(info["plan_hash"]) == 16
    assert info["source"]["layout"] == "python" and info["stored"] is False
    assert {c["name"] for c in info["preflight"]} >= {"cmake", "ninja", "nvcc"}


def test_preflight_names_missing_llvm_with_a_fix(tk, fork, cache):
    r = tk("build", "-C", str(fork), "--llvm", "99", "--dry-run", env=cache)
    assert r.returncode == 0
    assert "FAIL llvm: llvm-config-99 not found" in r.stdout
    assert "fix: apt-get install llvm-99-dev" in r.stdout
    b = tk("build", "-C", str(fork), "--llvm", "99", env=cache)
    assert b.returncode == 1 and "pre-flight: llvm: llvm-config-99 not found" in b.stderr


def test_preflight_llvm_too_old_for_the_tree(tk, tmp_path, cache):
    fork = make_minifork(tmp_path / "tvm024")
    # As TVM >= 0.24's FindLLVM.cmake does (major * 10 + minor).
    commit_file(fork, "cmake/utils/FindLLVM.cmake",
                'if (${TVM_LLVM_VERSION} LESS 150)\n'
                '  message(FATAL_ERROR "TVM requires LLVM 15.0 or higher.")\nendif()\n')
    r = tk("build", "-C", str(fork), "--llvm", "--dry-run", env=cache)
    major = os.popen("llvm-config --version").read().split(".")[0]
    if not major or int(major) >= 15:
        pytest.skip("llvm-config here is new enough")
    assert f"FAIL llvm: llvm-config is LLVM {major}" in r.stdout
    assert "needs LLVM >= 15" in r.stdout and "--llvm 15" in r.stdout


def test_preflight_old_cmake_for_tvm_ffi_tree(tk, tmp_path, cache):
    if not Path("/usr/bin/cmake").exists():
        pytest.skip("no system cmake")
    version = os.popen("/usr/bin/cmake --version").read().split()[2]
    if tuple(map(int, version.split(".")[:2])) >= (3, 26):
        pytest.skip("the system cmake is new enough")
    fork = make_minifork(tmp_path / "ffi", ffi_submodule=True)
    env = {**cache, "PATH": "/usr/bin:/bin"}
    r = tk("build", "-C", str(fork), "--dry-run", env=env)
    assert f"FAIL cmake: cmake {version} is older than 3.26 (3rdparty/tvm-ffi requires it)" \
        in r.stdout
    assert "pip install 'cmake>=3.26'" in r.stdout


def test_layouts_are_detected(tmp_path):
    from toolkit.builds.source import inspect

    assert inspect(make_minifork(tmp_path / "a")).layout == "python"
    assert inspect(make_minifork(tmp_path / "b", layout="pyproject")).layout == "pyproject"
    assert inspect(make_minifork(tmp_path / "c", layout="main")).layout == "main"
    ext = tmp_path / "ext"
    ext.mkdir()
    (ext / "CMakeLists.txt").write_text("find_package(tvm)\n# TVM_PREBUILD_PATH\n")
    assert inspect(ext).layout == "extension"


def test_optional_submodules_matter_only_when_their_option_is_on(tmp_path):
    from minifork import git

    from toolkit.builds import preflight
    from toolkit.builds.source import inspect, tree_key

    fork = make_minifork(tmp_path / "tvm", ffi_submodule=True)
    git(fork, "submodule", "add", "-q", str(tmp_path / "tvm-tvm-ffi"), "3rdparty/cutlass")
    git(fork, "commit", "-q", "-m", "add cutlass")
    git(fork, "submodule", "deinit", "-q", "-f", "3rdparty/cutlass")
    tree = inspect(fork)
    assert tree.key == tree_key(fork)  # nothing built differs: the commit's own key
    plain = {c.name: c for c in preflight.check_submodules(tree, resolve(Request(), fork))}
    assert plain["submodule 3rdparty/cutlass"].ok
    assert "only USE_CUTLASS=ON needs it" in plain["submodule 3rdparty/cutlass"].detail
    cutlass = resolve(Request(fragments={"cuda": ""}, sets=["USE_CUTLASS=ON"]), fork)
    checks = {c.name: c for c in preflight.check_submodules(tree, cutlass)}
    assert not checks["submodule 3rdparty/cutlass"].ok
    assert checks["submodule 3rdparty/cutlass"].fix == "git submodule update --init --recursive"


def test_ccache_fragment_and_its_preflight(tk, fork, cache):
    import shutil

    r = tk("build", "-C", str(fork), "--ccache", "--dry-run", env=cache)
    assert r.returncode == 0 and "set(USE_CCACHE ON)  # ccache" in r.stdout
    if shutil.which("ccache"):
        assert "ok   ccache" in r.stdout
    else:
        assert "FAIL ccache: USE_CCACHE=ON (--ccache) but ccache is not on PATH" in r.stdout
        assert "fix: apt-get install ccache" in r.stdout


@pytest.mark.parametrize("item, needle", [
    ("CMAKE_BUILD_TPYE=Debug",
     "unknown CMake variable CMAKE_BUILD_TPYE — did you mean CMAKE_BUILD_TYPE?"),
    ("CMAKE_BUILD_TYPE=Relase",
     "CMAKE_BUILD_TYPE=Relase (from --set) is not a build type — did you mean Release?"),
])
def test_cmake_variable_typos(tk, fork, item, needle):
    assert needle in one_line_exit2(tk("build", "-C", str(fork), "--set", item, "--dry-run"))


def test_other_cmake_variables_pass_through(fork):
    plan = resolve(Request(sets=["CMAKE_MY_FORK_THING=1"]), fork)
    assert "-DCMAKE_MY_FORK_THING=1" in plan.cmake_args()


def test_missing_static_llvm_archives_are_caught_before_cmake(tk, tmp_path):
    """Debian bookworm's llvm-15-dev: `llvm-config-15 --link-static --libfiles` names
    libPolly.a, which no bookworm package ships; Ninja would stop late. An llvm-config that
    names a missing archive the same way (here a script on PATH) is refused in pre-flight."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "llvm-config-98"
    tool.write_text('#!/bin/sh\ncase "$*" in\n  *--version*) echo 98.0.1 ;;\n'
                    '  *--libfiles*) echo /nonexistent/llvm-98/lib/libPolly.a ;;\n'
                    '  *) echo ;;\nesac\n')
    tool.chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    # A tree whose FindLLVM.cmake links the archives --link-static names, as TVM's does.
    fork = make_minifork(tmp_path / "tvm")
    find = fork / "cmake/utils/FindLLVM.cmake"
    find.parent.mkdir(parents=True, exist_ok=True)
    find.write_text("execute_process(COMMAND ${LLVM_CONFIG} --libfiles)\n")
    r = tk("build", "-C", str(fork), "--llvm", "98", "--dry-run", env=env)
    assert r.returncode == 0, r.stderr
    assert ("FAIL llvm static libraries: llvm-config-98 --ignore-libllvm --link-static "
            "--libfiles names /nonexistent/llvm-98/lib/libPolly.a, which is missing") in r.stdout
    assert "libpolly-98-dev" in r.stdout and "--set USE_LLVM=llvm-config-98" in r.stdout


def test_incomplete_static_llvm_is_linked_shared_unless_the_user_chose(tk, tmp_path):
    """Where the static archives the llvm recipe links are incomplete (bookworm's llvm-15-dev)
    and the shared libLLVM is there, the plan links that and says why; a USE_LLVM given with
    --set is the user's choice: kept, and pre-flight explains why it cannot build."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    libllvm = tmp_path / "lib" / "libLLVM-97.so"
    libllvm.parent.mkdir()
    libllvm.write_bytes(b"")
    tool = bin_dir / "llvm-config-97"
    tool.write_text('#!/bin/sh\ncase "$*" in\n  *--version*) echo 97.0.1 ;;\n'
                    f'  *--link-shared*--libfiles*) echo {libllvm} ;;\n'
                    '  *--libfiles*) echo /nonexistent/llvm-97/lib/libPolly.a ;;\n'
                    '  *) echo ;;\nesac\n')
    tool.chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "TK_CACHE": str(tmp_path / "c")}
    fork = make_minifork(tmp_path / "tvm")
    find = fork / "cmake/utils/FindLLVM.cmake"
    find.parent.mkdir(parents=True, exist_ok=True)
    find.write_text("execute_process(COMMAND ${LLVM_CONFIG} --libfiles)\n")
    r = tk("build", "-C", str(fork), "--llvm", "97", "--dry-run", "--json", env=env)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["plan"]["options"]["USE_LLVM"] == "llvm-config-97 --link-shared"
    assert "libPolly.a is missing" in info["plan"]["origin"]["options.USE_LLVM"]
    assert any("linking the shared libLLVM-97.so" in n for n in info["plan"]["notes"])
    assert not any(c["name"] == "llvm static libraries" for c in info["preflight"])
    static = "USE_LLVM=llvm-config-97 --ignore-libllvm --link-static"
    r = tk("build", "-C", str(fork), "--llvm", "97", "--set", static, "--dry-run", env=env)
    assert r.returncode == 0, r.stderr
    assert "FAIL llvm static libraries" in r.stdout and "linking the shared" not in r.stdout


def test_the_ffi_wheel_key_sees_the_python_package_the_library_key_does_not(tmp_path,
                                                                             cache):
    """A tvm-ffi edit to its Cython core or pyproject.toml changes the wheel (so it is built
    again) but not the libraries' key (so the libraries are not)."""
    from toolkit.builds.source import content_key

    ffi = tmp_path / "tvm-ffi"
    for rel, text in {"src/ffi/object.cc": "int x;\n", "pyproject.toml": "[project]\n",
                      "python/tvm_ffi/cython/core.pyx": "# core\n"}.items():
        (ffi / rel).parent.mkdir(parents=True, exist_ok=True)
        (ffi / rel).write_text(text)
    library, wheel = content_key(ffi), content_key(ffi, whole=True)
    for rel in ("python/tvm_ffi/cython/core.pyx", "pyproject.toml"):
        (ffi / rel).write_text((ffi / rel).read_text() + "# edited\n")
        assert content_key(ffi) == library
        assert content_key(ffi, whole=True) != wheel
        wheel = content_key(ffi, whole=True)
    (ffi / "src/ffi/object.cc").write_text("int y;\n")
    assert content_key(ffi) != library and content_key(ffi, whole=True) != wheel


def test_a_new_fragment_reaches_the_cli_the_plan_and_a_bisections_saved_request(
        fork, tmp_path, monkeypatch):
    """Adding a recipe flag is one file: a fragment in recipes/ with a [flag] table."""
    import shutil

    import click
    from click.testing import CliRunner

    from toolkit.bisect import report, state
    from toolkit.builds import recipes
    from toolkit.cli.options import recipe_options

    monkeypatch.setenv("TK_CACHE", str(tmp_path / "cache"))
    mine = tmp_path / "recipes"
    shutil.copytree(recipes.RECIPE_DIR, mine)
    (mine / "mini-extra.toml").write_text(
        'description = "the fork\'s extra"\n'
        '[flag]\nhelp = "Build the fork\'s extra."\norder = 35\n'
        '[options]\nUSE_MINI_EXTRA = "ON"\n')
    monkeypatch.setattr(recipes, "RECIPE_DIR", mine)

    seen: list[Request] = []

    @click.command()
    @recipe_options
    def cmd(request: Request) -> None:
        seen.append(request)

    assert "--mini-extra" in CliRunner().invoke(cmd, ["--help"]).output
    result = CliRunner().invoke(cmd, ["--mini-extra", "--debug", "--set", "USE_X=1"])
    assert result.exit_code == 0, result.output
    (req,) = seen
    assert req.fragments == {"mini-extra": "", "debug": ""} and req.sets == ["USE_X=1"]

    plan = resolve(Request(fragments=req.fragments), fork)
    assert plan.options["USE_MINI_EXTRA"] == "ON"
    assert plan.origin["options.USE_MINI_EXTRA"] == "mini-extra"
    assert plan.recipes == ["base", "debug", "mini-extra"]  # composed in its order

    st = state.BisectState(source=str(fork), good="a" * 40, bad="b" * 40,
                           commits=["a" * 40, "b" * 40], check=["true"], check_display="true",
                           request=req)
    st.save()
    back = state.load(fork)
    assert back is not None and back.request == req
    assert "--debug --mini-extra --set USE_X=1" in report.start_command(back, "A", "B")


def test_a_saved_request_with_a_field_tk_does_not_know_is_refused_not_dropped():
    assert Request.from_json(Request(fragments={"cuda": ""}, sets=["A=1"]).to_json()) == \
        Request(fragments={"cuda": ""}, sets=["A=1"])
    with pytest.raises(ValueError, match="no rocm_arch"):
        Request.from_json({**Request().to_json(), "rocm_arch": "gfx90a"})


def test_a_recipe_file_of_the_users_cannot_declare_a_flag(fork, tmp_path):
    own = tmp_path / "mine.toml"
    own.write_text('[flag]\nhelp = "x"\norder = 1\n')
    with pytest.raises(UserError, match=r"\[flag\]"):
        resolve(Request(recipe_files=[own]), fork)
