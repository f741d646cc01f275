"""grader validate and GPUs: a skipped check fails a validation given --gpus; a GPU-required exercise is "not
validated" without them (never ok), a usage error when named; the flavour a validation records and compares.

No GPU here: gradings are stand-ins where the GPU's answer matters, and the toy exercise graded for real shows
what a CPU-only host does with --gpus (refused: not graded, exit 3).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.host import validation
from grader.cli import main
from grader.exercise import load_exercise
from grader.reports.model import CheckResult, Environment, Report, Status, Visibility
from grader.backends import gpu_probe
from grader.wire.grant import Flavor
from grader.host.validation import flavor_of_validation, validate_exercises
from grader.wire.grant import GpuRequest

TOY = Path(__file__).parent / "fixtures" / "toy"
SOLUTIONS = Path(__file__).parent / "fixtures" / "toy_solutions"


def _toy(tmp_path: Path, policy: str) -> Path:
    root = tmp_path / policy / "toy"
    shutil.copytree(TOY, root)
    toml = root / "exercise.toml"
    toml.write_text(toml.read_text().replace("[exercise]\n", f'[exercise]\ngpu = "{policy}"\n', 1))
    return root


def _check(name: str, status: Status, message: str = "") -> CheckResult:
    return CheckResult(id=f"test_toy.py::{name}", name=name, status=status, score=1 if status is Status.PASSED else 0,
                       max_score=0 if status is Status.SKIPPED else 1, visibility=Visibility.VISIBLE, message=message)


def _stand_in(skip: bool):
    """A grade(): the reference and variants pass every check, mutants fail one, the stub fails all; the GPU check
    skips when ``skip``."""
    def grade(ex, path, **kw):
        path = Path(path)
        stub = path.parent == Path(ex).resolve() if not hasattr(ex, "root") else path.parent == ex.root
        mutant = path.parent.name == "mutants"
        gpu = _check("test_on_gpu", Status.SKIPPED if skip else Status.FAILED if stub else Status.PASSED,
                     "no GPU in the sandbox" if skip else "")
        checks = [_check("test_small", Status.FAILED if stub or mutant else Status.PASSED), gpu]
        counted = [c for c in checks if c.status is not Status.SKIPPED]
        return Report(exercise="toy", graded=True, checks=checks, score=sum(c.score for c in counted),
                      max_score=sum(c.max_score for c in counted), environment=Environment(gpus=str(kw["gpus"]) if kw.get("gpus") else None))
    return grade


def test_with_gpus_a_skipped_check_fails_the_file(tmp_path, monkeypatch):
    """Today's bug: validate --gpus passed with every CUDA check skipped. A skipped check proves nothing."""
    monkeypatch.setattr(validation, "grade", _stand_in(skip=True))
    [result] = validate_exercises([_toy(tmp_path, "optional")], sandbox="local", solutions_dir=SOLUTIONS, gpus=GpuRequest(count=-1))
    assert not result.ok and result.flavor is Flavor.CUDA
    reference = next(v for v in result.verdicts if v.kind == "reference")
    assert reference.problem == "checks skipped although --gpus was given: test_on_gpu (no GPU in the sandbox)"


def test_without_gpus_an_optional_exercises_gpu_checks_skip_and_are_counted_as_not_validated(tmp_path, monkeypatch):
    monkeypatch.setattr(validation, "grade", _stand_in(skip=True))
    [result] = validate_exercises([_toy(tmp_path, "optional")], sandbox="local", solutions_dir=SOLUTIONS)
    assert result.ok and result.flavor is Flavor.CPU
    assert result.skipped_checks() == ["test_on_gpu"]


def test_with_gpus_every_check_running_passes(tmp_path, monkeypatch):
    monkeypatch.setattr(validation, "grade", _stand_in(skip=False))
    [result] = validate_exercises([_toy(tmp_path, "optional")], sandbox="local", solutions_dir=SOLUTIONS, gpus=GpuRequest(count=-1))
    assert result.ok, [(v.path.name, v.problem) for v in result.verdicts]


def test_a_gpu_required_exercise_is_not_validated_without_gpus_and_nothing_is_graded(tmp_path, monkeypatch):
    graded = []
    monkeypatch.setattr(validation, "grade", lambda *a, **k: graded.append(a))
    [result] = validate_exercises([_toy(tmp_path, "required")], sandbox="local", solutions_dir=SOLUTIONS)
    assert graded == [] and result.verdicts == [] and not result.ok
    assert result.not_validated.startswith('needs a GPU (gpu = "required"): not graded without --gpus')
    assert "`grader validate toy --gpus all`" in result.not_validated


def test_the_cli_says_not_validated_passes_the_rest_and_a_named_required_exercise_is_a_usage_error(tmp_path,
                                                                                                monkeypatch):
    required = _toy(tmp_path, "required")
    root = required.parent
    args = ["--exercise-root", str(root), "--sandbox", "local", "--solutions-root", str(SOLUTIONS)]
    r = CliRunner().invoke(main, ["validate", "toy", *args])
    assert r.exit_code == 2, r.output
    assert "toy needs a GPU" in r.output and "--gpus all" in r.output
    # Over "all exercises" (here: the required toy and a plain copy, toy2), the required one is said and skipped.
    plain = root / "toy2"
    shutil.copytree(TOY, plain)
    toml = plain / "exercise.toml"
    toml.write_text(toml.read_text().replace('name = "toy"', 'name = "toy2"', 1))
    solutions = tmp_path / "solutions"
    shutil.copytree(SOLUTIONS / "toy", solutions / "toy")
    shutil.copytree(SOLUTIONS / "toy", solutions / "toy2")
    monkeypatch.setattr(validation, "grade", _stand_in(skip=False))
    r = CliRunner().invoke(main, ["validate", "--exercise-root", str(root), "--sandbox", "local",
                                  "--solutions-root", str(solutions), "--rules", "skip"], catch_exceptions=False)
    text = " ".join(r.output.split())
    assert r.exit_code == 0, r.output
    assert "toy: NOT VALIDATED: needs a GPU" in text and "not validated (they need a GPU): toy" in text
    assert "toy2: ok" in text


def test_a_cpu_only_host_refuses_validate_gpus_as_not_graded(tmp_path):
    """Real gradings, this machine: its torch is a CPU build, so every file of a GPU exercise is not graded (exit 3),
    naming the missing GPU; never a pass."""
    if gpu_probe.local_capabilities().cuda_version is not None:
        pytest.skip("this machine's torch is a CUDA build")
    root = _toy(tmp_path, "required").parent
    r = CliRunner().invoke(main, ["validate", "toy", "--exercise-root", str(root), "--sandbox", "local",
                                  "--solutions-root", str(SOLUTIONS), "--gpus", "all"], catch_exceptions=False)
    assert r.exit_code == 3, r.output
    assert "a CPU build: no GPU can reach it" in " ".join(r.output.split())


def test_the_flavour_follows_the_request_and_the_policy(tmp_path):
    optional = load_exercise(_toy(tmp_path, "optional"))
    assert flavor_of_validation(optional, "all") is Flavor.CUDA
    assert flavor_of_validation(optional, None) is Flavor.CPU
    assert flavor_of_validation(load_exercise(TOY), "all") is Flavor.CPU  # gpu = "none": --gpus is ignored
