"""A batch with --gpus: each GPU grading asks Ray for its GPUs and its container gets exactly those.

The Ray test starts a local Ray that *claims* two GPUs (``ray.init(num_gpus=2)``): Ray
schedules against that resource as it would real ones, and no GPU is touched.
"""

from __future__ import annotations

import contextlib
import tempfile

import pytest

from grader.batch.engines import RayEngine, on_assigned_gpus
from grader.batch.jobs import Job
from grader.batch.runner import num_gpus
from grader.batch.store import Key
from grader.exercise import load_exercise
from grader.wire.grant import parse_gpus
from tests.test_cuda_image import EXERCISES


def _job(n: int, gpus: str | None = "all") -> Job:  # the --gpus spelling, parsed as the CLI parses it
    return Job(Key(f"cand{n}", "mixed_precision_step", "0" * 64, "v"), str(EXERCISES / "mixed_precision_step"),
               "amp_step.py", b"", gpus=parse_gpus(gpus) if gpus else None)


def test_a_job_is_narrowed_to_the_gpus_the_scheduler_assigned():
    assert str(on_assigned_gpus(_job(0), [1]).gpus) == "device=1"
    assert str(on_assigned_gpus(_job(0, "2"), ["0", "3"]).gpus) == "device=0,3"
    assert on_assigned_gpus(_job(0, None), [1]).gpus is None  # asked for none: gets none
    assert str(on_assigned_gpus(_job(0), []).gpus) == "all"  # no scheduler assignment (local engine): as asked


def test_num_gpus_per_grading_follows_the_policy_and_the_request():
    optional, none = load_exercise(EXERCISES / "mixed_precision_step"), load_exercise(EXERCISES / "attention")
    every, two, two_ids = parse_gpus("all"), parse_gpus("2"), parse_gpus("device=0,1")
    assert num_gpus(optional, every) == 1 and num_gpus(optional, two) == 2 and num_gpus(optional, two_ids) == 2
    assert num_gpus(optional, None) == 0 and num_gpus(none, every) == 0


@pytest.mark.slow
def test_ray_never_puts_two_gpu_gradings_on_one_gpu(monkeypatch):
    ray = pytest.importorskip("ray")
    # No token file written, and this process's environment left alone: another test's
    # `ray start --head` on this machine would otherwise pick the token up (tests/test_batch_ray.py).
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")

    def fake_grade(job):  # pickled by value: runs in a Ray worker, grades nothing
        import time

        from grader.reports.model import Environment, Report

        start = time.time()
        time.sleep(1.0)
        return Report(exercise=job.key.exercise, candidate=job.key.candidate, graded=True,
                      started_at=f"{start}:{time.time()}", environment=Environment(gpus=str(job.gpus) if job.gpus else None))

    with tempfile.TemporaryDirectory() as home, contextlib.chdir(home):
        # "local": a Ray of its own, never one another process on this machine started (a test beside it)
        ray.init(address="local", num_cpus=4, num_gpus=2, include_dashboard=False, log_to_driver=False,
                 _node_ip_address="127.0.0.1")
    try:
        engine = RayEngine(4, grade=fake_grade)
        futures = [engine.submit(_job(n), num_gpus=1) for n in range(4)]
        futures.append(engine.submit(_job(9, None), num_gpus=0))
        reports = [f.result(timeout=300) for f in futures]
        engine.close()
    finally:
        ray.shutdown()
    assert reports[-1].environment.gpus is None
    spans: dict[str, list[tuple[float, float]]] = {}
    for r in reports[:-1]:
        assert r.environment.gpus in ("device=0", "device=1"), r.environment.gpus
        start, end = map(float, r.started_at.split(":"))
        spans.setdefault(r.environment.gpus, []).append((start, end))
    for device, on_it in spans.items():
        on_it.sort()
        for (_, end), (next_start, _) in zip(on_it, on_it[1:]):
            assert next_start >= end, f"two gradings on {device} at once: {on_it}"
