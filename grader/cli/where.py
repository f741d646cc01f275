"""Which catalog an authoring command uses, said out loud when it is not the installed one.

``new``, ``validate``, ``list``, ``show``, ``init`` and ``pack`` use the checkout around the
current folder (``grader.catalogs.authoring_catalog``): an author in a clone writes into and
reads from that clone, and every such command says so in one line on stderr, so that no one
edits one checkout while the grader reads another. A folder named with ``--exercise-root`` is
not announced: the user just said it.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.text import Text

from grader.catalogs import Catalog, authoring_catalog


def authoring(exercise_root: Path | None = None, solutions_root: Path | None = None, *,
              verb: str = "using") -> Catalog:
    catalog = authoring_catalog(Path.cwd(), exercise_root=exercise_root, solutions_root=solutions_root)
    if catalog.origin == "checkout":  # found, not named: the one the user may not expect
        Console(stderr=True, highlight=False, soft_wrap=True).print(
            Text.assemble(("note: ", "bold yellow"), f"{verb} {catalog.describe()}"))
    return catalog
