"""Where our scripts run in a page: measurements in our own isolated world, control in the page's.

A page is an adversary of its measurement: in its own (main) world it can replace `eval` (which
Playwright's `page.evaluate` goes through), put a `toJSON` on `Object.prototype`, patch
`getBoundingClientRect`, or declare `class Map`. So every script that *measures* a page (the
snapshot, the labels, the verifiers' probes, the census, acceptance) runs in a `World`: an
isolated JavaScript world of ours in the page's top frame (CDP `Page.createIsolatedWorld`). It
shares the page's DOM and layout but none of its globals or prototypes, and its answer crosses
as a JSON string our world made, returned by value through the protocol: nothing the page
declares can produce, serialise or await it. The natives (`natives.js`) are still read through
getters taken from the prototypes, because DOM named properties cross worlds (`<input name=id>`
is `form.id` in every world); and `seen.js`, the one definition of what a person sees, rides on
them as `N.seen`.

What only the page's world holds (the prelude's frame count, its note of canvas contexts, its
hold on animation frames and resize listeners, whether the document is leaving) is read and set
by *control* scripts (`control`): they run in the main world on the natives the prelude kept,
and what they return is a claim of the page's, validated and never counted as evidence on its
own. An exception out of a control script is the page's doing (it is the page's world); one out
of a world script is ours.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from importlib import resources
from typing import Any

from playwright.async_api import Error as PlaywrightError, Page

KEY = "__aesenv__"
NATIVES_JS = (resources.files("aesenv.render") / "natives.js").read_text()
SEEN_JS = (resources.files("aesenv.render") / "seen.js").read_text()
COUNTERFACTUAL_JS = (resources.files("aesenv.render") / "counterfactual.js").read_text()
NATIVES = f"(window.{KEY} || ({NATIVES_JS})(window))"
WORLD_NAME = "aesenv"

# Installs the natives, `seen` and the counterfactual's page half (`cf`) in a fresh world of ours
# (once per document). `store` is what our world keeps about this document: the closed shadow roots
# the protocol handed us (host -> root), what the counterfactual measures (items, text nodes) and
# its verdicts, which every later `seen` pass honours.
_INSTALL = f"""function () {{
  if (!globalThis.{KEY}) {{
    const store = {{ closed: new WeakMap(), text: new WeakMap(), elements: new WeakMap(), items: [], nodes: [] }};
    const N = {{ ...({NATIVES_JS})(globalThis), store }};
    // A verdict holds for what it was measured on: a text node's verdict while its text is the same,
    // an element's while its box and the length of its text are (a button relabelled by a click, a
    // box filled with results later is measured again, or read by the first filter alone).
    const keyOf = (el) => {{
      const r = N.box(el), round = N.math.round;
      const v = N.style(el)("position") === "fixed" ? {{ scrollX: 0, scrollY: 0 }} : N.viewport();
      return [round(r.left + v.scrollX), round(r.top + v.scrollY), round(r.width), round(r.height),
              (N.text(el) || "").length].join(",");
    }};
    store.keepText = (node, stretches) => store.text.set(node, {{ data: N.text(node) || "", stretches }});
    store.keepElement = (el, shown) => store.elements.set(el, {{ key: keyOf(el), shown }});
    store.textVerdict = (node) => {{ const v = store.text.get(node); return v && v.data === (N.text(node) || "") ? v.stretches : undefined; }};
    store.elementVerdict = (el) => {{ const v = store.elements.get(el); return v && v.key === keyOf(el) ? v.shown : undefined; }};
    const seen = ({SEEN_JS})({{ ...N }});
    Object.defineProperty(globalThis, {KEY!r}, {{ value: Object.freeze({{ ...N, seen, cf: ({COUNTERFACTUAL_JS})(N, seen) }}) }});
  }}
  return true;
}}"""


# Closed shadow roots handed to our world per document, at most (a page that makes more has them
# measured no further: what is in them is not shown).
MAX_CLOSED_ROOTS = 200
_KEEP_CLOSED = f"function (_, host, root) {{ globalThis.{KEY}.store.closed.set(host, root); return true; }}"
MAX_PIERCED_ELEMENTS = 20_000
_ELEMENT_COUNT = f"function () {{ const N = globalThis.{KEY}; return N.all(N.document, '*').length; }}"


class WorldScriptError(RuntimeError):
    """A script of ours threw in our own world: our bug, never the page's fault."""


def in_page(script: str) -> str:
    """A measuring script `(N, arg) => ...` as our world runs it: given the argument as JSON,
    it answers in JSON (awaited first when it returns a promise)."""
    return f"function (arg) {{ const N = globalThis.{KEY}; return N.reply(({script})(N, N.parse(arg))); }}"


def control(script: str) -> str:
    """A control script `(N, arg) => ...` as the page's own world runs it, on the natives the
    prelude kept there (null on a document without them). Its answer is the page's claim."""
    return f"(arg) => ((N) => N ? N.reply(({script})(N, N.parse(arg))) : null)(window.{KEY})"


