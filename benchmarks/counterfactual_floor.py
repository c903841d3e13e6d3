"""The least the counterfactual measure can cost, for `checkout_ab --after-variant`.

Why: issue 47 prescribes at least one extra capture per page (all text taken away at once, the
capture clipped to the rows its boxes reach). Whether a cost target is reachable at all depends on
what that one capture costs on this machine, not on how well the rest of the measure is written:
a target below the cost of the prescribed capture cannot be met by any implementation of it.
Two variants replace the measure in a checkout's worker, so `checkout_ab` prices them against
another checkout in one run:

- `floor`: exactly the prescribed minimum. The text and pictures are planned into groups as the
  measure plans them; the first group's bands are captured as the measure captures them, decoded
  and compared with the render's capture. Nothing is taken away, judged or credited.
- `off`: no measure at all: what the rest of the render costs.

Both leave every page with nothing shown, so only their render column compares with a real
checkout's; their scoring column scores pages with no shown text (less downstream work).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

VARIANTS = ("floor", "off")


async def _floor(cdp: Any, world: Any, runs: Any, items_meta: Any, paintings: Any, parents: Any,
                 base: Any, size: tuple[int, int], scale: float) -> Any:
    from aesenv.render import counterfactual as cf

    kinds = cf.item_kinds(items_meta, paintings)
    items = cf._items(runs, items_meta, [(p.item, p.box) for p in paintings if kinds[p.item] != "box"])
    groups = cf.plan(items)
    verdicts = cf.Verdicts(notes=["counterfactual floor variant: captured, nothing taken away or credited"])
    for clip, _ in cf._bands(groups[0], *size) if groups else []:
        after = await cf.capture(cdp, clip, await cf.view(cdp))
        x0, y0, x1, y1 = (round(v * scale) for v in clip)
        before = base[y0:y1, x0:x1]
        if after is not None and after.shape == before.shape:
            cf.changed(before, after)
    return verdicts


async def _off(*_: Any) -> Any:
    from aesenv.render import counterfactual as cf

    return cf.Verdicts(notes=["counterfactual off variant: nothing measured"])


_REPLACEMENTS: dict[str, Callable[..., Any]] = {"floor": _floor, "off": _off}


def _replace(name: str) -> Callable[..., Any]:
    """Put variant `name` in the measure's place; returns what was there."""
    if name not in _REPLACEMENTS:
        raise ValueError(f"unknown counterfactual variant {name!r}; choose one of {', '.join(VARIANTS)}")
    from aesenv.render import counterfactual as cf

    if not hasattr(cf, "_measure_frozen"):
        raise RuntimeError("this checkout's aesenv.render.counterfactual has no _measure_frozen to replace")
    original = cf._measure_frozen
    cf._measure_frozen = _REPLACEMENTS[name]
    return original


@contextlib.contextmanager
def variant(name: str) -> Iterator[None]:
    """The measure replaced by variant `name` (see the module) while the block runs."""
    from aesenv.render import counterfactual as cf

    original = _replace(name)
    try:
        yield
    finally:
        cf._measure_frozen = original


def install(name: str) -> None:
    """Replace the measure for the rest of the process (a benchmark worker's whole life). (Not
    `variant(...).__enter__()`: the context's generator, once dropped, is closed and puts the
    measure back.)"""
    _replace(name)
