"""The answers a candidate could copy: each exercise's reference, variants and mutants, as files to compare.

Candidates may clone the grader's repository, so the similarity pass (``grader.batch.similarity``)
compares every submission with these files too, and a match is a flag naming the file. They come from
the solutions folder beside the catalog the batch graded from, or those ``grader batch --solutions``
names (a match with a private one means that answer leaked), and always from the grader's own shipped
``solutions/`` for an exercise of that name. Each folder holds the reference, ``variants/``,
``mutants/`` and ``more_mutants/`` (patches applied as ``grader validate`` does, ``grader.corpus``).
See docs/decisions/similarity-fingerprints.md.
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