class World:
    """Our isolated world in a page's top frame, made on first use and again for each new
    document (a navigation destroys it: the call that finds it gone raises `lost_its_document`'s
    error, and the next call makes a fresh one)."""

    def __init__(self, cdp: Any) -> None:
        self.cdp = cdp
        self._context: int | None = None
        self._frame: str | None = None
        # One call of ours on the page at a time: a taking-away (`aesenv.render.counterfactual`)
        # freezes the page, hides content and restores it, and no other channel probing the same
        # live page may read it meanwhile (`LivePage` takes this around every call).
        self.turn = asyncio.Lock()

    async def context(self) -> int:
        if self._context is None:
            if self._frame is None:
                tree = await self.cdp.send("Page.getFrameTree")
                self._frame = tree["frameTree"]["frame"]["id"]
            made = await self.cdp.send("Page.createIsolatedWorld", {
                "frameId": self._frame, "worldName": WORLD_NAME, "grantUniveralAccess": False})
            context = made["executionContextId"]
            await self._call(context, _INSTALL, [])
            self._context = context
        return self._context

    def forget(self) -> None:
        self._context = None

    async def _call(self, context: int, function: str, arguments: list[dict], *, by_value: bool = True,
                    group: str = WORLD_NAME) -> Any:
        """The function's answer: its value (JSON-able), or with `by_value` off its protocol object id."""
        try:
            answer = await self.cdp.send("Runtime.callFunctionOn", {
                "functionDeclaration": function, "executionContextId": context, "arguments": arguments,
                "returnByValue": by_value, "awaitPromise": True, "objectGroup": group})
        except PlaywrightError as exc:
            if "Cannot find context" in exc.message or "context was destroyed" in exc.message:
                self.forget()
            raise
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            with_text = (details.get("exception") or {}).get("description") or details.get("text", "")
            raise WorldScriptError(f"our page script threw: {str(with_text)[:500]}")
        return answer.get("result", {}).get("value" if by_value else "objectId")

    async def evaluate(self, function: str, arg: Any = None, more: Sequence[dict] = ()) -> Any:
        """Run `function(arg, ...more)` in our world; `arg` and the answer cross by value (JSON),
        `more` are further protocol arguments (objects of this world, by `objectId`)."""
        return await self._call(await self.context(), function, [{"value": arg}, *more])

    async def ask(self, script: str, arg: Any = None, more: Sequence[dict] = ()) -> Any:
        """Run an `in_page` script and return its answer, read from JSON."""
        return from_page(await self.evaluate(script, to_page(arg), more))

    async def adopt_closed_shadow_roots(self) -> int:
        """Hand our world the page's closed shadow roots (host -> root, in `N.store.closed`), which
        no script can reach from the host: the protocol's DOM tree pierces them. Every walk of
        ours then enters them like open ones. Returns how many there were (-1: not searched, a
        document of more than `MAX_PIERCED_ELEMENTS`, whose whole tree costs seconds to hand over;
        what such a page keeps in closed roots is not walked, so not shown).

        The protocol's DOM agent, which asking for the tree switches on, is switched off again
        once the roots are ours: left on, it tracks every node it handed over and reports each
        change to one (the counterfactual's taking-away writes and removes an attribute on every
        element it takes away: kanban_board's 151 elements, 302 events through the driver to us)."""
        if (await self.evaluate(_ELEMENT_COUNT) or 0) > MAX_PIERCED_ELEMENTS:
            return -1
        tree = await self.cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})
        pairs, stack = [], [tree.get("root", {})]
        while stack:
            node = stack.pop()
            for shadow in node.get("shadowRoots") or []:
                if shadow.get("shadowRootType") == "closed":
                    pairs.append((node["backendNodeId"], shadow["backendNodeId"]))
                stack.append(shadow)
            stack.extend(node.get("children") or [])  # (a frame's document is not ours to walk)
        for host, root in pairs[:MAX_CLOSED_ROOTS]:
            await self.evaluate(_KEEP_CLOSED, None, [{"objectId": await self.resolve(host, WORLD_NAME)},
                                                      {"objectId": await self.resolve(root, WORLD_NAME)}])
        # (not on the way out of a failed or cut-off call: a page that hung it would hang this too)
        await self.cdp.send("DOM.disable")
        return len(pairs)

    async def handle(self, script: str, group: str) -> str | None:
        """Run `script(N)` in our world and return the object it answers with by reference, as a
        protocol object id in `group` (None when it answers null): how a node our scripts keep
        reaches a protocol call that takes one (`DOM.requestNode`)."""
        function = f"function () {{ return ({script})(globalThis.{KEY}); }}"
        return await self._call(await self.context(), function, [], by_value=False, group=group)

    async def resolve(self, backend_node_id: int, group: str) -> str:
        """A DOM node (by its backend id, e.g. from `DOMDebugger`) as an object of our world."""
        resolved = await self.cdp.send("DOM.resolveNode", {
            "backendNodeId": backend_node_id, "executionContextId": await self.context(), "objectGroup": group})
        return resolved["object"]["objectId"]


async def run(evaluate: Callable[[str, str], Awaitable[Any]], script: str, arg: Any = None) -> Any:
    """Run a `control` script through `evaluate(script, json_arg)` and return its answer."""
    return from_page(await evaluate(script, to_page(arg)))


def to_page(arg: Any) -> str:
    """The argument of a script of ours, as it crosses."""
    return json.dumps(arg)


def from_page(answer: Any) -> Any:
    """What a script of ours returned (None for nothing, or for an answer that is not JSON)."""
    if not isinstance(answer, str):
        return None
    try:
        return json.loads(answer)
    except ValueError:
        return None


async def ask_page(page: Page, script: str, arg: Any = None) -> Any:
    """Run a `control` script in the page's world (unbounded: callers bound it): a claim."""
    return await run(page.evaluate, script, arg)


def install_natives() -> str:
    """The prelude's first statement: keep the natives where our control scripts find them, on
    a property of `window` the page cannot replace, delete or shadow."""
    return f"Object.defineProperty(window, {KEY!r}, {{ value: ({NATIVES_JS})(window) }});"
