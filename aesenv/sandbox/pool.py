"""Host side of the warm fork-server, shared by both backends.

A backend only says how to start one worker and get a byte channel to it (a local process, or an
`exec` into a pooled container); the pool does the rest: hand a job to an idle worker, bound the
wait, turn answers into `PlotRun`/`CommandRun`, and replace a worker that died or stopped
answering (that run is an `infra_error`, never a score).
"""

from __future__ import annotations

import asyncio
import base64
import collections
import json
import struct
import time
from abc import ABC, abstractmethod
from pathlib import Path

from aesenv.sandbox.base import CommandRun, Isolation, PlotRun, Probe, RunStatus, SandboxLimits

WORKER_SCRIPT = Path(__file__).with_name("worker.py")
HELLO_TIMEOUT_S = 120.0  # a cold worker imports the plotting stack (seconds) before it says hello
ANSWER_GRACE_S = 15.0  # beyond the job's own deadline: figure transfer, clean-up


class WorkerLost(Exception):
    """The worker's channel closed or did not answer in time."""


class Channel:
    """Length-prefixed JSON frames over an asyncio stream pair."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def send(self, message: dict) -> None:
        data = json.dumps(message).encode()
        self.writer.write(struct.pack(">I", len(data)) + data)
        await self.writer.drain()

    async def receive(self) -> dict:
        try:
            (size,) = struct.unpack(">I", await self.reader.readexactly(4))
            return json.loads(await self.reader.readexactly(size))
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            raise WorkerLost("worker channel closed") from exc


class Slot:
    """One warm worker and what its backend needs to stop it."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.channel: Channel | None = None
        self.hello: dict = {}
        self.handle: object = None  # backend-specific: a process, a container
        self.log: collections.deque[str] = collections.deque(maxlen=20)  # the worker's stderr tail

    def log_tail(self) -> str:
        return " | ".join(self.log)[-400:]


