"""Options several commands share, defined once so their names, choices and help never drift apart.

The vocabulary (one spelling per meaning, across commands) is docs/options.md; an old spelling stays one
release as a hidden alias that says its new name (:func:`renamed`).
"""

from __future__ import annotations

import functools
from pathlib import Path

import click

from grader.backends.oci_runtime import RUNTIMES
from grader.errors import UsageError
from grader.wire.grant import GPUS_EXPECTED, GpuRequest, parse_gpus


class GpuRequestType(click.ParamType):
    """``--gpus SPEC`` read once, here at the edge, into a :class:`GpuRequest`: what the commands hand on is
    the typed request, never the string (``grader.wire.grant.parse_gpus`` says what a bad one is)."""

    name = "gpus"

    def convert(self, value, param, ctx) -> GpuRequest:
        if isinstance(value, GpuRequest):
            return value
        try:
            return parse_gpus(value)
        except UsageError:  # click's own usage error (exit 2), naming the option and the value
            self.fail(f"{value!r}: {GPUS_EXPECTED} (the spellings `docker run --gpus` takes).", param, ctx)


def gpus_option(what: str = "the sandbox"):
    """``--gpus`` for a command that grades: the spelling ``docker run --gpus`` takes; a grading given GPUs runs
    in the CUDA image (``grader sandbox build --cuda``)."""
    return click.option("--gpus", type=GpuRequestType(),
                        help=f"GPU request for {what}: all, a count, or device=0,1. Gradings with GPUs "
                             "run in the CUDA image (`grader sandbox build --cuda`).")


def runtime_option(recorded: str = "Recorded in each report."):
    """``--runtime`` for a command that grades in Docker; ``recorded`` ends the help with what it keeps."""
    return click.option("--runtime", type=click.Choice(RUNTIMES), default=None,
                        help="OCI runtime of the Docker sandbox: runc, or runsc (gVisor; slower, a second wall). "
                             f"Default: $GRADER_RUNTIME, else runc. {recorded}")


def exercise_root_option(what: str):
    """``--exercise-root DIR``: one meaning in every command, a folder holding exercise folders by name."""
    return click.option("--exercise-root", type=click.Path(file_okay=False, path_type=Path),
                        help=f"Folder holding exercise folders by name. Default: {what}.")


def solutions_root_option(what: str = "the solutions/ beside the exercises used"):
    """``--solutions-root DIR``: the folder holding ``<exercise>/`` references, variants and mutants."""
    return click.option("--solutions-root", type=click.Path(file_okay=False, path_type=Path),
                        help=f"Folder holding <exercise>/ reference, variants/ and mutants/. Default: {what}.")


#: Where candidate code runs, for every command that grades: the same three words everywhere.
SANDBOXES = ("auto", "docker", "local")


def sandbox_option(default: str):
    """``--sandbox auto|docker|local``. ``default``: ``auto`` on commands a person runs on their own machine
    (submit, validate), ``docker`` on those whose results are evidence (batch, regrade), which never fall back."""
    why = ("Default auto: Docker when an engine and the image answer, otherwise local, said in one line"
           if default == "auto" else "Default docker: this command's results are evidence, so it never falls back to "
                                     "local by itself (auto does, saying so)")
    return click.option("--sandbox", type=click.Choice(SANDBOXES), default=default,
                        help=f"Where candidate code runs: docker, or local (NOT isolated, and said so). {why}.")


def resolve_sandbox(requested: str, *, say, gpus=None) -> str:
    """``--sandbox``'s value for a whole run: ``auto`` resolved once (``say`` hears the one-line note when it
    is the local sandbox); an explicit kind as given."""
    if requested != "auto":
        return requested
    from grader.backends.choice import choose_sandbox

    choice = choose_sandbox("auto", gpu=gpus)
    if choice.note:
        say(choice.note)
    return choice.kind


def jobs_option(what: str = "Gradings at once"):
    """``--jobs N``: how many gradings run at once; the default is the same everywhere, one per core."""
    return click.option("--jobs", type=click.IntRange(min=1), metavar="N",
                        help=f"{what} (default: one per core this process may use).")


def output_option(what: str):
    """``-o/--output PATH``: where the command writes what it makes (a zip, a folder)."""
    return click.option("-o", "--output", "output", type=click.Path(path_type=Path), help=what)


def only_option(what: str = "Only these exercises"):
    """``--only NAME``: repeatable, and each value may list several names with commas (``--only a,b``)."""
    return click.option("--only", multiple=True, metavar="NAME[,NAME...]",
                        help=f"{what}: repeat it, or separate names with commas.")


def only_names(values: tuple[str, ...]) -> list[str]:
    """The names ``--only`` was given, in order, each once."""
    names = [n.strip() for value in values for n in value.split(",") if n.strip()]
    return list(dict.fromkeys(names))


def json_option(what: str):
    """``--json FILE``: what the command found, as JSON (submit: the report; validate: every verdict)."""
    return click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
                        help=what)


def renamed(old: str, new: str, dest: str, **kwargs):
    """A hidden old spelling of an option, kept for one release: it fills ``dest`` when the new one was not
    given, and says once, on stderr, what it is called now."""
    key = f"renamed_{old.lstrip('-').replace('-', '_')}"

    def remember(ctx, param, value):
        if value is not None and value != ():
            click.echo(f"deprecated: {old} is now {new}; the old spelling goes in the next release.", err=True)
            ctx.meta[key] = value

    def decorate(f):
        @functools.wraps(f)
        def command(*args, **params):
            ctx = click.get_current_context()
            if key in ctx.meta and params.get(dest) in (None, ()):
                params[dest] = ctx.meta[key]
            return f(*args, **params)

        return click.option(old, key, hidden=True, expose_value=False, callback=remember, **kwargs)(command)

    return decorate
