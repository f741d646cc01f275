"""Write a file so that a reader never sees half of it: write a hidden temporary, then rename."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


@contextlib.contextmanager
def atomic_write(path: Path):
    """Open ``.<name>.tmp`` beside ``path`` (parents created) for text; rename over ``path`` on success.

    On any failure, writing or renaming, the temporary is removed and ``path`` is left as it was.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
