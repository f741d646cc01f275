"""Where a candidate's own grader data lives: attempts, clocks and cached exercise facts.

``platformdirs`` picks the platform's convention (``~/.local/share/grader`` on
Linux, ``~/Library/Application Support/grader`` on macOS, ``%LOCALAPPDATA%`` on
Windows). ``GRADER_DATA_DIR`` overrides it, so tests and shared machines can keep
it elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "GRADER_DATA_DIR"


def data_dir() -> Path:
    """The folder for the user's grader data, created on first use."""
    given = os.environ.get(ENV_VAR)
    if given:
        folder = Path(given).expanduser()
    else:
        from platformdirs import user_data_dir

        folder = Path(user_data_dir("grader", appauthor=False))
    folder.mkdir(parents=True, exist_ok=True)
    return folder
