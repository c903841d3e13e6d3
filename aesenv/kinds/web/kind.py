"""The `web` kind: one self-contained HTML page (AesCoder, OpenDesign), rendered in the hermetic
browser. Refine workspaces serve every other file next to `index.html` on the virtual origin.

Φ: the fraction of the task's checkable requirements the rendering satisfies
(`aesenv.kinds.web.verifiers.requirement_potential`, read on the open page so charts and tables count);
for a task without requirements, the structural score (`aesenv.render.describe`). What an agent is
shown of a result is the page default of `PageKind`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from aesenv.channels.base import Evidence
from aesenv.kinds.web.execution import ExecutionChannel
from aesenv.kinds.web.interactive import InteractiveChannel
from aesenv.kinds.web.static import StaticChannel
from aesenv.models import PAGE_JUDGE
from aesenv.kinds.base import Scoring
from aesenv.kinds.page import PAGE_ASKING, PageKind, PageReader
from aesenv.render.describe import structural_score
from aesenv.tasks import Task
from aesenv.kinds.web.verifiers import VERIFIER_CHANNELS, requirement_potential


def htmlhint_provenance(channels: dict[str, Any]) -> dict[str, str]:
    """The HTMLHint version the execution channel linted with, when it linted."""
    execution = channels.get(ExecutionChannel.name)
    version = execution.payload.get("htmlhint_version") if execution is not None else None
    return {"htmlhint": version} if version else {}


class WebReader(PageReader):
    """A page read as `PageReader` does, with Φ from the task's checkable requirements."""

    def live_for_potential(self, task: Task) -> bool:
        return bool(task.requirements or task.canvas)  # charts and tables are read from the open page

    async def potential(self, evidence: Evidence) -> float:
        value = await requirement_potential(evidence.task, evidence.rendering, evidence.live)
        return structural_score(evidence.rendering) if value is None else round(float(value), 4)


class WebKind(PageKind):
    name = "web"
    title = "Web"
    default_tasks = "builtin:web"
    asking = replace(
        PAGE_ASKING,
        system_prompt=("You are an expert front-end developer and visual designer. Answer with one complete, "
                       "self-contained HTML document (inline CSS and JavaScript) in a single ```html code block. "
                       "It must render correctly in a browser without network access beyond well-known CDN "
                       "libraries, look polished, and make every interactive element work."),
        workspace_brief=("a web page: the entry file is index.html; other files you write (CSS, JS, images) are "
                         "served next to it"))
    scoring = Scoring(
        judges=PAGE_JUDGE,
        channel_classes=(ExecutionChannel, StaticChannel, InteractiveChannel, *VERIFIER_CHANNELS),
        execution_channel=ExecutionChannel.name,
        default_channels=(ExecutionChannel.name, StaticChannel.name, InteractiveChannel.name),  # AesCoder's three
        rewards={"paper": "paper", "normalized": "normalized", "aescode": "aescode",
                 "aescode_channels": "aescode_channels"},
        provenance=htmlhint_provenance)
    reader = WebReader()


WEB = WebKind()
