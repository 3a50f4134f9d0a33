"""``tk image``: offline base images for container builds."""

from __future__ import annotations

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
    from toolkit import image

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
