"""An exercise folder as the authoring rules read it: the exercise, its solutions, and what several rules share.

Every rule takes a :class:`Folder`: the loaded exercise (``exercises/<name>/``) and the
solutions root (the folder holding ``<name>/``, as ``grader validate --solutions-root``
names it). What more than one rule reads (the prompt's lines, the check functions, the
corpus) is read once here, and a file that cannot be read is a finding of one rule
(``prompt-file``, ``checks-parse``), never a traceback in every other.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

from grader.corpus import CorpusFile, corpus
from grader.exercise import Exercise


@dataclass(frozen=True)
class CheckFunction:
    """A check as a scorecard and the contract table name it: a ``test*`` function of ``checks/test_*.py``."""

    name: str
    file: Path
    line: int


@dataclass(frozen=True)
class Folder:
    exercise: Exercise
    solutions_dir: Path  # the solutions root: this exercise's are under solutions_dir / name

    @property
    def name(self) -> str:
        return self.exercise.name

    @property
    def root(self) -> Path:
        return self.exercise.root

    @property
    def solutions(self) -> Path:
        """``solutions/<name>/``: the reference, variants, mutants and the contract table."""
        return self.solutions_dir / self.name

    @functools.cached_property
    def readme(self) -> str | None:
        """The prompt's text; None when there is none or it is not UTF-8 (``prompt-file`` says which)."""
        try:
            return self.exercise.readme.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    @functools.cached_property
    def check_trees(self) -> dict[Path, ast.Module]:
        """Every ``.py`` under ``checks/`` that parses, by path (sorted); ``checks-parse`` names the others."""
        trees = {}
        for path in self.check_files:
            try:
                trees[path] = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            except (SyntaxError, ValueError, UnicodeDecodeError, OSError):
                continue
        return trees

    @functools.cached_property
    def check_files(self) -> list[Path]:
        folder = self.exercise.checks_dir
        return sorted(p for p in folder.rglob("*.py") if p.is_file() and "__pycache__" not in p.parts)

    @functools.cached_property
    def check_functions(self) -> dict[str, CheckFunction]:
        """The checks by function name: module-level ``test*`` functions of ``checks/test_*.py`` (top level)."""
        found: dict[str, CheckFunction] = {}
        for path, tree in self.check_trees.items():
            if path.parent != self.exercise.checks_dir or not path.name.startswith("test_"):
                continue
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                    found.setdefault(node.name, CheckFunction(node.name, path, node.lineno))
        return found

    @functools.cached_property
    def corpus(self) -> list[CorpusFile]:
        """The whole corpus, ``more_mutants/`` included: the reference, the stub, variants, mutants."""
        return corpus(self.exercise, self.solutions_dir, more=True)

    @property
    def held_in(self) -> list[CorpusFile]:
        """The corpus CI grades (``mutants/``, not ``more_mutants/``)."""
        return [item for item in self.corpus if item.kind != "mutant" or item.path.parent.name == "mutants"]

    def relative(self, path: Path) -> str:
        """A path as an author reads it: under the exercise or the solutions folder, else as given."""
        for base in (self.root.parent, self.solutions_dir.parent):
            try:
                return path.relative_to(base).as_posix()
            except ValueError:
                continue
        return path.as_posix()
