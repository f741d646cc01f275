"""The sandbox's own clocks, read from outside it: the CPU time it used and the time it waited for a CPU.

Call deadlines are charged to the sandbox (``grader.backends.deadlines``), so the judge
reads what the kernel counted for it, never what the sandbox says:

- **Docker**: the container's cgroup. CPU time from ``cpuacct.usage`` (cgroup v1, in
  whichever hierarchy holds the cpuacct controller: ``cpu,cpuacct`` or ``cpuacct``) or
  ``cpu.stat``'s ``usage_usec`` (cgroup v2). Time waited for a CPU from ``cpu.pressure``
  (v2's pressure stall information: time at least one of its tasks was runnable and not
  running) or else the sum of its threads' run delays (``/proc/<tid>/schedstat``). The
  cgroup is found from the container's first process (``/proc/<pid>/cgroup`` and the
  judge's mount table), or from the engine's usual places for a container id.
- **Local**: the worker's session, the processes it started included (waited-for children
  through ``cutime``/``cstime``), from ``/proc/<pid>/stat`` and the threads' run delays.

A counter that cannot be read is None, and :attr:`Meter.unavailable` says why in plain
words (the report's warning): the deadlines then fall back to the wall clock. Reading
never raises.

Without pressure information, the time waited is the longest wait of any one thread
between two looks (:class:`RunDelays`): never more than the time some thread waited, so
no number of threads stretches the ceiling; less where threads waited by turns, which
only brings the ceiling sooner for a starved call that sleeps too. A thread the sandbox
demoted itself (``SCHED_BATCH``, ``SCHED_IDLE``, a nicer nice than its first process's)
waits by its own choice: its waits are the sandbox's, never counted as the host's, and a
container with one is read thread by thread, since pressure cannot tell them apart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

PROC = Path("/proc")


class Meter:
    """Cumulative CPU seconds and seconds waited for a CPU of one sandbox; None where unknown."""

    #: Why the CPU time cannot be read (None: it can). Set once, when the meter is made.
    unavailable: str | None = None
    #: Why the time waited for a CPU cannot be read (None: it can): the ceiling is then plain wall-clock time.
    waits_unavailable: str | None = None
    #: The most CPU seconds per second the sandbox can use: how soon its budget could run out.
    cpu_rate: float = 1.0

    def sample(self) -> tuple[float | None, float | None]:
        return None, None


class NoMeter(Meter):
    """A sandbox whose clocks cannot be read: every deadline is the wall clock's."""

    def __init__(self, reason: str):
        self.unavailable = self.waits_unavailable = reason


#: Scheduling policies below the default (``SCHED_OTHER``): a thread in one waits for a CPU by its own choice.
SCHED_BATCH, SCHED_IDLE = 3, 5


@dataclass
class RunDelays:
    """Seconds a changing set of threads waited for a CPU: at each look, the longest any one of them waited
    since the last look, summed over the looks.

    That is at most the time some thread of the sandbox was waiting (many waiting at once count once), so
    a sandbox cannot pile up waiting with many threads that each wait a little (on a busy host a hundred
    threads waking up often would each wait a few milliseconds per wake-up). A thread id seen with a
    smaller count than before is a new thread under a reused id. A thread the sandbox demoted
    (:func:`demoted`, against ``baseline_nice``, its first process's) counts for nothing.
    """

    proc: Path = PROC
    baseline_nice: int = 0
    _last: dict[int, int] = field(default_factory=dict)
    _waited_ns: int = 0

    def total(self, tids: list[int]) -> float:
        seen: dict[int, int] = {}
        longest = 0
        for tid in tids:
            if demoted(self.proc, tid, self.baseline_nice):
                continue
            ns = read_run_delay_ns(self.proc / str(tid) / "schedstat")
            if ns is None:
                continue  # ended between the listing and the read
            before = self._last.get(tid, 0)
            longest = max(longest, ns - before if ns >= before else ns)
            seen[tid] = ns
        self._last = seen
        self._waited_ns += longest
        return self._waited_ns / 1e9


def demoted(proc: Path, tid: int, baseline_nice: int = 0) -> bool:
    """The thread runs below the sandbox's own priority: ``SCHED_BATCH`` or ``SCHED_IDLE``, or a higher nice
    than ``baseline_nice``. Unreadable (it ended): not demoted."""
    try:
        fields = _stat_fields((proc / str(tid) / "stat").read_text())
        nice, policy = int(fields[16]), int(fields[38])
    except (OSError, ValueError, IndexError):
        return False
    return policy in (SCHED_BATCH, SCHED_IDLE) or nice > baseline_nice


def nice_of(proc: Path, pid: int | None) -> int:
    """A process's nice value (0 when it cannot be read): the priority its sandbox started at."""
    try:
        return int(_stat_fields((proc / str(pid) / "stat").read_text())[16]) if pid else 0
    except (OSError, ValueError, IndexError):
        return 0


