"""Processes as Linux's /proc shows them: pids, parents, descendants, memory, CPU time, cmdline.

Standard library only and free of aesenv imports, like the sandbox worker (`sandbox/worker.py`),
which reads /proc the same way but cannot import this module: it is shipped alone into the
sandbox (as a file bound into the bubblewrap root, or as `python -c` source into a container),
so it keeps its own copy of `stat_fields`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def pids() -> set[int]:
    """Every live process visible here."""
    return {int(name) for name in os.listdir("/proc") if name.isdigit()}


def stat_fields(pid: int | str) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name, which may contain spaces and
    parentheses (so they start after the last ")"): [0] state, [1] ppid, [2] pgrp, [3] session,
    [11] utime, [12] stime (proc(5) numbers them from 3). OSError once the process is gone."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def parent(pid: int) -> int | None:
    """The parent's pid; None once the process is gone."""
    try:
        fields = stat_fields(pid)
    except OSError:
        return None
    return int(fields[1])


def process_tree(parents: dict[int, int | None] | None = None) -> dict[int, list[int]]:
    """Parent → children over all live processes. With `parents` (a pid → ppid memo that this
    call keeps current), only processes not seen before are read: a sweep on a busy machine
    then costs one directory listing instead of a file read per process."""
    memo: dict[int, int | None] = {} if parents is None else parents
    alive = pids()
    for gone in memo.keys() - alive:
        del memo[gone]
    tree: dict[int, list[int]] = {}
    for pid in alive:
        if pid not in memo:
            memo[pid] = parent(pid)
        ppid = memo[pid]
        if ppid is not None:
            tree.setdefault(ppid, []).append(pid)
    return tree


def descendants(pid: int, parents: dict[int, int | None] | None = None) -> list[int]:
    """Every live process below `pid` (children, their children, ...); `parents` as for `process_tree`."""
    tree, out, stack = process_tree(parents), [], [pid]
    while stack:
        for child in tree.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def rss_bytes(pid: int) -> int:
    """Resident set size (from /proc/<pid>/statm); 0 once the process is gone."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return 0


def cmdline_has(pid: int, flag: bytes) -> bool:
    """Whether `flag` occurs in the process's command line; False once it is gone."""
    try:
        return flag in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of `pid` so far (0 once it is gone)."""
    try:
        fields = stat_fields(pid)
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    except (OSError, IndexError, ValueError):
        return 0.0


def core_jiffies() -> list[tuple[int, int]]:
    """Per core, (busy, total) clock ticks since boot, from /proc/stat (idle and iowait are
    not busy; guest time is already inside user)."""
    cores = []
    for line in Path("/proc/stat").read_text().splitlines():
        name, *values = line.split()
        if name.startswith("cpu") and name != "cpu":
            ticks = [int(v) for v in values[:8]]
            cores.append((sum(ticks) - ticks[3] - ticks[4], sum(ticks)))
    return cores


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of `pid` and every live descendant, each with its reaped children's (a child
    that exited is counted once, in its parent's `cutime`/`cstime`)."""
    total = 0
    for member in [pid, *descendants(pid)]:
        try:
            fields = stat_fields(member)
            total += sum(int(fields[i]) for i in (11, 12, 13, 14))
        except (OSError, IndexError, ValueError):
            continue
    return total / CLOCK_TICKS


class CpuUse:
    """How busy the cores were over a stretch of wall time, and how much of them this process
    and its children (the browser, the driver, sandbox workers) used: `with CpuUse() as use:`,
    then `use.report()`. The second view stays meaningful when something else loads the machine."""

    def __enter__(self) -> "CpuUse":
        self._start, self._cores, self._own = time.perf_counter(), core_jiffies(), tree_cpu_seconds(os.getpid())
        return self

    def __exit__(self, *exc: object) -> None:
        wall, cores, own = time.perf_counter() - self._start, core_jiffies(), tree_cpu_seconds(os.getpid())
        busy = [(b1 - b0) / (t1 - t0) if t1 > t0 else 0.0 for (b0, t0), (b1, t1) in zip(self._cores, cores)]
        self._report = {"wall_s": round(wall, 2), "cores_busy_pct": [round(100 * b, 1) for b in busy],
                        "own_cpu_s": round(own - self._own, 2),
                        "own_share_of_cores_pct": round(100 * (own - self._own) / (wall * len(cores)), 1) if wall else 0.0}

    def report(self) -> dict:
        return dict(self._report)
