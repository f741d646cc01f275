"""The code at another git ref, beside this tree's: what the benchmarks' ``--base REF`` runs.

Ratios are only worth their name when both sides run in the same minutes on the same machine, so a
benchmark unpacks the other ref's committed files (``git archive``) and runs them next to this tree.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def tree_at(ref: str, dest: Path) -> Path:
    """The repository's files at ``ref`` (committed content only), unpacked under ``dest``."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest
