"""The `local` sandbox: warm fork-server processes on this machine (the embedded default).

As root (CI, containers, most dev boxes here) each worker runs in its own pid, mount and network
namespaces (`unshare`): no network at all (loopback down), a private size-capped tmpfs for
workspaces, the host's world-writable directories covered read-only, jobs under a uid that owns no
files, and the whole namespace dies with the worker. Without root the same worker runs with
rlimits, a clean environment and process-group kills only, and every run records that network
and filesystem isolation are unavailable.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from aesenv import paths
from aesenv.sandbox.base import SANDBOXES, Isolation, SandboxLimits
from aesenv.sandbox.pool import FIGURE_META, WORKER_SCRIPT, Channel, Slot, WarmPool

# Own pid namespace (everything in it dies with the worker, its /proc shows only it), no network.
UNSHARE = ["--pid", "--fork", "--kill-child", "--mount-proc", "--net", "--"]
# Directories anyone may write to on a Debian host; covered read-only inside the worker's namespace.
WORLD_WRITABLE = ("/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue")
# Users' private files; jobs see empty directories holding only the Python installation in use.
HIDDEN = ("/root", "/home")
SCRATCH_MB = 1024
SEPARATE_SCRATCH = "/run/aesenv-sandbox"  # the workspace root when /tmp holds the Python installation
MPL_CACHE = paths.home() / "matplotlib"  # font cache kept across worker starts
WORKER_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
              "OPENBLAS_NUM_THREADS": "1", "MPLCONFIGDIR": str(MPL_CACHE)}


@functools.cache
def can_isolate() -> tuple[bool, str]:
    """Whether workers can get their own namespaces and a separate uid here (probed once)."""
    if os.geteuid() != 0:
        return False, "not root: no network namespace, no separate uid"
    if not shutil.which("unshare"):
        return False, "unshare (util-linux) not found"
    probe = subprocess.run(["unshare", *UNSHARE, "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return False, f"namespaces not permitted here: {probe.stderr.strip()[:200]}"
    return True, "pid/mount/network namespaces, separate uid, private tmpfs"


def job_uid(slot: int) -> int:
    """A uid that owns no files, distinct per sandbox process and slot (its own RLIMIT_NPROC count)."""
    return 200_000 + (os.getpid() % 50_000) * 16 + slot


@functools.cache
def _python_dirs(python: str) -> tuple[str, ...]:
    """Where the worker's Python finds its code (prefixes, sys.path) and matplotlib's font cache."""
    probe = "import sys, json; print(json.dumps([sys.prefix, sys.base_prefix, *sys.path]))"
    found = json.loads(subprocess.run([python, "-I", "-c", probe], capture_output=True, text=True, check=True).stdout)
    return tuple(sorted({os.path.realpath(p) for p in found if p and os.path.isdir(p)} | {str(MPL_CACHE)}))


def scratch_layout(exposed: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """Where workspaces live, and which host directories jobs see empty. Workspaces normally take
    over /tmp. When the Python installation (or its font cache) lives under /tmp — a checkout in
    /tmp, as CI often does — that tmpfs would hide it, and the per-job wipe must never reach
    host files: workspaces then get their own root and /tmp is hidden like /root, with the
    installation mounted back in it."""
    if not any(path == "/tmp" or path.startswith("/tmp/") for path in exposed):
        return "/tmp", HIDDEN
    return SEPARATE_SCRATCH, (*HIDDEN, "/tmp")


@SANDBOXES.register("local")
class LocalSandbox(WarmPool):
    name = "local"

    def __init__(self, workers: int = 2, limits: SandboxLimits | None = None, python: str | None = None,
                 isolate: bool | None = None) -> None:
        super().__init__(workers, limits)
        self.python = python or sys.executable
        possible, self._detail = can_isolate()
        if isolate and not possible:
            raise ValueError(f"local sandbox isolation unavailable: {self._detail}")
        self.isolate = possible if isolate is None else isolate
        if possible and not self.isolate:
            self._detail = "isolation turned off (isolate=False)"
        self._scratch: str | None = None

    def _command(self, slot: Slot) -> list[str]:
        worker = [self.python, "-I", str(WORKER_SCRIPT), "--figure-meta", str(FIGURE_META)]
        if not self.isolate:
            return [*worker, "--scratch", os.path.join(self._scratch, str(slot.index))]
        # The worker loads figure_meta after its mounts are in place: its folder stays visible too.
        exposed = (*_python_dirs(self.python), str(FIGURE_META.parent))
        scratch, hidden = scratch_layout(exposed)
        mounts = [arg for path in WORLD_WRITABLE for arg in ("--readonly", path)]
        mounts += [arg for path in hidden for arg in ("--hide", path)]
        mounts += [arg for path in exposed for arg in ("--expose", path)]
        return ["unshare", *UNSHARE, *worker, "--scratch", scratch, "--private-mounts", str(SCRATCH_MB),
                "--uid", str(job_uid(slot.index)), *mounts]

    async def _prepare(self) -> None:
        MPL_CACHE.mkdir(parents=True, exist_ok=True)
        if not self.isolate and self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix="aesenv-sandbox-")

    async def _spawn(self, slot: Slot) -> None:
        process = await asyncio.create_subprocess_exec(
            *self._command(slot), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=WORKER_ENV, start_new_session=True, limit=1 << 26)
        slot.handle = (process, asyncio.create_task(_follow_log(process.stderr, slot)))
        slot.channel = Channel(process.stdout, process.stdin)

    async def _stop(self, slot: Slot) -> None:
        if slot.handle is None:
            return
        process, log_task = slot.handle
        slot.handle = None
        if process.returncode is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            await process.wait()
        await asyncio.wait([log_task], timeout=1)
        if not log_task.done():
            log_task.cancel()

    async def close(self) -> None:
        await super().close()
        if self._scratch:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def _isolation(self, hello: dict) -> Isolation:
        if not self.isolate:
            return Isolation(network=False, filesystem=False, detail=self._detail)
        return Isolation(network=bool(hello.get("network_isolated")),
                         filesystem=hello.get("uid") is not None and bool(hello.get("private_mounts")),
                         detail=self._detail)


async def _follow_log(stream: asyncio.StreamReader, slot: Slot) -> None:
    """Keep the tail of a worker's stderr for infra-error reasons (and never let the pipe fill)."""
    while line := await stream.readline():
        slot.log.append(line.decode("utf-8", "replace").rstrip()[:200])


def describe_isolation() -> dict[str, object]:
    """For `aesenv doctor`: what the local sandbox can enforce on this machine."""
    ok, detail = can_isolate()
    return {"ok": True, "detail": detail if ok else f"reduced isolation: {detail}", "isolated": ok}
