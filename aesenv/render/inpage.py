"""Our scripts inside the page, and the natives they read the page through.

Every script we run in a page (the snapshot, the mobile probe, the labeler, the actor's probes)
is written as `(N, arg) => ...`, where `N` is the set of DOM and JavaScript built-ins of
`natives.js`: captured by the renderer's prelude before any script of the page ran, so nothing
the page declares, patches or names in its markup changes what our scripts read (see
`natives.js`). `in_page` turns such a script into the one-argument function Playwright's
`evaluate` takes; on a page without the prelude the natives are taken at call time instead.
Its argument and its answer cross as JSON strings (`ask`): Playwright's own serialization of
objects, both ways, looks names up in the page, and a page's global `class Map` breaks it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from playwright.async_api import Page

KEY = "__aesenv__"
NATIVES_JS = (resources.files("aesenv.render") / "natives.js").read_text()
NATIVES = f"(window.{KEY} || ({NATIVES_JS})(window))"


# What a script of ours answers on a document the prelude never ran in: it is sent again with
# the natives' source, which it then runs first (12 KB more to send and parse on every call).
NO_NATIVES = "\u0000aesenv: no natives"
_KEPT_NATIVES = f"(window.{KEY})"


def in_page(script: str) -> str:
    """`(json) => script(N, arg)`, answering in JSON: a script of ours as `page.evaluate` runs
    it, given `to_page(arg)`. It reads the natives the prelude kept; `run` resends it with
    their source where there are none."""
    return f"(arg) => ((N) => N ? N.reply(({script})(N, N.parse(arg))) : {json.dumps(NO_NATIVES)}){_KEPT_NATIVES}"


def _taking_natives(script: str) -> str:
    """An `in_page` script that takes the natives at call time when none were kept."""
    return script[: -len(_KEPT_NATIVES)] + f"({NATIVES})"


async def run(evaluate: Callable[[str, str], Awaitable[Any]], script: str, arg: Any = None) -> Any:
    """Run an `in_page` script through `evaluate(script, json_arg)` and return its answer."""
    answer = await evaluate(script, to_page(arg))
    if answer == NO_NATIVES:
        answer = await evaluate(_taking_natives(script), to_page(arg))
    return from_page(answer)


def to_page(arg: Any) -> str:
    """The argument of an `in_page` script, as it crosses."""
    return json.dumps(arg)


def from_page(answer: Any) -> Any:
    """What an `in_page` script returned (None for nothing)."""
    return json.loads(answer) if isinstance(answer, str) else None


async def ask(page: Page, script: str, arg: Any = None) -> Any:
    """Run an `in_page` script on `page` (unbounded: callers bound it) and return its answer."""
    return await run(page.evaluate, script, arg)


def install_natives() -> str:
    """The prelude's first statement: keep the natives where our scripts find them, on a
    property of `window` the page cannot replace, delete or shadow."""
    return f"Object.defineProperty(window, {KEY!r}, {{ value: ({NATIVES_JS})(window) }});"
