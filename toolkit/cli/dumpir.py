"""``tk dump-ir``: record every pass of a compile; ``show`` / ``find`` / ``compare`` read dumps."""

from __future__ import annotations

from pathlib import Path

import click

from toolkit.cli.lazy import DefaultGroup
from toolkit.cli.options import ext_option, json_option, target_option, workload_argument
from toolkit.cli.terminal import Terminal, pass_terminal


@click.group("dump-ir", cls=DefaultGroup, default_command="dump")
def dumpir_group() -> None:
    """Record the IR after every pass of a compile, and read such dumps.

    \b
    tk dump-ir WORKLOAD --target T -o DIR     compile and record (the default action)
    tk dump-ir show DIR --pass P [--func F] [--diff]
    tk dump-ir find DIR REGEX [--func F]
    tk dump-ir compare DIR_A DIR_B
    tk dump-ir page DIR                       write DIR/index.html

    The dump prints no IR while it compiles; the first command that needs function texts
    compiles the workload again to print them, once, and keeps them in DIR.
    """


def opened(term: Terminal, directory: Path):  # noqa: ANN201 - query.Dump, imported lazily
    """The dump in ``directory`` with its function texts, rendered first if still pending.

    Rendering runs here, in tk's own process, not in a subprocess: it must compile with the
    TVM that recorded the dump, which is tk's own (dump-ir compiles in this process), and
    tk's crash guard already runs this command in a worker of its own, so a crash in the
    second compile is reported like any other; a subprocess would only add its start-up.
    """
    from toolkit.dumpir import query

    dump = query.Dump.open(directory)
    recompile = dump.index.recompile
    if recompile is None or recompile.rendered:
        return dump
    from toolkit.dumpir.in_tvm import render
    from toolkit.ext.loader import use

    render.check(dump.index, directory)  # before loading its extensions (render checks too)
    for ext in recompile.extensions:
        use(ext)
    term.say(f"rendering texts: compiling {recompile.workload} again (once; cached in "
             f"{directory})")
    done = render.render(directory)
    if done.failure is not None:
        term.warn(f"the second compile failed where the first did not: {done.failure}")
    if done.not_reproduced:
        term.warn(f"{len(done.not_reproduced)} of {done.versions + len(done.not_reproduced)} "
                  f"function versions were {render.NOT_REPRODUCED} (its build is not "
                  "deterministic); their texts are marked so")
    return query.Dump.open(directory)


@dumpir_group.command("dump")
@workload_argument
@target_option
@ext_option
@click.option("-o", "--output", "out", required=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Dump directory: new, empty, or an earlier dump exactly as tk wrote it "
              "(replaced whole; anything else is refused).")
@click.option("--passes", metavar="GLOB", help="Store function texts only for passes matching GLOB.")
@click.option("--funcs", metavar="GLOB", help="Store texts only of functions matching GLOB.")
@click.option("--all", "full_modules", is_flag=True,
              help="Also write every pass's whole module to DIR/modules/ (DumpIR's layout).")
@click.option("--verify", is_flag=True,
              help="Compile generated CUDA C with nvcc/ptxas (no GPU needed); exit 1 if rejected.")
@click.option("--asm", "assembly", is_flag=True,
              help="Also keep the host module's assembly (runs LLVM's backend once more).")
@json_option
@pass_terminal
def dump_cmd(term: Terminal, workload: str, target: str, extensions: tuple[str, ...], out: Path,
             passes: str | None, funcs: str | None, full_modules: bool, verify: bool,
             assembly: bool, as_json: bool) -> int:
    """Compile WORKLOAD for a target, recording what every pass did into DIR."""
    from toolkit import process
    from toolkit.dumpir import directory
    from toolkit.dumpir.in_tvm import dump as dumper
    from toolkit.ext.loader import use
    from toolkit.stack import target as targets
    from toolkit.stack import workload as workloads

    directory.check_output_dir(out)  # before the slow part: a refused directory costs nothing
    for ext in extensions:
        use(ext)
    result = dumper.dump(
        workloads.load(workload), targets.resolve(target), out, passes=passes, funcs=funcs,
        full_modules=full_modules, verify=verify, assembly=assembly,
        after_crash=process.after_crash(), extensions=extensions,
    )
    for note in result.crashed_runs:
        term.note(note)
    term.result(result.summary, lambda s: (
        f"dumped {s['passes']} passes ({s['changed_passes']} changed, "
        f"{s['functions_stored']} function versions) of {s['workload']} for {s['target']} "
        f"in {s['compile_seconds']:.2f} s -> {out}\n"
        f"  page:  tk dump-ir page {out} (the texts are printed on first ask: one more "
        "compile)\n"
        f"  index: {out / 'index.json'}"))
    if result.failure is not None:
        term.error(str(result.failure))
        return 1
    return 0


@dumpir_group.command("show")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--pass", "pass_", metavar="P",
              help="Pass number, name or glob (a name run more than once needs a number), "
              "or 'input'.")
