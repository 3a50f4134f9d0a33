"""Regenerate tk's table of the names TileLang's CUDA template headers declare, by release.

    python scripts/tilelang_templates.py REPO [--out toolkit/data/explain/tilelang_templates.json]

REPO is a tile-ai/tilelang clone (bare is fine). The kernels TileLang's code generator prints
include its template headers (src/tl_templates/cuda/*.h: ``fp8_e4_t``, ``make_fp8_e4_16_t``,
``tl::gemm_ss``, macros such as ``hexp``), so nvcc's ``identifier "X" is undefined`` in such a
kernel is often a name one release's printer uses and its headers lack. At every release tag
(v0.1.N, v0.1.N.postM, as scripts/tilelang_archs.py reads them) and at main it records:

- ``names``: each name the headers declare (a function, a struct or class, a ``using`` alias,
  a macro) in some releases but not all, with its header and the releases that have it;
- ``cuda``: each name the headers use only inside an ``#if`` on the CUDA version
  (``CUDART_VERSION >= 12080``, ``__CUDACC_VER_MAJOR__ >= 12``), with the version and the first
  release that guards it: a name of CUDA's own headers that older toolkits lack.
"""

from __future__ import annotations

import re
from pathlib import Path

import tvm_tags
from tilelang_archs import tags

ROOT = "src/tl_templates/cuda/"
_DECLARED = re.compile(r"""
  ^[ \t]*(?:template\s*<[^>\n]*>\s*)?(?:struct|class)\s+(?P<cls>\w+)\s*(?:final\s*)?[:{]
| ^[ \t]*\#[ \t]*define[ \t]+(?P<macro>\w+)
| ^[ \t]*using\s+(?P<alias>\w+)\s*=
| ^[ \t]*(?:template\s*<[^>\n]*>\s*)?(?:(?:TL_DEVICE|TL_PATCH|TL_DEVICE_NOINLINE|static|inline|
    __device__|__forceinline__|CUTLASS_DEVICE|constexpr)\s+)+[\w:<>,*& ]+?[\s*&](?P<func>\w+)\s*\(
""", re.M | re.X)
# #if CUDART_VERSION >= 12080; #if __CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 &&
# __CUDACC_VER_MINOR__ >= 8) (a directive may go on over lines ending in a backslash)
_IF = re.compile(r"^[ \t]*#[ \t]*(?:el)?if\b(?P<cond>(?:[^\n]*\\\n)*[^\n]*)", re.M)
_END = re.compile(r"^[ \t]*#[ \t]*(?:else|elif|endif)\b", re.M)


def cuda_version(cond: str) -> str | None:
    """The CUDA version an ``#if`` asks for at least (``12.8``), or None."""
    if m := re.search(r"\bCUDA(?:RT)?_VERSION\s*>=\s*(\d{4,5})", cond):
        return f"{int(m.group(1)) // 1000}.{int(m.group(1)) % 1000 // 10}"
    if m := re.search(r"__CUDACC_VER_MAJOR__\s*==\s*(\d+)\s*&&\s*__CUDACC_VER_MINOR__\s*>=\s*(\d+)",
                      cond):
        return f"{m.group(1)}.{m.group(2)}"
    if m := re.search(r"__CUDACC_VER_MAJOR__\s*(>=|>)\s*(\d+)", cond):
        return f"{int(m.group(2)) + (m.group(1) == '>')}.0"
    return None


_KEYWORDS = {"float", "double", "void", "char", "bool", "long", "short", "auto", "const",
             "return", "static", "inline", "unsigned", "signed", "half"}


def declared(text: str) -> set[str]:
    """Names of four characters or more the header declares (not an include guard)."""
    names = {m.group(m.lastgroup) for m in _DECLARED.finditer(text)}
    # not CUDA's or the compiler's own (__half, __asm__), a type keyword, or an include guard
    return {n for n in names if len(n) >= 4 and not n.startswith("__") and n not in _KEYWORDS
            and not n.endswith(("_H_", "_H"))}


def cuda_guarded(text: str) -> dict[str, str]:
    """CUDA's own names (``__nv_*``) used only inside an ``#if`` on the CUDA version: name ->
    the version it asks for (``12.8``)."""
    found: dict[str, str] = {}
    outside = text
    for m in _IF.finditer(text):
        version = cuda_version(m.group("cond"))
        if version is None:
            continue
        end = _END.search(text, m.end())
        block = text[m.end():end.start() if end else len(text)]
        outside = outside.replace(block, "")
        for name in set(re.findall(r"\b__nv_\w+", block)):
            found.setdefault(name, version)
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", outside, flags=re.S)  # what a comment says is no use
    return {name: v for name, v in found.items() if not re.search(rf"\b{name}\b", code)}


def collect(repo: Path) -> dict[str, object]:
    versions = [*tags(repo), "main"]
    present: dict[str, dict[str, str]] = {}  # name -> {version: header}
    cuda: dict[str, list[str]] = {}  # name -> [CUDA version, first release guarding it]
    for version in versions:
        rev = "main" if version == "main" else f"refs/tags/{version}"
        files = [f for f in tvm_tags.git(repo, "ls-tree", "-r", "--name-only", rev, "--",
                                         ROOT).split() if f.endswith((".h", ".cuh"))]
        for path in files:
            text = tvm_tags.git(repo, "show", f"{rev}:{path}")
            for name in declared(text):
                present.setdefault(name, {}).setdefault(version, path.removeprefix("src/"))
            for name, needs in cuda_guarded(text).items():
                # the newest release's version (TileLang first asked 12.6 for __nv_fp8_e8m0,
                # then 12.8), the first release that guards it
                cuda[name] = [needs, cuda.get(name, [needs, version])[1]]
    names = {}
    for name, where in present.items():
        if len(where) < len(versions):  # a name every release declares tells no release apart
            names[name] = [where[v] for v in versions if v in where][-1:] + [
                ",".join(str(i) for i, v in enumerate(versions) if v in where)]
    return {"versions": versions, "names": names, "cuda": cuda}


def main() -> None:
    tvm_tags.write_table(
        __doc__, "tilelang_templates.json",
        "tile-ai/tilelang's CUDA template headers (src/tl_templates/cuda/) at each release tag "
        "and main (scripts/tilelang_templates.py)", collect)


if __name__ == "__main__":
    main()
