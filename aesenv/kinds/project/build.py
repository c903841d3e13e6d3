"""Building a project in the sandbox and opening the built app in the hermetic browser.

A project's workspace holds its sources only. Each build copies them into a fresh sandbox
workspace whose `node_modules` links to the read-only React + Vite install (`aesenv setup`),
runs Vite, and brings back `dist/`; nothing the build started outlives it. The built app is
served from the renderer's virtual origin (the same origin for every file of `dist/`), so a
"server" the project starts itself never matters and never survives.

The build is ours, not the project's: a project's build configuration is code that runs at build
time (a `vite.config.*` plugin can write any `dist/`, a PostCSS config or a package.json script
runs anything, `.env` files change what renders), so it would decide what the verifier sees.
`verifier_build.mjs` runs Vite from our install with our fixed settings (`VITE_SETTINGS`, the
scaffold's `vite.config.js`) and the root `index.html` as the entry; no config file, env file,
PostCSS config, plugin or npm script of the project is read, so no file of the project runs in
Node: its sources are only read and bundled for the browser. What the project carries that this
leaves out is listed in the build's record (`Build.ignored`). `webshot` and the verifier share
this build, so what the agent sees (and Φ, read from its webshots) is what is scored.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from importlib import resources

from aesenv.sandbox.base import CommandRun, RunStatus, Sandbox, SandboxLimits

OUTPUT_DIR = "dist"
# Never part of a workspace: installed, built or cached by tools (a `run` that makes them is not
# the agent's writing), and never handed to a build.
GENERATED = ("node_modules", OUTPUT_DIR, ".vite-cache", ".npm", ".cache")
BUILD_LOG_CHARS = 2_000
MAX_BUILD_S = 60.0
# The scaffold's vite.config.js as settings the verifier's build always uses (`verifier_build.mjs`
# adds: no config file, env file, PostCSS config or plugin; `index.html` the entry).
VITE_SETTINGS = {
    "base": "./",  # relative asset URLs: the built page is opened from any path
    "mode": "production",
    "cacheDir": ".vite-cache",  # beside the sources (node_modules is read-only)
    "publicDir": "public",
    "logLevel": "warn",
    "clearScreen": False,
    "esbuild": {"jsx": "automatic"},
    "build": {"outDir": OUTPUT_DIR, "emptyOutDir": True, "minify": False, "reportCompressedSize": False},
}
INFRA_EXIT = 86  # verifier_build.mjs: Vite could not be loaded from our install (before any project file is read)
# Files that configure a build in ways our build does not read, and why each is left out.
_CONFIG_FILES = [
    (re.compile(r"vite\.config\.[cm]?[jt]s"), "a Vite config: the build uses the scaffold's settings, fixed in aesenv"),
    (re.compile(r"(postcss\.config\.[cm]?[jt]s|\.postcssrc(\.[a-z]+)?)"),
     "a PostCSS config: the build reads none (it would run its plugins)"),
    (re.compile(r"tailwind\.config\.[cm]?[jt]s"),
     "a Tailwind config: Tailwind is not installed and no PostCSS config is read"),
    (re.compile(r"\.env(\..+)?"), "an env file: the build loads none (import.meta.env holds only Vite's own values)"),
    (re.compile(r"(\.babelrc(\.[a-z]+)?|babel\.config\.[cm]?[jt]s(on)?)"),
     "a Babel config: the build does not use Babel"),
    (re.compile(r"\.npmrc"), "an npm config: the build does not run npm"),
]
_BUILD_SCRIPTS = ("prebuild", "build", "postbuild")


def driver() -> str:
    """The verifier's build script (`verifier_build.mjs`), run with `node --input-type=module -e`."""
    return (resources.files("aesenv.kinds.project") / "verifier_build.mjs").read_text("utf-8")


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


def ignored_files(files: dict[str, bytes], scaffold: dict[str, bytes] | None = None) -> dict[str, str]:
    """What of `files` our build leaves out that the project may have meant to count, and why:
    build configuration that differs from the scaffold's, build scripts in package.json, and
    build outputs or installed packages the project carries (one entry per folder)."""
    scaffold = scaffold_files() if scaffold is None else scaffold
    out: dict[str, str] = {}
    for path, data in sorted(files.items()):
        top = path.split("/", 1)[0]
        if generated(path):
            out.setdefault(top + "/", f"{top}/ is made by tools, never taken from the project: the verifier builds "
                                      f"its own {OUTPUT_DIR}/ and links its own node_modules")
            continue
        if "/" in path or scaffold.get(path) == data:
            continue
        why = next((why for pattern, why in _CONFIG_FILES if pattern.fullmatch(path)), "")
        if why:
            out[path] = why
        elif path == "package.json":
            if scripts := _build_scripts(data, scaffold.get(path, b"")):
                plural = "s" if len(scripts) > 1 else ""
                out[path] = f"its {', '.join(scripts)} script{plural} not run: the verifier runs Vite itself"
    return out


def _build_scripts(data: bytes, scaffold: bytes) -> list[str]:
    """The build scripts of a package.json that differ from the scaffold's."""
    def scripts(raw: bytes) -> dict:
        try:
            found = json.loads(raw).get("scripts", {})
        except (ValueError, AttributeError):
            return {}
        return found if isinstance(found, dict) else {}

    ours, theirs = scripts(scaffold), scripts(data)
    return [name for name in _BUILD_SCRIPTS if theirs.get(name) != ours.get(name)]


@dataclass
class Build:
    """One build of a project's sources."""

    run: CommandRun
    output: dict[str, bytes] = field(default_factory=dict)  # dist/, relative to it
    problem: str = ""  # why there is nothing to serve ('' when the build produced the entry page)
    ignored: dict[str, str] = field(default_factory=dict)  # project files the build left out -> why

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
    """Build `files` with our Vite and our settings in a fresh sandbox workspace. The build's own
    faults (a syntax error, an unresolved import, a build that never ends) are `problem`s; ours
    (no install, no sandbox, Vite not loadable) are infra errors."""
    ignored = ignored_files(files)
    modules = sandbox.runtime_path("project_modules")
    if modules is None:
        return Build(CommandRun.infra_error("the project packages (React, Vite) are not installed: run `aesenv setup`",
                                            sandbox.name), problem="not built", ignored=ignored)
    sources = {p: b for p, b in files.items() if not generated(p)}
    command = ["node", "--input-type=module", "-e", driver(), modules, json.dumps(VITE_SETTINGS)]
    run = await sandbox.run(command, sources, SandboxLimits(timeout_s=timeout_s, max_output_bytes=200_000),
                            links={"node_modules": modules})
    if run.exit_code == INFRA_EXIT and run.stderr.startswith("aesenv: "):
        run = CommandRun.infra_error(run.stderr.strip().splitlines()[0][:300], run.backend)
    if run.status is RunStatus.INFRA_ERROR:
        return Build(run, problem=f"the sandbox failed on our side: {run.reason}", ignored=ignored)
    output = {p[len(OUTPUT_DIR) + 1:]: b for p, b in run.files_out.items() if p.startswith(OUTPUT_DIR + "/")}
    if not run.ok:
        why = run.reason or f"exit code {run.exit_code}"
        said = first_error(run.stderr)
        return Build(run, output, problem=f"the build failed ({run.status.value}: {why})"
                                          + (f": {said[:300]}" if said else ""), ignored=ignored)
    if "index.html" not in output:
        return Build(run, output, problem=f"the build left no {OUTPUT_DIR}/index.html (the entry point)",
                     ignored=ignored)
    return Build(run, output, ignored=ignored)
