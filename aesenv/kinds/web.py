"""The `web` kind: one self-contained HTML page (AesCoder, OpenDesign), rendered in the hermetic
browser. Refine workspaces serve every other file next to `index.html` on the virtual origin.

Φ: the fraction of the task's checkable requirements the rendering satisfies
(`aesenv.verifiers.requirement_potential`, read on the open page so charts and tables count);
for a task without requirements, the structural score, the mean of checks in [0, 1]: it
rendered (status ok); no page/console errors (1/(1+n)); visible text (chars/400, capped at 1);
visible structure (elements/30, capped); assets resolve (1/(1+blocked+missing+broken images)).
"""

from __future__ import annotations

from aesenv.channels.base import Evidence
from aesenv.channels.execution import ExecutionChannel
from aesenv.channels.interactive import InteractiveChannel
from aesenv.channels.static import StaticChannel
from aesenv.judges import JUDGES
from aesenv.kinds.base import Kind, register_kind
from aesenv.render import Rendering, RenderStatus, RequestOutcome
from aesenv.tasks import Task
from aesenv.verifiers import VERIFIER_CHANNELS, requirement_potential


def structural_score(rendering: Rendering) -> float:
    """The cheap Φ of a page with no requirements (see the module docstring)."""
    if rendering.status is not RenderStatus.OK:
        return 0.0
    errors = len(rendering.page_errors) + sum(c.type == "error" for c in rendering.console)
    unresolved = sum(r.outcome in (RequestOutcome.BLOCKED, RequestOutcome.MISSING) for r in rendering.requests)
    checks = [1.0, 1.0 / (1 + errors), min(1.0, rendering.metrics.text_chars / 400),
              min(1.0, len(rendering.elements) / 30), 1.0 / (1 + unresolved + rendering.metrics.images_broken)]
    return round(sum(checks) / len(checks), 4)


def describe_rendering(r: Rendering) -> str:
    """A rendering as an agent reads it: status, size, DOM, errors, what did not load."""
    m = r.metrics
    tags = ", ".join(f"{t}×{n}" for t, n in sorted(m.tag_counts.items(), key=lambda kv: -kv[1])[:12])
    console = [f"  {c.type}: {c.text[:500]}" for c in r.console if c.type in ("error", "warning")][:20]
    unresolved = [f"  {q.outcome.value}: {q.url[:200]}" for q in r.requests
                  if q.outcome in (RequestOutcome.BLOCKED, RequestOutcome.MISSING)][:20]
    lines = [f"status: {r.status.value}" + (f" ({r.error})" if r.error else ""),
             f"title: {m.title!r}; document {m.doc_width:.0f}×{m.doc_height:.0f}px, viewport {r.viewport[0]}×{r.viewport[1]}",
             f"DOM: {m.node_count} nodes, {len(r.elements)} visible elements, {m.text_chars} characters of visible text; "
             f"tags: {tags or 'none'}",
             f"images: {m.images_total} ({m.images_broken} broken); canvases: {len(m.canvases)}",
             f"page errors ({len(r.page_errors)}):", *[f"  {e[:500]}" for e in r.page_errors[:20]],
             f"console errors/warnings ({len(console)}):", *console,
             f"blocked or missing requests ({len(unresolved)}):", *unresolved,
             "The screenshot of the first screen follows." if r.viewport_png else "No screenshot."]
    return "\n".join(lines)


class WebKind(Kind):
    name = "web"
    title = "Web"
    default_tasks = "builtin:web"
    system_prompt = ("You are an expert front-end developer and visual designer. Answer with one complete, "
                     "self-contained HTML document (inline CSS and JavaScript) in a single ```html code block. "
                     "It must render correctly in a browser without network access beyond well-known CDN "
                     "libraries, look polished, and make every interactive element work.")
    workspace_brief = ("a web page: the entry file is index.html; other files you write (CSS, JS, images) are "
                       "served next to it")
    channel_classes = (ExecutionChannel, StaticChannel, InteractiveChannel, *VERIFIER_CHANNELS)
    judges = JUDGES

    def live_for_potential(self, task: Task) -> bool:
        return bool(task.requirements or task.canvas)  # charts and tables are read from the open page

    async def potential(self, evidence: Evidence) -> float:
        value = await requirement_potential(evidence.task, evidence.rendering, evidence.live)
        return structural_score(evidence.rendering) if value is None else round(float(value), 4)

    def look_problem(self, evidence: Evidence) -> str:
        rendering = evidence.rendering
        if rendering.status is RenderStatus.INFRA_ERROR:
            return f"the renderer failed on our side ({rendering.error}); try again"
        return ""

    def describe(self, evidence: Evidence, budget_chars: int) -> str:
        return describe_rendering(evidence.rendering)

    def images(self, evidence: Evidence) -> list[bytes]:
        png = evidence.rendering.viewport_png if evidence.rendering else None
        return [png] if png else []

    def picture(self, evidence: Evidence) -> bytes | None:
        return evidence.rendering.full_page_png if evidence.rendering else None


WEB = register_kind(WebKind())
