"""The `project` kind (WebCoder's Webdev-World): a multi-file React + Vite front-end project an
agent develops over many turns, in `AesWebProject-v0` (`aesenv.envs.project`).

A workspace starts from the scaffold (`scaffold/`), with the task's files laid over it (an
existing project, maybe with an injected defect). An answer is the workspace's sources: the
kind builds them in the sandbox (`build`), serves `dist/` from the renderer's virtual origin,
and takes one census of the live page (`census`); for a reproduction it also renders the
reference page (`PageKind.reference`, once per renderer) and compares whole pages: the app's long
screenshot with the reference's, in f_det and in the judge's view. The verifier is its three channels
(`channels`) and the `webcoder` aggregator: R = G·(0.6·f_det + 0.4·f_vlm).

Φ: each requirement's score on the agent's own build, count checks left out (`measures`, kept
as a ledger by the env); a reproduction without requirements uses the source-authoring score.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import AsyncIterator
from dataclasses import replace

from aesenv.artifact import Artifact
from aesenv.channels.base import ChannelStatus
from aesenv.kinds.base import Backends, Scoring
from aesenv.kinds.page import PAGE_ASKING, PageKind, PageReader
from aesenv.render.describe import describe_rendering
from aesenv.kinds.project.build import build, generated, scaffold_files
from aesenv.kinds.project.census import Census, requirement_score, source_authoring, take_census
from aesenv.kinds.project.channels import (ProjectDetChannel, ProjectEvidence, ProjectGateChannel, ProjectVlmChannel, blank,
                                            gate_verdict)
from aesenv.kinds.project.judge import setting
from aesenv.models import PROJECT_JUDGE
from aesenv.render import RenderStatus
from aesenv.tasks import Task
from aesenv.quoting import block, inline
from aesenv.text import MAX_LISTED, clip


class ProjectReader(PageReader):
    """How a built project is read: the build's verdict first, then the served page; Φ is the
    task's requirements met on the page (or, without requirements, the sources' authoring)."""

    stage = "build_and_render"

    def looked(self, evidence: ProjectEvidence) -> bool:
        return evidence.build is not None

    def failure(self, evidence: ProjectEvidence, infra: bool) -> str:
        status, why = gate_verdict(evidence)
        return why if status is ChannelStatus.FAILED and not infra else ""

    def live_for_potential(self, task: Task) -> bool:
        return True

    def measures(self, evidence: ProjectEvidence) -> dict[str, float]:
        """Each requirement's score on this build, count checks left out (count-only ones too)."""
        census, spec = evidence.census, evidence.task.project
        if spec is None:
            return {}
        if census is None:
            return {r.id: 0.0 for r in spec.requirements if r.keywords or r.links_resolve}
        scores = {r.id: requirement_score(r, census, with_counts=False) for r in spec.requirements}
        return {k: v for k, v in scores.items() if v is not None}

    def sight(self, evidence: ProjectEvidence) -> str:
        """The pixels, and where the shown in-page links lead: a link that starts to reach its section
        changes what a person sees on clicking it, not the capture. A reproduction without
        requirements has no sight: its Φ (the paper's) scores the sources, not the look."""
        spec, census = evidence.task.project, evidence.census
        if spec is None or not spec.requirements:
            return ""
        links = [census.links, census.broken_count, sorted(census.broken)] if census is not None else None
        return hashlib.sha256(f"{super().sight(evidence)}|{json.dumps(links)}".encode()).hexdigest()

    async def potential(self, evidence: ProjectEvidence) -> float:
        spec = evidence.task.project
        if spec is None or not spec.requirements:
            return source_authoring(evidence.files, scaffold_files())["score"]
        return potential_of(evidence.task, self.measures(evidence))

    def look_problem(self, evidence: ProjectEvidence) -> str:
        built = evidence.build
        if built is not None and built.infra:
            return f"the sandbox failed on our side ({built.run.reason}); try again"
        if evidence.rendering is not None and evidence.rendering.status is RenderStatus.INFRA_ERROR:
            return f"the renderer failed on our side ({evidence.rendering.error}); try again"
        return ""

    def describe(self, evidence: ProjectEvidence, budget_chars: int) -> str:
        """A webshot as the agent reads it: the build's verdict and log tail, then the served page."""
        built = evidence.build
        # The build's problem line and log, and the link targets, are the project's words: quoted.
        verdict = "ok" if built.ok else inline(built.problem, 300)
        head = [f"build: {verdict} ({built.run.duration_ms / 1000:.1f} s)"]
        if built.ignored:
            head.append("not used by the build (it runs Vite with the scaffold's settings): "
                        + "; ".join(f"{inline(p, 80)} ({why})" for p, why in list(built.ignored.items())[:8]))
        log = built.log_tail(min(2_000, budget_chars // 3))
        if log:
            head.append(f"build log (tail):\n{block(log, limit=2_200, max_lines=2_200)}")
        if evidence.rendering is None:
            return clip("\n".join(head + ["Nothing to serve: fix the build and webshot again."]), budget_chars)
        census = evidence.census
        if census is not None and census.links:
            broken = (f"; broken targets: {', '.join(inline(t, 80) for t in census.broken[:MAX_LISTED])}"
                      if census.broken else "")
            head.append(f"in-page links: {census.links}, {census.broken_count} without a target{broken}")
        if blank(evidence.rendering):
            head.append("WARNING: the page is blank (almost no visible text, no images).")
        return clip("\n".join(head) + "\n" + describe_rendering(evidence.rendering), budget_chars)


class ProjectKind(PageKind):
    name = "project"
    title = "WebProject"
    entry = "index.html"
    default_tasks = "builtin:project"
    asking = replace(
        PAGE_ASKING,
        system_prompt=("You are an expert front-end engineer. You develop a React + Vite project in a workspace "
                       "with tools, build it and look at it, and submit when it meets every requirement."),
        workspace_brief=("a React + Vite front-end project: index.html loads src/main.jsx, which mounts "
                         "src/App.jsx; `webshot` builds it with Vite and shows the served app; node_modules holds "
                         "react, react-dom and vite only (read-only, nothing can be installed, no network)"),
        reference_caption="")  # a reproduction's request says the screenshot is attached (`request`)
    scoring = Scoring(
        judges=PROJECT_JUDGE,
        channel_classes=(ProjectGateChannel, ProjectDetChannel, ProjectVlmChannel),
        fixed_channels=True,
        gate_channel="project_gate",
        rewards={"paper": "webcoder", "normalized": "webcoder", "webcoder": "webcoder"})
    reader = ProjectReader()
    envs = {"refine": ("", "aesenv.envs.project:project_env")}
    whole_page_reference = True  # WebCoder replicates long screenshots: the reference is its whole page

    # --- asking -------------------------------------------------------------------------------
    def request(self, task: Task) -> str:
        spec = task.project
        lines = [task.prompt]
        shown = [r for r in spec.requirements if not r.hidden] if spec else []
        if shown:
            lines += ["", "Requirements (weight):", *(f"- {r.description} ({r.weight:g})" for r in shown)]
        if spec and spec.start == "files":
            lines += ["", "The workspace holds the existing project: list_files shows it."]
        if spec and spec.start == "reference":
            lines += ["", "The reference screenshot to reproduce is attached: the whole page, top to bottom."]
        return "\n".join(lines)

    def initial_files(self, task: Task) -> dict[str, bytes]:
        files = scaffold_files()
        if task.project is not None:
            files.update({path: text.encode("utf-8") for path, text in task.project.files.items()})
        return files

    # --- answering ----------------------------------------------------------------------------
    def extract(self, text: str | bytes) -> Artifact:
        code = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        return self.workspace_artifact(code)

    @contextlib.asynccontextmanager
    async def evidence(self, backends: Backends, task: Task, artifact: Artifact, files: dict[str, bytes], *,
                       live: bool, pictures: bool) -> AsyncIterator[ProjectEvidence]:
        """Build the sources, serve `dist/`, take the census on the open page (and render the
        reference); a project that does not build has a build and no rendering."""
        given = dict(files)
        if artifact.code:
            given[self.entry] = artifact.code.encode("utf-8")
        sources = {p: b for p, b in given.items() if not generated(p)}
        evidence = ProjectEvidence(task, artifact, files=sources)
        if setting(task) == "reproduction":
            evidence.reference_png, evidence.reference_text = await self.reference(backends, task)
        built = await build(backends.sandbox, given)  # ours: it lists what it left out (`Build.ignored`)
        evidence.build = built
        if not built.ok:
            yield evidence
            return
        page = built.output["index.html"].decode("utf-8", "replace")
        assets = {p: b for p, b in built.output.items() if p != "index.html"}
        async with backends.renderer.session(page, files=assets, entry="index.html") as (rendering, live_page):
            evidence.rendering, evidence.live = rendering, live_page
            if live_page is not None and task.project is not None:
                evidence.census = await take_census(live_page, task.project, rendering.metrics.visible_text)
            elif rendering.status is not RenderStatus.INFRA_ERROR:
                evidence.census = Census(text=rendering.metrics.visible_text)
            yield evidence


def potential_of(task: Task, measures: dict[str, float]) -> float:
    """Φ = Σ wᵢ φᵢ over the requirements the ledger keeps, renormalised to their weight."""
    weights = {r.id: r.weight for r in (task.project.requirements if task.project else ()) if r.id in measures}
    total = sum(weights.values())
    return round(sum(w * measures[i] for i, w in weights.items()) / total, 6) if total else 0.0


PROJECT = ProjectKind()
