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


class LintMessage(BaseModel):
    rule: str
    type: str
    message: str
    line: int = 0
    col: int = 0
    evidence: str = ""


class LintResult(BaseModel):
    messages: list[LintMessage]
    version: str


class HtmlHintUnavailable(RuntimeError):
    pass


def htmlhint_module_dir() -> Path:
    return paths.node_dir() / "node_modules" / "htmlhint"


class HtmlHint:
    """One Node process serving HTMLHint requests; restarted if it dies or stalls."""

    def __init__(self, rules: dict[str, bool] | None = None, timeout_s: float = 10.0) -> None:
        self.rules = dict(AESCODER_RULES if rules is None else rules)
        self.timeout_s = timeout_s
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
        return await asyncio.create_subprocess_exec(
            node, str(script), json.dumps(self.rules),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env={"NODE_PATH": str(paths.node_dir() / "node_modules"), "PATH": "/usr/bin:/bin"},
            limit=32 * 1024 * 1024)

    async def lint(self, html: str) -> LintResult:
        async with self._lock:
            if self._proc is None or self._proc.returncode is not None:
                self._proc = await self._start()
            self._next_id += 1
            request = json.dumps({"id": self._next_id, "html": html}) + "\n"
            try:
                assert self._proc.stdin and self._proc.stdout
                self._proc.stdin.write(request.encode("utf-8", "surrogatepass"))
                await asyncio.wait_for(self._proc.stdin.drain(), self.timeout_s)
                line = await asyncio.wait_for(self._proc.stdout.readline(), self.timeout_s)
            except (asyncio.TimeoutError, BrokenPipeError, ConnectionResetError) as exc:
                await self._kill()
                raise HtmlHintUnavailable(f"HTMLHint did not answer in {self.timeout_s}s ({type(exc).__name__})") from exc
            if not line:
                await self._kill()
                raise HtmlHintUnavailable("HTMLHint process exited")
            answer = json.loads(line)
            if answer.get("error"):
                raise HtmlHintUnavailable(f"HTMLHint failed: {answer['error']}")
            return LintResult(messages=[LintMessage(**m) for m in answer["messages"]], version=answer["version"])

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
