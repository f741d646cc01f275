"""Grade a submission again under the conditions a report recorded, and say whether it agrees.

Conditions come from ``report.environment``, not the command line, so a reviewer cannot regrade under
other settings by accident: the same exercise (by catalog name, its fingerprint still matching), seed,
OCI runtime (runc for reports that predate its record; an override is noted) and submission bytes
(sha256 checked first). A report is someone else's data, so nothing in it can lower the isolation or
pick the code that runs: the exercise is a name, never a path; the sandbox is Docker unless the caller
asks for local (noted); a recorded image is used only when it is one of the grader's own.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from grader.errors import EXIT_MISMATCH, UsageError, describe_invalid
from grader.exercise import load_catalog_exercise
from grader.host.grading import grade, read_submission
from grader.reports.compare import decision_differences
from grader.reports.derived import EditedReport, report_from_json
from grader.reports.model import Report
from grader.build.naming import SPECS
from grader.build.naming import TAG_LENGTH
from grader.backends.oci_runtime import DEFAULT as DEFAULT_RUNTIME
from grader.backends.oci_runtime import RUNTIMES, resolve_runtime
from grader.wire.grant import parse_gpus


class SubmissionChanged(UsageError):
    """The file given is not the one the report graded: regrading other bytes would prove nothing."""

    def __init__(self, path: Path, actual: str, recorded: str):
        super().__init__(f"Submission {str(path)!r} is not the file the report graded: its sha256 is "
                         f"{actual}, the report recorded {recorded or '(none)'}.")
        self.path, self.actual, self.recorded = path, actual, recorded


@dataclass
class RegradeResult:
    """``matches`` is True only when the exercise is unchanged and the whole decision agrees: score, max score,
    flags, every check's status and points, and the findings behind the flags."""

    matches: bool
    differences: list[str]
    new: Report
    notes: list[str] = field(default_factory=list)


