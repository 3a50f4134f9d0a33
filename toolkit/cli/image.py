"""``tk image``: offline base images for container builds."""

from __future__ import annotations

from pathlib import Path

import click

from toolkit.cli.options import json_option
from toolkit.cli.terminal import Terminal, pass_terminal


@click.group("image")
def image_group() -> None:
    """Make offline base images for container builds (no registry needed)."""


@image_group.command("bootstrap")
@click.option("--suite", default="bookworm", show_default=True, help="Debian suite to debootstrap.")
@click.option("--tag", default=None, help="Image tag to make [default: tk/debian:SUITE].")
@click.option("--mirror", default=None,
              help="Debian mirror URL [default: the one apt on this machine uses].")
@click.option("--force", is_flag=True, help="Remake the image even when the tag exists.")
@json_option
@pass_terminal
def bootstrap_cmd(term: Terminal, suite: str, tag: str | None, mirror: str | None, force: bool,
                  as_json: bool) -> None:
    """Debootstrap a minimal Debian and docker-import it as a base image (needs root)."""
    from dataclasses import asdict

    from toolkit.builds import image

    result = image.bootstrap(suite=suite, tag=tag, mirror=mirror, force=force,
                             events=term.handle)
    term.result(asdict(result), lambda r: (
        f"made {r['tag']} ({r['image_id'][:19]}) from {r['mirror']}" if r["created"]
        else f"{r['tag']} exists ({r['image_id'][:19]}); kept it (--force remakes it)"))


@image_group.command("build")
@click.option("--llvm", "llvm", is_flag=False, flag_value="", default=None, metavar="[VER]",
              help="With LLVM; --llvm 16 installs llvm-16-dev.")
@click.option("--cuda", is_flag=True, help="The CUDA template (its base must hold CUDA).")
@click.option("--recipe", "recipes", multiple=True, type=click.Path(path_type=Path),
              metavar="FILE", help="Add your own recipe (its [container] section counts).")
@json_option
@pass_terminal
def build_cmd(term: Terminal, llvm: str | None, cuda: bool, recipes: tuple[Path, ...],
              as_json: bool) -> None:
    """Make the toolchain image 'tk build --backend docker' would use, ahead of a build.

    The same flags as tk build pick the same image: it is tagged by what it is built from,
    so a later build finds it and goes straight to compiling.
    """
    from dataclasses import asdict

    from toolkit.builds.backends import docker
    from toolkit.builds.recipes import Request, resolve

    fragments = {**({"llvm": llvm} if llvm is not None else {}), **({"cuda": ""} if cuda else {})}
    plan = resolve(Request(fragments=fragments, recipe_files=list(recipes), backend="docker"))
    built, log = docker.prepare_image(plan, events=term.handle)
    term.result({**asdict(built), "log": str(log)}, lambda b: (
        f"{b['tag']} exists ({b['image_id'][:19]}); nothing to build" if b["cached"]
        else f"built {b['tag']} ({b['image_id'][:19]}) in {b['seconds']:.1f} s, "
             f"{b['cached_steps']} of {b['steps']} steps from the layer cache (log: {b['log']})"))
