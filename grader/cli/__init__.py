"""Minimal CLI entry point (placeholder until the full CLI lands): only `grader sandbox ...`."""

import click

from grader.cli.sandbox_cmd import sandbox


@click.group()
def main() -> None:
    """Grade PyTorch interview exercises."""


main.add_command(sandbox)