class WarmPool(ABC):
    """A fixed set of warm workers; one job per worker at a time."""

    name = ""

    def __init__(self, workers: int = 2, limits: SandboxLimits | None = None) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.size = workers
        self.limits = limits or SandboxLimits()
        self._slots: list[Slot] = []
        self._idle: asyncio.Queue[Slot] | None = None
        self._closing: asyncio.Event | None = None  # set by close: wakes runs still waiting for a worker
        self._lock = asyncio.Lock()
        self.isolation = Isolation()

    # ------------------------------------------------------------ backend hooks

    @abstractmethod
    async def _spawn(self, slot: Slot) -> None:
        """Start the slot's worker and set `slot.channel` and `slot.handle`."""

    @abstractmethod
    async def _stop(self, slot: Slot) -> None:
        """Stop the slot's worker and everything it started; must not raise."""

    async def _prepare(self) -> None:
        """Backend start-up before the workers (e.g. remove stale containers)."""

    def _isolation(self, hello: dict) -> Isolation:
        return self.isolation

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        async with self._lock:
            if self._idle is not None:
                return
            await self._prepare()
            slots = [Slot(i) for i in range(self.size)]
            try:
                await asyncio.gather(*(self._boot(slot) for slot in slots))
            except BaseException:
                await asyncio.gather(*(self._stop(slot) for slot in slots))
                raise
            self._slots = slots
            self.isolation = self._isolation(slots[0].hello)
            self._idle, self._closing = asyncio.Queue(), asyncio.Event()
            for slot in slots:
                self._idle.put_nowait(slot)

    async def close(self) -> None:
        async with self._lock:
            slots, self._slots, self._idle = self._slots, [], None  # in-flight runs see the pool closed
            if self._closing is not None:
                self._closing.set()
            await asyncio.gather(*(self._stop(slot) for slot in slots))

    async def __aenter__(self):
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _boot(self, slot: Slot) -> None:
        await self._spawn(slot)
        try:
            message = await asyncio.wait_for(slot.channel.receive(), HELLO_TIMEOUT_S)
        except (WorkerLost, asyncio.TimeoutError) as exc:
            raise RuntimeError(f"{self.name} sandbox worker did not start: {slot.log_tail() or exc}") from exc
        slot.hello = message["hello"]

    # ------------------------------------------------------------ runs

    async def run_plot(self, code: str, files: dict[str, bytes], limits: SandboxLimits | None = None) -> PlotRun:
        """The script's run and the figures it left, as the worker saved them (SVG, plotly JSON):
        untrusted data, which the host draws and describes itself (`aesenv.kinds.plot.figures`)."""
        answer = await self._submit({"kind": "plot", "code": code}, files, limits)
        return self._record(PlotRun, answer)

    async def run(self, argv: list[str], files: dict[str, bytes], limits: SandboxLimits | None = None, *,
                  links: dict[str, str] | None = None, probe: Probe | None = None) -> CommandRun:
        if not argv:
            return CommandRun(status=RunStatus.ERROR, reason="empty command", backend=self.name)
        job = {"kind": "command", "argv": argv, "links": dict(links or {})}
        if probe is not None:
            job["probe"] = probe.model_dump()
        answer = await self._submit(job, files, limits)
        answer["files_out"] = {k: base64.b64decode(v) for k, v in answer.get("files_out", {}).items()}
        if isinstance(answer.get("probe"), dict):
            for response in answer["probe"].get("responses", {}).values():
                if isinstance(response, dict):
                    response["head"] = base64.b64decode(response.get("head") or "")
        return self._record(CommandRun, answer)

    def _record(self, model: type[PlotRun] | type[CommandRun], answer: dict):
        try:
            return model.model_validate({**answer, "backend": self.name, "isolation": self.isolation})
        except ValueError as exc:
            return model.infra_error(f"malformed worker answer: {str(exc).splitlines()[0]}", self.name)

    async def _submit(self, job: dict, files: dict[str, bytes], limits: SandboxLimits | None) -> dict:
        limits = limits or self.limits
        try:
            await self.start()
        except Exception as exc:  # noqa: BLE001 - a backend that cannot start is an infra error
            return {"status": "infra_error", "reason": f"{self.name} sandbox unavailable: {exc}"[:500]}
        job = {**job, "limits": limits.model_dump(),
               "files": {name: base64.b64encode(data).decode() for name, data in files.items()}}
        slot = await self._take_idle()
        if slot is None:
            return {"status": "infra_error", "reason": f"{self.name} sandbox closed while the job waited for a worker"}
        started = time.monotonic()
        try:
            await slot.channel.send({"job": job})
            message = await asyncio.wait_for(slot.channel.receive(), limits.timeout_s + ANSWER_GRACE_S)
            if message["result"].get("replace_worker"):  # the job left it in a state it cannot clean
                await self._replace(slot)
            return message["result"]
        except (WorkerLost, asyncio.TimeoutError, ConnectionError, KeyError) as exc:
            reason = f"worker lost ({type(exc).__name__}) after {time.monotonic() - started:.1f} s"
            await self._replace(slot)
            return {"status": "infra_error", "reason": f"{reason}; {slot.log_tail()}".strip("; ")}
        except asyncio.CancelledError:
            await asyncio.shield(self._replace(slot))
            raise
        finally:
            if self._idle is not None and slot in self._slots:
                self._idle.put_nowait(slot)

    async def _take_idle(self) -> Slot | None:
        """An idle worker, or None when the pool is closed first: a run queued behind busy workers
        must not wait forever on a queue that close() has dropped."""
        idle, closing = self._idle, self._closing
        take = asyncio.ensure_future(idle.get())
        closed = asyncio.ensure_future(closing.wait())
        try:
            await asyncio.wait({take, closed}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            if take.done() and not take.cancelled():
                idle.put_nowait(take.result())  # taken just as the run was cancelled: give it back
            raise
        finally:
            closed.cancel()
            if not take.done():
                take.cancel()
        return take.result() if take.done() and not take.cancelled() else None

    async def _replace(self, slot: Slot) -> None:
        """A worker in an unknown state is never reused: stop it and start a fresh one."""
        await self._stop(slot)
        if slot not in self._slots:  # the pool was closed meanwhile
            return
        try:
            await self._boot(slot)
        except Exception as exc:  # noqa: BLE001 - the slot stays broken; its next run reports it
            slot.log.append(f"restart failed: {exc}")
