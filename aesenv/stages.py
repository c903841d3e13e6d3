"""Where a channel's time goes, by kind of work, for the record's `timings_ms` and nowhere else.

Code that does a channel's work names what it is doing (`with stage("screenshot"): ...`); the
pipeline collects the stages of each channel it runs (`collecting`) into `timings_ms` as
`channel.<name>.<stage>`, which `deterministic_view` leaves out with every other timing: wall
time never enters what a record says about the answer, and nothing here changes what is done.
A stage inside another counts as the outer one (labeling's page calls are labeling's time); work
done in a worker thread while the page acts (a frame's thumbnail) is a stage of its own that
overlaps the others, so a channel's stages can add up to a little more than its time. Outside
`collecting` a stage records nothing.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator

_TOTALS: contextvars.ContextVar[dict[str, float] | None] = contextvars.ContextVar("aesenv_stage_totals", default=None)
_OPEN: contextvars.ContextVar[bool] = contextvars.ContextVar("aesenv_stage_open", default=False)


@contextlib.contextmanager
def collecting() -> Iterator[dict[str, float]]:
    """Inside the block (in this task and the tasks it starts), stages add their milliseconds to
    the dict yielded."""
    totals: dict[str, float] = {}
    token, open_token = _TOTALS.set(totals), _OPEN.set(False)
    try:
        yield totals
    finally:
        _OPEN.reset(open_token)
        _TOTALS.reset(token)


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    """Count the block's wall time as `name`, unless it runs inside another stage."""
    totals = _TOTALS.get()
    if totals is None or _OPEN.get():
        yield
        return
    token = _OPEN.set(True)
    start = time.perf_counter()
    try:
        yield
    finally:
        totals[name] = totals.get(name, 0.0) + (time.perf_counter() - start) * 1000
        _OPEN.reset(token)