def read_run_delay_ns(path: Path) -> int | None:
    """The second field of a ``schedstat`` file: nanoseconds the task was runnable but not running."""
    try:
        return int(path.read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None


# ------------------------------------------------------------------ cgroups (Docker)


@dataclass(frozen=True)
class CgroupMount:
    """One line of ``/proc/self/mountinfo`` that mounts a cgroup hierarchy."""

    point: Path
    root: str  # the hierarchy's path this mount shows at ``point``
    version: int  # 1 or 2
    controllers: frozenset[str]  # v1: its controllers (``cpu``, ``cpuacct``...); v2: empty


def cgroup_mounts(mountinfo: str) -> list[CgroupMount]:
    """The cgroup mounts in a ``mountinfo`` text (see proc(5)): fields, ``-``, type, source, super options."""
    mounts = []
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 1:
            continue
        kind = tail[0]
        if kind not in ("cgroup", "cgroup2"):
            continue
        options = frozenset(tail[2].split(",")) if len(tail) > 2 else frozenset()
        mounts.append(CgroupMount(Path(_unescape(fields[4])), _unescape(fields[3]), 2 if kind == "cgroup2" else 1,
                                  options if kind == "cgroup" else frozenset()))
    return mounts


def _unescape(text: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        text = text.replace(code, char)
    return text


def process_cgroups(text: str) -> dict[str, str]:
    """``/proc/<pid>/cgroup`` as {controller: path}; the v2 hierarchy's path under the key ``""``."""
    paths = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if not controllers:
            paths[""] = path
        for controller in controllers.split(","):
            if controller:
                paths[controller] = path
    return paths


def _under(mount: CgroupMount, path: str) -> Path | None:
    """Where a hierarchy path lies under ``mount``; None when the mount does not show it."""
    root = mount.root.rstrip("/")
    if root and not (path == root or path.startswith(root + "/")):
        return None
    return mount.point / path[len(root):].lstrip("/")


def container_cgroup_dirs(mounts: list[CgroupMount], paths: dict[str, str], container_id: str
                          ) -> list[tuple[int, Path]]:
    """Candidate cgroup folders of a container, best first, as (cgroup version, folder).

    ``paths`` is what its first process's ``/proc/<pid>/cgroup`` says (empty when unreadable); the engine's
    usual places for ``container_id`` follow (cgroupfs and systemd drivers, v1 and v2). A path that does
    not name the container (its pid already reused by another process) is not its cgroup, and is skipped.
    """
    guesses = [f"/docker/{container_id}", f"/system.slice/docker-{container_id}.scope"]
    paths = {key: path for key, path in paths.items() if container_id and container_id in path}
    found: list[tuple[int, Path]] = []
    for mount in mounts:
        if mount.version == 1 and "cpuacct" in mount.controllers:
            for path in ([paths["cpuacct"]] if "cpuacct" in paths else []) + guesses:
                where = _under(mount, path)
                if where is not None:
                    found.append((1, where))
    for mount in mounts:
        if mount.version == 2:
            for path in ([paths[""]] if "" in paths else []) + guesses:
                where = _under(mount, path)
                if where is not None:
                    found.append((2, where))
    return found


def read_cpu_ns(version: int, folder: Path) -> int | None:
    """The cgroup's CPU time in nanoseconds: v1 ``cpuacct.usage``, v2 ``cpu.stat``'s ``usage_usec``."""
    try:
        if version == 1:
            return int((folder / "cpuacct.usage").read_text().split()[0])
        for line in (folder / "cpu.stat").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) * 1000
    except (OSError, ValueError, IndexError):
        return None
    return None


def read_pressure_us(folder: Path) -> int | None:
    """v2 ``cpu.pressure``'s ``some ... total=`` microseconds: time at least one task waited for a CPU."""
    try:
        for line in (folder / "cpu.pressure").read_text().splitlines():
            if line.startswith("some "):
                for item in line.split()[1:]:
                    if item.startswith("total="):
                        return int(item[len("total="):])
    except (OSError, ValueError):
        return None
    return None


def _read_ids(path: Path) -> list[int] | None:
    try:
        return [int(x) for x in path.read_text().split()]
    except (OSError, ValueError):
        return None


class CgroupMeter(Meter):
    """A container's clocks from its cgroup folder."""

    def __init__(self, version: int, folder: Path, *, cpu_rate: float, proc: Path = PROC, baseline_nice: int = 0):
        self.version, self.folder, self.cpu_rate, self.proc = version, folder, cpu_rate, proc
        self._delays = RunDelays(proc, baseline_nice)
        self._tasks = folder / ("tasks" if version == 1 else "cgroup.threads")
        self._pressure = version == 2 and read_pressure_us(folder) is not None
        self._pressure_s = 0.0  # what pressure had counted when a demoted thread turned the meter to threads
        if not self._pressure:
            tids = _read_ids(self._tasks) or []
            if not any(read_run_delay_ns(proc / str(t) / "schedstat") is not None for t in tids):
                self.waits_unavailable = ("the run delays of the container's threads could not be read (the judge "
                                          "does not see the host's processes)")

    def sample(self) -> tuple[float | None, float | None]:
        ns = read_cpu_ns(self.version, self.folder)
        cpu = None if ns is None else ns / 1e9
        tids = _read_ids(self._tasks)
        if self._pressure:
            us = read_pressure_us(self.folder)
            if tids is None or not any(demoted(self.proc, t, self._delays.baseline_nice) for t in tids):
                return cpu, (None if us is None else us / 1e6)
            # A demoted thread: pressure would count its chosen waits as the host's. From now on, threads.
            self._pressure, self._pressure_s = False, (us or 0) / 1e6
            self._delays.total(tids)  # what each thread waited so far is in the pressure already
            self._delays._waited_ns = 0
        if self.waits_unavailable:
            return cpu, None
        return cpu, (self._pressure_s + self._delays.total(tids) if tids is not None else None)


def cgroup_meter(container_id: str, pid: int | None, *, cpu_rate: float, proc: Path = PROC) -> Meter:
    """The meter of a running container whose first process is ``pid`` (host pid, 0 or None if unknown)."""
    try:
        mounts = cgroup_mounts((proc / "self" / "mountinfo").read_text())
    except OSError as e:
        return NoMeter(f"the judge's mount table could not be read ({e.strerror or e})")
    paths: dict[str, str] = {}
    if pid:
        try:
            paths = process_cgroups((proc / str(pid) / "cgroup").read_text())
        except OSError:
            paths = {}  # another pid namespace: the engine's usual places still apply
    for version, folder in container_cgroup_dirs(mounts, paths, container_id):
        if read_cpu_ns(version, folder) is not None:
            return CgroupMeter(version, folder, cpu_rate=cpu_rate, proc=proc, baseline_nice=nice_of(proc, pid))
    where = "no cgroup mount with a cpuacct controller or cgroup2" if not mounts else "not in any cgroup the judge can read"
    return NoMeter(f"the container's CPU accounting was not found ({where}: a rootless engine, or a judge in "
                   "a container of its own)")


# ------------------------------------------------------------------ a process session (local)


def _stat_fields(text: str) -> list[str]:
    """``/proc/<pid>/stat`` after the command name (which may hold spaces and parentheses)."""
    return text.rsplit(")", 1)[1].split()


class SessionMeter(Meter):
    """A local worker's clocks: every process of its session (the worker leads one), from ``/proc``.

    CPU is each live member's user+system time and its waited-for children's; a process that leaves
    the session, or whose parent never waits for it, escapes (the local sandbox is not isolated).
    """

    def __init__(self, session: int, *, cpu_rate: float, proc: Path = PROC):
        self.session, self.cpu_rate, self.proc = session, cpu_rate, proc
        self._tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self._delays = RunDelays(proc, nice_of(proc, session))
        self._cpu = 0.0

    def members(self) -> list[tuple[int, list[str]]]:
        found = []
        try:
            entries = [e for e in os.listdir(self.proc) if e.isdigit()]
        except OSError:
            return found
        for entry in entries:
            try:
                fields = _stat_fields((self.proc / entry / "stat").read_text())
            except (OSError, IndexError):
                continue
            if len(fields) > 14 and fields[3] == str(self.session):
                found.append((int(entry), fields))
        return found

    def sample(self) -> tuple[float | None, float | None]:
        members = self.members()
        ticks = sum(int(f[11]) + int(f[12]) + int(f[13]) + int(f[14]) for _, f in members)
        self._cpu = max(self._cpu, ticks / self._tick)  # a reaped child moves into its parent's counts
        tids = []
        for pid, _ in members:
            try:
                tids += [int(t) for t in os.listdir(self.proc / str(pid) / "task")]
            except (OSError, ValueError):
                continue
        return self._cpu, self._delays.total(tids)


def session_meter(pid: int, *, cpu_rate: float, proc: Path = PROC) -> Meter:
    """The meter of a local worker that leads its own session (``grader.processes.group_popen_kwargs``)."""
    if not (proc / "self" / "stat").exists():
        return NoMeter("this platform has no /proc to read the worker's CPU time from")
    meter = SessionMeter(pid, cpu_rate=cpu_rate, proc=proc)
    if read_run_delay_ns(proc / "self" / "schedstat") is None:
        meter.waits_unavailable = "this kernel keeps no run delays (/proc/<pid>/schedstat)"
    return meter


def deadline_warnings(meter: Meter) -> list[str]:
    """What a report says when a sandbox's deadlines could not be charged to its own clocks."""
    if meter.unavailable:
        return [f"call deadlines were measured by the wall clock, not in the sandbox's CPU time "
                f"({meter.unavailable}): a busy machine may have cut a slow call short"]
    if meter.waits_unavailable:
        return [f"the wall-clock ceiling of each call counted the time the sandbox waited for a CPU "
                f"({meter.waits_unavailable}): a busy machine may have cut a slow call short"]
    return []
