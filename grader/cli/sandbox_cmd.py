"""``grader sandbox ...``: the runtime image (a thin layer over grader.build.image)."""

from __future__ import annotations

import sys
import time

import click

from grader.errors import GraderError


def _fail(e: GraderError) -> None:
    click.echo(f"error: {e}", err=True)
    if e.hint:
        click.echo(f"hint: {e.hint}", err=True)
    sys.exit(e.exit_code)


@click.group("sandbox")
def sandbox() -> None:
    """The sandbox runtime image (Docker)."""


@sandbox.command("build")
@click.option(
    "--base",
    type=click.Choice(["auto", "debootstrap", "registry"]),
    default="auto",
    show_default=True,
    help="Base image: 'debootstrap' makes grader-base:bookworm offline from the apt "
    "mirror (needs root); 'registry' uses python:3.11-slim-bookworm; 'auto' picks "
    "debootstrap when possible.",
)
@click.option("--force", is_flag=True, help="Rebuild (without the layer cache) even if up to date.")
@click.option("--cuda", is_flag=True,
              help="Build the CUDA image grader-runtime-cuda:<hash> (same torch, the index's CUDA build "
              "with its nvidia-* wheels: several GB) that gradings with --gpus use.")
def build(base: str, force: bool, cuda: bool) -> None:
    """Build the runtime image grader-runtime:<hash> (or, with --cuda, grader-runtime-cuda:<hash>), if it is not
    up to date."""
    from grader.backends import engine
    from grader.build import image, naming
    from grader.wire.grant import Flavor

    flavor = Flavor.CUDA if cuda else Flavor.CPU
    try:
        t0 = time.monotonic()
        client = engine.connect()
        name = naming.runtime_image_name(flavor=flavor)
        if not force and naming.find_runtime_image(client, flavor=flavor) is not None:
            # build_runtime_image says so itself (name and id); nothing else to print.
            image.build_runtime_image(client, base=base, log=click.echo, flavor=flavor)
            return
        img = image.build_runtime_image(client, base=base, force=force, log=click.echo, flavor=flavor)
        info = naming.image_info(img)
        click.echo(f"built {name}: id {info['id']} in {time.monotonic() - t0:.0f} s")
    except GraderError as e:
        _fail(e)
