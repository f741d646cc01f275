"""Batch throughput: 40 attention submissions graded with --jobs 1 and --jobs 2, side by side.

    .venv/bin/python bench/batch_throughput.py [--n 40]
    .venv/bin/python bench/batch_throughput.py --n 12 --vs-local [--rounds 2]

``--vs-local``: instead, the same batch with ``--jobs 2`` in Docker and in the local sandbox (no container),
alternated for ``--rounds`` rounds in one run, and ``ratio=`` local seconds / Docker seconds: what the
container costs a batch (goal: at least 0.9).

Prints submissions per minute for each, the speed-up (goal on a 2-core machine:
>= 1.7, and >= 20 per minute with --jobs 2), and the peak memory of the whole
batch (grader + judges by PSS, so pages shared with the warm judge server are
counted once, + every sandbox container's cgroup usage) divided by the jobs.

Under it, the same peak by part (issue 29: which part to cut): the driver (the
``grader batch`` process), the warm judge server, the judges forked from it, any
other descendant, each by PSS and by USS (its private pages: what one more judge
adds); and the containers' cgroup usage split into rss (their processes' anonymous
memory) and cache (page cache charged to them, torch's libraries read from the
image: shared, and reclaimable). Containers are those of this batch only (its
``GRADER_TAG``), so other work on the machine is not counted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from itertools import cycle
from pathlib import Path

from tree_at import tree_at  # bench/tree_at.py: the code at --base REF

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO / "solutions" / "attention"


def make_submissions(root: Path, n: int) -> None:
    files = [SOLUTIONS / "attention.py", *sorted((SOLUTIONS / "variants").glob("*.py")),
             *sorted((SOLUTIONS / "mutants").glob("*.py"))]
    for i, src in zip(range(n), cycle(files)):
        dest = root / f"cand{i:03d}" / "attention" / "attention.py"
        dest.parent.mkdir(parents=True)
        dest.write_bytes(src.read_bytes() + f"\n# candidate {i}\n".encode())  # distinct hashes


TAG = f"bench-throughput-{os.getpid()}"


def _rollup(pid: int) -> tuple[int, int]:
    """(PSS, USS) of one process in bytes; (0, 0) once it is gone."""
    pss = uss = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key == "Pss":
                pss += int(rest.split()[0]) * 1024
            elif key in ("Private_Clean", "Private_Dirty"):
                uss += int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return pss, uss


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def tree_parts(root: int) -> dict[str, list[int]]:
    """``root`` and its descendants by part: driver, warm judge server, judges (its children), other."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat[stat.rindex(")") + 2:].split()[1])
            except OSError:
                pass
    pids, frontier = {root}, {root}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - pids
        pids |= frontier
    # A judge is forked from the server without an exec: it has the server's command line, and the server
    # is its parent. The server is the one whose parent is not a server.
    zygotes = {p for p in pids if "grader.host.zygote" in _cmdline(p)}
    servers = {p for p in zygotes if parents.get(p) not in zygotes}
    parts: dict[str, list[int]] = {"driver": [root], "server": sorted(servers), "judges": [], "other": []}
    for pid in sorted(pids - {root} - servers):
        parts["judges" if parents.get(pid) in servers else "other"].append(pid)
    return parts


def tree_memory(root: int) -> dict[str, int]:
    """PSS and USS (bytes) of each part of ``root``'s tree, and of the whole (``pss``)."""
    out = {"pss": 0}
    for part, pids in tree_parts(root).items():
        pss = uss = 0
        for pid in pids:
            p, u = _rollup(pid)
            pss, uss = pss + p, uss + u
        out[f"{part}_pss"], out[f"{part}_uss"], out[f"{part}_n"] = pss, uss, len(pids)
        out["pss"] += pss
    return out


def tree_pss(root: int) -> int:
    """PSS (bytes) of ``root`` and all its descendants."""
    return tree_memory(root)["pss"]


_ENGINE = []


def _our_containers() -> list[str]:
    """Ids of this batch's containers (labelled with our GRADER_TAG by the grader): one cheap list call."""
    if not _ENGINE:
        import docker

        _ENGINE.append(docker.from_env())
    try:
        return [c["Id"] for c in _ENGINE[0].api.containers(filters={"label": f"grader.tag={TAG}"})]
    except Exception:
        return []


def containers_memory(ids: list[str] | None = None) -> dict[str, int]:
    """Cgroup memory of the containers ``ids`` (default: this batch's): usage, rss and cache, summed."""
    ids = _our_containers() if ids is None else ids
    out = {"usage": 0, "rss": 0, "cache": 0, "n": 0}
    for cid in ids:
        for base in (f"/sys/fs/cgroup/memory/docker/{cid}", f"/sys/fs/cgroup/docker/{cid}",
                     f"/sys/fs/cgroup/system.slice/docker-{cid}.scope"):
            folder = Path(base)
            if not folder.is_dir():
                continue
            try:
                if (folder / "memory.usage_in_bytes").exists():  # cgroup v1
                    out["usage"] += int((folder / "memory.usage_in_bytes").read_text())
                    stat = dict(line.split() for line in (folder / "memory.stat").read_text().splitlines())
                    out["rss"] += int(stat.get("total_rss", 0))
                    out["cache"] += int(stat.get("total_cache", 0))
                else:  # cgroup v2
                    out["usage"] += int((folder / "memory.current").read_text())
                    stat = dict(line.split() for line in (folder / "memory.stat").read_text().splitlines())
                    out["rss"] += int(stat.get("anon", 0))
                    out["cache"] += int(stat.get("file", 0))
                out["n"] += 1
            except (OSError, ValueError):
                pass
            break
    return out


