"""The checks' own code: it parses, and fails by raising ``AssertionError("what: why")``, never with ``assert``.

``python -O`` drops an ``assert``, and in a helper module pytest does not rewrite it, so
it fails, if at all, with no message for the scorecard. The helpers of
``grader.judge`` (``expect_tensor``, ``expect_close``...) raise with a message naming what
was compared; a check does the same.
"""

from __future__ import annotations

import ast

from grader.authoring.findings import Finding, Rule
from grader.authoring.folder import Folder


def checks_parse(folder: Folder) -> list[Finding]:
    out = []
    for path in folder.check_files:
        if path in folder.check_trees:
            continue
        try:
            ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except SyntaxError as e:
            out.append(Finding(Rule.CHECKS_PARSE, path, f"does not parse ({e.msg}): the judge would fail to collect "
                               "the exercise's checks; fix the syntax.", line=e.lineno))
        except (ValueError, OSError) as e:
            out.append(Finding(Rule.CHECKS_PARSE, path, f"cannot be read as Python source ({e}): write it as UTF-8 "
                               "text."))
    return out


def no_bare_assert(folder: Folder) -> list[Finding]:
    """No ``assert`` statement anywhere in checks/, helper modules included."""
    found = [Finding(Rule.CHECKS_ASSERT, path, "`assert` in the checks: raise AssertionError(\"what was compared: "
                    "why\") instead (or use grader.judge's expect_* helpers); `python -O` drops an assert, and in a "
                    "helper module pytest does not rewrite it, so it fails with no message.", line=node.lineno)
            for path, tree in folder.check_trees.items() for node in ast.walk(tree) if isinstance(node, ast.Assert)]
    return sorted(found, key=lambda f: (f.file, f.line))


RULES = (checks_parse, no_bare_assert)
