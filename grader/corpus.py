"""An exercise's held-in corpus: the reference, the stub, other correct answers and plausible mistakes.

``solutions/<name>/`` holds the reference, ``variants/`` (other correct answers), ``mutants/``
(plausible wrong answers; CI grades these) and ``more_mutants/`` (graded on request). A mutant is a
whole file (its docstring saying the mistake) or a patch against the reference (``NAME.diff``,
:mod:`grader.mutant_patch`). Everything that reads the corpus goes through :class:`CorpusFile`, so a
patch is graded, audited and described exactly as the file it stands for.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from grader.exercise import REPO_ROOT, Exercise
from grader.mutant_patch import PATCH_SUFFIX, read_patch

SOLUTIONS_DIR = REPO_ROOT / "solutions"

Kind = Literal["reference", "stub", "variant", "mutant"]

#: The folders of mutants: ``mutants/`` always, ``more_mutants/`` with ``more=True``.
MUTANT_FOLDERS = ("mutants", "more_mutants")


@dataclass(frozen=True)
class CorpusFile:
    """One file of the corpus as an author wrote it, and the source it stands for."""

    kind: Kind
    path: Path  # the reference, a variant, a mutant's .py or .diff; for the stub, the exercise's own file
    reference: Path  # what a patch applies to

    @property
    def name(self) -> str:
        """How verdicts and "what each check catches" name it: the file name without its suffix."""
        return self.path.stem

    @property
    def is_patch(self) -> bool:
        return self.path.suffix == PATCH_SUFFIX

    def source(self) -> str:
        """The Python source graded: the file itself, or the reference with the patch applied."""
        if self.is_patch:
            return read_patch(self.path).apply_to(self.reference)
        return self.path.read_text(encoding="utf-8")

    def description(self) -> str | None:
        """What it is, in the author's words: a patch's description, else the module docstring (None: none)."""
        if self.is_patch:
            return read_patch(self.path).description
        try:
            return ast.get_docstring(ast.parse(self.source()))
        except SyntaxError:
            return None

    def gradable(self, folder: Path) -> Path:
        """A file ``grade()`` can take: the file itself, or a patch's applied source written under ``folder``."""
        if not self.is_patch:
            return self.path
        out = folder / self.path.parent.name / f"{self.name}.py"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(self.source(), encoding="utf-8")
        return out


def corpus(ex: Exercise, solutions_dir: Path = SOLUTIONS_DIR, *, more: bool = False) -> list[CorpusFile]:
    """What to grade for ``ex``, in order: the reference, the stub, the variants, then the mutants by name."""
    root = solutions_dir / ex.name
    reference = root / ex.config.exercise.submission
    items = [CorpusFile("reference", reference, reference), CorpusFile("stub", ex.stub, reference)]
    items += [CorpusFile("variant", p, reference) for p in sorted((root / "variants").glob("*.py"))]
    for folder in MUTANT_FOLDERS if more else MUTANT_FOLDERS[:1]:
        mutants = [*(root / folder).glob("*.py"), *(root / folder).glob(f"*{PATCH_SUFFIX}")]
        items += [CorpusFile("mutant", p, reference) for p in sorted(mutants, key=lambda p: (p.stem, p.suffix))]
    return items


def named_twice(items: list[CorpusFile]) -> list[str]:
    """Mutants in one folder that share a name (``x.py`` beside ``x.diff``): their verdicts could not be told apart."""
    seen: dict[tuple[str, str], list[str]] = {}
    for item in items:
        if item.kind == "mutant":
            seen.setdefault((item.path.parent.name, item.name), []).append(item.path.name)
    return [f"{folder}/{' and '.join(names)} share the name {name!r}"
            for (folder, name), names in seen.items() if len(names) > 1]
