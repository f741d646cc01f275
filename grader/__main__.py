"""``python -m grader``: the CLI, importing nothing from the folder it is run in.

``-m`` put that folder first on ``sys.path`` (unless ``-P`` was given); a
``random.py`` there would shadow the standard library for the whole command.
Nothing has been imported from it yet (``grader/__init__.py`` imports nothing),
so dropping the entry here is in time. The ``grader`` console script never adds it.
"""

import os
import sys

if not sys.flags.safe_path and sys.path and os.path.abspath(sys.path[0] or os.curdir) == os.getcwd():
    del sys.path[0]

from grader.cli import main  # noqa: E402

main()
