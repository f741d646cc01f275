"""The fast tier itself (tests/fast_tier.py): `pytest -m fast` imports only its modules, and a test in it that starts a
judge, a worker or a container fails, naming what it started."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.fast_tier import FAST_MODULES, _Guarded, skip_module

TESTS = Path(__file__).resolve().parent


def config(markexpr: str):
    return SimpleNamespace(option=SimpleNamespace(markexpr=markexpr))


def test_every_fast_module_exists_and_none_is_slow_or_docker_as_a_whole():
    whole_module_out = re.compile(r"^pytestmark = .*pytest\.mark\.(slow|docker|gpu|exclusive)\b", re.MULTILINE)
    for name in FAST_MODULES:
        assert not whole_module_out.search((TESTS / f"{name}.py").read_text()), name
    assert "test_fast_tier" in FAST_MODULES and "test_readme_walkthroughs" not in FAST_MODULES


def test_asked_for_the_fast_tier_alone_the_other_modules_are_not_even_imported():
    assert skip_module(TESTS / "test_readme_walkthroughs.py", config("fast"))
    assert not skip_module(TESTS / "test_fast_tier.py", config("fast"))
    assert not skip_module(TESTS / "test_readme_walkthroughs.py", config(""))  # a plain run collects everything
    assert not skip_module(TESTS / "test_readme_walkthroughs.py", config("fast or slow"))
    assert not skip_module(TESTS / "conftest.py", config("fast"))


@pytest.mark.parametrize("argv", [[sys.executable, "-m", "grader.host.zygote"],
                                  [sys.executable, "-s", "-B", "-m", "grader.sandbox.worker", "--probes", "p.py"],
                                  [sys.executable, "-m", "pytest", "checks", "--grader-submission", "x.py"],
                                  [sys.executable, "-m", "grader", "submit"]])
def test_a_fast_test_that_starts_a_grader_process_fails_naming_it(argv):
    with pytest.raises(pytest.fail.Exception, match="a fast test started"):
        _Guarded(argv)


def test_other_processes_are_fine():
    done = _Guarded([sys.executable, "-c", "print('ok')"], stdout=subprocess.PIPE, text=True)
    assert done.communicate(timeout=60)[0] == "ok\n"
