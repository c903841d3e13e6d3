"""The `docker` sandbox: a warm pool of locked-down containers, each running the fork-server.

Each container: no network, read-only root, a size-capped tmpfs for workspaces, no /dev/shm,
cpu/memory/pids limits, all capabilities dropped except the few the worker needs to switch jobs to
an unprivileged uid, and `no-new-privileges`. The worker is exec'd once per container and talks
over the exec's attached stdio (multiplexed by the engine), so a run costs no Docker API call.
The image carries this machine's Node.js and the installed project packages (`RUNTIMES`). Every
container carries our label; `close()` removes ours, and `start()` removes those whose owner
process is gone. Images are built locally (`aesenv sandbox build`, see `aesenv.sandbox.image`).
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct

from aesenv.sandbox.base import RUNTIMES, SANDBOXES, WORKER_CAPS, Isolation, SandboxLimits
from aesenv.sandbox.image import CONTENT_LABEL, client, content_hash, image_name, missing_libraries
from aesenv.sandbox.pool import WORKER_SCRIPT, Channel, Slot, WarmPool

LABEL = "aesenv.sandbox"  # value: "<hostname>:<pid>" of the process that started the container
JOB_UID_BASE = 62_000
WORKER_RESERVE_MB = 512  # the warm worker itself (the imported stack, ~150-250 MB) and its clean-up tools
WORKER_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
              "OPENBLAS_NUM_THREADS": "1", "MPLCONFIGDIR": "/tmp/.matplotlib", "HOME": "/tmp"}


def engine_problem() -> str:
    """Why the docker sandbox cannot run here ('' when it can)."""
    try:
        import docker
    except ImportError:
        return "the docker Python package is not installed"
    try:
        engine = client(timeout=10)
        engine.ping()
    except Exception as exc:  # noqa: BLE001 - any failure means no usable engine
        return f"no Docker engine reachable ({str(exc).splitlines()[0][:200]})"
    if missing := missing_libraries():
        return f"the sandbox's libraries are not all installed here (missing {', '.join(missing)}): run `make setup`"
    try:
        image = engine.images.get(image_name())
    except docker.errors.ImageNotFound:
        return f"image {image_name()} not built: run `aesenv sandbox build`"
    try:
        wanted = content_hash()
    except RuntimeError as exc:  # what the image must carry is not installed here
        return str(exc)
    if image.labels.get(CONTENT_LABEL) != wanted:
        return f"image {image_name()} is out of date: run `aesenv sandbox build`"
    return ""


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _owner_alive(owner: str) -> bool:
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True  # another machine's container: not ours to judge
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@SANDBOXES.register("docker")
class DockerSandbox(WarmPool):
    name = "docker"

    def __init__(self, workers: int = 2, limits: SandboxLimits | None = None, image: str | None = None,
                 cpus: float | None = None, memory_mb: int | None = None, pids: int = 256,
                 scratch_mb: int = 1024) -> None:
        """`cpus`: a CPU quota for the container; by default none, as on the local backend (each
        job's CPU time is bounded on both by `SandboxLimits.cpu_s`), so a multi-threaded build
        takes as long in either and meets the same deadline. `memory_mb`: the container's cgroup
        limit. By default it holds a job at its own memory limit, a full workspace tmpfs (charged
        to the same cgroup) and the worker, so the verdict on a script is the worker's measured
        `memory limit`, as on the local backend, never the kernel's OOM killer taking the job or
        the worker first."""
        super().__init__(workers, limits)
        self.image = image or image_name()
        if memory_mb is None:
            memory_mb = self.limits.memory_mb + scratch_mb + WORKER_RESERVE_MB
        self.cpus, self.memory_mb, self.pids, self.scratch_mb = cpus, memory_mb, pids, scratch_mb
        self._docker = None

    async def _prepare(self) -> None:
        problem = await asyncio.to_thread(engine_problem)
        if problem:
            raise RuntimeError(problem)
        self._docker = await asyncio.to_thread(client)
        await asyncio.to_thread(self._remove_stale)

    def _remove_stale(self) -> None:
        for container in self._docker.containers.list(all=True, filters={"label": LABEL}):
            if not _owner_alive(container.labels.get(LABEL, "")):
                container.remove(force=True)

    def runtime_path(self, name: str) -> str | None:
        return RUNTIMES[name]  # in the image (`aesenv.sandbox.image`), which `engine_problem` checks is current

    def _create(self, slot: Slot):
        return self._docker.containers.run(
            self.image, ["sleep", "infinity"], detach=True, init=True, user="0",
            network_mode="none", read_only=True, ipc_mode="none",
            tmpfs={"/tmp": f"size={self.scratch_mb}m,mode=0711"},
            cap_drop=["ALL"], cap_add=list(WORKER_CAPS), security_opt=["no-new-privileges"],
            mem_limit=f"{self.memory_mb}m", memswap_limit=f"{self.memory_mb}m",
            nano_cpus=int(self.cpus * 1e9) if self.cpus else 0, pids_limit=self.pids,
            labels={LABEL: _owner()}, environment=WORKER_ENV)

    def _exec_worker(self, container, slot: Slot) -> socket.socket:
        command = ["python3", "-I", "-c", WORKER_SCRIPT.read_text(), "--scratch", "/tmp",
                   "--uid", str(JOB_UID_BASE + slot.index), "--private-ipc",
                   "--wipe=/dev/shm", "--wipe=/dev/mqueue"]
        api = self._docker.api
        exec_id = api.exec_create(container.id, command, stdin=True, stdout=True, stderr=True,
                                  user="0", environment=WORKER_ENV)["Id"]
        return api.exec_start(exec_id, socket=True)._sock

    async def _spawn(self, slot: Slot) -> None:
        container = await asyncio.to_thread(self._create, slot)
        slot.handle = (container, None)
        raw = await asyncio.to_thread(self._exec_worker, container, slot)
        raw.setblocking(False)
        reader, writer = await asyncio.open_connection(sock=raw, limit=1 << 26)
        stdout = asyncio.StreamReader(limit=1 << 26)
        slot.handle = (container, asyncio.create_task(_demultiplex(reader, stdout, slot)))
        slot.channel = Channel(stdout, writer)

    async def _stop(self, slot: Slot) -> None:
        if slot.handle is None:
            return
        container, demux = slot.handle
        slot.handle = None
        if slot.channel is not None:
            slot.channel.writer.close()
            slot.channel = None
        if demux is not None:
            demux.cancel()
        try:
            await asyncio.to_thread(container.remove, force=True)
        except Exception as exc:  # noqa: BLE001 - already gone, or the engine is down
            slot.log.append(f"remove failed: {exc}")

    def _isolation(self, hello: dict) -> Isolation:
        return Isolation(network=True, filesystem=True,
                         detail="container: network none, read-only root, tmpfs workspace, "
                                f"non-root job uid, cpus={self.cpus or 'unlimited'} memory={self.memory_mb}m "
                                f"pids={self.pids}")


async def _demultiplex(raw: asyncio.StreamReader, stdout: asyncio.StreamReader, slot: Slot) -> None:
    """Split the engine's multiplexed exec stream: stdout frames to the channel, stderr to the log."""
    try:
        while True:
            header = await raw.readexactly(8)
            kind, size = header[0], struct.unpack(">I", header[4:])[0]
            payload = await raw.readexactly(size)
            if kind == 1:
                stdout.feed_data(payload)
            else:
                for line in payload.decode("utf-8", "replace").splitlines():
                    slot.log.append(line[:200])
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        stdout.feed_eof()
