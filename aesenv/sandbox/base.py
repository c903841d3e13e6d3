"""The sandbox contract: limits, run records, the backend protocol and the backend registry.

Untrusted code (model-written plot scripts, later project commands) only ever runs through a
`Sandbox`. Backends never raise for bad user code and never raise for their own failures either:
those come back as `RunStatus.INFRA_ERROR` records, so a broken sandbox is masked, not scored 0.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field, field_validator

from aesenv.registry import Registry


# What the worker keeps, as root inside either backend, to hand jobs to an unprivileged uid, own
# their workspace, kill what they leave, measure their memory (SYS_PTRACE reads smaps of another uid)
# and clean up after them; jobs themselves keep none.
WORKER_CAPS = ("SETUID", "SETGID", "CHOWN", "KILL", "DAC_OVERRIDE", "FOWNER", "SYS_PTRACE")


class SandboxLimits(BaseModel):
    """Per-run limits; every one is enforced by both backends."""

    timeout_s: float = Field(20.0, gt=0)  # wall clock; the whole process tree is killed at the deadline
    cpu_s: int = Field(20, gt=0)
    # What a job's processes hold of their own (private resident pages). Drawing needs several times
    # the data: measured over the imports, 150 MB of arrays take 0.66 GB as a line or scatter plot,
    # 1.26 GB with imshow and 1.84 GB with pcolormesh, so 1 GB killed ordinary scripts; 3 GB fits them
    # with room to spare and still stops a runaway long before it hurts the machine.
    memory_mb: int = Field(3072, gt=0)
    max_file_mb: int = Field(64, gt=0)
    max_procs: int = Field(64, gt=0)
    max_output_bytes: int = Field(256_000, gt=0)  # stdout/stderr each; beyond it the run is killed


class RunStatus(str, Enum):
    OK = "ok"
    ERROR = "error"  # the user's code raised or exited non-zero
    TIMEOUT = "timeout"
    KILLED = "killed"  # a limit was hit: memory, cpu, processes, file size, output
    INFRA_ERROR = "infra_error"  # our side failed; never a score


class Isolation(BaseModel):
    """What the backend could actually enforce on this machine (recorded in every run)."""

    network: bool = False  # no route to any host, loopback included
    filesystem: bool = False  # writes confined to the workspace (separate unprivileged uid)
    detail: str = ""


class Figure(BaseModel):
    name: str  # "figure-1.png", "plotly-1.json", ...
    kind: Literal["matplotlib", "plotly"]
    svg: str | None = None  # matplotlib: the figure as the worker saved it (untrusted; the host draws it)
    dpi: float | None = None  # matplotlib: the figure's dpi (the scale the host draws the SVG at)
    plotly_json: str | None = None  # plotly: fig.to_json() (untrusted; the host draws it with plotly.js)
    png: bytes | None = None  # what the host drew (`aesenv.kinds.plot.figures`): the picture every judge sees
    meta: dict = {}  # the description of that drawing (`plots.drawn`), or {"error": ..., "unusable": True}


class _Run(BaseModel):
    status: RunStatus
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    reason: str = ""  # one line: why not ok
    duration_ms: float = 0  # wall time from handing the job to its process to its end, inside the worker
    cpu_ms: float = 0  # CPU time of the job's process (not its children): load-independent cost
    # Where the worker's time went: prepare (the workspace), start (hand the job to its process),
    # run (of which the script says run.script, run.frames: its animations played, and run.save), collect, clean; the rest of the
    # host's wall time is the channel's.
    timings_ms: dict[str, float] = {}
    backend: str = ""
    isolation: Isolation = Isolation()

    @property
    def ok(self) -> bool:
        return self.status is RunStatus.OK


class PlotRun(_Run):
    figures: list[Figure] = []
    traceback: str = ""  # the user's code's traceback, if it raised (the sandbox's own frames left out)
    error_line: int | None = None  # the line of main.py the error came from; None when none of it was running
    imported: list[str] = []  # top-level modules the script imported (for allowed-library checks)

    @classmethod
    def infra_error(cls, reason: str, backend: str = "") -> PlotRun:
        return cls(status=RunStatus.INFRA_ERROR, reason=reason, backend=backend)


class Probe(BaseModel):
    """A look the sandbox itself takes at a port the command serves on (a project's start script):
    its worker, in the command's network namespace but outside its processes, tries `paths[0]`
    until something answers or `wait_s` pass, then fetches each path once; the command is then
    ended. What the command prints can never stand in for the answer."""

    port: int = Field(ge=1, le=65535)
    paths: list[tuple[str, int]] = Field(min_length=1, max_length=64)  # (path, most body bytes read)
    wait_s: float = Field(gt=0)

    @field_validator("paths")
    @classmethod
    def _request_paths(cls, paths: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """Each goes into a request line as is: an absolute path of printable ASCII, no spaces."""
        for path, most in paths:
            if not path.startswith("/") or not all("!" <= c <= "~" for c in path) or most < 0:
                raise ValueError(f"not a request path with a byte limit: {path!r}, {most}")
        return paths


class ProbeResponse(BaseModel):
    status: int | None = None  # None: no HTTP answer
    size: int = 0  # body bytes read (at most the path's limit + 1)
    sha256: str = ""
    head: bytes = b""  # the body's first bytes
    truncated: bool = False  # the body ran past the path's limit
    error: str = ""


class ProbeResult(BaseModel):
    answered: bool = False  # something answered `paths[0]` with an HTTP status in time
    responses: dict[str, ProbeResponse] = {}
    error: str = ""


class CommandRun(_Run):
    exit_code: int | None = None
    files_out: dict[str, bytes] = {}  # every regular file left in the workspace (size-capped)
    files_skipped: dict[str, str] = {}  # what was left but not copied back (links, devices, too big) -> why
    probe: ProbeResult | None = None  # the sandbox's own look at the port, when one was asked for

    @classmethod
    def infra_error(cls, reason: str, backend: str = "") -> CommandRun:
        return cls(status=RunStatus.INFRA_ERROR, reason=reason, backend=backend)


@runtime_checkable
class Sandbox(Protocol):
    name: str

    async def start(self) -> None:
        """Start the warm workers (idempotent); later runs pay no start-up."""

    async def close(self) -> None:
        """Kill every process and container this sandbox started."""

    async def run_plot(self, code: str, files: dict[str, bytes], limits: SandboxLimits | None = None) -> PlotRun:
        """Run a plot script in a fresh workspace holding `files`; collect its figures."""

    async def run(self, argv: list[str], files: dict[str, bytes], limits: SandboxLimits | None = None, *,
                  links: dict[str, str] | None = None, probe: Probe | None = None) -> CommandRun:
        """Run a command in a fresh workspace holding `files`; return the files it left. `links`:
        workspace name -> a path inside the sandbox the name is a symbolic link to (a project's
        read-only `node_modules`, from `runtime_path`); links are never copied back. `probe`: the
        command serves on a port; the sandbox probes it (`Probe`) and then ends the command."""

    def runtime_path(self, name: str) -> str | None:
        """Where a read-only runtime directory this backend provides (`RUNTIMES`) is inside its
        sandbox, or None when it does not have it here (not installed: run `aesenv setup`)."""


# Read-only runtime directories a backend puts in its sandbox when they are installed here
# (`aesenv setup`): name -> where it is inside the sandbox. Jobs reach one through a link in their
# workspace (`Sandbox.run`).
RUNTIMES = {"project_modules": "/opt/aesenv/project/node_modules"}

SANDBOXES: Registry[Callable[..., Sandbox]] = Registry("sandbox")
