"""Every violation of the subset says how to write it instead (grader.subset.fixes), once, and names its line once.

A corpus with one source per kind of violation the judge finds in the source; each violation must carry a fix
in its own field, from the one table of fixes. The runtime subset's refusals are held the same way in
``tests/test_decision.py``.
"""

from __future__ import annotations

import pytest

from grader.exercise import load_exercise
from grader.host import decision
from grader.reports.model import ViolationCode as V
from grader.subset.audit import audit_exercise_file
from grader.subset.fixes import BUILTINS, BY_CODE, fix_for
from tests.rewritten import EXERCISES

#: One source per kind of static violation, and the fix it must carry (None: the kind's own, from the table).
CORPUS = {
    V.IMPORT: ("import os\n\n\ndef f(x):\n    return os.getcwd()\n", fix_for(V.IMPORT, "os")),
    V.MEMBER: ("import torch\n\n\ndef f(x):\n    return torch.hub.load('a', 'b')\n", fix_for(V.MEMBER, "torch.hub")),
    V.PRIVATE: ("import torch\n\n\ndef f(x):\n    return torch._C._nn.relu(x)\n", fix_for(V.PRIVATE, "torch._C")),
    V.BUILTIN: ("def f(x):\n    return eval('x')\n", BUILTINS["eval"]),
    V.DUNDER: ("def f(x):\n    return x.__dict__\n", None),
    V.FRAME: ("def f(x):\n    g = (i for i in x)\n    return g.gi_frame\n", None),
    V.MODULE_VALUE: ("import torch\n\n\ndef f(m=torch.nn):\n    return m\n", None),
    V.ATTRIBUTE_BUILTIN: ("import functools\n\n\ndef f(x):\n    return functools.reduce(getattr, ['a'], x)\n", None),
    V.MODULE_WRITE: ("import torch\n\n\ndef f(x):\n    torch.relu = x\n", None),
    V.UNSAFE_LOAD: ("import torch\n\n\ndef f(x):\n    return torch.load(x, weights_only=False)\n", None),
    V.ANNOTATION: ("T = 'x'\n\n\ndef f(a: T):\n    return a\n", None),
    V.DATA_NAMESPACE: ("def f(x):\n    return type('T', (object,), {'a': x})\n", None),
}


def test_the_table_has_a_fix_for_every_kind():
    assert set(BY_CODE) == set(V) and all(BY_CODE.values())
    assert set(CORPUS) | {V.GUARD} == set(V), "every kind the source check finds has a case here"


@pytest.mark.parametrize("code", sorted(CORPUS, key=lambda c: c.value), ids=lambda c: c.value)
def test_every_violation_says_how_to_write_it_instead(code):
    source, fix = CORPUS[code]
    audit = audit_exercise_file(load_exercise(EXERCISES / "attention"), source)
    found = [v for v in audit.violations if v.code is code]
    assert found, audit.violations
    for v in found:
        assert v.fix and v.fix != v.text and v.fix not in v.text, v
        assert v.fix == (fix if fix is not None else v.fix)


def test_an_unused_import_is_told_to_be_removed():
    [v] = audit_exercise_file(load_exercise(EXERCISES / "attention"), "import os\n\nX = 1\n").violations
    assert v.fix == "`os` is not used in the file: remove the import"


def test_the_refusal_names_its_first_line_once():
    audit = audit_exercise_file(load_exercise(EXERCISES / "attention"), "import os\nimport sys\n")
    error = decision.subset_load_error(audit)
    assert error.line == 1 and "line" not in error.summary
