"""Sandboxes for untrusted code: `local` (embedded default) and `docker`, both with a warm fork-server."""

from aesenv.sandbox.base import (
    SANDBOXES,
    CommandRun,
    Figure,
    Isolation,
    PlotRun,
    RunStatus,
    Sandbox,
    SandboxLimits,
    make_sandbox,
)

__all__ = [
    "SANDBOXES",
    "CommandRun",
    "Figure",
    "Isolation",
    "PlotRun",
    "RunStatus",
    "Sandbox",
    "SandboxLimits",
    "make_sandbox",
]
