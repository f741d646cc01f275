"""`--sandbox auto`: Docker when it can grade, else the local sandbox with one line saying why.

An explicit kind never falls back. The "no engine" cases point DOCKER_HOST at a
socket that does not exist (loopback only: nothing on the network is tried).
"""

from pathlib import Path

import pytest

from grader.errors import UsageError
from grader.host.grading import grade
from grader.build import naming
from grader.backends.choice import SandboxChoice, choose_sandbox
from grader.reports.warning import WarningCode

TOY = Path(__file__).parent / "fixtures" / "toy"
NO_ENGINE = "unix:///nonexistent/docker.sock"


@pytest.fixture
def no_engine(monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)


def test_auto_without_an_engine_picks_local_with_a_one_line_note(no_engine):
    choice = choose_sandbox("auto")
    assert choice.kind == "local"
    assert NO_ENGINE in choice.note and "NOT isolated" in choice.note and "`--sandbox docker`" in choice.note
    assert "\n" not in choice.note


@pytest.mark.parametrize("kind", ["docker", "local"])
def test_an_explicit_kind_never_falls_back_and_carries_no_note(no_engine, kind):
    assert choose_sandbox(kind) == SandboxChoice(kind, None)


@pytest.mark.parametrize("kind", ["podman", "inprocess"])
def test_an_unknown_kind_is_a_usage_error(kind):
    """"inprocess" included: no grading runs candidate code in the judge's process."""
    with pytest.raises(UsageError, match=f"Unknown sandbox '{kind}': choose one of auto, docker, local.$"):
        choose_sandbox(kind)


def test_grading_with_auto_and_no_engine_uses_local_and_says_so(no_engine):
    report = grade(TOY, TOY / "solution.py", sandbox="auto")
    assert report.graded and report.score == report.max_score
    assert report.environment.sandbox == "local"
    fallback = report.warned(WarningCode.SANDBOX_FALLBACK)
    assert len(fallback) == 1 and NO_ENGINE in fallback[0].message


def test_grading_with_docker_and_no_engine_is_not_graded_never_local(no_engine):
    choice = choose_sandbox("docker")
    report = grade(TOY, TOY / "solution.py", sandbox=choice)
    assert report.graded is False and report.environment.sandbox == "docker"
    assert not report.warned(WarningCode.NOT_ISOLATED)


@pytest.mark.docker
def test_auto_with_the_image_missing_picks_local_and_names_the_build_command(monkeypatch):
    monkeypatch.setattr(naming, "runtime_image_name", lambda sandbox_dir=None, flavor=None: "grader-runtime:notbuilt0000")
    choice = choose_sandbox("auto")
    assert choice.kind == "local"
    assert "grader-runtime:notbuilt0000" in choice.note and "`grader sandbox build`" in choice.note
    assert "\n" not in choice.note


@pytest.mark.docker
def test_auto_with_an_explicit_image_that_is_missing_picks_local():
    choice = choose_sandbox("auto", image="grader-runtime:does-not-exist")
    assert choice.kind == "local" and "grader-runtime:does-not-exist" in choice.note


@pytest.mark.docker
def test_auto_with_an_engine_and_the_image_picks_docker_without_a_note():
    assert choose_sandbox("auto") == SandboxChoice("docker", None)
