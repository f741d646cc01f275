"""The builtins a submission runs with (grader.sandbox.restricted) and the staged loader that puts the judge's
rewrite under every ``import <module>``: computed names get the refusals literal ones get in the judge, and a
private name only on what the candidate made."""

import subprocess
import sys
import types
from pathlib import Path

import pytest

from grader.exercise import load_exercise
from grader.subset.guard import guard_lists
from grader.sandbox import restricted
from grader.backends.staging import stage

TOY = Path(__file__).parent / "fixtures" / "toy"


class Thing:
    def __init__(self):
        self._cache = 1
        self.weight = 2


@pytest.fixture(scope="module")
def guarded():
    """The builtins a toy submission runs with (torch.mul forbidden; no files), as if this module were its file."""
    return restricted.Guard(guard_lists(load_exercise(TOY)), module=Thing.__module__, filename=__file__).builtins()


@pytest.mark.parametrize("name", ["__globals__", "__wrapped__", "__subclasses__", "__dict__", "f_back", "gi_frame",
                                  "co_code", "tb_frame", "mul", "_DisableTorchDispatch", "DisableTorchFunction"])
def test_a_computed_name_the_judge_refuses_written_out_is_refused(guarded, name):
    for fetch, args in (("getattr", ()), ("hasattr", ()), ("setattr", (1,)), ("delattr", ())):
        with pytest.raises(restricted.SubsetGuardRefused):
            guarded[fetch](Thing(), name, *args)


def test_a_private_name_of_what_the_candidate_did_not_make_is_refused(guarded):
    borrowed = types.SimpleNamespace(_cache=1)
    for fetch, args in (("getattr", ()), ("hasattr", ()), ("setattr", (1,)), ("delattr", ())):
        with pytest.raises(restricted.SubsetGuardRefused):
            guarded[fetch](borrowed, "_cache", *args)
    assert guarded["getattr"](borrowed, "missing", None) is None


def test_the_candidates_own_names_pass(guarded):
    thing = Thing()
    assert guarded["getattr"](thing, "_cache") == 1 and guarded["getattr"](thing, "missing", None) is None
    assert guarded["hasattr"](thing, "weight") and guarded["getattr"](thing, "__class__") is Thing
    guarded["setattr"](thing, "layer0", 3)
    guarded["delattr"](thing, "layer0")
    assert not hasattr(thing, "layer0")
    with pytest.raises(TypeError):  # the builtin's own error for a name that is not a string
        guarded["getattr"](thing, 3)


def test_a_module_is_never_handed_out_and_its_private_names_stay_out(guarded):
    import collections
    import math

    holder = types.SimpleNamespace(mod=types, allowed=collections)
    for name in ("mod", "allowed"):  # as in the source, a computed name never hands out a module
        with pytest.raises(restricted.SubsetGuardRefused):
            guarded["getattr"](holder, name)
    for module, name in ((math, "_private"), (types, "SimpleNamespace"), (collections, "_sys")):
        with pytest.raises(restricted.SubsetGuardRefused):  # private, or a module outside the subset
            guarded["getattr"](module, name)
    assert guarded["getattr"](collections, "OrderedDict") is collections.OrderedDict


def test_imports_are_the_subsets_and_code_builtins_are_absent(guarded):
    assert guarded["__import__"]("math").sqrt(4.0) == 2.0
    assert guarded["__import__"]("collections.abc", None, None, ("Iterable",)).Iterable
    for name in ("os", "sys", "pickle", "importlib", "threading"):
        with pytest.raises(restricted.SubsetGuardRefused):
            guarded["__import__"](name)
    for name in ("exec", "eval", "compile", "globals", "locals", "vars", "breakpoint", "help", "open"):
        assert name not in guarded
    assert guarded["__build_class__"] is __builtins__["__build_class__"] if isinstance(__builtins__, dict) \
        else guarded["__build_class__"] is __builtins__.__build_class__


def test_open_where_an_exercise_allows_it_never_reaches_proc_sys_or_dev(tmp_path):
    guard = restricted.Guard({"open": True}).builtins()
    with guard["open"](tmp_path / "x.txt", "w") as f:
        f.write("ok")
    for place in ("/proc/self/mem", "/proc/self/environ", "/dev/null", "/sys/kernel"):
        with pytest.raises(restricted.SubsetGuardRefused):
            guard["open"](place, "rb")
    (tmp_path / "link").symlink_to("/proc/self/mem")
    with pytest.raises(restricted.SubsetGuardRefused):
        guard["open"](tmp_path / "link", "rb")


SUBMISSION = '''
import math

NAME = "__glob" + "als__"


def scale(x, factor):
    return x * factor


def reach(fn):
    return getattr(fn, NAME)


def own(obj, part):
    return getattr(obj, part, None)
'''

CHILD = '''
import multiprocessing, sys
sys.path[:0] = [sys.argv[1]]


def probe(queue):
    import toy
    try:
        toy.reach(toy.scale)
        queue.put("reached")
    except Exception as e:
        queue.put(type(e).__name__)


if __name__ == "__main__":
    import toy
    try:
        toy.own(toy, "math")  # a module handed out by getattr
    except Exception as e:
        print(type(toy.__builtins__).__name__, type(e).__name__)
    print(toy.scale(2, 3), toy.own(object(), "__class__").__name__)
    for method in ("fork", "spawn"):
        q = multiprocessing.get_context(method).Queue()
        p = multiprocessing.get_context(method).Process(target=probe, args=(q,))
        p.start()
        print(method, q.get(timeout=60))
        p.join(60)
'''


def test_every_process_that_imports_the_module_by_name_gets_the_guard(tmp_path):
    """The probes' `import toy`, a forked child and a spawned one (as DDP ranks are) all load the staged loader,
    which runs the candidate's file under the guard; the file's own frames keep its path."""
    (tmp_path / "toy.py").write_text(SUBMISSION)
    staged = stage(probes=TOY / "probes.py", submission=tmp_path / "toy.py", module_name="toy",
                   dest=tmp_path / "stage", guard=guard_lists(load_exercise(TOY)))
    (tmp_path / "child.py").write_text(CHILD)
    out = subprocess.run([sys.executable, str(tmp_path / "child.py"), str(staged.root / "subset")],
                         env={"PYTHONPATH": str(staged.lib), "PATH": "/usr/bin:/bin"}, capture_output=True,
                         text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["dict", "GuardRefusedModule", "6", "object", "fork", "GuardRefusedName", "spawn",
                                  "GuardRefusedName"]


def test_the_candidates_traceback_points_at_its_own_file(tmp_path):
    (tmp_path / "toy.py").write_text("def scale(x, factor):\n    raise ValueError('factor')\n")
    staged = stage(probes=TOY / "probes.py", submission=tmp_path / "toy.py", module_name="toy",
                   dest=tmp_path / "stage", guard=guard_lists(load_exercise(TOY)))
    code = ("import sys, traceback\nsys.path[:0] = [sys.argv[1]]\nimport toy\ntry:\n    toy.scale(1, 2)\n"
            "except ValueError:\n    print(traceback.format_exc())")
    out = subprocess.run([sys.executable, "-c", code, str(staged.root / "subset")], capture_output=True, text=True,
                         env={"PYTHONPATH": str(staged.lib), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert f'File "{staged.submission_dir / "toy.py"}", line 2, in scale' in out.stdout, out.stdout + out.stderr
