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
import importlib
import os
import sys

import click

from grader.cli.interrupts import forget_handled_interrupt, no_interrupt_lost
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
            with _closed_pipe_is_no_failure(), no_interrupt_lost():
                result = super().invoke(ctx)
                sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
            return result
        except KeyboardInterrupt:
            forget_handled_interrupt()
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


#: Each command and the module that defines it: a module is imported only when its command runs
#: (or when ``--help`` lists every command), so ``grader submit`` never loads the service or the batch.
COMMANDS = {
    "submit": "grader.cli.submit:submit",
    "batch": "grader.cli.batch_cmd:batch",
    "validate": "grader.cli.validate_cmd:validate",
    "sandbox": "grader.cli.sandbox_cmd:sandbox",
    "history": "grader.cli.history_cmd:history_cmd",
    "start": "grader.cli.start_cmd:start",
    "list": "grader.cli.list_cmd:list_cmd",
    "show": "grader.cli.show_cmd:show",
    "init": "grader.cli.init_cmd:init",
    "new": "grader.cli.new_cmd:new",
    "pack": "grader.cli.pack_cmd:pack",
    "hand-in": "grader.cli.handin_cmd:hand_in_cmd",
    "collect": "grader.cli.collect_cmd:collect_cmd",
    "regrade": "grader.cli.regrade_cmd:regrade_cmd",
    "bundle": "grader.cli.bundle_cmd:bundle",
    "key": "grader.cli.key_cmd:key",
    "serve": "grader.cli.serve_cmd:serve_cmd",
}


class LazyGrader(GraderGroup):
    """The group whose commands are :data:`COMMANDS`, each imported on first use (click's lazy-group pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands:  # one added to the group itself (add_command)
            return self.commands[name]
        if name not in COMMANDS:
            return None
        module, _, attr = COMMANDS[name].partition(":")
        command = getattr(importlib.import_module(module), attr)
        if command.name != name:  # the table and the command's own name must agree, or help would lie
            raise RuntimeError(f"{COMMANDS[name]} is the command {command.name!r}, listed as {name!r}")
        return command


def every_command() -> dict[str, click.Command]:
    """Every command by name, each module imported (for what must see them all: help, docs checks)."""
    context = click.Context(main, info_name="grader")
    return {name: main.get_command(context, name) for name in COMMANDS}


@click.group(cls=LazyGrader)
@click.version_option(package_name="grader")
def main() -> None:
    """Grade PyTorch interview exercises in a sandbox, with hidden checks."""
