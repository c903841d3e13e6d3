"""What a kind whose answer renders as a page shows of it: the structural Φ and the text an agent
reads about a rendering. The defaults of `Kind` (`aesenv.kinds.base`) use them.

Structural Φ, the mean of checks in [0, 1]: it rendered (status ok); no page/console errors
(1/(1+n)); visible text (chars/400, capped at 1); visible structure (elements/30, capped); assets
resolve (1/(1+blocked+missing+broken images)).
"""

from __future__ import annotations

from aesenv.render import Rendering, RenderStatus, RequestOutcome


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
