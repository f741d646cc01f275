"""The catalog as the service uses it: exercises by name, and what a candidate may see of one.

Exercises come from the grading catalog by name (``grader.catalogs``: the installed one, or
``--exercise-root``), never from a folder a form names. A candidate sees the exercise's public
files only (``Exercise.public_files``: the README as the prompt, the stub, the example tests);
the prompt is rendered from Markdown with raw HTML off, so a README cannot script the page.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt
from markupsafe import Markup

from grader.catalogs import Catalog, given, installed
from grader.errors import GraderError
from grader.exercise import Exercise


@dataclass(frozen=True)
class Public:
    """What a candidate's page shows of an exercise."""

    name: str
    title: str
    submission: str
    prompt: Markup  # the README, as HTML (no raw HTML from the file)
    stub: str
    examples: list[tuple[str, str]]  # (file name, text) of the public example tests


class Exercises:
    """The catalog's exercises, each loaded once (a changed folder is refused at grading by its fingerprint)."""

    def __init__(self, exercise_root: Path | None):
        self.catalog: Catalog = given(exercise_root) if exercise_root is not None else installed()
        self._loaded: dict[str, Exercise] = {}
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        return self.catalog.names()

    def get(self, name: str) -> Exercise:
        """The exercise called ``name`` (a ``GraderError`` saying why not)."""
        with self._lock:
            if name not in self._loaded:
                self._loaded[name] = self.catalog.load(name)
            return self._loaded[name]

    def choices(self) -> list[tuple[str, str, str]]:
        """(name, title, gpu policy) of every exercise that loads, for the new-assessment form."""
        found = []
        for name in self.names():
            try:
                ex = self.get(name)
            except GraderError:
                continue
            found.append((name, ex.title, ex.config.exercise.gpu.value))
        return found

    def public(self, name: str) -> Public:
        ex = self.get(name)
        readme = _read(ex.readme) if ex.readme.is_file() else ""
        prompt = Markup(_markdown.render(readme)) if readme else Markup("<p>This exercise has no prompt; its file "
                                                                        "below says what to write.</p>")
        examples = [(p.name, _read(p)) for p in ex.public_files if p not in (ex.readme, ex.stub)]
        return Public(ex.name, ex.title, ex.config.exercise.submission, prompt, _read(ex.stub), examples)


_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")
