"""A default subset honest code fits: constructs real, correct answers use are never refused.

Each case is a reference solution with one habit of real code grafted on (a compile-only decorator,
numpy's constants, an unused import, a hash for a seed, the pure standard library): it must audit clean, run
under the runtime subset, and, graded for real, keep its full marks. Each was a zero before.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader.exercise import load_exercise
from grader.host.grading import grade
from grader.subset.audit import audit_exercise_file
from grader.subset.rewrite import rewrite_source
from tests.rewritten import EXERCISES, lists_for, run

SOLUTIONS = EXERCISES.parent / "solutions"


def reference(name: str) -> str:
    ex = load_exercise(EXERCISES / name)
    return (SOLUTIONS / name / ex.config.exercise.submission).read_text()


def jit_decorated_rotate_half() -> str:
    """rmsnorm_rope's reference with GPT-NeoX's habit: ``@torch.jit.script`` on its pure tensor helper."""
    return reference("rmsnorm_rope").replace("def rotate_half(", "@torch.jit.script\ndef rotate_half(", 1)


def numpy_constants_in_early_stopping() -> str:
    """early_stopping's reference with Bjarten's habit: ``np.inf`` for the first best, ``np.isnan`` on a float."""
    source = reference("early_stopping").replace("import math\n", "import math\n\nimport numpy as np\n", 1)
    source = source.replace("math.inf if mode == \"min\" else -math.inf", "np.inf if mode == \"min\" else -np.inf")
    assert "np.inf" in source
    return source


def unused_numpy_in_collate() -> str:
    return reference("collate_fn").replace("import torch\n", "import numpy as np\nimport torch\n", 1)


CASES = {
    "rmsnorm_rope": jit_decorated_rotate_half,
    "early_stopping": numpy_constants_in_early_stopping,
    "collate_fn": unused_numpy_in_collate,
}


@pytest.mark.parametrize("exercise", sorted(CASES))
def test_a_real_habit_audits_clean(exercise):
    audit = audit_exercise_file(load_exercise(EXERCISES / exercise), CASES[exercise]())
    assert not audit.violations and not audit.forbidden, audit.violations


def test_a_decorator_that_only_compiles_is_taken_out_of_what_runs():
    tree = rewrite_source(jit_decorated_rotate_half(), filename="rmsnorm_rope.py")
    [helper] = [n for n in tree.body if getattr(n, "name", None) == "rotate_half"]
    assert helper.decorator_list == []
    for spelling in ("@torch.jit.script", "@torch.compile(mode='reduce-overhead')", "@torch.jit.ignore"):
        source = f"import torch\n\n\n{spelling}\ndef f(x):\n    return x * 2\n"
        audit = audit_exercise_file(load_exercise(EXERCISES / "custom_layer"), source)
        assert not audit.violations, (spelling, audit.violations)
    called = audit_exercise_file(load_exercise(EXERCISES / "custom_layer"),
                                 "import torch\n\n\ndef f(x):\n    return x\n\n\ng = torch.jit.script(f)\n")
    assert called.violations, "compiling a function other than as its decorator is still outside the subset"


STDLIB = '''
import array, base64, binascii, calendar, colorsys, datetime, difflib, graphlib, hashlib, io, keyword, pprint
import reprlib, struct, unicodedata, zlib
import numpy as np


def go():
    seed = int.from_bytes(hashlib.sha256(b"rank-3").digest()[:8], "little")
    packed = struct.unpack("<2f", struct.pack("<2f", 1.5, 2.5))
    order = list(graphlib.TopologicalSorter({"b": {"a"}}).static_order())
    buf = io.BytesIO()
    buf.write(zlib.compress(base64.b64encode(binascii.hexlify(bytes(array.array("b", [1, 2]))))))
    return (seed % 1000, packed, order, len(buf.getvalue()) > 0, datetime.timedelta(seconds=90).total_seconds(),
            calendar.isleap(2024), round(colorsys.rgb_to_hsv(1, 0, 0)[0], 3),
            difflib.SequenceMatcher(None, "ab", "ac").ratio(), keyword.iskeyword("for"), pprint.pformat([1]),
            reprlib.repr("x" * 3), unicodedata.category("a"), float(np.isnan(np.nan)), np.inf > 1e308)
'''


@pytest.mark.parametrize("exercise", ["weighted_sharded_sampler", "collate_fn", "attention"])
def test_the_pure_standard_library_and_numpy_are_in_the_default_subset(exercise):
    audit = audit_exercise_file(load_exercise(EXERCISES / exercise), STDLIB)
    assert not audit.violations and not audit.forbidden, audit.violations
    assert run(STDLIB, lists=lists_for(exercise)).go() == run(STDLIB, guarded=False).go()


@pytest.mark.parametrize("spelling", ["numpy.load", "numpy.lib.format.read_array", "numpy.ctypeslib.as_array",
                                      "numpy.memmap", "numpy.f2py.compile", "numpy.ma.loads"])
def test_numpys_files_pickles_and_c_parts_stay_out(spelling):
    module = spelling.split(".")[0]
    audit = audit_exercise_file(load_exercise(EXERCISES / "collate_fn"), f"import {module}\n\nX = {spelling}\n")
    assert audit.violations and audit.violations[0].fix, spelling


@pytest.mark.slow
@pytest.mark.parametrize("exercise", sorted(CASES))
def test_a_real_habit_keeps_full_marks(exercise, tmp_path):
    path = tmp_path / load_exercise(EXERCISES / exercise).config.exercise.submission
    path.write_text(CASES[exercise]())
    report = grade(exercise, path, sandbox="local")
    assert report.graded and report.score == report.max_score, [
        (c.name, c.message) for c in report.checks if c.score < c.max_score] or report.violations
    assert re.search(r"numpy|jit", CASES[exercise]())  # the habit is really in the file graded
    assert Path(path).read_text() == CASES[exercise]()
