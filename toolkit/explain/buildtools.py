"""The build tools' own failures and what was fed to them: a compiler that crashed, a linker
given a flag it does not take, a CMake file written with a literal escape, a project's
configuration that lacks a key its loader requires, an LLVM header that moved between LLVM
releases.

Each function takes a rule's matched groups and the text near the match and returns
``(cause, fix)`` (:mod:`toolkit.explain.rules`), or ``NOT_THIS`` when the match is not that
failure after all.
"""

from __future__ import annotations

import re

from toolkit.explain.refine import NOT_THIS
from toolkit.explain.tables import table


def compiler_crash(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """GCC's ``internal compiler error``, MSVC's C1001, clang's crash banner: the compiler
    itself failed on a file, which is a compiler bug whatever the source holds."""
    file = (groups.get("file") or groups.get("file2") or "").strip()
    compiler = "MSVC" if groups.get("msvc") else "the compiler"
    where = f" while compiling {file}" if file else ""
    tvm = " (one of TVM's own sources)" if re.search(r"(?:^|[/\\])src[/\\]", file) else ""
    return (f"an internal compiler error: {compiler} itself crashed{where}{tvm}. This is a "
            "compiler bug, not an error in the source: the same file builds with other "
            "compilers or versions, and often with a lower optimization level.",
            "build with another version of the compiler (a newer update of it, or the one the "
            "project's CI uses), or lower the optimization for that file (for MSVC, a Debug "
            "build or `#pragma optimize(\"\", off)` around the function it names); if the file "
            "is TVM's, a newer TVM may carry a workaround (`git log -- FILE` in TVM)")


def unknown_linker_flag(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """The linker rejected a flag the build passes it."""
    flag = next((groups[k] for k in ("flag", "flag2", "flag3", "flag4", "flag5") if groups.get(k)), "")
    return (f"the linker does not accept {flag}, which the build's linker flags pass to it: "
            "a flag written for another linker (GNU ld, Apple's ld64, lld and link.exe take "
            "different flags) or one this linker's release no longer takes.",
            f"remove {flag} from the linker flags (in Xcode: Build Settings > Other Linker "
            "Flags; in CMake: target_link_options, CMAKE_EXE_LINKER_FLAGS / "
            "CMAKE_SHARED_LINKER_FLAGS, or LDFLAGS in the environment), or link with the "
            "linker it was written for")


def cmake_literal_escape(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """CMake read an argument that starts with a backslash escape where a command should
    start: the file holds the two characters ``\\n`` where a line break was meant."""
    escape = groups.get("escape", "")
    # the "CMake Error at FILE:LINE:" header sits on the line above the match
    headers = re.findall(r"CMake Error at (\S+?):?\n", text[:text.find(escape) + 1])
    where = headers[-1] if headers else ""
    meant = {"n": "a line break", "t": "a tab", "r": "a line break"}.get(escape[1:2], "")
    if not meant:
        return None
    return (f"{where or 'the CMake file'} holds a literal {escape[:2]} (a backslash and a "
            f"letter) where {meant} was meant, so CMake reads `{escape}` as an argument, not "
            "the start of a command. This is what `echo \"set(A ON)\\nset(B ON)\" >> "
            "config.cmake` writes in a shell whose echo does not expand escapes (bash's "
            "builtin echo without -e).",
            f"replace each {escape[:2]} in {where.split(':')[0] or 'the file'} with a real "
            "line break (write one `echo` per line, or use printf '...\\n' / echo -e), then "
            "configure again")


# Projects built on TVM whose configuration a check names by its missing key: where the
# file sits and which configuration it reads (the project's own sources; see each entry).
CONFIG_READERS = [
    # mlc-ai/mlc-llm cpp/llm_chat.cc LLMChat::LoadJSONOverride: CHECK(partial_update) << "Key
    # \"...\" not found." for each key of the model's chat config
    (re.compile(r"mlc[-_]llm|mlc[-_]chat|llm_chat"), "MLC-LLM",
     "the model's chat config, mlc-chat-config.json (MLC-LLM's LoadJSONOverride reads it when "
     "the model is loaded)"),
]


def config_key(groups: dict[str, str], _text: str) -> tuple[str, str] | None:
    """A check in a file outside TVM says a key of the configuration it reads is missing."""
    from toolkit.explain.toolchain import _tree_path, _tvm_directory

    file, key = groups.get("file", ""), groups.get("key", "")
    if _tvm_directory(_tree_path(file)):
        return NOT_THIS  # TVM's own check: the error-site index answers it
    project, config = next(((name, what) for pattern, name, what in CONFIG_READERS
                            if pattern.search(file)), ("", "the configuration file it loads"))
    owner = f"{project}'s" if project else "a project's"
    return (f"{file} is {owner} own code, not TVM's: its check says {config} has no key "
            f"\"{key}\", which that code requires (a config file written by another version "
            "of the tool, edited by hand, or for another model).",
            f"add \"{key}\" to {config.split(' (')[0]} (regenerate the config with the tool "
            "version that reads it, or copy the key from a working config of the same model)")


def _llvm_headers() -> dict[str, dict[str, object]]:
    return table("llvm_headers")["headers"]


def llvm_header(groups: dict[str, str], text: str) -> tuple[str, str] | None:
    """An LLVM header TVM's LLVM code includes is not where the LLVM in use keeps it: from
    tk's table of the version guards around LLVM includes in TVM's sources at each release
    (``scripts/llvm_headers.py``)."""
    from toolkit.explain.toolchain import llvm_shown

    header = groups.get("header") or groups.get("header2") or ""
    fact = _llvm_headers().get(header)
    if fact is None:
        return NOT_THIS  # an LLVM header no TVM release chooses by version: missing-header's
    major, other, since = fact["llvm"], fact["other"], fact["since"]
    shown = llvm_shown(text)
    seen = f" (the log shows LLVM {shown})" if shown else ""
    if other is None:  # an include guarded alone: a header LLVM removed or added
        if fact["kind"] == "old":
            return (f"{header} is not in the LLVM in use{seen}: TVM's sources include it only "
                    f"for LLVMs older than {major} (`#if TVM_LLVM_VERSION < {major}0` in "
                    f"{fact['file']}; the first release with that guard is {since}), as LLVM "
                    f"{major} and newer do not have it. The TVM sources being built are older "
                    "than that, or the LLVM is newer than they know.",
                    f"update TVM to {since} or newer, or build this TVM against an LLVM older "
                    f"than {major} (USE_LLVM=/path/to/llvm-config of it)")
        return (f"{header} is not in the LLVM in use{seen}: it first came with LLVM {major}, "
                f"and TVM's sources include it only for LLVM {major} and newer "
                f"({fact['file']}, from {since}), so the LLVM headers on the include path are "
                "older than the LLVM the build was configured with (its llvm-config sets "
                "TVM_LLVM_VERSION).",
                "configure the build with the llvm-config of the LLVM whose headers are on the "
                "include path, or put that LLVM's include directory first")
    if fact["kind"] == "old":
        return (f"{header} is not in the LLVM in use{seen}: LLVM {major} and newer keep it "
                f"elsewhere, and TVM's sources include {other} instead for LLVM {major} and "
                f"newer (`#if TVM_LLVM_VERSION >= {major}0` in {fact['file']}; the first "
                f"release with that choice is {since}). The TVM sources being built are older "
                f"than that, or the LLVM is newer than they know.",
                f"update TVM to {since} or newer, or build this TVM against an LLVM older than "
                f"{major} (USE_LLVM=/path/to/llvm-config of it)")
    return (f"{header} is not in the LLVM in use{seen}: TVM's sources include it for LLVM "
            f"{major} and newer ({other} before; {fact['file']}, from {since}), so the LLVM "
            "headers on the include path are older than the LLVM the build was configured "
            "with (its llvm-config sets TVM_LLVM_VERSION).",
            "configure the build with the llvm-config of the LLVM whose headers are on the "
            "include path, or put that LLVM's include directory first")


# Where a traceback shows the Cython that ran: .../site-packages/Cython/ or dist-packages/.
_CYTHON_AT = re.compile(r"File \"(?P<at>[^\"]*?/(?:site|dist)-packages)/Cython/")


def cython_syntax(groups: dict[str, str], text: str) -> tuple[str, str]:
    """Cython rejects the syntax of TVM's (or tvm-ffi's) own Cython sources, which their CI
    compiles: the Cython that ran reads the language differently, most often an old one (a
    distribution's package) that predates syntax the sources use."""
    source, message = groups.get("file", ""), groups.get("msg", "").strip()
    at = _CYTHON_AT.search(text)
    where = f" (the traceback's Cython is the one under {at.group('at')})" if at else ""
    return (f"Cython stopped at TVM's own Cython source {source}: \"{message}\". TVM's CI "
            f"compiles these sources, so the Cython that ran{where} reads the language "
            "differently from the one TVM is built with: most often it is too old (a "
            "distribution's package) for syntax the sources use.",
            "upgrade Cython in the Python that runs the build (python -m pip install -U cython; "
            "python -c 'import Cython; print(Cython.__version__)' shows the version), then "
            "build again")


def stl_acknowledge_macro(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """MSVC's standard library stops a build with a static_assert (C2338, or C2338's newer
    wording "static_assert failed") that names the macro acknowledging a behaviour change of
    that library version: the sources predate the change."""
    macro, other = groups.get("macro", ""), groups.get("other", "")
    alternative = f" (or {other}, for the old behaviour)" if other and other != macro else ""
    return (f"MSVC's standard library stopped the build with a static_assert: this Visual "
            f"Studio's library changed a behaviour the sources rely on, and asks for "
            f"{macro}{alternative} to be defined to acknowledge it. The sources were written "
            "for an older Visual Studio.",
            f"define {macro} for the build (CMake: add_definitions(-D{macro}), or /D{macro} in "
            "the compiler flags); a newer TVM may define it in its own CMake for MSVC, or use "
            "the older Visual Studio the sources were written for")


def cython3_exception_spec(groups: dict[str, str], _text: str) -> tuple[str, str]:
    """``ndarray.pxi:116:66: Cannot assign type 'void (object) except *' to
    'PyCapsule_Destructor'``: Cython 3's default exception specification."""
    file, msg = groups.get("file", ""), groups.get("msg", "")
    return (f"Cython 3.0 (July 2023) changed cdef functions to propagate exceptions by default "
            f"(`except *` unless declared noexcept), so a callback in {file} no longer has the "
            f"type the C API expects ({msg.strip()}): these sources were written for Cython "
            f"0.29, and the build picked up Cython 3.",
            "pin Cython below 3 for this TVM (pip install 'cython<3', with "
            "--no-build-isolation so the build uses it), or use a TVM whose Cython sources "
            "declare the callback for 3.0 (noexcept or a cast)")


def space_in_path(groups: dict[str, str], text: str) -> tuple[str, str] | str:
    """``install: target '9.3.1/libbacktrace/lib/libbacktrace.la' is not a directory``: the
    path a tool was given was cut at a space, the tail it names is what came after it in a
    path the log shows whole ("build-Release-GCC 9.3.1/libbacktrace/lib")."""
    tail = groups["tail"].strip("/")
    head = tail.split("/", 1)[0]
    whole = re.search(r"(?P<path>/[^\s'\"]*\s" + re.escape(head) + r"(?:/|\b)[^\s'\"]*)", text)
    if whole is None:
        return NOT_THIS
    path = whole.group("path")
    spaced = path.split(" " + head, 1)[0].rsplit("/", 1)[-1] + " " + head
    who = " (TVM's bundled libbacktrace, built as an external project by its own configure " \
        "and libtool, cmake/libs/Libbacktrace.cmake)" if "libbacktrace" in text else ""
    return (f"the build path holds a space ('{spaced}' in {path}): a tool of the build{who} "
            f"was handed the path unquoted and split it at the space, so it took '{groups['tail']}'"
            " for a directory of its own.",
            "use a build directory (and source path) without spaces, e.g. "
            f"'{spaced.replace(' ', '-')}', and configure again")
