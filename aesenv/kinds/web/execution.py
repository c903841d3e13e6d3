"""Execution agent (AesCoder): the page passes the HTMLHint rule set (+1) or not (−1).

AesCoder lints the answer's source. A script can write markup the source does not hold
(`document.write`, `innerHTML`, `appendChild`), so by default the DOM the page's scripts left
(serialised by the renderer from our own world, `Rendering.markup`) is linted too, with the rules
that keep their meaning on serialised markup (`DOM_RULES`), and the page passes only when both
pass. `dom_lint: false` (the paper's config) scores the source alone; the record carries both
results either way, so a paper run shows the gap.

The answer cannot configure this check: HTMLHint's inline config comments have no effect, in the
source or in the DOM, and a page that makes the linter throw, hang or die fails the lint (−1,
reason in `lint_failure`). A page with no DOM to lint because of itself (it crashed or hung before
its markup was read, or left a DOM over the bound) fails the DOM lint; only when we have no DOM
(nothing rendered, the render failed on our side) is the DOM lint skipped, with a note. Only our
linter being unavailable is `infra_error`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from aesenv.channels.base import Channel, ChannelContext, ChannelResult, ChannelStatus, Evidence
from aesenv.lint.htmlhint import DOM_RULES, HtmlHint, HtmlHintUnavailable, LintResult
from aesenv.render.models import Rendering, RenderStatus

KEPT_VIOLATIONS = 50  # per record; the counts by rule are complete
KEPT_DOM_VIOLATIONS = 20


class ExecutionOptions(BaseModel):
    """`PipelineConfig.channel_options["execution"]`."""

    model_config = ConfigDict(extra="forbid")
    # Ours, on by default and off in the paper's config: the DOM the page's scripts left must pass
    # too. Off, it is still linted and recorded, and does not count.
    dom_lint: bool = True


@dataclass(frozen=True)
class _Part:
    """One lint of the answer (its source, or its DOM): the result, or why it was left out."""

    result: LintResult | None = None
    skipped: str = ""

    @property
    def passed(self) -> bool:
        return self.result is not None and not self.result.messages

    def violations(self, where: str) -> list[dict]:
        return [{**m.model_dump(), "in": where} for m in self.result.messages] if self.result else []

    def by_rule(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for message in self.result.messages if self.result else []:
            counts[message.rule] = counts.get(message.rule, 0) + 1
        return counts

    def summary(self, where: str, kept: int) -> dict:
        if self.result is None:
            return {"skipped": self.skipped}
        out: dict = {"passed": self.passed, "violations_by_rule": self.by_rule()}
        if kept:
            out["violations"] = self.violations(where)[:kept]
        if self.result.failure:
            out["lint_failure"] = self.result.failure
        return out


def _no_dom(rendering: Rendering | None, version: str) -> _Part | None:
    """Why there is no DOM to lint (None when there is one). The page's lint failure when the page
    crashed or hung before its markup was read, or left a DOM that could not be serialised within
    the bound; left out (a note) when we have no rendering."""
    if rendering is None or rendering.status is RenderStatus.INFRA_ERROR:
        why = rendering.error if rendering is not None else "not rendered"
        return _Part(skipped=f"no DOM to lint: the render failed on our side ({why})")
    markup = rendering.markup
    if markup is None:
        how = {RenderStatus.CRASHED: "crashed", RenderStatus.TIMEOUT: "hung"}.get(rendering.status, "failed")
        reason = f"the page {how} before its DOM could be read: {rendering.error or 'no markup'}"
    elif markup.problem:
        reason = markup.problem
    else:
        return None
    return _Part(LintResult.page_failure(reason, version))


class ExecutionChannel(Channel):
    name = "execution"
    failure_raw = -1.0
    Options = ExecutionOptions

    def __init__(self, linter: HtmlHint, options: ExecutionOptions | None = None, *, owns_linter: bool = False) -> None:
        self.linter = linter
        self.owns_linter = owns_linter  # made for this channel (no pipeline handed one): closed with it
        self.options = options or ExecutionOptions()
        # A page that hangs the linter is retried on a fresh process before it is failed, for its
        # source and for its DOM: the pipeline must let both finish rather than void the sample.
        deadline = getattr(linter, "deadline_s", None)
        self.deadline_s = 2 * deadline if deadline is not None else None

    @classmethod
    def from_context(cls, context: ChannelContext) -> "ExecutionChannel":
        """The pipeline's linter when it was handed one, else one of its own: only a kind that
        lints starts HTMLHint."""
        if context.linter is not None:
            return cls(context.linter, cls.options_of(context))
        return cls(HtmlHint(), cls.options_of(context), owns_linter=True)

    async def close(self) -> None:
        if self.owns_linter:
            await self.linter.close()

    async def measure(self, evidence: Evidence) -> ChannelResult:
        artifact = evidence.artifact
        rendering = getattr(evidence, "rendering", None)
        try:
            source = _Part(await self.linter.lint(artifact.code))
            dom = (_no_dom(rendering, source.result.version)
                   or _Part(await self.linter.lint(rendering.markup.html, DOM_RULES)))
        except HtmlHintUnavailable as exc:
            return ChannelResult.infra_error(str(exc))
        scored = [("source", source)] + ([("dom", dom)] if self.options.dom_lint and dom.result else [])
        passed = all(part.passed for _, part in scored)
        # By rule, over the parts scored: a fault in the source is in the DOM too, so a rule counts
        # its larger count, not their sum.
        by_rule: dict[str, int] = {}
        for _, part in scored:
            for rule, n in part.by_rule().items():
                by_rule[rule] = max(by_rule.get(rule, 0), n)
        payload = {
            "passed": passed,
            "scored_on": [where for where, _ in scored],
            "violations": [v for where, part in scored for v in part.violations(where)][:KEPT_VIOLATIONS],
            "violations_by_rule": by_rule,
            "rules": sorted(rule for rule, on in self.linter.rules.items() if on),
            "dom_rules": sorted(rule for rule, on in DOM_RULES.items() if on),
            "source": source.summary("source", 0),  # its violations are those above: it is always scored
            "dom": dom.summary("dom", KEPT_DOM_VIOLATIONS),
            "htmlhint_version": source.result.version,
        }
        if source.result.failure:
            payload["lint_failure"] = source.result.failure
        if rendering is not None and rendering.markup is not None:
            payload["dom"].update(chars=rendering.markup.chars, shadow_roots=rendering.markup.shadow_roots)
        if artifact.truncated:
            payload["truncated"] = True
        if rendering is not None:
            payload["page_errors"] = rendering.page_errors[:10]
        return ChannelResult(status=ChannelStatus.OK if passed else ChannelStatus.FAILED,
                             score=1.0 if passed else 0.0, raw=1.0 if passed else -1.0, payload=payload)
