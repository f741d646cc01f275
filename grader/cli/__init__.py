"""The ``grader`` command: a thin click layer over functions the tests and batch runner call.

Exit status: 0 graded (whatever the score), 2 bad usage, 3 not graded because of
infrastructure (rerun), 4 `validate` found an exercise that does not prove what it
must, 5 `regrade` or `bundle verify` found a difference, 6 `bundle verify` found none but the
bundle is not signed with this machine's key (unsigned, or another key), 130 interrupted (Ctrl-C),
141 the reader of the output went away (`grader list | head -1`: what a shell reports
for any tool a closed pipe stops), 1 a bug in the grader itself.
"""

from __future__ import annotations

import contextlib
import os
import sys

import click

from grader.errors import EXIT_CLOSED_PIPE, EXIT_INTERRUPTED, GraderError


class GraderGroup(click.Group):
    """Turns every ``GraderError`` into its message, its hint and its exit status: never a traceback.

    Likewise for the two ways a user stops a command: Ctrl-C (one line, exit 130; the
    grading's own ``finally`` blocks have already taken its judge and sandbox down) and
    a closed pipe (silence, exit 141: the reader has what it wanted).
    """

    def make_context(self, *args, **kwargs):
        with _closed_pipe_is_no_failure():  # `grader --help | head -1`
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        try:
            with _closed_pipe_is_no_failure():
                result = super().invoke(ctx)
                sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
            return result
        except KeyboardInterrupt:
            click.echo("interrupted: stopped before it finished; run the same command again.", err=True)
            sys.exit(EXIT_INTERRUPTED)
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


@contextlib.contextmanager
def _closed_pipe_is_no_failure():
    """Exit 141, silently, when the reader of stdout went away. Click would exit 1 and rich's
    ``Console.on_broken_pipe`` does (after silencing stdout): both read as a failure to ``set -o pipefail``."""
    try:
        yield
    except BrokenPipeError:
        _silence_stdout()
        sys.exit(EXIT_CLOSED_PIPE)
    except SystemExit as e:
        if isinstance(e.__context__, BrokenPipeError):  # rich's on_broken_pipe
            sys.exit(EXIT_CLOSED_PIPE)
        raise


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's flush at exit does not fail (and say so) a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (a test runner's buffer): nothing left to flush
        pass


@click.group(cls=GraderGroup)
@click.version_option(package_name="grader")
def main() -> None:
    """Grade PyTorch interview exercises in a sandbox, with hidden checks."""


from grader.cli.batch_cmd import batch  # noqa: E402
from grader.cli.bundle_cmd import bundle  # noqa: E402
from grader.cli.collect_cmd import collect_cmd  # noqa: E402
from grader.cli.handin_cmd import hand_in_cmd  # noqa: E402
from grader.cli.history_cmd import history_cmd  # noqa: E402
from grader.cli.init_cmd import init  # noqa: E402
from grader.cli.key_cmd import key  # noqa: E402
from grader.cli.list_cmd import list_cmd  # noqa: E402
from grader.cli.new_cmd import new  # noqa: E402
from grader.cli.pack_cmd import pack  # noqa: E402
from grader.cli.regrade_cmd import regrade_cmd  # noqa: E402
from grader.cli.sandbox_cmd import sandbox  # noqa: E402
from grader.cli.serve_cmd import serve_cmd  # noqa: E402
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
main.add_command(new)
main.add_command(pack)
main.add_command(hand_in_cmd)
main.add_command(collect_cmd)
main.add_command(regrade_cmd)
main.add_command(bundle)
main.add_command(key)
main.add_command(serve_cmd)
