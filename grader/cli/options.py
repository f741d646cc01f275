"""Options several commands share, defined once so their names, choices and help never drift apart."""

from __future__ import annotations

import click

from grader.sandbox.oci_runtime import RUNTIMES


def gpus_option(what: str = "the sandbox"):
    """``--gpus`` for a command that grades: the spelling ``docker run --gpus`` takes; a grading given GPUs runs
    in the CUDA image (``grader sandbox build --cuda``)."""
    return click.option("--gpus", help=f"GPU request for {what}: all, a count, or device=0,1. Gradings with GPUs "
                                       "run in the CUDA image (`grader sandbox build --cuda`).")


def runtime_option(recorded: str = "Recorded in each report."):
    """``--runtime`` for a command that grades in Docker; ``recorded`` ends the help with what it keeps."""
    return click.option("--runtime", type=click.Choice(RUNTIMES), default=None,
                        help="OCI runtime of the Docker sandbox: runc, or runsc (gVisor; slower, a second wall). "
                             f"Default: $GRADER_RUNTIME, else runc. {recorded}")
