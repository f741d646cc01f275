"""The answers a candidate could copy: each exercise's reference, variants and mutants, as files to compare.

The grader's repository ships ``solutions/`` and candidates are told to clone it, so a
renamed copy of a reference would score full marks and, compared only with other
candidates, raise no flag. The batch's similarity pass (``grader.batch.similarity``)
therefore also compares every submission with these files, and a match is a flag
naming the file.

Where they come from, for an exercise of the batch:

1. the solutions folder beside the catalog the batch graded from (``<exercise root>/../solutions``,
   the repository's own for the default catalog), or the folders ``grader batch --solutions`` names:
   a panel with a private exercise folder keeps its private solutions there, and a match with one
   means that answer leaked;
2. always, the grader's own shipped ``solutions/``, when it has an exercise of that name: those are
   public whatever the panel's catalog says.

Each folder holds ``<exercise>/<submission file>`` (the reference), ``variants/*.py``, and
``mutants/`` and ``more_mutants/`` (whole files, or ``.diff`` patches applied to the reference as
``grader validate`` applies them, ``grader.corpus``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grader.exercise import Exercise


@dataclass(frozen=True)
class Published:
    exercise: str
    label: str  # how it is named to the panel: "solutions/attention/attention.py"
    source: str
    public: bool  # shipped with the grader (anyone can read it), not only in the panel's own folder
    honest: bool = False  # a correct answer written its own way (the reference, a variant), not a mutant

    @property
    def phrase(self) -> str:
        """"the published solutions/x/x.py" or "the panel's private solutions/x/x.py": where the answer was."""
        return f"the {'published' if self.public else 'private'} {self.label}"


def solution_folders(exercise_root: Path | None, given: list[Path] | None = None) -> list[tuple[Path, bool]]:
    """The solutions folders to read, each with whether it is the grader's own (public): ``given``, else the
    one beside ``exercise_root`` (default: the grader's catalog); then the grader's own, once."""
    from grader.corpus import SOLUTIONS_DIR
    from grader.exercise import EXERCISES_DIR

    shipped = SOLUTIONS_DIR.resolve()
    folders = list(given) if given else [Path(exercise_root or EXERCISES_DIR).resolve().parent / "solutions"]
    out: dict[Path, bool] = {}
    for folder in [*folders, SOLUTIONS_DIR]:
        resolved = Path(folder).resolve()
        if resolved.is_dir():
            out.setdefault(resolved, resolved == shipped)
    return list(out.items())


def published_files(exercises: dict[str, Exercise], folders: list[tuple[Path, bool]]
                    ) -> tuple[dict[str, list[Published]], list[str]]:
    """(the published files of each exercise, in corpus order: reference, variants, mutants; what could not be
    read, one line each). A patch that no longer applies is named and left out, never a reason to stop a batch."""
    from grader.corpus import corpus
    from grader.errors import GraderError

    found: dict[str, list[Published]] = {name: [] for name in exercises}
    problems: list[str] = []
    for name, ex in exercises.items():
        seen: set[str] = set()
        for folder, public in sorted(folders, key=lambda f: not f[1]):  # a file the grader ships is public
            if not (folder / name).is_dir():
                continue
            for item in corpus(ex, folder, more=True):
                if item.kind == "stub" or not item.path.is_file():
                    continue
                label = item.path.relative_to(folder.parent).as_posix()
                try:
                    source = item.source()
                except (OSError, UnicodeDecodeError) as e:
                    problems.append(f"{label}: not read ({type(e).__name__}); not compared")
                    continue
                except GraderError as e:  # a patch that no longer applies (MutantPatchError)
                    problems.append(f"{label}: not read ({e}); not compared")
                    continue
                if source not in seen:  # the same file in the panel's folder and the grader's: compared once
                    seen.add(source)
                    found[name].append(Published(name, label, source, public, item.kind in ("reference", "variant")))
    return found, problems
