"""Which folder of exercises (and of solutions) a command reads, and how a name finds its exercise there.

Grading commands (``submit``, ``batch``, ``regrade``, ``bundle``) read the installed catalog or
``--exercise-root``, never the current folder: a returned workspace can carry its own checks, and
checks run on the host (:func:`grading_catalog`). Authoring commands (``new``, ``validate``, ``list``,
``show``, ``init``, ``pack``) read the checkout around the current folder, else the installed one, and
say which. An exercise is never taken from a path: a name is looked up in the chosen catalog, and a
path only stands for that catalog's own folder of that name. See docs/decisions/catalogs.md.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from grader.errors import UsageError
from grader.exercise import EXERCISE_NAME, REPO_ROOT, Exercise, known_names, load_exercise
from grader.unknown_exercise import UnknownExercise
from grader.untrusted import shown

Origin = Literal["installed", "checkout", "given"]


@dataclass(frozen=True)
class Catalog:
    """A folder of exercise folders (by name), and the folder of their solutions where there is one."""

    exercises: Path
    solutions: Path
    origin: Origin

    def describe(self) -> str:
        where = shown(str(self.exercises), newlines=False)
        return {"installed": f"the installed exercises ({where})",
                "checkout": f"the exercises of the checkout {shown(str(self.exercises.parent), newlines=False)}",
                "given": f"the exercises in {where} (--exercise-root)"}[self.origin]

    def names(self) -> list[str]:
        return known_names(self.exercises)

    def load(self, name: str) -> Exercise:
        """The exercise called ``name`` here; an ``UnknownExercise`` (with "did you mean") when there is none."""
        if not isinstance(name, str) or not re.fullmatch(EXERCISE_NAME, name):
            raise UnknownExercise(name, self.names(), what=f"{shown(name, newlines=False)!r} is not an exercise name.")
        folder = self.exercises / name
        if not (folder / "exercise.toml").is_file():
            raise UnknownExercise(name, self.names(),
                                  what=f"No exercise named {name!r} in {self.describe()}.")
        exercise = load_exercise(folder)
        if exercise.name != name:
            raise UsageError(f"{folder} holds the exercise {exercise.name!r}, not {name!r}.",
                             hint="An exercise's folder is named after it ([exercise] name in its exercise.toml).")
        return exercise

    def resolve(self, spec: str) -> Exercise:
        """``spec`` as typed: a name, or a path that is this catalog's own folder of that name."""
        if re.fullmatch(EXERCISE_NAME, spec):
            return self.load(spec)
        path = Path(spec)
        mine = self.exercises / path.name
        if path.is_dir() and re.fullmatch(EXERCISE_NAME, path.name) and _same(path, mine):
            return self.load(path.name)
        if path.is_dir():
            raise NotInCatalog(spec, self)
        raise UnknownExercise(spec, self.names(), what=f"No exercise {shown(spec, newlines=False)!r} in "
                                                       f"{self.describe()}: an exercise is named, not a path.")


class NotInCatalog(UsageError):
    """A folder was given where an exercise is expected, and it is not the catalog's own folder of that name."""

    def __init__(self, spec: str, catalog: Catalog):
        folder = Path(spec)
        root = folder.resolve().parent
        super().__init__(
            f"{shown(spec, newlines=False)!r} is a folder, not an exercise of {catalog.describe()}: an exercise is "
            "taken from the catalog by name, never from a folder that happens to be here.",
            hint=f"To use the exercises in {shown(str(root), newlines=False)}, say so: "
                 f"--exercise-root {_quoted(root)} (then name it: {folder.name or 'NAME'}).")


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _quoted(path: Path) -> str:
    import shlex

    return shlex.quote(shown(str(path), newlines=False))


def installed() -> Catalog:
    """The catalog that ships with this grader: ``exercises/`` and ``solutions/`` beside the package."""
    return Catalog(REPO_ROOT / "exercises", REPO_ROOT / "solutions", "installed")


def given(exercise_root: Path, solutions_root: Path | None = None, *, new: bool = False) -> Catalog:
    """A catalog the user named. Its solutions default to the ``solutions/`` beside it. ``new``: the folder
    may not exist yet (``grader new`` makes it)."""
    root = Path(exercise_root)
    if not root.is_dir() and not (new and not root.exists()):
        raise UsageError(f"--exercise-root {shown(str(root), newlines=False)!r} is not a folder.",
                         hint="Give the folder that holds exercise folders (each with its exercise.toml).")
    solutions = Path(solutions_root) if solutions_root is not None else root.resolve().parent / "solutions"
    return Catalog(root.resolve(), solutions.resolve() if solutions.exists() else solutions, "given")


def find_checkout(start: Path) -> Path | None:
    """The grader checkout holding ``start``: the nearest folder (itself or above) with ``exercises/`` and
    ``solutions/`` beside a ``pyproject.toml`` whose project is ``grader``."""
    start = Path(start).resolve()
    for folder in [start, *start.parents]:
        if (folder / "exercises").is_dir() and (folder / "solutions").is_dir() and _names_grader(folder):
            return folder
    return None


def _names_grader(folder: Path) -> bool:
    try:
        data = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    project = data.get("project")
    return isinstance(project, dict) and project.get("name") == "grader"


def authoring_catalog(cwd: Path | None = None, *, exercise_root: Path | None = None,
                      solutions_root: Path | None = None, new: bool = False) -> Catalog:
    """For ``new``, ``validate``, ``list``, ``show``, ``init``, ``pack``: the folders named, else the checkout
    around ``cwd``, else the installed one. ``new``: a named folder may not exist yet."""
    if exercise_root is not None:
        return given(exercise_root, solutions_root, new=new)
    checkout = find_checkout(cwd or Path.cwd())
    base = installed() if checkout is None or _same(checkout, REPO_ROOT) else Catalog(
        checkout / "exercises", checkout / "solutions", "checkout")
    if solutions_root is not None:
        return Catalog(base.exercises, Path(solutions_root).resolve(), base.origin)
    return base


def grading_catalog(cwd: Path | None = None, *, exercise_root: Path | None = None) -> tuple[Catalog, str | None]:
    """For ``submit``, ``batch``, ``regrade``: the folder named, else the installed catalog, and a note when
    the current folder is inside another checkout (whose exercises are used only when named)."""
    if exercise_root is not None:
        return given(exercise_root), None
    catalog = installed()
    checkout = find_checkout(cwd or Path.cwd())
    if checkout is None or _same(checkout, REPO_ROOT):
        return catalog, None
    return catalog, (f"grading against {catalog.describe()}, not the checkout around this folder "
                     f"({shown(str(checkout), newlines=False)}); to use its exercises, add "
                     f"--exercise-root {_quoted(checkout / 'exercises')}")
