"""Where a sandboxed grading's time goes, phase by phase (issue 29's profile). Run on demand.

Times, side by side in one run and interleaved (``--runs`` times each, medians printed), the
parts a `grader submit --sandbox docker` pays that an author's plain run does not, or pays
differently:

  cli         a fresh `python -c "import grader.cli"` (what every command pays before it starts)
  zygote      the warm judge server started cold, to its first forked judge's end (`pytest --version`)
  create      `containers.create` of the grading's container (the exercise's real configuration)
  start       its attach socket and `container.start`
  hello       from the start to the worker's hello: Python, `import torch`, the removal of the
              exercise's forbidden APIs (the `hello (no removal)` row: the same with an empty list)
  first call  the worker's first probe call after its hello (probes and the submission imported)
  remove      `container.remove(force=True)`
  local hello the same worker started by the local sandbox (a subprocess) to its hello

and the whole `grader submit` of the reference, for scale. The last line is ``ratio=`` the
container's own phases (create + start + hello + remove) over the whole grading: the share a
sandbox started ahead could take off a grading's critical path.

    .venv/bin/python bench/sandbox_phases.py [--runs 3] [--exercise attention]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _read_frame(transport, timeout: float = 120.0) -> dict:
    from grader import protocol

    deadline = time.monotonic() + timeout
    return protocol.read_frame(lambda n: transport.read(n, deadline))


def docker_phases(ex, submission: Path, tmp: Path, forbid: bool) -> dict[str, float]:
    from grader import protocol
    from grader.backends import docker_backend, engine
    from grader.build import naming as image
    from grader.backends.staging import stage

    client = engine.connect()
    staged = stage(probes=ex.probes, submission=submission, module_name=ex.module_name,
                   dest=tmp / f"stage-{time.monotonic_ns()}", shared=ex.shared)
    kwargs = docker_backend.container_kwargs(
        image=image.runtime_image_name(), staged=staged, forbidden=ex.config.forbidden.apis if forbid else [],
        limits=ex.limits, grading_id="bench-phases", kernels=ex.config.forbidden.kernels if forbid else None)
    out = {}
    t0 = time.perf_counter()
    container = client.containers.create(**kwargs)
    t1 = time.perf_counter()
    sock = client.api.attach_socket(container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
    container.start()
    t2 = time.perf_counter()
    transport = docker_backend.DockerTransport(client, container, sock)
    hello = _read_frame(transport)
    t3 = time.perf_counter()
    assert hello.get("type") == "hello", hello
    # A probe no exercise has: the worker imports the probes and the submission, then says there is none.
    transport.send(protocol.encode({"type": "call", "id": 1, "probe": "no_such_probe", "args": [], "kwargs": {}}))
    while _read_frame(transport).get("type") in ("importing", "imported"):
        pass
    t4 = time.perf_counter()
    transport.close()
    t5 = time.perf_counter()
    out.update(create=t1 - t0, start=t2 - t1, hello=t3 - t2, first_call=t4 - t3, remove=t5 - t4)
    return out


def local_hello(ex, submission: Path, tmp: Path) -> float:
    from grader.backends.local_backend import local_starter
    from grader.backends.staging import stage

    staged = stage(probes=ex.probes, submission=submission, module_name=ex.module_name,
                   dest=tmp / f"stage-{time.monotonic_ns()}", shared=ex.shared)
    start = local_starter(staged, ex.config.forbidden.apis, ex.limits, kernels=ex.config.forbidden.kernels)
    t0 = time.perf_counter()
    transport = start()
    assert _read_frame(transport).get("type") == "hello"
    t1 = time.perf_counter()
    transport.close()
    return t1 - t0


def timed(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=REPO, capture_output=True, check=False)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--exercise", default="attention")
    args = parser.parse_args()
    from grader.exercise import load_exercise

    ex = load_exercise(args.exercise)
    file = REPO / "solutions" / ex.name / ex.config.exercise.submission
    zygote = [sys.executable, "-c", "from grader.judge import warm; import tempfile, os; d = tempfile.mkdtemp(); "
              "j = warm.start_judge(['--version'], cwd=d, log=os.path.join(d, 'log')); j.wait(300)"]
    submit = [sys.executable, "-m", "grader", "submit", str(ex.root), str(file), "--sandbox", "docker",
              "--json", "/dev/null"]
    rows: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="grader-bench-phases-") as tmp:
        docker_phases(ex, file, Path(tmp), True)  # warm the page cache
        for _ in range(args.runs):
            rows.setdefault("cli", []).append(timed([sys.executable, "-c", "import grader.cli"]))
            rows.setdefault("zygote", []).append(timed(zygote))
            for name, s in docker_phases(ex, file, Path(tmp), True).items():
                rows.setdefault(name, []).append(s)
            rows.setdefault("hello (no removal)", []).append(docker_phases(ex, file, Path(tmp), False)["hello"])
            rows.setdefault("local hello", []).append(local_hello(ex, file, Path(tmp)))
            rows.setdefault("submit (whole)", []).append(timed(submit))
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"{ex.name}, {args.runs} runs, load average at the end {load}")
    med = {name: statistics.median(v) for name, v in rows.items()}
    for name, values in rows.items():
        print(f"  {name:20s} median {med[name]:6.2f} s   runs: " + " ".join(f"{v:.2f}" for v in values))
    box = med["create"] + med["start"] + med["hello"] + med["remove"]
    print(f"  container phases (create + start + hello + remove) {box:.2f} s of a {med['submit (whole)']:.2f} s grading")
    print(f"ratio={box / med['submit (whole)']:.2f}")


if __name__ == "__main__":
    main()
