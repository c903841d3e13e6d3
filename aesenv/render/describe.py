"""What a kind whose answer renders as a page shows of it: the structural Φ and the text an agent
reads about a rendering. The defaults of `Kind` (`aesenv.kinds.base`) use them.

Structural Φ, the mean of checks in [0, 1]: it rendered (status ok); no page/console errors
(1/(1+n)); visible text (chars/400, capped at 1); visible structure (elements/30, capped); assets
resolve (1/(1+blocked+missing+broken images)).
"""

from __future__ import annotations

from aesenv.quoting import inline
from aesenv.render.models import Rendering, RenderStatus, RequestOutcome


def _tag(name: str) -> str:
    """An HTML tag name as itself; a custom element's name (the page chose it) quoted."""
    return name if name.isascii() and name.isalnum() and len(name) <= 10 else inline(name, 40)


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
    """A rendering as an agent reads it: status, size, DOM, errors, what did not load. What the
    page wrote (its title, error and console messages, the URLs it asked for, its tag names) is
    quoted data (`aesenv.quoting`; the refine env's system prompt says what the quotes mean)."""
    m = r.metrics
    tags = ", ".join(f"{_tag(t)}×{n}" for t, n in sorted(m.tag_counts.items(), key=lambda kv: -kv[1])[:12])
    console = [f"  {c.type}: {inline(c.text, 500)}" for c in r.console if c.type in ("error", "warning")][:20]
    unresolved = [f"  {q.outcome.value}: {inline(q.url, 200)}" for q in r.requests
                  if q.outcome in (RequestOutcome.BLOCKED, RequestOutcome.MISSING)][:20]
    lines = [f"status: {r.status.value}" + (f" ({inline(r.error, 300)})" if r.error else ""),
             f"title: {inline(m.title, 200)}; document {m.doc_width:.0f}×{m.doc_height:.0f}px, viewport {r.viewport[0]}×{r.viewport[1]}",
             f"DOM: {m.node_count} nodes, {len(r.elements)} visible elements, {m.text_chars} characters of visible text; "
             f"tags: {tags or 'none'}",
             f"images: {m.images_total} ({m.images_broken} broken); canvases: {len(m.canvases)}",
             f"page errors ({len(r.page_errors)}):", *[f"  {inline(e, 500)}" for e in r.page_errors[:20]],
             f"console errors/warnings ({len(console)}):", *console,
             f"blocked or missing requests ({len(unresolved)}):", *unresolved,
             "The screenshot of the first screen follows." if r.viewport_png else "No screenshot."]
    return "\n".join(lines)
