"""Load an exercise folder: its exercise.toml, and where its parts live.

An exercise is a folder (``exercises/<name>/``) holding the prompt, the stub the
candidate edits, ``probes.py`` (runs in the sandbox), ``checks/`` (hidden, judge
side) and ``exercise.toml``. Every mistake in exercise.toml is reported with the
file and the key, the way hypothesis names the bad argument.
"""

from __future__ import annotations

import functools
import hashlib
import re
import tomllib
from enum import Enum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from grader.errors import ExerciseError, UsageError, describe_invalid
from grader.subset.config import ForbiddenConfig, SubsetConfig
from grader.wire.protocol import MAX_FRAME_BYTES
from grader.unknown_exercise import UnknownExercise
from grader.untrusted import shown

#: The checkout this grader was installed from; its ``exercises/`` is the installed catalog (``grader.catalogs``).
REPO_ROOT = Path(__file__).resolve().parent.parent
EXERCISES_DIR = REPO_ROOT / "exercises"

#: What an exercise's name may be: a folder name in a catalog, never a path (no "/", no "..").
EXERCISE_NAME = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"


class GpuPolicy(str, Enum):
    NONE = "none"  # never gets a GPU; --gpus is ignored with a warning
    OPTIONAL = "optional"  # uses a GPU when asked for; GPU checks skip without one
    REQUIRED = "required"  # cannot be graded without --gpus


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Limits(_Strict):
    """Sandbox limits. Every field can be set per exercise under [limits]."""

    memory_mb: int = Field(1024, ge=64, description="RAM, and RAM+swap (no extra swap)")
    cpus: float = Field(1.0, gt=0, description="CPU share of the sandbox (Docker's --cpus)")
    pids: int = Field(128, ge=8, description="processes and threads the sandbox may hold at once")
    nofile: int = Field(256, ge=16, description="open files per process")
    fsize_mb: int = Field(16, ge=1, description="largest file the candidate may write")
    tmpfs_mb: int = Field(64, ge=1, description="size of the writable /tmp")
    result_mb: int = Field(16, ge=1, le=MAX_FRAME_BYTES // (1024 * 1024),
                           description="what the sandbox may send back during one check, all its calls together; the "
                                       "judge refuses a frame past it from its header, unread (the largest reference "
                                       "grading sends 3.4 MB in all)")
    call_timeout_s: float = Field(
        20.0, gt=0, description="what one probe call may take, charged to the sandbox: this many CPU-seconds per CPU "
                                "of cpus (all its processes together, read from its cgroup, so a busy machine does "
                                "not shorten it and its own forks spend it); a call that mostly sleeps or blocks "
                                "(under half that CPU) ends at 1.1x this by the wall clock, not counting time it "
                                "waited for a CPU; and 8x this by "
                                "the wall clock at most, however busy the machine")
    call_timeout_after_timeout_s: float = Field(
        1.0, gt=0, description="once a call of a grading has timed out, each later call gets this plus what is left "
                               "of the grading's grace (a fifth of call_timeout_s, spent only by calls that time "
                               "out), never more than call_timeout_s; nothing the candidate's calls did lengthens it, "
                               "so a file that hangs on every call costs call_timeout_s once, the grace once, then "
                               "this per check. The price: once hangs have spent the grace, an honest call needing "
                               "more CPU than this is cut too (measured on every reference: each call needs under 0.25 "
                               "CPU-seconds in a fresh worker, most under 0.05, except three exercises that set "
                               "more: ddp_step 5, evaluate and export_for_serving 3): raise it for heavier calls")
    grading_timeout_s: float = Field(300.0, gt=0, description="wall clock for the whole grading")
    forkserver: bool = Field(False, description=(
        "the worker starts the probes' forkserver (probekit.run_ranks: DDP ranks) before the sandbox refuses new "
        "programs, and the server seals itself the same way; without it, probes may only fork"))


class ExerciseMeta(_Strict):
    """What the exercise is: ``[exercise]``."""

    name: str = Field(pattern=EXERCISE_NAME, description="letters, digits, '_' and '-': the folder's name")
    title: str = Field(description="one line, shown by grader list and on the scorecard")
    version: str = Field("1", description="the author's version, recorded in every report; bump it when a "
                                          "check or limit changes (results are also keyed by the content)")
    level: Literal["mid", "senior", "principal"] = Field(
        "mid", description="the seniority the exercise is pitched at: what a panel hiring for it expects")
    topics: list[str] = Field(default_factory=list, description="what it exercises, for grader list")
    submission: str = Field(description="file name the candidate edits, e.g. attention.py")
    gpu: GpuPolicy = Field(GpuPolicy.NONE, description="none: never a GPU; optional: one with --gpus, checks "
                                                       "marked gpu skip without; required: not graded without")