def while_sampling(proc: subprocess.Popen, sample, *, every_s: float) -> tuple[str, float]:
    """Call ``sample()`` every ``every_s`` seconds on a thread until ``proc`` ends; its stderr, and when it ended
    (``time.perf_counter``). Shared by the benchmarks that read a batch's memory or CPU while it runs."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every_s):
            sample()

    sampler = threading.Thread(target=loop, daemon=True)
    sampler.start()
    try:
        _, err = proc.communicate()
        ended = time.perf_counter()
    finally:
        stop.set()
        sampler.join()
    return err, ended


def run(subs: Path, out: Path, jobs: int, tree: Path | None = None, sandbox: str = "docker") -> tuple[float, int, dict]:
    """One ``grader batch``; ``tree``: the grader's code from there (a ``--base`` ref's), else this one's."""
    argv = [sys.executable, "-m", "grader", "batch", str(subs), "--output", str(out), "--jobs", str(jobs),
            "--sandbox", sandbox]
    env = dict(os.environ, GRADER_TAG=TAG)
    if tree is not None:  # its code, this tree's exercises (named in the submissions' folders)
        argv = [sys.executable, "-P", *argv[1:], "--exercise-root", str(REPO / "exercises")]
        env["PYTHONPATH"] = str(tree)
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=out.parent)
    peak, ids, ticks = [0, {}], [], [0]

    def sample():
        if ticks[0] % 4 == 0:  # the engine is asked for the list once a second; the cgroups are read every time
            ids[:] = _our_containers()
        ticks[0] += 1
        tree, boxes = tree_memory(proc.pid), containers_memory(ids)
        if tree["pss"] + boxes["usage"] > peak[0]:
            peak[0] = tree["pss"] + boxes["usage"]
            peak[1] = {**tree, **{f"box_{k}": v for k, v in boxes.items()}}

    err, ended = while_sampling(proc, sample, every_s=0.25)
    seconds = ended - t0
    if proc.returncode != 0:
        sys.exit(f"batch --jobs {jobs} failed ({proc.returncode}):\n{err[-2000:]}")
    return seconds, peak[0], peak[1]


def describe(parts: dict) -> str:
    """The peak by part, in MiB: PSS (USS) of each process group, and the containers' usage split."""
    mib = lambda n: f"{n / 2**20:.0f}"  # noqa: E731
    rows = [f"{name} x{parts.get(f'{name}_n', 0)} {mib(parts.get(f'{name}_pss', 0))} ({mib(parts.get(f'{name}_uss', 0))})"
            for name in ("driver", "server", "judges", "other")]
    rows.append(f"containers x{parts.get('box_n', 0)} {mib(parts.get('box_usage', 0))} "
                f"(rss {mib(parts.get('box_rss', 0))}, cache {mib(parts.get('box_cache', 0))})")
    return "  at the peak, MiB PSS (USS): " + "; ".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--base", help="a git ref whose code runs the same batches beside this tree's (`git archive`)")
    ap.add_argument("--vs-local", action="store_true", help="Docker beside the local sandbox, --jobs 2 (see above)")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="grader-bench-") as tmp:
        subs = Path(tmp) / "subs"
        make_submissions(subs, args.n)
        if args.vs_local:
            return vs_local(subs, Path(tmp), args.n, args.rounds)
        trees: dict[str, Path | None] = {"here": None}
        if args.base:
            trees = {args.base: tree_at(args.base, Path(tmp) / "base"), **trees}
        results = {}
        for jobs in (1, 2):
            for name, tree in trees.items():
                seconds, peak, parts = run(subs, Path(tmp) / f"out{jobs}", jobs, tree)
                results[name, jobs] = seconds
                print(f"{name} --jobs {jobs}: {args.n} submissions in {seconds:6.1f} s = "
                      f"{args.n / seconds * 60:5.1f} per minute; peak memory {peak / 2**20:6.0f} MiB in all, "
                      f"{peak / jobs / 2**20:5.0f} MiB per concurrent grading", flush=True)
                print(describe(parts), flush=True)
                shutil.rmtree(Path(tmp) / f"out{jobs}")
        with open("/proc/loadavg") as f:
            print("load average at the end", " ".join(f.read().split()[:3]))
        if args.base:
            for jobs in (1, 2):
                print(f"ratio_vs_base_jobs{jobs}={results[args.base, jobs] / results['here', jobs]:.2f}  "
                      f"(speed-up over {args.base})")
        print(f"ratio={results['here', 1] / results['here', 2]:.2f}  (speed-up of --jobs 2 over --jobs 1; goal >= 1.7)")


def vs_local(subs: Path, tmp: Path, n: int, rounds: int) -> None:
    """The same batch at ``--jobs 2`` in Docker and in the local sandbox, alternated: what the container costs."""
    with open("/proc/loadavg") as f:
        print("load average at the start", " ".join(f.read().split()[:3]))
    took: dict[str, list[float]] = {"docker": [], "local": []}
    for round_ in range(rounds):
        for sandbox in ("docker", "local") if round_ % 2 == 0 else ("local", "docker"):
            seconds, _, _ = run(subs, tmp / "out", 2, sandbox=sandbox)
            took[sandbox].append(seconds)
            print(f"round {round_ + 1} {sandbox:6}: {n} submissions in {seconds:6.1f} s", flush=True)
            shutil.rmtree(tmp / "out")
    with open("/proc/loadavg") as f:
        print("load average at the end", " ".join(f.read().split()[:3]))
    print(f"ratio={sum(took['local']) / sum(took['docker']):.2f}  (local seconds / Docker seconds; goal >= 0.9)")


if __name__ == "__main__":
    main()
