"""grade(): statuses, scores, determinism, and infrastructure failure as "not graded"."""

from pathlib import Path

import pytest

from grader.errors import UsageError
from grader.host.grading import grade
from grader.backends.local_backend import NOT_ISOLATED
from grader.reports.model import Status
from grader.reports.warning import WarningCode

TOY = Path(__file__).parent / "fixtures" / "toy"
SUBS = Path(__file__).parent / "fixtures" / "toy_submissions"
MUTANTS = Path(__file__).parent / "fixtures" / "toy_solutions" / "toy" / "mutants"


def by_name(report):
    return {c.id.split("::")[-1]: c for c in report.checks}


def test_reference_gets_full_marks_and_a_complete_environment():
    report = grade(TOY, TOY / "solution.py", sandbox="local")
    assert report.graded and report.score == report.max_score == 6
    env = report.environment
    assert len(env.submission_sha256) == 64 and env.exercise_version == "1.0.0"
    assert env.torch_version and env.hypothesis_seed == 0 and env.limits["call_timeout_s"] == 3
    assert [w.message for w in report.warned(WarningCode.NOT_ISOLATED)] == [NOT_ISOLATED]


def test_stub_gets_zero_with_the_reason_on_every_check():
    """Graded for real, as validate grades it (a command answers the untouched stub alone: test_answer_alone)."""
    report = grade(TOY, None, sandbox="local", answer_alone=False)
    assert report.graded and report.score == 0 and report.max_score == 6
    assert {c.status for c in report.checks} == {Status.ERROR, Status.FAILED}  # FAILED: wrong exception type
    assert all("NotImplementedError" in c.message for c in report.checks)


def test_property_failure_carries_a_shrunk_counterexample_and_is_reproducible():
    first = grade(TOY, MUTANTS / "wrong_for_long.py", sandbox="local")
    second = grade(TOY, MUTANTS / "wrong_for_long.py", sandbox="local")
    prop = by_name(first)["test_scale_property"]
    assert prop.status is Status.FAILED and "n=4" in prop.counterexample
    assert first.score == second.score == 3
    assert [(c.id, c.status, c.counterexample) for c in first.checks] == \
           [(c.id, c.status, c.counterexample) for c in second.checks]


def test_forbidden_api_costs_the_checks_that_called_it_and_is_named():
    report = grade(TOY, MUTANTS / "uses_mul.py", sandbox="local")
    checks = by_name(report)
    assert checks["test_scale_small"].status is Status.FAILED
    assert "torch.mul" in checks["test_scale_small"].message
    assert checks["test_rejects_bad_factor"].status is Status.PASSED  # raised before calling it
    static = [h for h in report.forbidden if h.how == "static"]
    runtime = {h.check for h in report.forbidden if h.how == "runtime"}
    assert [(h.api, h.where) for h in static] == [("torch.mul", "toy.py:9")]
    assert runtime == {checks["test_scale_small"].id, checks["test_scale_property"].id}


def test_candidate_output_is_kept_per_check():
    report = grade(TOY, SUBS / "prints.py", sandbox="local")
    assert report.score == report.max_score
    assert "<script>alert('x')</script> scaling torch.Size([2])" in by_name(report)["test_scale_small"].output


def test_syntax_error_lands_on_the_scorecard(tmp_path):
    bad = tmp_path / "toy.py"
    bad.write_text("def scale(x, factor)\n    return x\n")
    report = grade(TOY, bad, sandbox="local")
    assert report.graded and report.score == 0
    assert report.load_error.summary.startswith("SyntaxError") and report.load_error.line == 1
    assert all(c.not_run for c in report.checks)


def test_empty_submission_is_graded_zero_with_a_warning(tmp_path):
    empty = tmp_path / "toy.py"
    empty.write_text("")
    report = grade(TOY, empty, sandbox="local")
    assert report.graded and report.score == 0
    assert [w.message for w in report.warned(WarningCode.EMPTY_FILE)] == ["the submission file is empty"]