class ChecksConfig(_Strict):
    """How the checks run: ``[checks]``."""

    default_visibility: Literal["visible", "hidden"] = Field(
        "hidden", description="a check without @pytest.mark.visibility(...): hidden shows a candidate its name, "
                              "points and status only")
    seed: int = Field(0, description="default hypothesis seed: same file, same seed, same score")
    max_examples: int = Field(25, ge=1, le=1000, description="hypothesis examples per property check, "
                                                             "unless the check's own @settings says otherwise")


class DiagnosisConfig(_Strict):
    """Naming the mistake a grading looks like (``grader.hindsight.diagnosis``): ``[diagnosis]``."""

    candidates: bool = Field(True, description=(
        "show a candidate the diagnosis too, where every check it involves is visible (it then tells them "
        "nothing their scorecard does not); false: the panel only. Interview follow-ups never reach a candidate"))


class ExerciseConfig(_Strict):
    exercise: ExerciseMeta
    checks: ChecksConfig = Field(default_factory=ChecksConfig)
    limits: Limits = Field(default_factory=Limits)
    forbidden: ForbiddenConfig = Field(default_factory=ForbiddenConfig)
    subset: SubsetConfig = Field(default_factory=SubsetConfig)
    diagnosis: DiagnosisConfig = Field(default_factory=DiagnosisConfig)