def read_report(path: Path) -> Report:
    """A stored report, or a ``UsageError`` naming the bad field (never a traceback)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise UsageError(f"Cannot read report {str(path)!r}: {e.strerror}.") from None
    try:
        return report_from_json(text)
    except ValidationError as e:
        raise UsageError(describe_invalid(f"{path} is not a grading report:", e, show_input=False, limit=10),
                         hint="Pass the JSON a panel-audience `grader submit --json` wrote.") from None
    except EditedReport as e:
        raise ReportEdited(path, e) from None
    except ValueError as e:  # not UTF-8 JSON at all
        raise UsageError(f"{path} is not a grading report: {e}.") from None


class ReportEdited(UsageError):
    """A stored report whose headline disagrees with its own checks: refused, never regraded or shown."""

    exit_code = EXIT_MISMATCH

    def __init__(self, path: Path, error: EditedReport):
        super().__init__(f"{path} was edited after grading, so it is refused: "
                         + "; ".join(map(str, error.edits)) + ".",
                         hint="A score and its flags are computed from the checks, never taken from the file. "
                              "Regrade from a report the grader wrote (a bundle `grader bundle verify` finds "
                              "signed and intact).")
        self.edits = error.edits


def regrade(report: Report, submission: Path, *, exercise_root: Path | None = None,
            sandbox: str | None = None, runtime: str | None = None) -> RegradeResult:
    """Grade ``submission`` again as ``report`` was graded; ``exercise_root`` holds exercise folders by name.

    ``sandbox`` is the caller's choice of sandbox, Docker when None: a recorded ``local`` never
    lowers the isolation by itself. ``runtime`` overrides the recorded OCI runtime. Each is noted
    when it differs from the record, and the local sandbox always is.
    """
    env = report.environment
    if report.audience == "candidate":
        raise UsageError("This report is a candidate's copy: hidden checks' ids are hashed, so it cannot be "
                         "compared check by check.", hint="Regrade from the panel-audience report.")
    exercise = load_catalog_exercise(report.exercise, exercise_root)
    actual = hashlib.sha256(read_submission(submission)).hexdigest()
    if actual != env.submission_sha256:
        raise SubmissionChanged(submission, actual, env.submission_sha256)
    kind = sandbox or "docker"
    oci = image = None
    notes = []
    if kind == "docker":
        oci, note = _runtime(env.oci_runtime, runtime)
        image, image_note = _image(env.image)
        notes += note + image_note
    # The report's GPU request is its text: read here, where it enters (a bad one is a usage error, as --gpus's is).
    new = grade(exercise, submission, sandbox=kind, seed=env.hypothesis_seed,
                gpus=parse_gpus(env.gpus) if env.gpus else None, image=image, runtime=oci)
    notes = _sandbox_notes(env.sandbox, new.environment.sandbox) + notes + _environment_notes(report, new)
    differences = []
    if exercise.fingerprint != env.exercise_fingerprint:
        differences.append(f"the exercise changed since this report: its fingerprint was "
                           f"{env.exercise_fingerprint[:12] or '(none)'}, now {exercise.fingerprint[:12]} "
                           "(checks, probes or limits were edited); outcomes below are under the changed exercise")
    differences += decision_differences(report, new, sides=("recorded", "regraded"))
    return RegradeResult(matches=not differences, differences=differences, new=new, notes=notes)


def _sandbox_notes(recorded: str | None, ran: str | None) -> list[str]:
    """What to say about the sandbox the regrade ran in (``"none"``: the judge answered alone, as it does for
    the untouched stub and a file that does not parse, whatever sandbox was asked for)."""
    if ran == "local":
        said = "as recorded" if recorded == "local" else f"instead of the recorded {recorded or '(none)'}"
        return [f"sandbox local ({said}), as asked: candidate code ran as you, not isolated"]
    if ran == recorded:
        return []
    return [f"sandbox {ran} instead of the recorded {recorded or '(none)'}"
            + (": a recorded local sandbox is used only when asked for (--sandbox local)" if recorded == "local"
               else "")]


def _image(recorded: str | None) -> tuple[str | None, list[str]]:
    """The recorded runtime image, when it is one of the grader's own (``grader-runtime:<tag>``, or the CUDA
    image ``grader-runtime-cuda:<tag>``).

    A report is data anyone can edit: naming any other image on the host would run the
    submission in a container of the report's choosing. Such a name is not used (the current
    runtime image grades instead) and is noted.
    """
    repos = "|".join(re.escape(spec.repo) for spec in SPECS.values())
    if recorded is None or re.fullmatch(rf"(?:{repos}):[0-9a-f]{{{TAG_LENGTH}}}", recorded):
        return recorded, []
    return None, [f"the report names the image {recorded!r}, which is not a grader runtime image "
                  f"({' or '.join(spec.repo for spec in SPECS.values())}:<tag>): regraded with the current "
                  "runtime image instead"]


def _runtime(recorded: str | None, override: str | None) -> tuple[str, list[str]]:
    """The OCI runtime to regrade under: the override, else the recorded one (never ``$GRADER_RUNTIME``).

    A report from before runtimes were recorded was graded under runc.
    """
    recorded = recorded or DEFAULT_RUNTIME
    name = resolve_runtime(override) if override else recorded
    if name not in RUNTIMES:
        raise UsageError(f"The report records OCI runtime {name!r}, which this grader does not know.",
                         hint=f"Pass --runtime with one of {', '.join(RUNTIMES)} (noted in the output).")
    return name, [f"runtime {name} instead of the recorded {recorded}"] if name != recorded else []


def _environment_notes(old: Report, new: Report) -> list[str]:
    """What differs in the machinery (not in outcomes): worth knowing if outcomes differ too."""
    notes = []
    for key in ("image_id", "torch_version", "cuda_version", "python_version", "grader_version"):
        a, b = getattr(old.environment, key), getattr(new.environment, key)
        if a != b:
            notes.append(f"{key}: recorded {a or '(none)'}, now {b or '(none)'}")
    return notes
