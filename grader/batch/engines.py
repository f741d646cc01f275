"""Where a batch's gradings run: threads on this machine, or tasks on a Ray cluster.

Both hand back ``concurrent.futures.Future`` objects resolving to a ``Report``, so
the driver (``grader.batch.runner``) waits on either the same way and alone writes
the store. A grading is I/O-bound from the driver's side (the judge and the
sandbox are other processes), so threads are the right local unit.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

from grader.batch.jobs import Job, grade_job
from grader.errors import InfraError, UsageError
from grader.reports.model import Report
from grader.wire.grant import GpuRequest

ENGINES = ("local", "ray")
#: Ray re-runs a task whose worker or node died this many times; a failing check is not a failure.
RAY_MAX_RETRIES = 3


def default_jobs() -> int:
    """One grading per core: each grading keeps about one core busy (judge + sandbox in turn)."""
    from grader.backends.prestart import usable_cores

    return usable_cores()


class LocalEngine:
    name = "local"

    def __init__(self, jobs: int):
        self.jobs = jobs
        self.pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="grader-batch")

    def submit(self, job: Job, *, num_gpus: float = 0, on_start: Callable[[], None] | None = None) -> Future:
        """``on_start`` is called, in the worker thread, when the grading begins (not while it waits for a thread)."""
        # With a core to spare, each grading starts the next one's sandbox while it runs (grader.backends.prestart).
        from grader.backends.prestart import worth_starting_ahead

        ahead = job.sandbox == "docker" and worth_starting_ahead(self.jobs)
        return self.pool.submit(_started_then_graded, replace(job, start_next=ahead), on_start)

    def close(self, *, cancel: bool = False) -> None:
        self.pool.shutdown(wait=not cancel, cancel_futures=cancel)
        from grader.backends import prestart

        prestart.close_waiting()  # the sandbox started for a grading that will not come


class RayEngine:
    """Each grading is a Ray task: 1 CPU, GPUs as the exercise's policy and ``--gpus`` ask.

    Ray retries a task whose worker or node was lost (``max_retries``) but not one
    that raised (``retry_exceptions=False``); ``grade_job`` never raises for a
    failing check anyway. Without ``address`` a local Ray is started with ``jobs`` CPUs.

    Ray puts the driver's current folder on every worker's ``sys.path``; it is
    started from an empty private folder of its own, kept while the engine lives,
    so nothing in the folder where ``grader batch`` runs is imported by a worker
    (``grader.child_python``).

    A GPU grading asks Ray for ``num_gpus`` and its container gets exactly the GPUs
    Ray assigned to the task (:func:`on_assigned_gpus`), not ``--gpus all`` of the
    node: Ray never hands one GPU to two whole-GPU tasks at once, so two gradings
    never share a GPU. ``grade`` is what a task runs (tests pass a fake).
    """

    name = "ray"

    def __init__(self, jobs: int, address: str | None = None, *, grade: Callable[[Job], Report] = grade_job):
        try:
            import ray
        except ImportError:
            raise UsageError("--engine ray needs Ray, which is not installed.",
                             hint="Install the extra: pip install -c constraints.txt 'grader[ray]'") from None
        self.ray = ray
        self.started_here = not ray.is_initialized()
        self.home = tempfile.TemporaryDirectory(prefix="grader-ray-")
        if self.started_here:
            with contextlib.chdir(self.home.name):
                if address:
                    _connect(ray, address)
                else:
                    # "local": a Ray of its own, never one another program on this machine happens to run
                    ray.init(address="local", num_cpus=jobs, include_dashboard=False, log_to_driver=False)
        self.task = ray.remote(num_cpus=1, max_retries=RAY_MAX_RETRIES, retry_exceptions=False)(
            _on_the_tasks_gpus(grade))

    def submit(self, job: Job, *, num_gpus: float = 0, on_start: Callable[[], None] | None = None) -> Future:
        """Ray schedules the task where and when it can, unseen from here: ``on_start`` is called at once."""
        if on_start is not None:
            on_start()
        return self.task.options(num_gpus=num_gpus).remote(job).future()

    def close(self, *, cancel: bool = False) -> None:
        if self.started_here:
            self.ray.shutdown()
        self.home.cleanup()


def _connect(ray, address: str) -> None:
    """Join the cluster at ``address``; a refusal is "not graded, rerun" with what to check, never a traceback.

    Ray enables token authentication on its own for a cluster that ``ray.init()``
    started locally, but never for a driver given an explicit address, so a
    cluster with a token refuses us until ``RAY_AUTH_MODE=token`` says otherwise.
    """
    try:
        ray.init(address=address, log_to_driver=False)
    except (ConnectionError, RuntimeError) as e:
        why = f"{e} {e.__cause__}".lower()
        auth = "authentication" in why or "auth token" in why
        raise InfraError(
            f"Could not connect to the Ray cluster at {address}: {str(e).splitlines()[0]}",
            hint=("The cluster asks for a token: set RAY_AUTH_MODE=token and make its token available "
                  "(~/.ray/auth_token or RAY_AUTH_TOKEN), then rerun." if auth else
                  "Check that `ray status --address " + address + "` answers from this machine, then rerun."),
        ) from None


def _started_then_graded(job: Job, on_start: Callable[[], None] | None) -> Report:
    if on_start is not None:
        on_start()
    return grade_job(job)


def on_assigned_gpus(job: Job, gpu_ids: Sequence[int | str]) -> Job:
    """``job`` with its GPU request narrowed to the devices the scheduler assigned (``device=1,3``).

    A job that asked for none, or a task given none, is left as it is.
    """
    if job.gpus is None or not gpu_ids:
        return job
    return replace(job, gpus=GpuRequest(device_ids=tuple(str(i) for i in gpu_ids)))


def _on_the_tasks_gpus(grade: Callable[[Job], Report]) -> Callable[[Job], Report]:
    """What a Ray task runs: ``grade`` on the job narrowed to the GPUs Ray gave this task."""

    def run(job: Job) -> Report:
        import ray

        return grade(on_assigned_gpus(job, ray.get_gpu_ids()))

    run.__name__ = run.__qualname__ = "grade_job"  # how the task is named in Ray's dashboard and errors
    return run


def open_engine(name: str, *, jobs: int, address: str | None = None):
    if name == "local":
        if address:
            raise UsageError("--ray-address goes with --engine ray.")
        return LocalEngine(jobs)
    if name == "ray":
        return RayEngine(jobs, address)
    raise UsageError(f"Unknown engine {name!r}: choose one of {', '.join(ENGINES)}.")
