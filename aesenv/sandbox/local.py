"""The `local` sandbox: warm fork-server processes on this machine (the embedded default).

As root (CI, containers, most dev boxes here) each worker runs under bubblewrap, which builds it a
new root holding only what a job needs (`POLICY`: the Python installation and its packages, the
system's programs and libraries, fonts, the worker's own code), a size-capped tmpfs for
workspaces, fresh /proc and /dev, and new pid, network (no interface at all), IPC, UTS and cgroup
namespaces. Nothing else of the host (its repositories, /etc, /root, other users' files) exists
there. Jobs run under a uid that owns no files; the worker keeps only the capabilities it needs to
switch them to it. Without root, or where the kernel refuses namespaces, the same worker runs with
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
from aesenv.sandbox.base import RUNTIMES, SANDBOXES, WORKER_CAPS, Isolation, SandboxLimits
from aesenv.sandbox.pool import WORKER_SCRIPT, Channel, Slot, WarmPool

SCRATCH = "/tmp"  # the workspace root, as in the docker backend: a job's files are at /tmp/job-N
SCRATCH_MB = 1024
WORKER_IN_SANDBOX = "/opt/aesenv/worker.py"
MPL_CACHE = paths.home() / "matplotlib"  # font cache kept across worker starts (jobs cannot write it)
WORKER_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
              "OPENBLAS_NUM_THREADS": "1", "MPLCONFIGDIR": str(MPL_CACHE)}


class Policy:
    """What a local worker's root holds, in one place: read-only system paths (bound when they
    exist; a merged-/usr link stays a link), the namespaces, and the per-job writable places."""

    NAMESPACES = ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")
    SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
    SYSTEM_FILES = ("/etc/fonts", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
                    "/etc/localtime", "/etc/mime.types")
    WIPED = ("/dev/shm", "/dev/mqueue")  # writable by jobs besides the workspace; emptied after each job

    @staticmethod
    def runtimes() -> dict[str, str]:
        """The installed runtime directories (`RUNTIMES`): in-sandbox path -> where it is here."""
        here = {"project_modules": paths.project_modules_dir() / "node_modules"}
        return {RUNTIMES[name]: str(path) for name, path in here.items() if path.is_dir()}

    @classmethod
    def arguments(cls, python_dirs: tuple[str, ...]) -> list[str]:
        args = [*cls.NAMESPACES, "--die-with-parent", "--new-session", "--as-pid-1"]
        for cap in WORKER_CAPS:
            args += ["--cap-add", f"CAP_{cap}"]
        made: set[str] = {"/"}

        def parents(path: str) -> list[str]:
            """bwrap makes a bind's missing parents 0700 (a job could not reach /etc/fonts or a
            Python under /root): make them 0755 first."""
            out = []
            for parent in reversed(Path(path).parents):
                if str(parent) not in made:
                    made.add(str(parent))
                    out += ["--perms", "0755", "--dir", str(parent)]
            return out

        for path in (*cls.SYSTEM, *cls.SYSTEM_FILES):
            if os.path.islink(path):
                args += [*parents(path), "--symlink", os.readlink(path), path]
            elif os.path.exists(path):
                args += [*parents(path), "--ro-bind", path, path]
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm", "--mqueue", "/dev/mqueue",
                 "--size", str(SCRATCH_MB << 20), "--perms", "0711", "--tmpfs", SCRATCH]
        made.add(SCRATCH)
        for path in python_dirs:
            args += [*parents(path), "--ro-bind", path, path]
        for inside, here in cls.runtimes().items():
            args += [*parents(inside), "--ro-bind", here, inside]
        args += [*parents(str(MPL_CACHE)), "--bind", str(MPL_CACHE), str(MPL_CACHE),
                 *parents(WORKER_IN_SANDBOX), "--ro-bind", str(WORKER_SCRIPT), WORKER_IN_SANDBOX]
        return args


@functools.cache
def can_isolate() -> tuple[bool, str]:
    """Whether workers can run under bubblewrap with a separate uid here (probed once)."""
    if os.geteuid() != 0:
        return False, "not root: no namespaces, no separate uid"
    if not shutil.which("bwrap"):
        return False, "bubblewrap (bwrap) not found: run `make setup`"
    probe = subprocess.run(["bwrap", *Policy.NAMESPACES, "--ro-bind", "/", "/", "--", "true"], capture_output=True,
                           text=True, timeout=30)
    if probe.returncode != 0:
        return False, f"namespaces not permitted here: {probe.stderr.strip()[:200]}"
    return True, "bubblewrap: own root with only the runtime, pid/net/ipc namespaces, separate uid, private tmpfs"


def job_uid(slot: int) -> int:
    """A uid that owns no files, distinct per sandbox process and slot (its own RLIMIT_NPROC count)."""
    return 200_000 + (os.getpid() % 50_000) * 16 + slot


@functools.cache
def _python_dirs(python: str) -> tuple[str, ...]:
    """The installation the worker's Python runs from: its prefixes (interpreter, standard library,
    site-packages). sys.path entries outside them (a checkout on the path) are left out."""
    probe = "import sys, json; print(json.dumps([sys.prefix, sys.base_prefix, sys.executable]))"
    prefix, base, executable = json.loads(
        subprocess.run([python, "-I", "-c", probe], capture_output=True, text=True, check=True).stdout)
    dirs = {os.path.realpath(p) for p in (prefix, base)} | {os.path.dirname(os.path.realpath(executable))}
    return tuple(sorted(d for d in dirs if not any(d != o and d.startswith(o + os.sep) for o in dirs)))


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

    def runtime_path(self, name: str) -> str | None:
        inside = RUNTIMES[name]
        here = Policy.runtimes().get(inside)
        return None if here is None else inside if self.isolate else here

    def _command(self, slot: Slot) -> list[str]:
        if not self.isolate:
            return [self.python, "-I", str(WORKER_SCRIPT), "--scratch", os.path.join(self._scratch, str(slot.index))]
        python_dirs = _python_dirs(self.python)
        # What is bound under the scratch tmpfs is not a job's leftover: a venv in a /tmp checkout,
        # a font cache in an AESENV_HOME under /tmp.
        keep = [path for path in (*python_dirs, str(MPL_CACHE)) if path.startswith(SCRATCH + "/")]
        return ["bwrap", *Policy.arguments(python_dirs), "--", self.python, "-I", WORKER_IN_SANDBOX,
                "--scratch", SCRATCH,
                *(f"--wipe={path}" for path in Policy.WIPED), *(f"--keep={path}" for path in keep),
                "--private-ipc", "--uid", str(job_uid(slot.index))]

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
        return Isolation(network=bool(hello.get("network_isolated")), filesystem=hello.get("uid") is not None,
                         detail=self._detail)


async def _follow_log(stream: asyncio.StreamReader, slot: Slot) -> None:
    """Keep the tail of a worker's stderr for infra-error reasons (and never let the pipe fill)."""
    while line := await stream.readline():
        slot.log.append(line.decode("utf-8", "replace").rstrip()[:200])


def describe_isolation() -> dict[str, object]:
    """For `aesenv doctor`: what the local sandbox can enforce on this machine."""
    ok, detail = can_isolate()
    return {"ok": True, "detail": detail if ok else f"reduced isolation: {detail}", "isolated": ok}
