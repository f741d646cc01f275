"""Soak: many gradings in a row leave nothing behind. Run on demand; the suite runs a short one.

Grades the toy exercise N times in one grader process, cycling through honest
files (the reference, the stub) and the hostile corpus (tests/hostile/), and
watches what a long batch would accumulate if anything leaked:
  - grader containers left on the engine (label grader.managed=1, and this run's grader.tag: its
    own GRADER_TAG, or a new one, so other gradings on the machine are not counted),
  - open file descriptors and resident memory of this process,
  - processes below this one (the warm judge server is expected: one),
  - files left in the temp folder or the data folder, outside --out (the run gets a
    private TMPDIR, so other work on the machine cannot blur the count).
Prints a line every --every gradings and a verdict; exits 1 when something leaked.

    .venv/bin/python bench/soak.py [--n 200] [--sandbox docker] [--out DIR] [--slow]

The slow hostile files (sleep, infinite_loop: each waits out call deadlines) run only with --slow.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOY = REPO / "tests" / "fixtures" / "toy"
HOSTILE = REPO / "tests" / "hostile"
SLOW = {"sleep.py", "infinite_loop.py"}
#: Slack for the interpreter's own growth (caches, imported modules) over a long run.
FD_SLACK, RSS_SLACK_MIB = 4, 64


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def children() -> int:
    sys.path.insert(0, str(REPO))
    from tests.proc import descendants

    return len(descendants(os.getpid()))


def containers(sandbox: str) -> int:
    if sandbox != "docker":
        return 0
    from grader.backends import engine

    client = engine.connect(timeout=10)
    try:
        labels = ["grader.managed=1", f"grader.tag={os.environ['GRADER_TAG']}"]
        return len(client.containers.list(all=True, filters={"label": labels}))
    finally:
        client.close()


def entries(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--sandbox", default="docker", choices=["docker", "local"])
    parser.add_argument("--out", type=Path, default=None, help="where reports go (default: a new temp folder)")
    parser.add_argument("--every", type=int, default=25)
    parser.add_argument("--slow", action="store_true", help="include the hostile files that wait out deadlines")
    args = parser.parse_args()

    # A private temp folder for everything this run (and the judges it forks) creates.
    private_tmp = Path(tempfile.mkdtemp(prefix="grader-soak-tmp-"))
    os.environ["TMPDIR"] = str(private_tmp)
    tempfile.tempdir = str(private_tmp)
    os.environ.setdefault("GRADER_TAG", f"soak-{os.getpid()}")  # count this run's containers only

    from grader.host.grading import grade
    from grader.datadir import data_dir
    from grader.reports.render import write_reports

    out = args.out or Path(tempfile.mkdtemp(prefix="grader-soak-out-", dir=private_tmp.parent))
    hostile = sorted(p for p in HOSTILE.glob("*.py") if args.slow or p.name not in SLOW)
    files = [TOY / "solution.py", None] + hostile  # None: the stub
    tmp, data = private_tmp, data_dir()

    grade(TOY, TOY / "solution.py", sandbox=args.sandbox)  # warm up: judge server, imports, caches
    gc.collect()
    before = {"fds": fds(), "rss": rss_mib(), "children": children(), "containers": containers(args.sandbox),
              "tmp": entries(tmp), "data": entries(data)}
    print(f"start: fds={before['fds']} rss={before['rss']:.0f} MiB children={before['children']} "
          f"containers={before['containers']} files={len(files)} sandbox={args.sandbox}")
    t0, graded = time.perf_counter(), 0
    for i, path in zip(range(1, args.n + 1), itertools.cycle(files)):
        report = grade(TOY, path, sandbox=args.sandbox)
        graded += report.graded
        write_reports(report, json_path=out / f"{i:04d}.json")
        if i % args.every == 0 or i == args.n:
            gc.collect()
            print(f"{i:5d} gradings: fds={fds()} rss={rss_mib():.0f} MiB children={children()} "
                  f"containers={containers(args.sandbox)} {time.perf_counter() - t0:.0f} s", flush=True)
    gc.collect()
    after = {"fds": fds(), "rss": rss_mib(), "children": children(), "containers": containers(args.sandbox),
             "tmp": entries(tmp), "data": entries(data)}
    leaks = []
    if after["containers"] > before["containers"]:
        leaks.append(f"containers {before['containers']} -> {after['containers']}")
    if after["fds"] > before["fds"] + FD_SLACK:
        leaks.append(f"open files {before['fds']} -> {after['fds']}")
    if after["rss"] > before["rss"] + RSS_SLACK_MIB:
        leaks.append(f"memory {before['rss']:.0f} -> {after['rss']:.0f} MiB")
    if after["children"] > before["children"]:
        leaks.append(f"processes {before['children']} -> {after['children']}")
    new_tmp = sorted(after["tmp"] - before["tmp"] - {out.name})
    new_data = sorted(after["data"] - before["data"])
    if new_tmp or new_data:
        leaks.append(f"files outside the output folder: {new_tmp + new_data}")
    print(f"graded={graded}/{args.n} in {time.perf_counter() - t0:.0f} s; reports in {out}")
    print("leaks: " + ("; ".join(leaks) if leaks else "none"))
    return 1 if leaks or graded != args.n else 0


if __name__ == "__main__":
    sys.exit(main())
