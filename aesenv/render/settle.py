"""The settle phase: the fixed slice of virtual time a page runs after load, before capture.

Timers, animation frames and late DOM work run to the same point on every render. A page that
draws with WebGL is settled differently, because here WebGL draws in software, on the CPU: a
frame of a heavy three.js scene (a thousand shadowed meshes, particles, bloom) costs seconds,
and the 50 frames of an 800 ms slice would cost minutes. Such a page still runs the whole slice,
every timer in order, but draws at most `webgl_settle_frames` frames in it, as a browser on a
slow GPU drops frames: a few frame by frame (fewer when one costs more than the wall budget
allows), then the page's animation frames are held while its timers run to the end of the
slice, and the last frame is drawn there. Deadlines for it are counted in frames: each frame
is waited for until the GPU has drawn it, `webgl_frame_timeout_s`, and longer (up to
`webgl_frame_max_s`) while the browser's GPU process is seen drawing; a frame that nothing is
drawing, or that takes longer still, is the page hanging (its fault), while a page that is only
slow to draw is captured, and the render's total deadline grows by the time its frames took.
Where the page replaces its document while it settles (a reload on a timer), the new document
gets the rest of the slice.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Protocol

from playwright.async_api import Error as PlaywrightError, Page

from aesenv.render.inpage import ask_page
from aesenv.render.live import DRAWN, FRAME_MS, HOLD_FRAMES, lost_its_document, run_clock
from aesenv.render.watchdog import gpu_cpu_seconds

STEP_MS = 100
GPU_BUSY_SHARE = 0.25  # of one core: the GPU process is drawing
CHECK_S = 2.0
MAX_DOCUMENTS = 3  # documents a page may load while it settles before it is captured as it stands


class SettleConfig(Protocol):
    settle_ms: int
    settle_budget_s: float
    webgl_settle_frames: int
    webgl_settle_budget_s: float
    webgl_frame_timeout_s: float
    webgl_frame_max_s: float


class SettleTrace(Protocol):
    settled_ms: int
    settle_frames: int
    extra_s: float
    page_errors: list[str]
    document_loaded: asyncio.Event


async def settle_timers(page: Page, trace: SettleTrace, config: SettleConfig) -> None:
    """Advance `settle_ms` in steps; a page too heavy to get there within `settle_budget_s`
    (every frame it draws costs CPU) is captured where it got, and `settled_ms` says where.
    Light pages take the rest in one call (each call is a round trip)."""
    start = time.perf_counter()
    deadline = start + config.settle_budget_s
    while trace.settled_ms < config.settle_ms and time.perf_counter() < deadline:
        remaining = config.settle_ms - trace.settled_ms
        step = min(STEP_MS, remaining)
        if trace.settled_ms:
            cost_per_ms = (time.perf_counter() - start) / trace.settled_ms
            if cost_per_ms * remaining < (deadline - time.perf_counter()) / 2:
                step = remaining
        await advance(page, step, trace)
        trace.settled_ms += step


async def settle_drawing(page: Page, trace: SettleTrace, config: SettleConfig) -> None:
    """The WebGL settle (see the module). The frame the page drew while loading is waited for
    first: how long that takes says what a frame costs. (A page that draws from a timer instead
    of animation frames draws on every tick of it; only its frames' deadlines apply.)"""
    began = time.perf_counter()
    first = await within_a_frame(_drawn(page), trace, config)
    cost = time.perf_counter() - began
    start, frames = time.perf_counter(), first
    while (frames - first < config.webgl_settle_frames - 1
           and trace.settled_ms + 2 * FRAME_MS <= config.settle_ms
           and time.perf_counter() - start + cost <= config.webgl_settle_budget_s):
        began, before = time.perf_counter(), frames
        frames = await within_a_frame(_run_and_draw(page, FRAME_MS, trace), trace, config)
        trace.settled_ms += FRAME_MS
        trace.settle_frames = frames - first
        cost = time.perf_counter() - began
        if frames == before:  # nothing animates: the rest needs no stepping frame by frame
            break
    rest = config.settle_ms - trace.settled_ms
    if rest > 0:
        frames = await within_a_frame(_run_and_draw(page, rest, trace, hold_ms=rest - FRAME_MS), trace, config)
        trace.settled_ms += rest
        trace.settle_frames = frames - first


async def within_a_frame(call, trace: SettleTrace, config: SettleConfig):
    """Wait for one frame of the page: `webgl_frame_timeout_s`, and past that for as long as
    the GPU process is seen drawing (busy for `GPU_BUSY_SHARE` of the time since the last look,
    every `CHECK_S`), up to `webgl_frame_max_s`. A frame that takes longer, or that nothing is
    drawing (the page is stuck in its own JavaScript), is the page hanging: TimeoutError. The
    render's total deadline grows by the time the frame took."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    task = asyncio.ensure_future(call)
    trace.extra_s += config.webgl_frame_max_s  # the longest this wait can be, until it is over
    try:
        gpu = await asyncio.to_thread(gpu_cpu_seconds)
        wait = config.webgl_frame_timeout_s
        while True:
            done, _ = await asyncio.wait({task}, timeout=wait)
            if done:
                return task.result()
            elapsed = loop.time() - start
            used = await asyncio.to_thread(gpu_cpu_seconds)
            drawing, gpu = used - gpu >= GPU_BUSY_SHARE * wait, used
            if not drawing or elapsed >= config.webgl_frame_max_s:
                raise asyncio.TimeoutError
            wait = min(CHECK_S, config.webgl_frame_max_s - elapsed)
    finally:
        trace.extra_s -= config.webgl_frame_max_s - (loop.time() - start)
        if not task.done():
            task.cancel()


async def _drawn(page: Page) -> int:
    return _count(await ask_page(page, DRAWN))


async def _run_and_draw(page: Page, ms: int, trace: SettleTrace, *, hold_ms: int = 0) -> int:
    """Run `ms` of the page's time, its animation frames held for the first `hold_ms` of it (its
    timers run, in order; the frames it asks for meanwhile wait for the first one after), and
    wait until what it drew is drawn; the frames run so far."""
    if hold_ms > 0:
        await ask_page(page, HOLD_FRAMES, hold_ms)
    await advance(page, ms, trace)
    return await _drawn(page)


async def advance(page: Page, ms: int, trace: SettleTrace) -> None:
    """`run_clock` on the page's current document: when a navigation replaces the document
    mid-call, the new one (once loaded) runs the time instead; after `MAX_DOCUMENTS` the page
    is left as it stands."""
    for _ in range(MAX_DOCUMENTS):
        try:
            await run_clock(page, ms, trace.page_errors)
            return
        except PlaywrightError as exc:
            if not lost_its_document(exc):
                raise
        await trace.document_loaded.wait()


def _count(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) else 0
