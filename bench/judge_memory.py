"""How much memory and time does a grading cost the judge when the sandbox sends a huge result? Run on demand.

Grades, in Docker, the toy's reference and `tests/hostile/huge_frame.py` (a 240 MB tensor
from every call) with the exercise's result budget at its default (`[limits] result_mb`, 16 MB
per check),
then the attack again with the cap at the protocol's old ceiling of 256 MB, where the judge
reads and decodes every 240 MB frame (what every exercise did before the cap existed). The
judge is a child forked from the warm server (`grader.host.warm`); a sampler reads the peak
resident size of every such child (`VmHWM` in /proc/PID/status; it counts the pages the child
shares with the server, so it is an upper bound of what the grading costs). Prints a line per
grading and ends with `ratio=` (judge peak under the attack, 256 MB cap / the default).
A last row sends frames just under the default, on every call of every check: the budget is
per check, so hypothesis keeping failing examples alive cannot add them up.

    GRADER_TAG=bench .venv/bin/python bench/judge_memory.py
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOY = REPO / "tests/fixtures/toy"
MIB = 1024 * 1024


class JudgePeak:
    """Samples the peak RSS (VmHWM) of every process the warm judge server forks, while it runs."""

    def __init__(self, server_pid: int, every_s: float = 0.02):
        self.server_pid, self.every_s = server_pid, every_s
        self.peaks: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(self.every_s):
            for pid in _children(self.server_pid):
                hwm = _status_kib(pid, "VmHWM")
                if hwm is not None:
                    self.peaks[pid] = max(self.peaks.get(pid, 0), hwm * 1024)

    @property
    def peak(self) -> int:
        return max(self.peaks.values(), default=0)


def _children(ppid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == ppid:
            out.append(int(stat.parent.name))
    return out


def _status_kib(pid: int, key: str) -> int | None:
    try:
        match = re.search(rf"^{key}:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
    except OSError:
        return None
    return int(match.group(1)) if match else None


def _toy_with_cap(root: Path, result_mb: int | None) -> Path:
    """A copy of the toy exercise with ``result_mb`` (None: no such key, for older code) and the
    default 20 s call deadline instead of the toy's 3 s, so no read of a big frame is cut short."""
    dest = root / f"toy-{result_mb}"
    shutil.copytree(TOY, dest)
    toml = dest / "exercise.toml"
    text = re.sub(r"(?m)^call_timeout_s = .*$", "call_timeout_s = 20", toml.read_text())
    if result_mb is not None:
        text = text.replace("[limits]\n", f"[limits]\nresult_mb = {result_mb}\n")
    toml.write_text(text)
    return dest


def main() -> int:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    from grader.exercise import Limits, load_exercise
    from grader.host.grading import grade
    from grader.host import warm

    with tempfile.TemporaryDirectory(prefix="bench-judge-memory-") as tmp:
        default = Limits().result_mb
        capped, old = (load_exercise(_toy_with_cap(Path(tmp), mb)) for mb in (default, 256))
        grade(capped, TOY / "solution.py", sandbox="docker")  # warm the judge server and the page cache
        server = warm._server.proc.pid
        server_rss = _status_kib(server, "VmRSS") * 1024
        print(f"warm judge server: {server_rss / MIB:.0f} MiB resident (a forked judge starts out sharing it)")
        attack = REPO / "tests/hostile/huge_frame.py"
        just_under = Path(tmp) / "huge_frame_under.py"  # the most one call can send under the default cap
        just_under.write_text(attack.read_text().replace("SIZE = 240 * 1024 * 1024", f"SIZE = {default - 1} * 1024 * 1024"))
        rows = []
        for label, exercise, path in [("honest reference", capped, TOY / "solution.py"),
                                      ("huge_frame attack", capped, attack),
                                      ("huge_frame attack", old, attack),
                                      (f"{default - 1} MB frames", capped, just_under)]:
            with JudgePeak(server) as sampler:
                t0 = time.perf_counter()
                report = grade(exercise, path, sandbox="docker")
                wall = time.perf_counter() - t0
            if not report.graded:
                sys.exit(f"{label}: not graded: {report.not_graded_reason}")
            cap = exercise.limits.result_mb
            rows.append((label, cap, sampler.peak, wall))
            print(f"{label:>18} (cap {cap:3d} MB): judge peak RSS {sampler.peak / MIB:7.0f} MiB   wall {wall:6.1f} s   "
                  f"score {report.score:g}/{report.max_score:g}   [{report.checks[0].message[:70]}]")
    (_, _, peak_capped, wall_capped), (_, _, peak_old, wall_old) = rows[1], rows[2]
    print(f"ratio={peak_old / peak_capped:.2f}  (judge peak RSS under the attack, 256 MB cap / {default} MB; "
          f"wall {wall_old / wall_capped:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
