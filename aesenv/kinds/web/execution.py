"""Execution agent (AesCoder): the page passes the HTMLHint rule set (+1) or not (−1).

The answer cannot configure this check: HTMLHint's inline config comments have no effect, and a page
that makes the linter throw, hang or die fails the lint (−1, reason in `lint_failure`); only our
linter being unavailable is `infra_error`.
"""

from __future__ import annotations

from aesenv.channels.base import Channel, ChannelContext, ChannelResult, ChannelStatus, Evidence
from aesenv.lint.htmlhint import HtmlHint, HtmlHintUnavailable


class ExecutionChannel(Channel):
    name = "execution"
    failure_raw = -1.0

    def __init__(self, linter: HtmlHint) -> None:
        self.linter = linter
        # A page that hangs the linter is retried on a fresh process before it is failed: the
        # pipeline must let that finish rather than void the sample as a timeout.
        self.deadline_s = getattr(linter, "deadline_s", None)

    @classmethod
    def from_context(cls, context: ChannelContext) -> "ExecutionChannel":
        cls.options_of(context)
        return cls(context.linter)

    async def measure(self, evidence: Evidence) -> ChannelResult:
        artifact = evidence.artifact
        try:
            result = await self.linter.lint(artifact.code)
        except HtmlHintUnavailable as exc:
            return ChannelResult.infra_error(str(exc))
        violations = [m.model_dump() for m in result.messages]
        passed = not violations
        by_rule: dict[str, int] = {}
        for v in violations:
            by_rule[v["rule"]] = by_rule.get(v["rule"], 0) + 1
        payload = {
            "passed": passed,
            "violations": violations[:50],
            "violations_by_rule": by_rule,
            "rules": sorted(rule for rule, on in self.linter.rules.items() if on),
            "htmlhint_version": result.version,
        }
        if result.failure:
            payload["lint_failure"] = result.failure
        if artifact.truncated:
            payload["truncated"] = True
        if evidence.rendering is not None:
            payload["page_errors"] = evidence.rendering.page_errors[:10]
        return ChannelResult(status=ChannelStatus.OK if passed else ChannelStatus.FAILED,
                             score=1.0 if passed else 0.0, raw=1.0 if passed else -1.0, payload=payload)
