"""HTMLHint behind a long-lived Node process, and the AesCoder execution rule set."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from importlib import resources
from pathlib import Path

from pydantic import BaseModel

from aesenv import paths

# AesCoder's execution agent: these rules must all pass for +1. Inline style/script, scripts
# in <head> and `!important` are explicitly allowed, so their rules stay off.
AESCODER_RULES: dict[str, bool] = {
    "doctype-html5": True,
    "tagname-lowercase": True,
    "attr-lowercase": True,
    "attr-value-double-quotes": True,
    "tag-pair": True,
    "tag-self-close": True,
    "id-unique": True,
    "alt-require": True,
    "html-lang-require": True,
    "meta-charset-require": True,
    "meta-charset-utf-8": True,
    "meta-viewport-require": True,
    "title-require": True,
    "inline-style-disabled": False,
    "inline-script-disabled": False,
    "head-script-disabled": False,
}


# Which of those rules keep their meaning on the DOM as the page's scripts left it, serialised by
# the browser (`aesenv/render/markup.js`), and why the others do not: the serialiser writes the
# syntax itself, so a syntactic rule would judge Chromium's writing, not the answer's. The semantic
# rules (a document's doctype, language, charset, viewport and title; an image's text alternative;
# unique ids) say the same of the DOM as of the source, and there they also see what scripts wrote.
SOURCE_ONLY: dict[str, str] = {
    "tagname-lowercase": "the serialiser writes every HTML tag name in lower case: only the source's spelling "
                         "can break it",
    "attr-lowercase": "the serialiser writes every HTML attribute name in lower case: only the source's "
                      "spelling can break it",
    "attr-value-double-quotes": "the serialiser double-quotes every attribute value",
    "tag-pair": "the serialiser closes every element it opens",
    "tag-self-close": "the serialiser never self-closes a void element: on serialised markup this rule fails "
                      "every page",
}
# The rule set for the serialised DOM: AesCoder's, less the source-only rules, with ids counted per
# tree as the DOM scopes them (each shadow root and template content is a tree of its own; see
# `id-unique` in htmlhint_server.js).
DOM_RULES: dict[str, bool | str] = {
    **{rule: on and rule not in SOURCE_ONLY for rule, on in AESCODER_RULES.items()},
    "id-unique": "per-tree",
}


class LintMessage(BaseModel):
    rule: str
    type: str
    message: str
    line: int = 0
    col: int = 0
    evidence: str = ""


# The rule name of the one message a page gets when HTMLHint could not lint it at all.
LINT_FAILURE_RULE = "lint-failure"


class LintResult(BaseModel):
    messages: list[LintMessage]
    version: str
    # Set when the page made HTMLHint throw, hang or die (twice, on fresh processes): the page's own
    # lint failure, never ours; `messages` then holds one `lint-failure` message with this reason.
    failure: str | None = None

    @classmethod
    def page_failure(cls, reason: str, version: str) -> "LintResult":
        return cls(messages=[LintMessage(rule=LINT_FAILURE_RULE, type="error", message=reason)],
                   version=version, failure=reason)


class HtmlHintUnavailable(RuntimeError):
    """Our side failed (no Node, no HTMLHint, a linter that cannot lint even a known page)."""


def htmlhint_module_dir() -> Path:
    return paths.node_dir() / "node_modules" / "htmlhint"


# A page HTMLHint lints in milliseconds: when a page failed twice, this tells whether the linter
# itself still works (then the page is to blame) or not (then we are).
_CANARY = ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>t</title></head>'
           '<body><p>ok</p></body></html>\n')


class _Stalled(Exception):
    """One attempt got no answer: the process hung past the deadline, died, or closed its pipe."""


class HtmlHint:
    """One Node process serving HTMLHint requests; restarted if it dies or stalls.

    Whatever a page does to the linter is the page's lint failure (a result with `failure` set, which
    the execution channel scores −1), never an exception: an exception inside a rule is reported by
    the server, and a hang or a crash is retried once on a fresh process -- the same page failing
    again while a known page still lints is the page's doing. Only our side failing raises
    `HtmlHintUnavailable` (the channel's `infra_error`).
    """

    def __init__(self, rules: dict[str, bool] | None = None, timeout_s: float = 10.0,
                 start_timeout_s: float = 30.0) -> None:
        self.rules = dict(AESCODER_RULES if rules is None else rules)
        self.timeout_s = timeout_s
        self.start_timeout_s = start_timeout_s
        self.version = ""
        self._proc: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self._next_id = 0

    async def _start(self) -> asyncio.subprocess.Process:
        node = shutil.which("node")
        if not node:
            raise HtmlHintUnavailable("node not found: install Node.js, then run `aesenv setup`")
        if not htmlhint_module_dir().is_dir():
            raise HtmlHintUnavailable(f"HTMLHint is not installed under {paths.node_dir()}: run `aesenv setup`")
        script = resources.files("aesenv.lint") / "htmlhint_server.js"
        proc = await asyncio.create_subprocess_exec(
            node, str(script), json.dumps(self.rules),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env={"NODE_PATH": str(paths.node_dir() / "node_modules"), "PATH": "/usr/bin:/bin"},
            limit=32 * 1024 * 1024)
        assert proc.stdout
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), self.start_timeout_s)
            ready = json.loads(line) if line else {"ready": False, "error": "exited while starting"}
        except (asyncio.TimeoutError, ValueError) as exc:
            ready = {"ready": False, "error": f"no ready line ({type(exc).__name__})"}
        if not ready.get("ready"):
            self._proc = proc
            await self._kill()
            raise HtmlHintUnavailable(f"HTMLHint server did not start: {ready.get('error')}")
        self.version = str(ready.get("version", ""))
        return proc

    @property
    def deadline_s(self) -> float:
        """The longest one `lint` can take once it holds the shared process: one attempt there, then
        a retry and a canary on a private process that may need starting."""
        return self.timeout_s + 2 * (self.start_timeout_s + self.timeout_s)

    async def lint(self, html: str, rules: dict[str, bool | str] | None = None) -> LintResult:
        """Lint `html` with this linter's rule set, or with `rules` (another of ours, e.g. `DOM_RULES`)."""
        async with self._lock:
            try:
                return await self._attempt(html, rules)
            except _Stalled:
                pass  # maybe ours (a process killed under us), maybe the page's: try once more, fresh
        # The retry runs on a private process, off the shared one: a page that hangs the linter
        # holds the other answers up for one deadline, not three.
        private = HtmlHint(self.rules, self.timeout_s, self.start_timeout_s)
        try:
            try:
                return await private._attempt(html, rules)
            except _Stalled as again:
                reason = str(again)
            try:
                await private._attempt(_CANARY)
            except _Stalled as canary:
                raise HtmlHintUnavailable(f"HTMLHint fails on a known page too ({canary}); "
                                          f"this page: {reason}") from canary
        finally:
            await private.close()
        return LintResult.page_failure(f"HTMLHint could not lint this page: {reason} "
                                       f"(twice, each on a fresh process)", private.version or self.version)

    async def _attempt(self, html: str, rules: dict[str, bool | str] | None = None) -> LintResult:
        if self._proc is None or self._proc.returncode is not None:
            self._proc = await self._start()
        self._next_id += 1
        request_id = self._next_id
        asked: dict = {"id": request_id, "html": html}
        if rules is not None:
            asked["rules"] = rules
        request = json.dumps(asked) + "\n"
        try:
            assert self._proc.stdin and self._proc.stdout
            self._proc.stdin.write(request.encode("utf-8", "surrogatepass"))
            await asyncio.wait_for(self._proc.stdin.drain(), self.timeout_s)
            line = await asyncio.wait_for(self._proc.stdout.readline(), self.timeout_s)
        except asyncio.TimeoutError as exc:
            await self._kill()
            raise _Stalled(f"no answer in {self.timeout_s:g}s") from exc
        except (BrokenPipeError, ConnectionResetError, ValueError) as exc:
            await self._kill()
            raise _Stalled(f"the linter process broke ({type(exc).__name__})") from exc
        if not line:
            await self._kill()
            raise _Stalled("the linter process exited")
        try:
            answer = json.loads(line)
        except ValueError as exc:
            await self._kill()
            raise _Stalled("the linter answered something that is not JSON") from exc
        if answer.get("id") != request_id:
            await self._kill()
            raise _Stalled(f"answer for request {answer.get('id')!r}, expected {request_id}")
        if answer.get("error"):
            raise HtmlHintUnavailable(f"HTMLHint could not read our request: {answer['error']}")
        version = str(answer.get("version") or self.version)
        if answer.get("failure"):
            return LintResult.page_failure(f"HTMLHint threw on this page: {answer['failure']}", version)
        return LintResult(messages=[LintMessage(**m) for m in answer["messages"]], version=version)

    async def _kill(self) -> None:
        if self._proc and self._proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._proc.kill()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._proc.wait(), 5)
        self._proc = None

    async def close(self) -> None:
        if self._proc and self._proc.stdin:
            with contextlib.suppress(Exception):
                self._proc.stdin.close()
        await self._kill()