@click.option("--func", metavar="F", help="Function name or glob.")
@click.option("--diff", is_flag=True, help="Show the unified diff the pass made instead.")
@json_option
@pass_terminal
def show_cmd(term: Terminal, directory: Path, pass_: str | None, func: str | None, diff: bool,
             as_json: bool) -> None:
    """Show the pass timeline, a function's IR after a pass, or the diff a pass made."""
    from toolkit.dumpir import query

    if pass_ is None:  # the timeline needs no function text
        dump = query.Dump.open(directory)
        if dump.index.texts_pending:
            term.note("the function texts are not rendered yet, so a change that prints "
                      "identically shows as changed (any show --pass renders them)")
        term.result(query.timeline(dump, func),
                    lambda rows: "\n".join(map(query.format_timeline_row, rows)))
        return
    dump = opened(term, directory)
    if pass_ == "input":
        term.result({"pass": "input", "functions": query.input_texts(dump, func)},
                    lambda d: texts_text(d["functions"], "in the input module"))
        return
    record = dump.find_pass(pass_)
    rules = query.schedule_rules(record, func)
    said = "".join(f"# {name}: scheduled by dlight rule {rule}\n" for name, rule in rules.items())
    if diff:
        diffs = query.pass_diff(dump, record, func)
        term.result({"pass": record.seq, "name": record.name, "diffs": diffs,
                     "schedule_rules": rules}, lambda d: said + (
            "".join(x["diff"] for x in diffs) if diffs
            else f"# pass #{record.seq} {record.name}: {record.change}, no function diff"))
        return
    term.result({"pass": record.seq, "name": record.name, "schedule_rules": rules,
                 "functions": query.texts_after(dump, record, func)},
                lambda d: said + texts_text(d["functions"], f"after #{record.seq} {record.name}"))


def texts_text(texts: dict[str, str | None], where: str) -> str:
    """Function texts one after the other, each under a comment naming it."""
    return "\n".join(f"# {name} {where}\n{text if text is not None else '# (not stored)'}"
                     for name, text in texts.items())


@dumpir_group.command("find")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.argument("regex")
@click.option("--func", metavar="F", help="Only functions matching this name or glob.")
@json_option
@pass_terminal
def find_cmd(term: Terminal, directory: Path, regex: str, func: str | None,
             as_json: bool) -> None:
    """For each function, the pass after which REGEX first appears and where it disappears."""
    from toolkit.dumpir import query

    term.result(query.find(opened(term, directory), regex, func), lambda hits: (
        "\n".join(map(query.format_find_row, hits)) if hits
        else f"no function ever matches {regex!r}"))


@dumpir_group.command("page")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@pass_terminal
def page_cmd(term: Terminal, directory: Path) -> None:
    """Write DIR/index.html, the dump's page (rendering the texts first, once)."""
    opened(term, directory)  # an older tk's dump has its page already
    term.echo(str(directory / "index.html"))


def normaliser_option(f):  # noqa: ANN001, ANN201 - a click decorator
    return click.option(
        "--raw", "raw", multiple=True, metavar="NAME",
        help="Switch a normaliser off: target, type-keys, numbering, or all (repeatable).",
    )(f)


@dumpir_group.command("compare")
@click.argument("dir_a", type=click.Path(file_okay=False, path_type=Path))
@click.argument("dir_b", type=click.Path(file_okay=False, path_type=Path))
@normaliser_option
@json_option
@pass_terminal
def compare_cmd(term: Terminal, dir_a: Path, dir_b: Path, raw: tuple[str, ...],
                as_json: bool) -> int:
    """Align two dumps' pipelines: passes only in one, reordered, first diverging pass.

    Exits 1 when either dump is of a compile that failed (the comparison stops there).
    """
    from toolkit.dumpir import normalise, query

    result = query.compare(opened(term, dir_a), opened(term, dir_b), normalise.chosen(raw))
    term.result(result, lambda r: query.format_compare(r, str(dir_a), str(dir_b)))
    return 1 if result["failed_a"] or result["failed_b"] else 0


@dumpir_group.command("diff")
@click.argument("dir_a", type=click.Path(file_okay=False, path_type=Path))
@click.argument("dir_b", type=click.Path(file_okay=False, path_type=Path))
@click.option("--pass", "pass_", metavar="P",
              help="Pass of A (number, name or glob); default: the first diverging pass.")
@click.option("--func", metavar="F", help="Function name or glob (a codegen record: a file).")
@normaliser_option
@json_option
@pass_terminal
def diff_cmd(term: Terminal, dir_a: Path, dir_b: Path, pass_: str | None, func: str | None,
             raw: tuple[str, ...], as_json: bool) -> None:
    """A against B: the same functions after the same pass in two dumps, normalised."""
    from toolkit.dumpir import normalise, query

    result = query.diff(opened(term, dir_a), opened(term, dir_b), pass_, func,
                        normalise.chosen(raw))
    term.result(result, render_diff)


def render_diff(r: dict) -> str:
    normalisers = ", ".join(r["normalisers"]) or "none"
    if r["pass_a"] is None:
        return (f"no aligned pass turns the same input into different output "
                f"(normalised: {normalisers})")
    head = (f"# A #{r['pass_a']} {r['name_a']} vs B #{r['pass_b']} {r['name_b']} "
            f"(normalised: {normalisers})\n")
    return head + ("".join(d["diff"] for d in r["diffs"]) if r["diffs"]
                   else "# no difference after normalising")
