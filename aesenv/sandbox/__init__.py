"""Sandboxes for untrusted code: `local` (embedded default) and `docker`, both with a warm fork-server."""

from aesenv.sandbox.base import (
    SANDBOXES,
    CommandRun,
    Figure,
    Isolation,
    PlotRun,
    Probe,
    ProbeResult,
    RunStatus,
    Sandbox,
    SandboxLimits,
)

__all__ = [
    "SANDBOXES",
    "CommandRun",
    "Figure",
    "Isolation",
    "PlotRun",
    "Probe",
    "ProbeResult",
    "RunStatus",
    "Sandbox",
    "SandboxLimits",
    "make_sandbox",
]


def make_sandbox(name: str = "local", **kwargs: object) -> Sandbox:
    """A sandbox backend by name ("local" or "docker"); not started yet. Lives here, not in
    `base`, because the backends import `base`: importing them from there would be a cycle."""
    import aesenv.sandbox.docker  # noqa: F401 - registers "docker"
    import aesenv.sandbox.local  # noqa: F401 - registers "local"

    return SANDBOXES[name](**kwargs)
