"""A project's health probe: the mechanical check at the end of a Webdev round (does the built app
launch and serve what was built?), and the evidence the simulated user sees. It builds and serves
the project kind's own way, so it lives in the kind; `aesenv.webdev` runs it.

The app is built by the verifier's build (`aesenv.kinds.project.build`: our Vite, our settings,
nothing of the project's configuration), never by the project's own `npm run build`, so what is
checked and graded is made from the sources. Then the project's own `npm start` runs in a fresh
sandbox workspace holding the sources and that `dist/`, and the sandbox itself probes the task's
port (`Probe`: its worker, outside the start script's processes, so nothing the script prints or
writes counts): the launch check passes only when the port serves the built app, `/` byte for
byte our `dist/index.html` and each probed file of `dist/` with the same SHA-256. A server that
says "UP", answers on the port with another page, or rebuilds into something else fails.
Nothing either call started outlives it. The built `dist/` is then opened in the hermetic
browser (served from the renderer's virtual origin, as `webshot` does) for a full-page
screenshot, the page text and the console.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import quote

from pydantic import BaseModel, Field

from aesenv.kinds.base import Backends
from aesenv.kinds.project.build import OUTPUT_DIR, build, generated
from aesenv.kinds.project.channels import blank
from aesenv.render import RenderStatus
from aesenv.render.live import LivePage
from aesenv.render.models import Rendering
from aesenv.sandbox.base import Probe, ProbeResult, RunStatus, SandboxLimits
from aesenv.text import clip

START_TIMEOUT_S = 15  # for the start script to answer on its port
SERVE_TIMEOUT_S = 60.0  # the start run as a whole: the wait, then fetching the files
MAX_PROBED_FILES = 40  # of dist/: index.html and the files it references first
MAX_TEXT_CHARS = 6_000
MAX_CONSOLE_LINES = 20
START_COMMAND = ["npm", "start"]
_REFERENCED = re.compile(r"""(?:src|href)\s*=\s*["']\.?/?([^"'?#]+)""", re.I)


class HealthCheck(BaseModel):
    """What the mechanical check found (what came from the agent's project is bounded)."""

    built: bool = False  # our build of the sources made the app
    up: bool = False  # something answered HTTP on the port (the sandbox's own probe)
    status: int = 0  # the HTTP status it answered `/` with
    html: bool = False  # what it answered `/` with looks like an HTML page
    app: bool = False  # it served the built app: `/` and every probed file of dist/ identical to the build's
    mismatched: list[str] = Field(default_factory=list, max_length=20)  # dist/ files it served otherwise
    ignored: dict[str, str] = Field(default_factory=dict)  # project files the build left out -> why
    problem: str = ""  # why the app is not up, in words ('' when it is)
    log: str = Field(default="", max_length=4_000)  # the tail of the build or start log
    infra: str = ""  # our side failed (the sandbox): not the project's fault

    @property
    def serving(self) -> bool:
        return self.up and self.app


@dataclass
class Delivery:
    """A project as delivered at the end of a round: the health check and, when it built, the page."""

    health: HealthCheck
    dist: dict[str, bytes] = field(default_factory=dict)
    rendering: Rendering | None = None

    @property
    def launched(self) -> bool:
        """The launch check: served on its port, and the page it serves renders, not blank."""
        return (self.health.serving and self.rendering is not None
                and self.rendering.status is RenderStatus.OK and not blank(self.rendering))

    @property
    def infra(self) -> str:
        """Why our side failed to check or open it ('' when it did not: the rest is the project's)."""
        if self.health.infra:
            return self.health.infra
        if self.rendering is not None and self.rendering.status is RenderStatus.INFRA_ERROR:
            return f"the renderer failed on our side: {self.rendering.error}"
        return ""

    @property
    def text(self) -> str:
        return clip(self.rendering.metrics.visible_text, MAX_TEXT_CHARS) if self.rendering else ""

    @property
    def console(self) -> list[str]:
        if self.rendering is None:
            return []
        lines = [f"{c.type}: {c.text}" for c in self.rendering.console if c.type in ("error", "warning")]
        return [clip(line, 300) for line in lines + [f"uncaught: {e}" for e in self.rendering.page_errors]][
            :MAX_CONSOLE_LINES]

    @functools.cached_property
    def screenshot(self) -> bytes | None:
        return self.rendering.image("jpeg", max_height=4000) if self.rendering else None


async def check_health(backends: Backends, files: dict[str, bytes], port: int) -> tuple[HealthCheck, dict[str, bytes]]:
    """Build the sources (ours), start them with the project's `npm start`, and have the sandbox
    probe the port for the built app; the check and the built `dist/` ({} when it did not build)."""
    built = await build(backends.sandbox, files)
    ignored = dict(list(built.ignored.items())[:20])
    if built.infra:
        return HealthCheck(infra=built.problem, ignored=ignored), {}
    if not built.ok:
        return HealthCheck(problem=f"the app does not build: {built.problem}", log=clip(built.log_tail(3_000), 3_000),
                           ignored=ignored), {}
    dist = built.output
    modules = backends.sandbox.runtime_path("project_modules")
    if modules is None:
        return HealthCheck(built=True, infra="the project packages are not installed: run `aesenv setup`"), dist
    served = {p: b for p, b in files.items() if not generated(p)}
    served.update({f"{OUTPUT_DIR}/{p}": b for p, b in dist.items()})
    expected = probed_files(dist)
    probe = Probe(port=port, paths=[(url, len(dist[name])) for url, name in expected], wait_s=START_TIMEOUT_S)
    limits = SandboxLimits(timeout_s=SERVE_TIMEOUT_S, max_output_bytes=100_000)
    run = await backends.sandbox.run(START_COMMAND, served, limits, links={"node_modules": modules}, probe=probe)
    if run.status is RunStatus.INFRA_ERROR:
        return HealthCheck(built=True, infra=f"the sandbox failed on our side: {run.reason}", ignored=ignored), dist
    if run.probe is None or run.probe.error.startswith("probe:"):
        why = run.probe.error if run.probe is not None else "no probe result"
        return HealthCheck(built=True, infra=f"the sandbox's probe of the port failed on our side: {why}",
                           ignored=ignored), dist
    log = clip((run.stdout + ("\n" if run.stdout and run.stderr else "") + run.stderr).strip(), 3_000)
    return judge_probe(run.probe, dist, expected, port, log, ignored), dist


def probed_files(dist: dict[str, bytes]) -> list[tuple[str, str]]:
    """(URL path, dist/ file) pairs to fetch: `/` for index.html, then the files index.html
    references, then the rest in order, at most `MAX_PROBED_FILES`."""
    page = dist.get("index.html", b"").decode("utf-8", "replace")
    referenced = [name for name in _REFERENCED.findall(page) if name in dist and name != "index.html"]
    rest = sorted(name for name in dist if name != "index.html" and name not in referenced)
    names = list(dict.fromkeys([*referenced, *rest]))[:MAX_PROBED_FILES - 1]
    return [("/", "index.html")] + [("/" + quote(name), name) for name in names]


def judge_probe(probe: ProbeResult, dist: dict[str, bytes], expected: list[tuple[str, str]], port: int, log: str,
                ignored: dict[str, str]) -> HealthCheck:
    """The launch check from the sandbox's probe: up when the port answered, serving the app when
    every probed file came back identical to the build's."""
    if not probe.answered:
        return HealthCheck(built=True, log=log, ignored=ignored,
                           problem=f"`npm start` did not bring the app up on port {port} within {START_TIMEOUT_S} s")
    root = probe.responses.get("/")
    status = (root.status or 0) if root is not None else 0
    html = root is not None and bool(re.search(rb"<html|<!doctype", root.head[:2000], re.I))
    mismatched = []
    for url, name in expected:
        got, data = probe.responses.get(url), dist[name]
        if got is None or got.status != 200 or got.size != len(data) or got.sha256 != hashlib.sha256(data).hexdigest():
            mismatched.append(name)
    check = HealthCheck(built=True, up=True, status=status, html=html, app=not mismatched,
                        mismatched=mismatched[:20], log=log, ignored=ignored)
    if status != 200:
        check.problem = f"port {port} answered HTTP {status}"
    elif "index.html" in mismatched:
        check.problem = (f"port {port} answered, but not with the built app's page (it is not the index.html the "
                         "build made)" if html else f"port {port} answered, but not with an HTML page")
    elif mismatched:
        check.problem = (f"port {port} served the app's page, but not the build's files: "
                         f"{', '.join(mismatched[:5])} differ (`npm start` must serve the dist/ the build made)")
    return check


@contextlib.asynccontextmanager
async def opened(backends: Backends, dist: dict[str, bytes], *, viewport: tuple[int, int] | None = None
                 ) -> AsyncIterator[tuple[Rendering, LivePage | None]]:
    """The built app open in the hermetic browser (its `index.html` from the virtual origin)."""
    page = dist["index.html"].decode("utf-8", "replace")
    assets = {p: b for p, b in dist.items() if p != "index.html"}
    async with backends.renderer.session(page, files=assets, entry="index.html", viewport=viewport) as (rendering, live):
        yield rendering, live


async def deliver(backends: Backends, files: dict[str, bytes], port: int) -> Delivery:
    """The health check, then the served page as the user sees it."""
    health, dist = await check_health(backends, files, port)
    if not health.built or "index.html" not in dist:
        return Delivery(health, dist)
    async with opened(backends, dist) as (rendering, _):
        return Delivery(health, dist, rendering)
