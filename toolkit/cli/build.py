"""``tk build``, ``tk build ls/show/rm/gc`` and ``tk env ID``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from toolkit.cli.options import COUNT, json_option, recipe_options

if TYPE_CHECKING:
    from toolkit.builds.driver import Outcome
    from toolkit.builds.recipes import Request

from toolkit.cli.terminal import Terminal, pass_terminal


@click.group("build", invoke_without_command=True)
@click.option("--source", "-C", "source", default=".", show_default=True, metavar="DIR",
              help="The TVM source tree (or fork) to build.")
@recipe_options
@click.option("--build-dir", metavar="DIR", help="Build directory (default: <source>/build-<plan>).")
@click.option("--jobs", "-j", type=COUNT, help="Parallel compile jobs.")
@click.option("--dry-run", is_flag=True, help="Print the resolved plan; build nothing.")
@click.option("--force", is_flag=True, help="Build even when the store has this build.")
@click.option("--no-check", is_flag=True, help="Skip the post-build check in the build's env.")
@click.option("--registry", metavar="REGISTRY/REPO",
              help="Look for the build in this OCI registry before building "
                   "(default: $TK_REGISTRY, else tk's config file; '' for none).")
@click.option("--ccache-remote", metavar="URL",
              help="ccache's remote storage, shared by a team: redis://HOST:PORT, "
                   "http://HOST/PATH (default: $TK_CCACHE_REMOTE, else tk's config file).")
@json_option
@click.pass_context
@pass_terminal
def build_group(term: Terminal, ctx: click.Context, source: str, request: Request,
                build_dir: str | None,
                jobs: int | None, dry_run: bool, force: bool,
                no_check: bool, registry: str | None, ccache_remote: str | None,
                as_json: bool) -> int | None:
    """Build TVM from recipes: base + --llvm/--cuda/--debug/--ccache/--runtime-only + yours.

    \b
    tk build --llvm --dry-run        show the plan: config.cmake, CMake args, env, Dockerfile
    tk build --cuda --debug          build (served from the store when nothing changed)
    tk build ls / tk build show ID   stored builds (sizes) and their records
    tk build rm ID / tk build gc     free the store
    tk build push ID / pull REF      share a build through an OCI registry
    eval "$(tk env ID)"              use a stored build in this shell
    """
    if ctx.invoked_subcommand:
        return None
    from toolkit.builds import driver as builder
    from toolkit.builds import report
    from toolkit.builds.team import TeamSettings

    plan, tree = builder.plan(request, source)
    if dry_run:
        term.result(builder.dry_run(plan, tree, build_dir), report.dry_run_text)
        return 0
    share = TeamSettings.load(registry=registry, ccache_remote=ccache_remote)
    outcome = builder.build(plan, tree, build_dir=build_dir, jobs=jobs, events=term.handle,
                            force=force, check=not no_check, share=share)
    show_outcome(term, outcome)
    return 0


def show_outcome(term: Terminal, outcome: Outcome) -> None:
    from toolkit.builds import report

    stats = outcome.ccache
    term.result({**outcome.record.to_json(), "from_store": outcome.from_store,
                 "from": outcome.came_from, "ccache": stats.to_json() if stats else None},
                lambda _: report.outcome_text(outcome.record, outcome.from_store,
                                              pulled=outcome.pulled, ccache=stats))


@build_group.command("push")
@click.argument("build_id", metavar="ID")
@click.argument("repository", metavar="[REGISTRY/REPO]", required=False)
@json_option
@pass_terminal
def push_cmd(term: Terminal, build_id: str, repository: str | None, as_json: bool) -> None:
    """Send a stored build to an OCI registry (default: $TK_REGISTRY, else tk's config
    file): its libraries, tvm-ffi wheel and record, each a blob named by its digest."""
    from toolkit.builds import oci, registry, report, store
    from toolkit.builds.team import TeamSettings
    from toolkit.errors import UserError

    where = repository or TeamSettings.load().registry
    if not where:
        raise UserError("no registry to push to: tk build push ID REGISTRY/REPO, or set "
                        "TK_REGISTRY or [team] registry in tk's config file")
    repo = oci.Reference.parse(where)
    record = store.find(build_id)
    pushed = registry.push(record, repo, events=term.handle)
    term.result(pushed.to_json(), lambda _: (
        f"pushed {record.id} to {pushed.reference}\n  {pushed.blobs} blobs, "
        f"{pushed.uploaded} uploaded ({report.size(pushed.bytes_uploaded)}), the rest there "
        f"already; {pushed.seconds:.1f} s"))


@build_group.command("pull")
@click.argument("reference", metavar="REF")
@click.option("--source", "-C", "source", default=".", show_default=True, metavar="DIR",
              help="The tree the build is for (its build key must be the build's).")
@json_option
@pass_terminal
def pull_cmd(term: Terminal, reference: str, source: str, as_json: bool) -> None:
    """Fetch a build from an OCI registry into the store (REGISTRY/REPO:TAG or @sha256:...,
    as tk build push printed it): every blob checked against its digest, then the build's
    post-build check, here, before the store keeps it."""
    from toolkit.builds import driver as builder
    from toolkit.builds.source import inspect

    outcome = builder.pull(reference, inspect(source), events=term.handle)
    show_outcome(term, outcome)


@build_group.command("ls")
@json_option
@pass_terminal
def ls_cmd(term: Terminal, as_json: bool) -> None:
    """List stored builds, newest first, with their sizes (files shared by content between
    builds count once in the store's total)."""
    from toolkit import paths
    from toolkit.builds import gc, report, store

    # A build just stored leaves the others packing in the background: list what they are
    # once that is done, not a half-packed state (sizes and "packed" mid-way).
    gc.wait_for_packing()
    builds = [report.summary(r, gc.usage(r)) for r in store.all_builds()]
    total = gc.store_usage()
    if as_json:
        term.json({"builds": builds, "store": str(paths.cache_root()), "total_bytes": total})
        return
    if not builds:
        term.echo(f"no stored builds in {store.builds_root()}")
        return
    term.table([[s["id"], s["created"], (s["commit"] or "-")[:12] + ("+" if s["dirty"] else ""),
                 report.size(s["bytes"]) + (" packed" if s["packed"] else ""),
                 report.size(s["unique_bytes"]), s["recipes"], s["source"]]
                for s in builds],
               header=["ID", "CREATED", "COMMIT", "SIZE", "OWN", "RECIPES", "SOURCE"])
    term.echo(f"store {paths.cache_root()}: {report.size(total)} on disk for {len(builds)} builds "
              "(OWN: what tk build rm ID frees; packed: libraries compressed until used)")


@build_group.command("show")
@click.argument("build_id", metavar="ID")
@json_option
@pass_terminal
def show_cmd(term: Terminal, build_id: str, as_json: bool) -> None:
    """Show a stored build's record (what was really built)."""
    from toolkit.builds import report, store

    record = store.find(build_id)
    term.result(record.to_json(), lambda _: report.record_text(record))


@build_group.command("rm")
@click.argument("build_ids", metavar="ID...", nargs=-1, required=True)
@pass_terminal
def rm_cmd(term: Terminal, build_ids: tuple[str, ...]) -> None:
    """Remove stored builds (and the stored files no other build shares)."""
    from toolkit.builds import gc, report, store

    for build_id in build_ids:
        record = store.find(build_id)
        term.echo(f"removed {record.id} ({report.size(gc.remove(record))} freed)")


@build_group.command("gc")
@pass_terminal
def gc_cmd(term: Terminal) -> None:
    """Remove incomplete entries and stored files no build uses any more; with a remote
    DOCKER_HOST, that engine's build volumes whose build directory here is gone."""
    from toolkit.builds import gc, image, report
    from toolkit.errors import UserError

    done = gc.gc()
    left = done["temporaries"]
    term.echo(f"removed {done['entries']} incomplete entries, {left} temporary "
              f"file{'' if left == 1 else 's'} left by a process that is gone and "
              f"{done['objects']} unused files ({report.size(done['bytes'])}); store now "
              f"{report.size(gc.store_usage())}")
    if image.shares_files():
        return  # the engine (if any) builds in directories of this machine: nothing kept there
    from toolkit.builds.backends import docker

    engine = os.environ["DOCKER_HOST"]
    try:
        gone = docker.remove_stale_volumes()
    except UserError as e:
        term.echo(f"build volumes on {engine}: not looked at ({e})")
    else:
        term.echo(f"removed {len(gone)} build volumes on {engine} whose build directory here "
                  "is gone")


@click.command("env")
@click.argument("build_id", metavar="ID")
@click.option("--source", "-C", metavar="DIR",
              help="Use this tree's Python package instead of the one the build came from.")
@click.option("--ignore-check", is_flag=True,
              help="Hand out a build whose post-build check failed (says so on stderr).")
@json_option
@pass_terminal
def env_cmd(term: Terminal, build_id: str, source: str | None, ignore_check: bool,
            as_json: bool) -> None:
    """Print shell exports that put a stored build in use: eval "$(tk env ID)". A build whose
    post-build check failed is refused (exit 1) unless --ignore-check."""
    from toolkit.builds import store

    record, caveat = store.hand_out(build_id, ignore_check)
    if caveat:
        term.warn(caveat)
    term.result(store.env_of(record, source), store.shell_exports)
