"""``grader sandbox ...``: the runtime image (a thin layer over grader.build.image)."""

from __future__ import annotations

import contextlib
import sys
import time

import click

from grader.errors import GraderError


def _fail(e: GraderError) -> None:
    click.echo(f"error: {e}", err=True)
    if e.hint:
        click.echo(f"hint: {e.hint}", err=True)
    sys.exit(e.exit_code)


@contextlib.contextmanager
def _building(what: str):
    """``(log, step)`` for a build: each line said, and the one running shown as progress (a bar on a terminal,
    a ``progress:`` line every 10 s elsewhere), so that docker's own output can stay in its file."""
    from rich.console import Console

    from grader.cli.heartbeat import shown_progress
    from grader.progress import Work

    work = Work(what)

    def now(label: str) -> None:
        work.clear()  # one thing at a time: what runs now
        work.start(label)

    def log(line: str) -> None:
        click.echo(line)
        now(line.strip())

    def step(line: str) -> None:  # "step 5 of 12: RUN ...": 4 of 12 done
        n, total = (int(x) for x in line.removeprefix("step ").split(":", 1)[0].split(" of "))
        work.plan(total)
        work.reached(n - 1)
        now(line)

    with shown_progress(Console(stderr=True, highlight=False), work):
        yield log, step


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
        with _building(f"building {name}") as (log, step):
            img = image.build_runtime_image(client, base=base, force=force, log=log, flavor=flavor, step=step)
        info = naming.image_info(img)
        click.echo(f"built {name}: id {info['id']} in {time.monotonic() - t0:.0f} s")
    except GraderError as e:
        _fail(e)
