"""The mechanical health check at the end of a round, and the evidence the simulated user sees.

It runs the project's own scripts in a fresh sandbox workspace (`npm run build`, then `npm
start` in the background) and probes the task's port from inside the sandbox until the app
answers or `START_TIMEOUT_S` pass; nothing it started outlives the call. The built `dist/` is
then opened in the hermetic browser (served from the renderer's virtual origin, as `webshot`
does) for a full-page screenshot, the page text and the console. The launch check passes when
the app answered on its port with HTML and the page it serves is not blank.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from aesenv.kinds.base import Workbench
from aesenv.kinds.project.build import OUTPUT_DIR, generated
from aesenv.kinds.project.channels import blank
from aesenv.render import RenderStatus
from aesenv.render.live import LivePage
from aesenv.render.models import Rendering
from aesenv.sandbox.base import RunStatus, SandboxLimits
from aesenv.text import clip

START_TIMEOUT_S = 15
HEALTH_TIMEOUT_S = 90.0
MAX_TEXT_CHARS = 6_000
MAX_CONSOLE_LINES = 20
# Probes http://127.0.0.1:<port>/ every 200 ms: prints "UP <status> <bytes> <is html>" or "DOWN".
_PROBE = ("const h=require('http'),p=+process.argv[1],end=Date.now()+%d*1000;"
          "(function t(){h.get({host:'127.0.0.1',port:p,path:'/'},r=>{let n=0,b='';"
          "r.on('data',d=>{n+=d.length;if(b.length<2000)b+=d});r.on('end',()=>{"
          "console.log('UP',r.statusCode,n,/<html|<!doctype/i.test(b)?1:0);process.exit(0)})})"
          ".on('error',()=>{if(Date.now()>end){console.log('DOWN');process.exit(0)}setTimeout(t,200)})})()"
          % START_TIMEOUT_S)
_SCRIPT = """npm run build > .health-build.log 2>&1 || { echo BUILD_FAILED; tail -c 1500 .health-build.log; exit 0; }
npm start > .health-start.log 2>&1 &
node -e "$PROBE" {port}
tail -c 1500 .health-start.log"""


class HealthCheck(BaseModel):
    """What the mechanical check found (everything here came from the agent's project: bounded)."""

    built: bool = False
    up: bool = False  # the start script brought the app up on the port and it answered
    status: int = 0  # the HTTP status it answered with
    html: bool = False  # what it answered looks like an HTML page
    problem: str = ""  # why the app is not up, in words ('' when it is)
    log: str = Field(default="", max_length=4_000)  # the tail of the build or start log
    infra: str = ""  # our side failed (the sandbox): not the project's fault

    @property
    def serving(self) -> bool:
        return self.up and 200 <= self.status < 400 and self.html


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


async def check_health(bench: Workbench, files: dict[str, bytes], port: int) -> tuple[HealthCheck, dict[str, bytes]]:
    """Build and start the project in the sandbox, probe its port; the check and the built `dist/`."""
    modules = bench.sandbox.runtime_path("project_modules")
    if modules is None:
        return HealthCheck(infra="the project packages are not installed: run `aesenv setup`"), {}
    sources = {p: b for p, b in files.items() if not generated(p)}
    script = _SCRIPT.replace("{port}", str(port)).replace("$PROBE", _PROBE.replace('"', '\\"'))
    run = await bench.sandbox.run(["/bin/sh", "-c", script], sources,
                                  SandboxLimits(timeout_s=HEALTH_TIMEOUT_S, max_output_bytes=100_000),
                                  links={"node_modules": modules})
    if run.status is RunStatus.INFRA_ERROR:
        return HealthCheck(infra=f"the sandbox failed on our side: {run.reason}"), {}
    out = run.stdout
    dist = {p[len(OUTPUT_DIR) + 1:]: b for p, b in run.files_out.items() if p.startswith(OUTPUT_DIR + "/")}
    if not run.ok:
        return HealthCheck(built="BUILD_FAILED" not in out, problem=f"the check did not finish ({run.status.value}: "
                           f"{run.reason or run.exit_code})", log=clip(out, 3_000)), dist
    if "BUILD_FAILED" in out:
        return HealthCheck(problem="`npm run build` failed", log=clip(out.split("BUILD_FAILED", 1)[1], 3_000)), {}
    line = next((x for x in out.splitlines() if x.startswith(("UP ", "DOWN"))), "")
    tail = clip(out.split(line, 1)[-1].strip() if line else out, 3_000)
    if not line.startswith("UP "):
        return HealthCheck(built=True, problem=f"`npm start` did not bring the app up on port {port} within "
                                               f"{START_TIMEOUT_S} s", log=tail), dist
    _, status, _, html = line.split()
    check = HealthCheck(built=True, up=True, status=int(status), html=html == "1", log=tail)
    if not check.serving:
        check.problem = (f"port {port} answered HTTP {status}" if not 200 <= check.status < 400
                         else f"port {port} answered, but not with an HTML page")
    return check, dist


@contextlib.asynccontextmanager
async def opened(bench: Workbench, dist: dict[str, bytes], *, viewport: tuple[int, int] | None = None
                 ) -> AsyncIterator[tuple[Rendering, LivePage | None]]:
    """The built app open in the hermetic browser (its `index.html` from the virtual origin)."""
    page = dist["index.html"].decode("utf-8", "replace")
    assets = {p: b for p, b in dist.items() if p != "index.html"}
    async with bench.renderer.session(page, files=assets, entry="index.html", viewport=viewport) as (rendering, live):
        yield rendering, live


async def deliver(bench: Workbench, files: dict[str, bytes], port: int) -> Delivery:
    """The health check, then the served page as the user sees it."""
    health, dist = await check_health(bench, files, port)
    if not health.built or "index.html" not in dist:
        return Delivery(health, dist)
    async with opened(bench, dist) as (rendering, _):
        return Delivery(health, dist, rendering)
