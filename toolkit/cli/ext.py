"""``tk ext``: scaffold, build, check and load out-of-tree TVM extensions."""

from __future__ import annotations

import sys

import click

from toolkit.cli import options
from toolkit.cli.options import COUNT, json_option
from toolkit.cli.terminal import Terminal, pass_terminal

python_option = options.python_option("Interpreter whose TVM to build against / check against.")


@click.group("ext")
def ext_group() -> None:
    """Scaffold, build, check and load out-of-tree TVM extensions."""


@ext_group.command("new")
@click.argument("name")
@click.option("--dir", "directory", default=".", show_default=True,
              help="Directory to create the project in (as DIR/NAME).")
@click.option("--kind", type=click.Choice(["runtime", "pass", "target", "codegen"]),
              default="runtime", show_default=True,
              help="runtime: C++ global functions, built into a wheel; pass: a C++ TIR pass and "
                   "a C++ Relax pass, with a pipeline and a workload that runs them; target (= "
                   "codegen): a device, its C++ device API and a code generator emitting C.")
@options.python_option("Interpreter whose TVM the extension is for: pyproject.toml's "
                       "dependency ranges come from its apache-tvm and apache-tvm-ffi.")
@pass_terminal
def new_cmd(term: Terminal, name: str, directory: str, kind: str, python: str) -> None:
    """Scaffold an extension project NAME of --kind."""
    from toolkit.ext.scaffold import new

    root = new(name, directory, kind, python)
    term.echo(f"created {root}")
    if kind == "pass":
        py = "" if python == sys.executable else f" --python {python}"
        term.echo(f"next: tk ext build {root}{py} --tvm-source TVM_TREE && (cd {root} && "
                  "python -m pytest tests && tk dump-ir workload.py -o dump)")
    elif kind in ("target", "codegen"):
        term.echo(f"next: tk ext build {root} && (cd {root} && python -m pytest tests) && "
                  f"tk run builtin:mlp --ext {root} --target {name} --check")
    else:
        term.echo(f"next: tk ext build {root} && (cd {root} && python -m pytest tests)")


@ext_group.command("build")
@click.argument("directory", default=".", metavar="[DIR]")
@python_option
@click.option("--tvm-prebuild", default=None, metavar="DIR",
              help="A prebuilt TVM (include/ + lib/); default: the tvm of --python.")
@click.option("--tvm-source", default=None, metavar="DIR",
              help="A TVM source tree: its headers (checked against the libraries used first) "
                   "and its build/lib, else the libraries of --python's tvm.")
@click.option("--build", "build_id", default=None, metavar="ID",
              help="A stored tk build (tk build ls): its tree's headers and its libraries.")
@click.option("--build-type", default="RelWithDebInfo", show_default=True)
@click.option("--jobs", "-j", type=COUNT, default=None, help="Parallel compile jobs.")
@json_option
@pass_terminal
def build_cmd(term: Terminal, directory: str, python: str, tvm_prebuild: str | None,
              tvm_source: str | None, build_id: str | None, build_type: str, jobs: int | None,
              as_json: bool) -> None:
    """Configure and build the extension in DIR; write its manifest beside the library."""
    from toolkit.ext.compile import build

    built = build(directory, python=python, tvm_prebuild=tvm_prebuild, tvm_source=tvm_source,
                  build_id=build_id, build_type=build_type, jobs=jobs, events=term.handle)
    term.result({"library": str(built.library), "manifest": str(built.manifest_path),
                 **built.manifest}, render_built)


def render_built(data: dict) -> str:
    lines = [f"built {data['library']}"]
    for link in data["links"]:
        what = f"{link['package']} {link['version']}: " if link["version"] else ""
        lines.append(f"  against {what}{link['path']} (build id {str(link['build_id'])[:12]})")
    lines.append(f"  registers: {', '.join(data['globals']) or '(no global functions)'}")
    lines.append(f"  manifest: {data['manifest']}")
    return "\n".join(lines)


@ext_group.command("wheel")
@click.argument("directory", default=".", metavar="[DIR]")
@python_option
@click.option("--out", default=None, metavar="DIR", help="Where to write it (default DIR/dist).")
@click.option("--tvm-source", default=None, metavar="DIR",
              help="Compile against this TVM source tree's headers (compiler passes need them).")
@click.option("--build", "build_id", default=None, metavar="ID",
              help="Compile against a stored tk build's tree and libraries.")
@click.option("--jobs", "-j", type=COUNT, default=None, help="Parallel compile jobs.")
@json_option
@pass_terminal
def wheel_cmd(term: Terminal, directory: str, python: str, out: str | None,
              tvm_source: str | None, build_id: str | None, jobs: int | None,
              as_json: bool) -> None:
    """Build DIR and package it as a relocatable wheel ($ORIGIN RUNPATH, no tk at run time)."""
    from toolkit.ext.wheel import build_wheel

    w = build_wheel(directory, out_dir=out, python=python, jobs=jobs, tvm_source=tvm_source,
                    build_id=build_id)
    term.result({"wheel": str(w.path), "runpath": w.runpath, "requires": w.requires},
                lambda d: "\n".join([f"wheel {d['wheel']}",
                                     f"  RUNPATH {':'.join(d['runpath']) or '-'}",
                                     f"  requires: {', '.join(d['requires']) or '-'}"]))


@ext_group.command("check")
@click.argument("library", metavar="LIB.so")
@python_option
@json_option
@pass_terminal
def check_cmd(term: Terminal, library: str, python: str, as_json: bool) -> int:
    """Say what LIB.so would bind to in --python's TVM, without loading it. Exit 1 on a
    mismatch."""
    from toolkit.ext.check import check, render

    report = check(library, python=python)
    term.result(report.to_dict(), lambda _: render(report))
    return 0 if report.ok else 1


@ext_group.command("load")
@click.argument("library", metavar="LIB.so")
@click.option("--force", is_flag=True,
              help="Load despite a tvm-ffi ABI or symbol mismatch (warns); never with a "
                   "second copy of a TVM library. Also: TK_EXT_FORCE=1.")
@json_option
@pass_terminal
def load_cmd(term: Terminal, library: str, force: bool, as_json: bool) -> None:
    """Load LIB.so into this process through tk's loader and list what it registered."""
    import warnings

    from toolkit.ext.loader import ForcedLoad, load_extension

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ForcedLoad)
        try:
            ext = load_extension(library, force=force)
        finally:  # a forced load that dlopen then refuses still says what was overridden
            for w in caught:
                term.warn(str(w.message))
    term.result({"library": ext.path, "registered": ext.registered}, lambda d: (
        f"loaded {d['library']}\n  registered: {', '.join(d['registered']) or '(nothing new)'}"))