class Exercise:
    """An exercise folder with its validated configuration."""

    def __init__(self, root: Path, config: ExerciseConfig):
        self.root = root
        self.config = config

    name = property(lambda self: self.config.exercise.name)
    title = property(lambda self: self.config.exercise.title)
    version = property(lambda self: self.config.exercise.version)
    limits = property(lambda self: self.config.limits)
    stub = property(lambda self: self.root / self.config.exercise.submission)
    probes = property(lambda self: self.root / "probes.py")
    #: Code both zones use (``shared.py``, optional): staged beside the probes, importable by the checks.
    shared = property(lambda self: p if (p := self.root / "shared.py").is_file() else None)
    checks_dir = property(lambda self: self.root / "checks")
    readme = property(lambda self: self.root / "README.md")

    @functools.cached_property
    def fingerprint(self) -> str:
        """sha256 over what decides a score: exercise.toml (limits, seed), probes.py, shared.py and checks/.

        The ``version`` string is the author's word; this is the content's. Batch results
        are keyed by both, so editing a check without bumping the version still regrades.
        Read once per loaded exercise: a batch asks for it for every submission.
        """
        digest = hashlib.sha256()
        files = [self.root / "exercise.toml", self.probes, *([self.shared] if self.shared else []),
                 *sorted(p for p in self.checks_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts)]
        for f in files:
            digest.update(f.relative_to(self.root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
        return digest.hexdigest()

    @property
    def public_files(self) -> list[Path]:
        """What a candidate may receive: README.md, the stub, and the root-level ``test_*.py`` examples (sorted).

        An allowlist, not "everything but the secrets": a file an author adds later
        (notes, a second solution, a new helper for checks/) stays private until it is
        named here. Symlinked examples are left out, since a link could point into checks/.
        """
        examples = sorted(p for p in self.root.glob("test_*.py")
                          if p.is_file() and not p.is_symlink() and p != self.stub)
        return [p for p in (self.readme, self.stub) if p.is_file()] + examples

    @property
    def module_name(self) -> str:
        """The module name probes import the submission as (``attention`` for attention.py)."""
        return Path(self.config.exercise.submission).stem

    def __repr__(self) -> str:
        return f"Exercise({self.name!r}, root={str(self.root)!r})"


def known_names(root: Path = EXERCISES_DIR) -> list[str]:
    """The names of the exercise folders under ``root`` (those holding exercise.toml), sorted."""
    return sorted(p.parent.name for p in Path(root).glob("*/exercise.toml"))


def load_exercise(spec: str | Path) -> Exercise:
    """An exercise folder the caller chose (a ``Path``, or text holding a separator), or a bare name, which is
    looked up in the installed catalog only: never in the current folder (``grader.catalogs`` says why).

    The command line never passes what a user typed here: it resolves names through
    :mod:`grader.catalogs`, which accepts a folder only when it is the catalog's own.
    """
    text = str(spec)
    if not isinstance(spec, Path) and re.fullmatch(EXERCISE_NAME, text):
        path = EXERCISES_DIR / text
        if not (path / "exercise.toml").is_file():
            raise UnknownExercise(spec, known_names(EXERCISES_DIR),
                                  what=f"No exercise named {text!r} in {EXERCISES_DIR}.")
    else:
        path = Path(spec)
        if not (path / "exercise.toml").is_file():
            raise UnknownExercise(spec, known_names(EXERCISES_DIR),
                                  what=f"No exercise at {shown(text, newlines=False)!r}: expected a folder holding "
                                       "exercise.toml.")
    toml_path = path / "exercise.toml"
    try:
        raw = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ExerciseError(f"{toml_path} is not valid TOML: {e}") from None
    try:
        config = ExerciseConfig.model_validate(raw)
    except ValidationError as e:
        raise ExerciseError(describe_invalid(f"{toml_path} is not a valid exercise.toml:", e)) from None
    ex = Exercise(path.resolve(), config)
    for part, p in [("probes", ex.probes), ("checks", ex.checks_dir), ("stub", ex.stub)]:
        if not p.exists():
            raise ExerciseError(f"Exercise {ex.name!r} has no {part}: {p} is missing.")
    return ex


class NotAnExerciseName(UsageError):
    """Stored data names its exercise with something that is not a catalog name (a path, most likely)."""

    def __init__(self, name: object, where: str):
        super().__init__(f"{where} names the exercise {str(name)!r}, which is not an exercise name: an exercise is "
                         "looked up by name in the catalog, never loaded from a path given by stored data.",
                         hint="A name is letters, digits, '_' and '-' (for example `attention`).")


def load_catalog_exercise(name: object, root: Path | None = None, *, where: str = "The report") -> Exercise:
    """The exercise called ``name`` in the catalog folder ``root`` (default ``exercises/``).

    For names read back from stored data (a report, a batch store, a bundle): grading an
    exercise imports its checks (and any ``conftest.py`` beside them) in the judge, so that text is only ever a
    name looked up in a folder the user chose, never a path; ``/proc/self/cwd/bundle/ex``
    would otherwise load a folder shipped with the evidence. :func:`load_exercise` keeps
    taking paths, for the command line.
    """
    if not isinstance(name, str) or not re.fullmatch(EXERCISE_NAME, name):
        raise NotAnExerciseName(name, where)
    catalog = Path(root) if root is not None else EXERCISES_DIR
    folder = catalog / name
    if not (folder / "exercise.toml").is_file():
        raise UnknownExercise(name, known_names(catalog), what=f"No exercise named {name!r} in {catalog}.")
    exercise = load_exercise(folder)
    if exercise.name != name:
        raise UsageError(f"{folder} holds the exercise {exercise.name!r}, not {name!r}.")
    return exercise


def resolve_submission(exercise: Exercise, spec: str | Path | None) -> Path:
    """The file to grade: the given file, the exercise's file inside a given folder, or the stub.

    The path the user named may not itself be a symbolic link, and neither may the
    exercise's file inside a named folder: what is graded is the file named, not
    what a link (from an unpacked archive, say) points to. Folders above it are the
    user's own machine and may be links. The bytes are read later, by
    :func:`grader.host.grading.read_submission`, which refuses a link, a FIFO or a device again.
    """
    if spec is None:
        return exercise.stub
    path = Path(spec)
    name = exercise.config.exercise.submission
    if path.is_symlink():
        raise UsageError(f"Submission {shown(str(path), newlines=False)!r} is a symbolic link; only regular files "
                         "are graded, never what a link points to.", hint="Pass the file itself.")
    if path.is_dir():
        candidate = path / name
        if candidate.is_symlink() or not candidate.is_file():
            raise UsageError(
                f"Folder {shown(str(path), newlines=False)!r} holds no {name}"
                + (" (it holds a symbolic link by that name)." if candidate.is_symlink() else "."),
                hint=f"Pass the file itself, or a folder containing {name}.",
            )
        return candidate
    if not path.exists():
        raise UsageError(f"Submission {shown(str(path), newlines=False)!r} does not exist.")
    if not path.is_file():
        raise UsageError(f"Submission {shown(str(path), newlines=False)!r} is not a regular file.")
    return path
