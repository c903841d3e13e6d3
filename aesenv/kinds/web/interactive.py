"""Interactive-aesthetics agent: act on the live page, score each interaction 0/1.

The agent is the offline explorer by default and the VLM web agent with `openai:<model>`
(see `aesenv.interact`). `raw` is the paper's unit, the count of interactions that worked (at
most N); `score` is count / N. A page with nothing to interact with fails (0) where the category
promises interaction (games, UI components, websites) and is not applicable where a static page
is a legitimate answer (charts, 3D scenes): masked there, a static chart is left out of the
channel's group statistics (GDPO) instead of counted as a failed interaction. "Nothing" means no
interaction was scored: none was found, or the VLM agent chose none. A page that crashed, hung
or broke our calls with its own scripts (`PageFault`: see `aesenv.render.live`) has failed; a
browser or judge failure on our side is an infra error (masked), never a 0.
"""

from __future__ import annotations

import logging
from typing import Any

from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, ConfigDict, Field

from aesenv.channels.base import Channel, ChannelContext, ChannelResult, ChannelStatus, Need
from aesenv.interact.agents import Interactor, interactor_for, make_interactor
from aesenv.kinds.page import PageEvidence
from aesenv.llm.client import ClientConfig, ModelError
from aesenv.render.inpage import WorldScriptError
from aesenv.render.live import PageFault
from aesenv.specs import parse_spec
from aesenv.tasks import Category

log = logging.getLogger(__name__)

INTERACTION_EXPECTED = frozenset({Category.GAME_DEV, Category.UI_COMPONENT, Category.WEBSITE})
# The share of the channel's deadline that the agent's calls on the page may take in all
# (`LivePage.page_time`); the rest is the agent's own work around them (pixel diffs, thumbnails).
# A page that makes every call slow fails its remaining interactions before the deadline, whose
# expiry is ours to answer for (masked).
PAGE_TIME_SHARE = 2 / 3


def _thrown_since(rendering: Any, live: Any) -> list[str]:
    """The uncaught errors the page threw while the agent used it (the render's own are in the
    record's rendering), so a record shows the page's faults next to the verdicts they cost."""
    return [e[:300] for e in live.page_errors[len(rendering.page_errors):]][:20]


class InteractiveOptions(BaseModel):
    """The interactive channel's settings (`InteractiveChannel.config_options` fills them from the
    config's `interactor`, `interactor_options` and `interaction_budget`): the agent's spec, its
    client options, and N, the interactions scored per page."""

    model_config = ConfigDict(extra="forbid")
    agent: str = "offline"
    agent_options: dict[str, Any] = Field(default_factory=dict)
    budget: int = Field(default=3, ge=1)


class InteractiveChannel(Channel):
    name = "interactive"
    needs = frozenset({Need.ARTIFACT, Need.RENDERING, Need.LIVE_PAGE})

    Options = InteractiveOptions

    def __init__(self, options: InteractiveOptions | None = None, agent: Interactor | None = None, *,
                 timeout_s: float = 60.0) -> None:
        if agent is None:
            options = options or InteractiveOptions()
            agent = make_interactor(options.agent, options.budget, **options.agent_options)
        self.agent = agent
        # The agent's own calls (a VLM agent's model calls, with every retry), then the page's time.
        self.page_time_s = PAGE_TIME_SHARE * timeout_s
        self.deadline_s = (getattr(agent, "deadline_s", None) or 0.0) + timeout_s

    @classmethod
    def config_options(cls, config: Any) -> dict[str, Any]:
        """The agent: the one the config names, else the judge's kind when it can act. An agent
        that follows a VLM judge also takes the judge's client settings (base URL, key variable,
        timeouts), so `--judge-base-url` reaches both."""
        spec = interactor_for(config.judge, config.interactor)
        if parse_spec(spec)[0] == "offline":
            return {"agent": spec, "budget": config.interaction_budget}
        options = dict(config.interactor_options)
        if config.interactor is None:
            inherited = {k: v for k, v in config.judge_options.items() if k in ClientConfig.model_fields}
            options = {**inherited, **options}
        return {"agent": spec, "budget": config.interaction_budget, "agent_options": options}

    @classmethod
    def from_context(cls, context: ChannelContext) -> "InteractiveChannel":
        return cls(cls.options_of(context), timeout_s=context.timeout_s)

    async def close(self) -> None:
        close_agent = getattr(self.agent, "close", None)  # a VLM agent holds an HTTP client
        if close_agent is not None:
            await close_agent()

    async def measure(self, evidence: PageEvidence) -> ChannelResult:
        rendering, live = evidence.rendering, evidence.live
        try:
            with live.page_time(self.page_time_s):
                report = await self.agent.explore(live, evidence.task)
        except ModelError as exc:
            return ChannelResult.infra_error(f"interaction agent {self.agent.name} failed: {exc}")
        except PageFault as exc:  # an agent that does not end its episode on one itself
            return self.failed(f"{exc.stop}: {exc}", agent=self.agent.name, page_errors=_thrown_since(rendering, live))
        except WorldScriptError as exc:  # a script of ours broke in our own world
            log.warning("interaction failed on our side: %s", exc)
            return ChannelResult.infra_error(f"our page script failed during interaction: {exc}")
        except PlaywrightError as exc:
            if live.trace.crashed:
                return self.failed("the page crashed while it was being used", agent=self.agent.name)
            log.warning("interaction failed on our side: %s", exc)
            return ChannelResult.infra_error(f"browser error during interaction: {str(exc).splitlines()[0]}")
        payload = {"agent": report.agent, "budget": report.budget, "labeled": report.labeled,
                   "plan": report.plan, "stopped": report.stopped, "scored": len(report.scored),
                   "steps": [s.model_dump(mode="json", exclude_none=True) for s in report.steps],
                   "page_errors": _thrown_since(rendering, live)}
        if report.usage:
            payload["usage"] = report.usage
        if not report.scored:
            category = evidence.task.category
            if category not in INTERACTION_EXPECTED:
                return ChannelResult.not_applicable(f"no interaction to score on a {category.value} page")
            return self.failed(f"no interaction to score ({report.labeled} elements labeled, {report.stopped}), and "
                           f"a {category.value} page is expected to respond", **payload)
        raw = report.raw
        status = ChannelStatus.OK if raw > 0 else ChannelStatus.FAILED
        if raw == 0:
            payload["reason"] = "no interaction worked"
        return ChannelResult(status=status, raw=float(raw), score=round(raw / report.budget, 6), payload=payload)
