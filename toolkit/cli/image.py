"""``tk image``: offline base images for container builds."""

from __future__ import annotations

from pathlib import Path

import click

from toolkit.cli.options import echo_json, json_option


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
def bootstrap_cmd(suite: str, tag: str | None, mirror: str | None, force: bool,
                  as_json: bool) -> None:
    """Debootstrap a minimal Debian and docker-import it as a base image (needs root)."""
    from toolkit.build import image

    def log(line: str) -> None:
        click.echo(f"tk image: {line}", err=True)

    result = image.bootstrap(suite=suite, tag=tag, mirror=mirror, force=force, log=log)
    if as_json:
        echo_json({"tag": result.tag, "image_id": result.image_id, "created": result.created,
                   "mirror": result.mirror})
    elif result.created:
        click.echo(f"made {result.tag} ({result.image_id[:19]}) from {result.mirror}")
    else:
        click.echo(f"{result.tag} exists ({result.image_id[:19]}); kept it (--force remakes it)")


@image_group.command("build")
@click.option("--llvm", "llvm", is_flag=False, flag_value="", default=None, metavar="[VER]",
              help="With LLVM; --llvm 16 installs llvm-16-dev.")
@click.option("--cuda", is_flag=True, help="The CUDA template (its base must hold CUDA).")
@click.option("--recipe", "recipes", multiple=True, type=click.Path(path_type=Path),
              metavar="FILE", help="Add your own recipe (its [container] section counts).")
@json_option
def build_cmd(llvm: str | None, cuda: bool, recipes: tuple[Path, ...], as_json: bool) -> None:
    """Make the toolchain image 'tk build --backend docker' would use, ahead of a build.

    The same flags as tk build pick the same image: it is tagged by what it is built from,
    so a later build finds it and goes straight to compiling.
    """
    from toolkit.build.backends import docker
    from toolkit.build.recipes import Request, resolve

    plan = resolve(Request(llvm=llvm, cuda=cuda, recipe_files=list(recipes), backend="docker"))
    built, log = docker.prepare_image(plan)
    if as_json:
        echo_json({"tag": built.tag, "image_id": built.image_id, "base": built.base,
                   "cached": built.cached, "steps": built.steps,
                   "cached_steps": built.cached_steps, "seconds": built.seconds, "log": str(log)})
    elif built.cached:
        click.echo(f"{built.tag} exists ({built.image_id[:19]}); nothing to build")
    else:
        click.echo(f"built {built.tag} ({built.image_id[:19]}) in {built.seconds:.1f} s, "
                   f"{built.cached_steps} of {built.steps} steps from the layer cache (log: {log})")
