"""The ``grader`` command: a thin click layer over functions the tests and batch runner call.

Exit status: 0 graded (whatever the score), 2 bad usage, 3 not graded because of
infrastructure (rerun), 4 `validate` found an exercise that does not prove what it
must, 5 `regrade` or `bundle verify` found a difference, 1 a bug in the grader itself.
"""

from __future__ import annotations

import sys

import click

from grader.errors import GraderError


class GraderGroup(click.Group):
    """Turns every ``GraderError`` into its message, its hint and its exit status: never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except GraderError as e:
            from rich.console import Console

            from grader.untrusted import in_markup

            console = Console(stderr=True, highlight=False)
            label = "not graded" if e.exit_code == 3 else "error"
            # Messages quote paths, names and fields from outside (reports, folders): escaped, never obeyed.
            console.print(f"[bold red]{label}:[/] {in_markup(e)}", soft_wrap=True)  # [extras] are no markup
            if e.hint:
                console.print(in_markup(e.hint), soft_wrap=True)
            sys.exit(e.exit_code)


@click.group(cls=GraderGroup)
@click.version_option(package_name="grader")
def main() -> None:
    """Grade PyTorch interview exercises in a sandbox, with hidden checks."""


from grader.cli.batch_cmd import batch  # noqa: E402
from grader.cli.bundle_cmd import bundle  # noqa: E402
from grader.cli.history_cmd import history_cmd  # noqa: E402
from grader.cli.init_cmd import init  # noqa: E402
from grader.cli.list_cmd import list_cmd  # noqa: E402
from grader.cli.pack_cmd import pack  # noqa: E402
from grader.cli.regrade_cmd import regrade_cmd  # noqa: E402
from grader.cli.sandbox_cmd import sandbox  # noqa: E402
from grader.cli.show_cmd import show  # noqa: E402
from grader.cli.start_cmd import start  # noqa: E402
from grader.cli.submit import submit  # noqa: E402
from grader.cli.validate_cmd import validate  # noqa: E402

main.add_command(submit)
main.add_command(batch)
main.add_command(validate)
main.add_command(sandbox)
main.add_command(history_cmd)
main.add_command(start)
main.add_command(list_cmd)
main.add_command(show)
main.add_command(init)
main.add_command(pack)
main.add_command(regrade_cmd)
main.add_command(bundle)
