"""Regenerate tk's table of TVM's optional libraries: which USE_X CMake option builds each in.

    python scripts/optional_libs.py REPO [--out toolkit/data/explain/optional_libs.json]

REPO is an apache/tvm clone (bare is fine). At every release tag (v0.6.0 on) and main, the
options CMakeLists.txt declares (``tvm_option(USE_X "doc" DEFAULT)``) are recorded with the
first and last release that declares them, and under each ``if(USE_X ...)`` block of
cmake/modules/**.cmake the libraries it links (``find_library(VAR name ...)``) and the contrib
source folders it compiles (``src/runtime/contrib/DIR``). `tk explain` answers "undefined
symbol: nnp_convolution_output" and "Cannot find PackedFunc flashinfer.single_prefill" from
it: the library belongs to TVM's optional code, linked only when the option is ON.
"""

from __future__ import annotations

import re
from pathlib import Path

import tvm_tags

_OPTION = re.compile(r'(?<![\w$])(?:tvm_)?option\(\s*(USE_\w+)\s+"([^"]*)"\s+([^)\s]+)')
_SET = re.compile(r"^set\((USE_\w+)\s+([^)\s]+)", re.MULTILINE)  # cmake/config.cmake's template
_IF = re.compile(r"^\s*(if|elseif|endif)\s*\((.*)", re.IGNORECASE)
_FIND = re.compile(r"find_library\(\s*\w+\s+(?:NAMES\s+)?([A-Za-z][\w.+-]*)", re.IGNORECASE)
_CONTRIB = re.compile(r"src/(?:runtime/)?contrib/(\w+)/")


def _refs(repo: Path) -> list[str]:
    return [f"refs/tags/{t}" for t in tvm_tags.releases(repo, 6)] + ["main"]


def _blocks(text: str) -> list[tuple[str, str]]:
    """(option, line) for each line inside an ``if(USE_X...)``: the innermost USE_ option."""
    stack: list[str | None] = []
    out = []
    for line in text.splitlines():
        head = _IF.match(line)
        if head and head.group(1).lower() == "if":
            # if(USE_CUDA AND USE_CUDNN): the last option is the one the block is for
            named = re.findall(r"(?<!NOT )\b(USE_\w+)", head.group(2).split(")")[0])
            stack.append(named[-1] if named else None)
            continue
        if head and head.group(1).lower() == "endif":
            if stack:
                stack.pop()
            continue
        inner = next((o for o in reversed(stack) if o), None)
        if inner:
            out.append((inner, line))
    return out


def collect(repo: Path) -> dict[str, dict[str, object]]:
    options: dict[str, dict[str, object]] = {}
    for ref in _refs(repo):
        name = ref.rsplit("/", 1)[-1]
        declared = _OPTION.findall(tvm_tags.git(repo, "show", f"{ref}:CMakeLists.txt"))
        if "cmake/config.cmake" in tvm_tags.git(repo, "ls-tree", "--name-only", ref, "cmake/"):
            config = tvm_tags.git(repo, "show", f"{ref}:cmake/config.cmake")
            declared += [(opt, "", value) for opt, value in _SET.findall(config)]
        for opt, doc, default in declared:
            entry = options.setdefault(opt, {"first": name, "libraries": [], "contrib": []})
            entry.update(last=name, default=entry.get("default", default))
            entry["doc"] = doc or entry.get("doc", "")
        files = [f for f in tvm_tags.git(repo, "ls-tree", "-r", "--name-only", ref, "cmake/").split()
                 if f.endswith(".cmake")] + ["CMakeLists.txt"]
        for path in files:
            for opt, line in _blocks(tvm_tags.git(repo, "show", f"{ref}:{path}")):
                entry = options.get(opt)
                if entry is None:
                    continue
                found = [(k, v.lower()) for k, vs in (("libraries", _FIND.findall(line)),
                                                      ("contrib", _CONTRIB.findall(line)))
                         for v in vs]
                for key, value in found:
                    if value not in entry[key]:  # type: ignore[operator]
                        entry[key].append(value)  # type: ignore[union-attr]
                        entry.setdefault("module", path)
    return dict(sorted(options.items()))


def main() -> None:
    tvm_tags.write_table(
        __doc__, "optional_libs.json",
        "apache/tvm CMakeLists.txt tvm_option() and cmake/modules if(USE_X) blocks at "
        "each release tag v0.6.0.. and main (scripts/optional_libs.py)",
        lambda repo: {"options": collect(repo)})


if __name__ == "__main__":
    main()