@pytest.mark.parametrize("spec, message", [
    ("no/such/exercise", "No exercise at"),
])
def test_unknown_exercise_is_a_usage_error(spec, message):
    with pytest.raises(UsageError, match=message):
        grade(spec, None)


def test_missing_submission_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        grade(TOY, tmp_path / "nope.py")
    with pytest.raises(UsageError, match="holds no toy.py"):
        grade(TOY, tmp_path)


def test_oversized_submission_is_refused(tmp_path):
    big = tmp_path / "toy.py"
    big.write_text("#" * (2 * 1024 * 1024))
    with pytest.raises(UsageError, match="limit is"):
        grade(TOY, big)


def test_broken_checks_mean_not_graded(tmp_path):
    import shutil

    ex = tmp_path / "toy"
    shutil.copytree(TOY, ex)
    (ex / "checks" / "test_broken.py").write_text("import no_such_module_anywhere\n")
    report = grade(ex, ex / "solution.py", sandbox="local")
    assert not report.graded and report.score == 0 and report.checks == []
    assert "failed to load" in report.not_graded_reason


@pytest.mark.docker
def test_a_docker_report_records_everything_a_regrade_needs(docker_client):
    """Issue 7's list: submission sha256, exercise version and content hash, image id, OCI runtime,
    torch version, limits, hypothesis seed and grader version, each the real value."""
    import hashlib

    from grader import __version__
    from grader.exercise import load_exercise
    from grader.build import naming

    ex = load_exercise(TOY)
    report = grade(ex, TOY / "solution.py", sandbox="docker", runtime="runc")
    env = report.environment
    assert report.graded and env.sandbox == "docker" and env.oci_runtime == "runc"
    assert env.submission_sha256 == hashlib.sha256((TOY / "solution.py").read_bytes()).hexdigest()
    assert (env.exercise_version, env.exercise_fingerprint) == (ex.version, ex.fingerprint)
    assert env.image_id == naming.find_runtime_image(docker_client).id
    assert env.torch_version.split("+")[0] == "2.13.0"
    assert env.limits == ex.limits.model_dump() and env.hypothesis_seed == ex.config.checks.seed
    assert env.grader_version == __version__


@pytest.mark.docker
def test_missing_image_means_not_graded_never_zero(docker_client):
    report = grade(TOY, TOY / "solution.py", sandbox="docker", image="grader-runtime:does-not-exist")
    assert not report.graded and "does not exist" in report.not_graded_reason and report.checks == []


