"""Building a project in the sandbox and opening the built app in the hermetic browser.

A project's workspace holds its sources only. Each build copies them into a fresh sandbox
workspace whose `node_modules` links to the read-only React + Vite install (`aesenv setup`),
runs Vite, and brings back `dist/`; nothing the build started outlives it. The built app is
served from the renderer's virtual origin (the same origin for every file of `dist/`), so a
"server" the project starts itself never matters and never survives.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from importlib import resources

from aesenv.sandbox.base import CommandRun, RunStatus, Sandbox, SandboxLimits

BUILD_COMMAND = ["node", "node_modules/vite/bin/vite.js", "build"]  # the scaffold's `npm run build`, minus npm
OUTPUT_DIR = "dist"
# Never part of a workspace: installed, built or cached by tools (a `run` that makes them is not
# the agent's writing), and never handed to a build.
GENERATED = ("node_modules", OUTPUT_DIR, ".vite-cache", ".npm", ".cache")
BUILD_LOG_CHARS = 2_000
MAX_BUILD_S = 60.0


def scaffold_files() -> dict[str, bytes]:
    """The React + Vite starting project every project task is laid over."""
    root = resources.files("aesenv.kinds.project") / "scaffold"
    out: dict[str, bytes] = {}

    def walk(folder, prefix: str) -> None:
        for entry in folder.iterdir():
            name = posixpath.join(prefix, entry.name) if prefix else entry.name
            if entry.is_dir():
                if entry.name != "__pycache__":
                    walk(entry, name)
            else:
                out[name] = entry.read_bytes()

    walk(root, "")
    return out


def generated(path: str) -> bool:
    """Whether `path` is a tool's product (`GENERATED`), not a source."""
    return path.split("/", 1)[0] in GENERATED


@dataclass
class Build:
    """One build of a project's sources."""

    run: CommandRun
    output: dict[str, bytes] = field(default_factory=dict)  # dist/, relative to it
    problem: str = ""  # why there is nothing to serve ('' when the build produced the entry page)

    @property
    def ok(self) -> bool:
        return not self.problem

    @property
    def infra(self) -> bool:
        return self.run.status is RunStatus.INFRA_ERROR

    def log_tail(self, chars: int = BUILD_LOG_CHARS) -> str:
        text = (self.run.stdout + ("\n" if self.run.stdout and self.run.stderr else "") + self.run.stderr).strip()
        return text if len(text) <= chars else "…" + text[-chars:]


def first_error(log: str) -> str:
    """The line of a build log that says what went wrong: the first after Vite's "error during
    build:" that is not a stack frame, else the first line that mentions an error."""
    lines = [line.strip() for line in log.splitlines() if line.strip() and not line.strip().startswith("at ")]
    for i, line in enumerate(lines):
        if line.startswith("error during build") and i + 1 < len(lines):
            return lines[i + 1]
    return next((line for line in lines if "rror" in line), "")


async def build(sandbox: Sandbox, files: dict[str, bytes], timeout_s: float = MAX_BUILD_S) -> Build:
    """Build `files` with Vite in a fresh sandbox workspace. The build's own faults (a syntax
    error, an unresolved import, a build that never ends) are `problem`s; ours are infra errors."""
    modules = sandbox.runtime_path("project_modules")
    if modules is None:
        return Build(CommandRun.infra_error("the project packages (React, Vite) are not installed: run `aesenv setup`",
                                            sandbox.name), problem="not built")
    sources = {p: b for p, b in files.items() if not generated(p)}
    run = await sandbox.run(BUILD_COMMAND, sources, SandboxLimits(timeout_s=timeout_s, max_output_bytes=200_000),
                            links={"node_modules": modules})
    if run.status is RunStatus.INFRA_ERROR:
        return Build(run, problem=f"the sandbox failed on our side: {run.reason}")
    output = {p[len(OUTPUT_DIR) + 1:]: b for p, b in run.files_out.items() if p.startswith(OUTPUT_DIR + "/")}
    if not run.ok:
        why = run.reason or f"exit code {run.exit_code}"
        said = first_error(run.stderr)
        return Build(run, output, problem=f"the build failed ({run.status.value}: {why})"
                                          + (f": {said[:300]}" if said else ""))
    if "index.html" not in output:
        return Build(run, output, problem=f"the build left no {OUTPUT_DIR}/index.html (the entry point)")
    return Build(run, output)
