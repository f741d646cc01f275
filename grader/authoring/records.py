"""The mistake record (``mistakes.json``) is measured on today's files: checks, probes, reference and mutants.

A grading names the mistake it looks like only from a record measured on the checks as they are
(``grader.hindsight.records``); these rules say what changed since it was written and the command
that writes it again. A stale record is a warning for ``grader validate`` (an error with ``--strict``,
and the repository's tests hold every stored record current); a record that cannot be read is an error.
See docs/decisions/stale-record-warning.md.
"""

from __future__ import annotations

from grader.authoring.findings import Finding, Rule
from grader.authoring.folder import Folder
from grader.errors import ExerciseError
from grader.exercise import GpuPolicy
from grader.hindsight.records import RECORD_NAME, load_record, record_path
from grader.hindsight.recording import record_command, stale_files
from grader.wire.grant import Flavor


def _flavor(folder: Folder) -> Flavor:
    return Flavor.CUDA if folder.exercise.config.exercise.gpu is GpuPolicy.REQUIRED else Flavor.CPU


def record_current(folder: Folder) -> list[Finding]:
    ex = folder.exercise
    path = record_path(ex)
    command = f"`{record_command(ex.name, _flavor(folder))}`"
    try:
        record = load_record(ex)
    except ExerciseError as e:
        return [Finding(Rule.RECORD_INVALID, path, f"{e} Write it again with {command}.")]
    if record is None:
        gpu = " on a machine with an NVIDIA GPU" if _flavor(folder) is Flavor.CUDA else ""
        return [Finding(Rule.RECORD_MISSING, path, f"no {RECORD_NAME}: gradings of {ex.name} name no mistake until "
                        f"one is written; run {command}{gpu} once the reference, variants and mutants validate.")]
    out = []
    stale = stale_files(record, ex, folder.corpus)
    if stale:
        out.append(Finding(Rule.RECORD_STALE, path, f"stale: {'; '.join(stale)} since it was written; gradings "
                           f"name no mistake (or the wrong one) until {command} writes it again."))
    if ex.config.exercise.gpu is GpuPolicy.REQUIRED and record.flavors != [Flavor.CUDA]:
        held = ", ".join(f.value for f in record.flavors)
        out.append(Finding(Rule.RECORD_FLAVOR, path, f"{ex.name} needs a GPU (gpu = \"required\"): its record is a "
                           f"cuda one only, not {held}; write it with {command} on a machine with an NVIDIA GPU."))
    return out


RULES = (record_current,)
