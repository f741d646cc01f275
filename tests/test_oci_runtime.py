"""The Docker sandbox's OCI runtime: chosen per run or per machine, checked, sent, recorded."""

import pytest

from grader.errors import InfraError, UsageError
from grader.backends.docker_backend import container_kwargs
from grader.backends.oci_runtime import require_runtime, resolve_runtime
from grader.backends.staging import Staged
from grader.exercise import Limits


def test_the_flag_wins_then_the_environment_then_runc(monkeypatch):
    monkeypatch.delenv("GRADER_RUNTIME", raising=False)
    assert resolve_runtime() == "runc"
    monkeypatch.setenv("GRADER_RUNTIME", "runsc")
    assert resolve_runtime() == "runsc" and resolve_runtime("runc") == "runc"


def test_an_unknown_runtime_is_a_usage_error_naming_where_it_came_from(monkeypatch):
    monkeypatch.setenv("GRADER_RUNTIME", "kata")
    with pytest.raises(UsageError, match="'kata' \\(from GRADER_RUNTIME\\)"):
        resolve_runtime()
    with pytest.raises(UsageError, match="'crun' \\(from --runtime\\)"):
        resolve_runtime("crun")


class Engine:
    def __init__(self, runtimes):
        self.runtimes = runtimes

    def info(self):
        return {"Runtimes": {name: {} for name in self.runtimes}}


def test_an_engine_without_runsc_is_infrastructure_with_the_way_to_register_it():
    with pytest.raises(InfraError, match="no 'runsc' runtime registered") as e:
        require_runtime(Engine(["runc"]), "runsc")
    assert "daemon.json" in e.value.hint and "bootstrap.sh" in e.value.hint
    require_runtime(Engine(["runc", "runsc"]), "runsc")  # registered: no error
    require_runtime(Engine([]), "runc")  # the default needs no registration


def test_the_container_is_created_with_the_runtime(tmp_path):
    kwargs = container_kwargs(image="img", staged=Staged(tmp_path), forbidden=[], limits=Limits(), grading_id="g",
                              runtime="runsc")
    assert kwargs["runtime"] == "runsc" and kwargs["network_mode"] == "none"
    assert container_kwargs(image="img", staged=Staged(tmp_path), forbidden=[], limits=Limits(),
                            grading_id="g")["runtime"] == "runc"


@pytest.mark.docker
def test_a_grading_under_gvisor_scores_as_under_runc_and_records_it(docker_client):
    from pathlib import Path

    from grader.host.grading import grade
    from grader.reports.compare import outcome_differences

    toy = Path(__file__).parent / "fixtures" / "toy"
    runc = grade(toy, toy / "solution.py", sandbox="docker", runtime="runc")
    runsc = grade(toy, toy / "solution.py", sandbox="docker", runtime="runsc")
    assert runsc.graded and runsc.score == runsc.max_score > 0, runsc.not_graded_reason
    assert outcome_differences(runc, runsc) == []
    assert (runc.environment.oci_runtime, runsc.environment.oci_runtime) == ("runc", "runsc")