def test_no_engine_means_not_graded(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    report = grade(TOY, TOY / "solution.py", sandbox="docker")
    assert not report.graded and "bootstrap.sh" in report.not_graded_reason


def test_grading_deadline_times_out_the_unfinished_checks(tmp_path):
    import shutil

    ex = tmp_path / "toy"
    shutil.copytree(TOY, ex)
    # 20 s: the judge must have collected its checks by then, on a loaded machine too (see the next test).
    toml = (ex / "exercise.toml").read_text().replace("grading_timeout_s = 120", "grading_timeout_s = 20")
    (ex / "exercise.toml").write_text(toml.replace("call_timeout_s = 3", "call_timeout_s = 120"))
    slow = tmp_path / "toy.py"
    slow.write_text("import torch\n\ndef scale(x, factor):\n    torch.futures.Future().wait()  # blocks for good\n")
    report = grade(ex, slow, sandbox="local")
    assert report.graded and report.score == 0, report.not_graded_reason
    assert {c.status for c in report.checks} == {Status.TIMEOUT}
    assert any("20 s deadline" in c.message for c in report.checks)


def test_a_grading_deadline_that_passes_before_any_check_is_collected_is_not_graded_and_says_so(tmp_path):
    """Nothing of the candidate's was judged: "not graded, rerun", naming the deadline, never a zero."""
    import shutil

    ex = tmp_path / "toy"
    shutil.copytree(TOY, ex)
    toml = (ex / "exercise.toml").read_text().replace("grading_timeout_s = 120", "grading_timeout_s = 0.001")
    (ex / "exercise.toml").write_text(toml)
    report = grade(ex, TOY / "solution.py", sandbox="local")
    assert not report.graded
    assert "ran past its 0.001 s deadline before the judge had collected its checks" in report.not_graded_reason


def test_a_forbidden_package_found_in_the_source_costs_every_check(tmp_path):
    import shutil

    ex = tmp_path / "toy"
    shutil.copytree(TOY, ex)
    toml = (ex / "exercise.toml").read_text()
    (ex / "exercise.toml").write_text(toml.replace('apis = ["torch.mul"]', 'apis = ["torch.mul", "torch.fft"]'))
    sub = tmp_path / "toy.py"
    sub.write_text((TOY / "solution.py").read_text() + "\nimport torch.fft as spectral\n")
    report = grade(ex, sub, sandbox="local")
    assert report.graded and report.score == 0
    # Calls into a package cannot be told apart by check: the file is never run (the judge answers alone).
    assert all(c.not_run and "forbidden torch.fft" in c.message for c in report.checks)
    assert [(h.api, h.how) for h in report.forbidden if h.api == "torch.fft"][0] == ("torch.fft", "static")


def test_filling_a_report_from_a_judge_run_returns_a_new_one_and_edits_neither_the_report_nor_the_run(monkeypatch):
    """Each stage of a grading returns a new report (the fill, the decision, the check error, not graded); before,
    one Report was edited in turn by each, and the run's own check results with it."""
    from grader.exercise import load_exercise
    from grader.host import fill
    from grader.host.runner import JudgeRun
    from grader.reports.model import CheckResult, Environment, Report, Visibility
    from grader.subset.audit import SourceAudit
    from grader.wire.selfreport import SandboxSummary
    from grader.wire.spec import CheckSpec

    monkeypatch.setattr(fill, "_remember_checks", lambda ex, specs: None)  # the catalog's cache left alone
    specs = [CheckSpec(id=f"test_toy.py::test_{n}", name=n, points=1.0, visibility=Visibility.VISIBLE, documented=False)
             for n in ("a", "b")]
    results = {specs[0].id: CheckResult(id=specs[0].id, name="a", status=Status.PASSED, score=1.0, max_score=1.0,
                                        visibility=Visibility.VISIBLE, forbidden=["torch.mul"]),
               specs[1].id: CheckResult(id=specs[1].id, name="b", status=Status.CHECK_ERROR, score=0.0, max_score=1.0,
                                        visibility=Visibility.VISIBLE, message="KeyError: 'x'")}
    run = JudgeRun(collected=specs, results=results,
                   sandbox=SandboxSummary(sandbox="local", deadline_warnings=["measured by the wall clock"]))
    given = Report(exercise="toy", graded=True, environment=Environment(sandbox="local"))
    before, run_before = given.model_dump(), [r.model_dump() for r in results.values()]
    filled = fill.fill(given, load_exercise(TOY), run, SourceAudit())
    assert given.model_dump() == before and [r.model_dump() for r in results.values()] == run_before
    assert [c.name for c in filled.check_errors] == ["b"]  # left for the arbitration to settle (grading.grade)
    assert filled.checks[0].status is Status.FAILED and filled.checks[0].penalty == "forbidden"  # the decision
    assert [w.code for w in filled.warnings] == [WarningCode.WALL_CLOCK_DEADLINE, WarningCode.UNDOCUMENTED_CHECK,
                                                 WarningCode.UNDOCUMENTED_CHECK]
    not_graded = fill.not_graded(filled, "the engine went away")
    assert filled.checks and filled.not_graded_reason != "the engine went away"  # the input, as it was
    assert not_graded.checks == [] and not_graded.not_graded_reason == "the engine went away"
