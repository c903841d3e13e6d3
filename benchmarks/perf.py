"""Render-cost benchmark: the official OpenDesign way (a cold browser per page) against aesenv's
warm `Renderer`, sequential and concurrent, plus browser memory growth over many renders.

Why: the renderer's design (one long-lived browser, a fresh context per render) is justified by
cost; this measures that claim on the machine at hand instead of trusting an old note. All ways run
in one process, interleaved page by page, so machine load hits them alike and ratios stay honest.

    python -m benchmarks.perf --out runs/perf [--rounds 3] [--memory-renders 500] [--quick]

Writes DIR/perf.json (headline numbers, per-way and per-page statistics, memory curve, raw samples).

Where the time goes (`stage_profile`): each page is also rendered the floor way, the least work a
full-page capture of it can be on the renderer's own browser binary, kept warm (a fresh context and
page, the HTML set and loaded with CDN URLs answered from the mirror, one full-page PNG through CDP
with `optimizeForSpeed`, the context closed: the one capture aesenv's render takes), and the
viewport floor way, the same with a viewport PNG instead. Per stage, the median of aesenv's
sequential renders stands next to the floor's matching stage, on the same pages in the same run;
what aesenv does that the floor does not (settle, snapshot, mobile probe) has a floor of 0, and
what no stage timer covers (context and page set-up, routing, close) is `unstaged`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import json
import math
import os
import platform
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PAGES_DIR = Path(__file__).resolve().parent / "perf_pages"

# A CI-sized subset: cheap pages that still load a CDN library, paint a canvas and raise dialogs.
QUICK_PAGES = ("landing_saas", "dashboard_chartjs", "article_long", "tailwind_cdn", "game_canvas_raf",
               "hostile_alert_storm")

TARGET_SPEEDUP = 5.0
TARGET_MEMORY_GROWTH_PCT = 20.0

# OpenDesign's capture recipe: 1280x960, DOMContentLoaded, <= 3 s of networkidle, full-page PNG.
OD_VIEWPORT = {"width": 1280, "height": 960}
OD_NETWORKIDLE_TIMEOUT_MS = 3000
OD_HARD_TIMEOUT_S = 30.0

FULL_CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser", "google-chrome")
HEADLESS_SHELL_CANDIDATES = ("/usr/lib/chromium/chromium-headless-shell", "chromium-headless-shell")
BROWSER_PROCESS_NAMES = ("chrom", "headless")  # /proc/PID/comm of Chromium's processes


# --------------------------------------------------------------------------------------------
# pages
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PerfPage:
    name: str
    path: Path
    html: str

    @property
    def hostile(self) -> bool:
        return self.name.startswith("hostile_")


def load_pages(names: Iterable[str] | None = None) -> list[PerfPage]:
    """The fixed page set (sorted by name), or the named subset of it in the order given."""
    available = {p.stem: p for p in sorted(PAGES_DIR.glob("*.html"))}
    chosen = list(available) if names is None else list(names)
    missing = [n for n in chosen if n not in available]
    if missing:
        raise ValueError(f"unknown perf pages: {missing}; available: {sorted(available)}")
    return [PerfPage(n, available[n], available[n].read_text(encoding="utf-8")) for n in chosen]


# --------------------------------------------------------------------------------------------
# statistics
# --------------------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolation percentile (numpy's default), q in [0, 100]; None for no values."""
    if not values:
        return None
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be in [0, 100], got {q}")
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _r(x: float | None, nd: int = 1) -> float | None:
    return None if x is None else round(x, nd)


def summarize(samples: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per-way statistics over samples; timeouts and errors count at the time they took."""
    ms = [s["ms"] for s in samples]
    return {
        "median_ms": _r(percentile(ms, 50)),
        "p90_ms": _r(percentile(ms, 90)),
        "min_ms": _r(min(ms)) if ms else None,
        "max_ms": _r(max(ms)) if ms else None,
        "mean_ms": _r(statistics.fmean(ms)) if ms else None,
        "n": len(ms),
        "timeouts": sum(1 for s in samples if s.get("timed_out")),
        "errors": sum(1 for s in samples if s.get("error")),
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a and b else None


def png_size(data: bytes | None) -> tuple[int, int] | None:
    """(width, height) from a PNG's IHDR chunk, without decoding the image."""
    if not data or len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


# --------------------------------------------------------------------------------------------
# process memory from /proc (no psutil)
# --------------------------------------------------------------------------------------------


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name may contain spaces and parentheses: fields start after the last ")".
    return int(stat[stat.rindex(")") + 2:].split()[1])


def descendants(root: int | None = None) -> list[int]:
    """All live descendant pids of `root` (default: this process), found by scanning /proc."""
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            ppid = _ppid(int(entry))
            if ppid is not None:
                children.setdefault(ppid, []).append(int(entry))
    out, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def _status_kib(pid: int, field: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def rss_kib(pid: int) -> int | None:
    """Resident set size (VmRSS) in KiB; None if the process is gone or unreadable."""
    return _status_kib(pid, "VmRSS")


def pss_kib(pid: int) -> int | None:
    """Proportional set size in KiB (shared pages split between sharers): a fairer sum than RSS."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def browser_pids(root: int | None = None) -> list[int]:
    """Chromium processes (browser, renderers, GPU, utility, zygotes) below `root`."""
    return [p for p in descendants(root) if any(k in process_name(p).lower() for k in BROWSER_PROCESS_NAMES)]


def browser_tree_memory(root: int | None = None) -> dict[str, Any]:
    """Summed RSS and PSS of the Chromium processes under `root` (default: this process)."""
    rss = pss = 0
    pids = browser_pids(root)
    for pid in pids:
        rss += rss_kib(pid) or 0
        pss += pss_kib(pid) or 0
    others = [p for p in descendants(root) if p not in pids]
    return {"rss_mib": round(rss / 1024, 1), "pss_mib": round(pss / 1024, 1), "processes": len(pids),
            "other_descendants_rss_mib": round(sum(rss_kib(p) or 0 for p in others) / 1024, 1)}


def _kill(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


# --------------------------------------------------------------------------------------------
# machine
# --------------------------------------------------------------------------------------------


def _which(candidates: Sequence[str]) -> str | None:
    for c in candidates:
        path = shutil.which(c) or (c if os.path.isabs(c) and os.access(c, os.X_OK) else None)
        if path:
            return path
    return None


def binary_version(path: str | None) -> str:
    if not path:
        return ""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr.strip()[:200]
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unknown ({exc})"


def loadavg() -> list[float]:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return []


def renderer_fingerprint() -> dict[str, str]:
    """Short hashes of the render package's sources: the renderer changes often, and a number is
    only comparable to another taken with the same code."""
    import hashlib

    import aesenv.render as render_pkg

    root = Path(render_pkg.__file__).parent
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest()[:12] for f in sorted(root.glob("*.py"))}


def machine_info(od_binary: str | None, hs_binary: str | None) -> dict[str, Any]:
    def version(pkg: str) -> str:
        try:
            return importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            return ""

    mem_total = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        mem_total = round(int(Path("/proc/meminfo").read_text().split("MemTotal:")[1].split()[0]) / 1024 / 1024, 1)
    return {
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "mem_total_gib": mem_total,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "playwright_version": version("playwright"),
        "chromium_full": {"path": od_binary, "version": binary_version(od_binary)},
        "chromium_headless_shell": {"path": hs_binary, "version": binary_version(hs_binary)},
    }


# --------------------------------------------------------------------------------------------
# way 1: OpenDesign, a cold browser per page
# --------------------------------------------------------------------------------------------


def _mirror_handler(mirror):
    """Serve CDN URLs from the vendored mirror, so a cold page does the same work as under aesenv
    (loads and runs Chart.js, three.js...) instead of failing fast on a closed network."""

    async def handle(route) -> None:
        hit = None
        with contextlib.suppress(Exception):
            hit = mirror.resolve(route.request.url)
        with contextlib.suppress(Exception):
            if hit is None:
                await route.abort()
            else:
                body, ctype, _ = hit
                await route.fulfill(status=200, body=body, content_type=ctype,
                                    headers={"access-control-allow-origin": "*"})

    return handle


class StageClock:
    """Milliseconds per named stage, each counted from the end of the one before; `stage` is the
    one under way (where a way that did not finish stopped)."""

    def __init__(self, first: str) -> None:
        self.stages: dict[str, float] = {}
        self.stage = first
        self.start = self._last = time.perf_counter()

    def next(self, name: str = "") -> None:
        """End the stage under way and start `name` (none: the last one ended)."""
        now = time.perf_counter()
        self.stages[self.stage] = round((now - self._last) * 1000, 1)
        self.stage, self._last = name, now

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.start) * 1000, 1)


async def run_bounded(flow, timeout_s: float) -> tuple[bool, str]:
    """Run `flow()` within `timeout_s`: (timed out, error text); never raises, so one failing
    page cannot abort the benchmark."""
    try:
        await asyncio.wait_for(flow(), timeout_s)
    except asyncio.TimeoutError:
        return True, ""
    except Exception as exc:  # noqa: BLE001 - measured and reported, not raised
        msg = str(getattr(exc, "message", exc)).strip().splitlines()
        return False, f"{type(exc).__name__}: {msg[0] if msg else ''}"[:300]
    return False, ""


def outcome(clock: StageClock, timed_out: bool, error: str) -> dict[str, Any]:
    """A timed way's sample: elapsed time, status, and where it stopped when it did not finish."""
    return {"ms": clock.elapsed_ms(), "status": "timeout" if timed_out else ("error" if error else "ok"),
            "timed_out": timed_out, "error": error, "stage": clock.stage if (timed_out or error) else "",
            "stages_ms": clock.stages}


async def opendesign_render(pw, executable: str, page: PerfPage, *, hard_timeout_s: float = OD_HARD_TIMEOUT_S,
                            mirror=None) -> dict[str, Any]:
    """One page the OpenDesign way: launch, new page, goto file://, networkidle (<= 3 s), full-page PNG,
    close. Never raises: a page over `hard_timeout_s` is flagged and counted at its elapsed time."""
    from playwright.async_api import TimeoutError as PlaywrightTimeoutError

    from aesenv.render.browser import CHROMIUM_ARGS

    state: dict[str, Any] = {"browser": None, "networkidle_timed_out": False, "png": None}
    before = set(browser_pids())
    clock = StageClock("launch")  # after the /proc scan, which is not the render's

    async def flow() -> None:
        browser = state["browser"] = await pw.chromium.launch(
            executable_path=executable, args=list(CHROMIUM_ARGS), timeout=hard_timeout_s * 1000)
        clock.next("new_page")
        tab = await browser.new_page(viewport=OD_VIEWPORT)
        if mirror is not None:
            await tab.route(re.compile(r"^(https?|wss?)://"), _mirror_handler(mirror))
        clock.next("goto")
        await tab.goto(page.path.as_uri(), wait_until="domcontentloaded", timeout=hard_timeout_s * 1000)
        clock.next("networkidle")
        try:
            await tab.wait_for_load_state("networkidle", timeout=OD_NETWORKIDLE_TIMEOUT_MS)
        except PlaywrightTimeoutError:
            state["networkidle_timed_out"] = True
        clock.next("screenshot")
        state["png"] = await tab.screenshot(full_page=True, animations="disabled", timeout=hard_timeout_s * 1000)
        clock.next("close")
        await browser.close()
        state["browser"] = None
        clock.next()

    timed_out, error = await run_bounded(flow, hard_timeout_s)
    sample = outcome(clock, timed_out, error)
    cleanup_ms = 0.0
    if state["browser"] is not None:  # timed out or failed mid-way: close, and kill what we launched if stuck
        c0 = time.perf_counter()
        try:
            await asyncio.wait_for(state["browser"].close(), 10)
        except Exception:  # noqa: BLE001
            _kill(set(browser_pids()) - before)
        cleanup_ms = round((time.perf_counter() - c0) * 1000, 1)
    size = png_size(state["png"])
    return {**sample, "networkidle_timed_out": state["networkidle_timed_out"], "cleanup_ms": cleanup_ms,
            "png_height": size[1] if size else 0}


# --------------------------------------------------------------------------------------------
# the floor: the least a full-page capture can cost on a warm browser
# --------------------------------------------------------------------------------------------

FLOOR_TIMEOUT_S = 10.0
FLOOR_MAX_HEIGHT = 8000  # RenderConfig.max_full_page_height's default: the same capture bound
# aesenv's stage -> the floor's stage that does the same work (aesenv stages missing here have no
# floor counterpart: the floor does not do them)
FLOOR_OF_STAGE = {"navigate": "content", "screenshot": "full_png"}


async def floor_render(browser, page: PerfPage, *, mirror=None, timeout_s: float = FLOOR_TIMEOUT_S,
                       full_page: bool = True) -> dict[str, Any]:
    """One page the floor way on a warm `browser`: one capture, of the full page (the render's
    floor) or of the viewport (`full_page=False`). Never raises (a hostile page that hangs is
    counted at its elapsed time, as a timeout)."""
    clock = StageClock("context")
    state: dict[str, Any] = {"context": None}

    async def flow() -> None:
        context = state["context"] = await browser.new_context(viewport=OD_VIEWPORT)
        tab = await context.new_page()
        if mirror is not None:
            await tab.route(re.compile(r"^(https?|wss?)://"), _mirror_handler(mirror))
        cdp = await context.new_cdp_session(tab)  # set-up, as the render's own is made ahead
        clock.next("content")
        await tab.set_content(page.html, wait_until="load", timeout=timeout_s * 1000)
        clock.next("full_png" if full_page else "viewport_png")
        if full_page:
            height = await tab.evaluate("Math.max(document.documentElement.scrollHeight, innerHeight)")
            captured = int(min(max(height or 0, OD_VIEWPORT["height"]), FLOOR_MAX_HEIGHT))
            await cdp.send("Page.captureScreenshot", {
                "format": "png", "optimizeForSpeed": True, "captureBeyondViewport": True, "fromSurface": True,
                "clip": {"x": 0, "y": 0, "width": OD_VIEWPORT["width"], "height": captured, "scale": 1}})
        else:
            await cdp.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
        clock.next("close")
        await context.close()
        state["context"] = None
        clock.next()

    timed_out, error = await run_bounded(flow, timeout_s)
    sample = outcome(clock, timed_out, error)
    if state["context"] is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(state["context"].close(), 10)
    return sample


def stage_profile(samples: Sequence[dict[str, Any]], pages: Sequence[str]) -> dict[str, Any]:
    """Per stage, aesenv's sequential median against the floor's matching stage, over `pages`
    (those both ways rendered without a timeout or error), and the totals."""
    def ok(way: str) -> list[dict[str, Any]]:
        return [s for s in samples if s["way"] == way and s["page"] in pages and s["status"] == "ok"]

    ours, floor, viewport_floor = ok("aesenv_sequential"), ok("floor"), ok("floor_viewport")
    if not ours or not floor:
        return {}
    stage_names = sorted({k for s in ours for k in s.get("stages_ms", {})})
    rows: dict[str, Any] = {}
    for name in stage_names:
        aesenv_ms = percentile([s["stages_ms"].get(name, 0.0) for s in ours], 50)
        floor_stage = FLOOR_OF_STAGE.get(name)
        floor_ms = percentile([s["stages_ms"].get(floor_stage, 0.0) for s in floor], 50) if floor_stage else 0.0
        rows[name] = {"aesenv_ms": _r(aesenv_ms), "floor_stage": floor_stage, "floor_ms": _r(floor_ms),
                      "above_floor_ms": _r((aesenv_ms or 0.0) - (floor_ms or 0.0))}
    unstaged = percentile([s["ms"] - sum(s.get("stages_ms", {}).values()) for s in ours], 50)
    floor_setup = percentile([s["stages_ms"].get("context", 0.0) + s["stages_ms"].get("close", 0.0) for s in floor], 50)
    rows["unstaged"] = {"aesenv_ms": _r(unstaged), "floor_stage": "context+close", "floor_ms": _r(floor_setup),
                        "above_floor_ms": _r((unstaged or 0.0) - (floor_setup or 0.0))}
    total, floor_total = percentile([s["ms"] for s in ours], 50), percentile([s["ms"] for s in floor], 50)
    return {"pages": sorted(pages), "stages": rows, "aesenv_median_ms": _r(total), "floor_median_ms": _r(floor_total),
            "floor_viewport_median_ms": _r(percentile([s["ms"] for s in viewport_floor], 50)),
            "render_vs_floor": _ratio(total, floor_total)}


# --------------------------------------------------------------------------------------------
# ways 2 and 3: aesenv's warm Renderer
# --------------------------------------------------------------------------------------------


async def aesenv_render(renderer, page: PerfPage) -> dict[str, Any]:
    """One isolated render on a warm Renderer, timed from outside (wall clock, slot wait included)."""
    t0 = time.perf_counter()
    try:
        r = await renderer.render(page.html)
    except Exception as exc:  # noqa: BLE001 - the API says it never raises; measure anyway
        return {"ms": round((time.perf_counter() - t0) * 1000, 1), "status": "error", "timed_out": False,
                "error": f"{type(exc).__name__}: {exc}"[:300]}
    ms = round((time.perf_counter() - t0) * 1000, 1)
    status = r.status.value
    size = png_size(r.full_page_png)
    return {"ms": ms, "status": status, "timed_out": status == "timeout",
            "error": r.error[:300] if status in ("infra_error", "crashed") else "",
            "stages_timed_out": list(r.stages_timed_out), "stages_ms": dict(r.timings_ms),
            "dialogs": r.dialogs, "png_height": size[1] if size else 0}


async def _warm(renderer, page: PerfPage) -> None:
    """Launch the browser and run one render so no measured render pays for start-up."""
    await renderer.start()
    await renderer.render(page.html)


# --------------------------------------------------------------------------------------------
# the benchmark
# --------------------------------------------------------------------------------------------


def _progress_bar(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc="perf", unit="render", disable=not enabled, dynamic_ncols=True, file=sys.stderr)


def memory_exclusions(seq_samples: Sequence[dict[str, Any]], pages: Sequence[PerfPage]) -> dict[str, str]:
    """Pages left out of the memory run because they dominate its time: hostile pages whose median
    sequential render is over 3 s and over 5x the set's median (a 10 s hang teaches memory nothing)."""
    overall = percentile([s["ms"] for s in seq_samples], 50) or 0
    out = {}
    for p in pages:
        med = percentile([s["ms"] for s in seq_samples if s["page"] == p.name], 50)
        if p.hostile and med is not None and med > max(3000.0, 5 * overall):
            out[p.name] = f"median {med:.0f} ms vs set median {overall:.0f} ms"
    if len(out) == len(pages):
        return {}
    return out


async def _memory_run(pages: Sequence[PerfPage], renders: int, warmup: int, config, bar) -> dict[str, Any]:
    """Render `renders` pages on one Renderer and follow the browser tree's memory."""
    from aesenv.render import Renderer

    curve: list[dict[str, Any]] = []
    statuses: dict[str, int] = {}
    every = max(1, renders // 25)
    baseline = None
    t0 = time.perf_counter()

    async def sample(i: int) -> dict[str, Any]:
        await asyncio.sleep(0.5)  # let the closed context's renderer process exit before reading /proc
        return {"render": i, "t_s": round(time.perf_counter() - t0, 1), **browser_tree_memory()}

    async with Renderer(config) as renderer:
        curve.append(await sample(0))  # browser started, nothing rendered yet
        for i in range(renders):
            page = pages[i % len(pages)]
            if bar is not None:
                bar.set_postfix_str(f"memory {page.name}")
            s = await aesenv_render(renderer, page)
            statuses[s["status"]] = statuses.get(s["status"], 0) + 1
            if bar is not None:
                bar.update(1)
            n = i + 1
            if n == warmup:
                baseline = await sample(n)
                curve.append(baseline)
            elif n % every == 0 or n == renders:
                curve.append(await sample(n))
        launches = renderer.launches
    end = curve[-1]
    baseline = baseline or curve[0]

    def growth(key: str) -> float | None:
        return round((end[key] - baseline[key]) / baseline[key] * 100, 1) if baseline[key] else None

    # A second baseline once every page of the cycle has run once: a warm-up shorter than the cycle
    # still sees first-time costs (heaviest page so far, font and code caches) as "growth".
    cycled = next((c for c in curve if c["render"] >= len(pages)), None)
    after_cycle = (round((end["rss_mib"] - cycled["rss_mib"]) / cycled["rss_mib"] * 100, 1)
                   if cycled and cycled["rss_mib"] and cycled is not end else None)
    return {"renders": renders, "warmup_renders": warmup, "pages_cycled": [p.name for p in pages],
            "after_warmup": baseline, "end": end, "peak_rss_mib": max(c["rss_mib"] for c in curve),
            "memory_growth_pct": growth("rss_mib"), "pss_growth_pct": growth("pss_mib"),
            "after_first_cycle": cycled, "growth_after_first_cycle_pct": after_cycle,
            "statuses": statuses, "browser_launches": launches, "seconds": round(time.perf_counter() - t0, 1),
            "curve": curve}


async def run_perf(out_dir: str | Path, *, rounds: int = 3, pages: Sequence[str] | None = None,
                   concurrency_levels: Sequence[int] = (1, 2, 4), memory_renders: int = 500,
                   progress: bool = True, seed: int = 0, memory_warmup: int = 20,
                   opendesign_timeout_s: float = OD_HARD_TIMEOUT_S, headless_shell_reference: bool = True,
                   cdn: str = "mirror", non_hostile_throughput: bool = True) -> dict[str, Any]:
    """Run the benchmark, write `out_dir/perf.json` and return what it holds.

    Per round the page order is shuffled (seeded), and for each page the cold OpenDesign render,
    its headless-shell twin and one warm aesenv render run back to back (in a rotating order), so
    a burst of machine load lands on all ways alike. Then each concurrency level renders the whole
    set with asyncio.gather (and, unless disabled, the non-hostile pages alone, because a few 10 s
    hangs otherwise decide the number). The memory run comes last, with every other browser closed.
    """
    from playwright.async_api import async_playwright

    from aesenv.render import Renderer, RenderConfig
    from aesenv.render.vendor import VendorMirror

    if cdn not in ("mirror", "none"):
        raise ValueError("cdn must be 'mirror' or 'none'")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    page_set = load_pages(pages)
    levels = sorted({int(c) for c in concurrency_levels if int(c) >= 1})
    od_binary = _which(FULL_CHROMIUM_CANDIDATES)
    hs_binary = _which(HEADLESS_SHELL_CANDIDATES)
    notes: list[str] = []
    if od_binary is None:
        from aesenv.render import find_chromium

        od_binary = find_chromium().path
        notes.append(f"full Chromium not found; the opendesign way used {od_binary}")
    od_ways = [("opendesign", od_binary)]
    if headless_shell_reference and hs_binary:
        od_ways.append(("opendesign_headless_shell", hs_binary))
    mirror = VendorMirror.default() if cdn == "mirror" else None
    base_config = RenderConfig()
    warm_page = page_set[0] if not page_set[0].hostile else next((p for p in page_set if not p.hostile), page_set[0])
    warmup = max(1, min(memory_warmup, memory_renders // 4)) if memory_renders else 0

    result: dict[str, Any] = {
        "benchmark": "aesenv.perf",
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine_info(od_binary, hs_binary),
        "load": {"start": loadavg()},
        "config": {
            "rounds": rounds, "seed": seed, "pages": [p.name for p in page_set],
            "hostile_pages": [p.name for p in page_set if p.hostile],
            "concurrency_levels": levels, "memory_renders": memory_renders, "memory_warmup_renders": warmup,
            "opendesign": {"binary": od_binary, "headless_shell_binary": hs_binary if len(od_ways) > 1 else None,
                           "viewport": OD_VIEWPORT, "wait_until": "domcontentloaded",
                           "networkidle_timeout_ms": OD_NETWORKIDLE_TIMEOUT_MS, "hard_timeout_s": opendesign_timeout_s,
                           "screenshot": "png full_page animations=disabled", "launch_args": "CHROMIUM_ARGS",
                           "cdn": cdn, "playwright_started_once": True},
            "aesenv_render_config": base_config.model_dump(),
            "aesenv_render_sources": renderer_fingerprint(),
        },
        "notes": notes,
    }

    samples: list[dict[str, Any]] = []
    level_walls: dict[str, list[dict[str, Any]]] = {}
    batches = [("all", lambda p: True)]
    if non_hostile_throughput and any(p.hostile for p in page_set) and any(not p.hostile for p in page_set):
        batches.append(("non_hostile", lambda p: not p.hostile))
    batch_size = {name: sum(1 for p in page_set if keep(p)) for name, keep in batches}
    per_round = len(page_set) * (len(od_ways) + 3) + len(levels) * sum(batch_size.values())
    bar = _progress_bar(rounds * per_round + memory_renders, progress)
    rng = random.Random(seed)
    try:
        async with async_playwright() as pw, contextlib.AsyncExitStack() as stack:
            seq = await stack.enter_async_context(Renderer(base_config.model_copy(update={"concurrency": 1})))
            conc = {c: await stack.enter_async_context(Renderer(base_config.model_copy(update={"concurrency": c})))
                    for c in levels}
            for r in [seq, *conc.values()]:
                with contextlib.suppress(Exception):
                    await _warm(r, warm_page)
            result["machine"]["aesenv_renderer"] = seq.provenance
            from aesenv.render import find_chromium
            from aesenv.render.browser import CHROMIUM_ARGS

            floor_binary = find_chromium().path  # the renderer's own binary: a floor for this design
            floor_browser = await pw.chromium.launch(executable_path=floor_binary, args=list(CHROMIUM_ARGS))
            stack.push_async_callback(floor_browser.close)
            result["config"]["floor"] = {"binary": floor_binary, "viewport": OD_VIEWPORT, "timeout_s": FLOOR_TIMEOUT_S,
                                         "max_height": FLOOR_MAX_HEIGHT, "cdn": cdn}
            with contextlib.suppress(Exception):
                await floor_render(floor_browser, warm_page, mirror=mirror)
            for rnd in range(rounds):
                order = list(page_set)
                rng.shuffle(order)
                for i, page in enumerate(order):
                    ways = [*od_ways, ("aesenv_sequential", None), ("floor", None), ("floor_viewport", None)]
                    k = (rnd + i) % len(ways)
                    for way, binary in ways[k:] + ways[:k]:
                        bar.set_postfix_str(f"r{rnd} {way} {page.name}")
                        if way.startswith("floor"):
                            s = await floor_render(floor_browser, page, mirror=mirror, full_page=way == "floor")
                        elif binary is None:
                            s = await aesenv_render(seq, page)
                        else:
                            s = await opendesign_render(pw, binary, page, hard_timeout_s=opendesign_timeout_s,
                                                        mirror=mirror)
                        samples.append({"way": way, "page": page.name, "round": rnd, **s})
                        bar.update(1)
                for batch, keep in batches:
                    chosen = [p for p in order if keep(p)]
                    for c in levels:
                        way = f"aesenv_concurrent_{c}" if batch == "all" else f"aesenv_concurrent_{batch}_{c}"
                        bar.set_postfix_str(f"r{rnd} concurrency {c} ({batch})")
                        t0 = time.perf_counter()
                        got = await asyncio.gather(*(aesenv_render(conc[c], p) for p in chosen))
                        wall = time.perf_counter() - t0
                        level_walls.setdefault(way, []).append({"round": rnd, "wall_s": round(wall, 2), "pages": len(chosen),
                                                                "pages_per_s": round(len(chosen) / wall, 3)})
                        for p, s in zip(chosen, got):
                            samples.append({"way": way, "page": p.name, "round": rnd, **s})
                        bar.update(len(chosen))
            result["load"]["after_timing"] = loadavg()

        # ---- memory: every other browser is closed by now, so /proc sees only this renderer's.
        seq_samples = [s for s in samples if s["way"] == "aesenv_sequential"]
        excluded = memory_exclusions(seq_samples, page_set)
        cycle = [p for p in page_set if p.name not in excluded] or list(page_set)
        if memory_renders:
            try:
                mem = await _memory_run(cycle, memory_renders, warmup, base_config.model_copy(update={"concurrency": 1}), bar)
            except Exception as exc:  # noqa: BLE001
                mem = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            mem["excluded_pages"] = excluded
            result["memory"] = mem
            result["load"]["after_memory"] = loadavg()
    except Exception as exc:  # noqa: BLE001 - e.g. no browser at all: still write what was measured
        result["fatal_error"] = f"{type(exc).__name__}: {exc}"[:500]
    finally:
        bar.close()

    result.update(_analyse(samples, level_walls, page_set, od_ways, levels))
    result["stage_profile"] = stage_profile(samples, [p.name for p in page_set if not p.hostile])
    mem = result.get("memory", {})
    result["memory_growth_pct"] = mem.get("memory_growth_pct")
    result["headline"] = _headline(result)
    result["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    if renderer_fingerprint() != result["config"]["aesenv_render_sources"]:
        result["notes"].append("aesenv/render sources changed on disk during the run; this process kept "
                               "the code it imported at start (config.aesenv_render_sources)")
    result["samples"] = samples
    tmp = out / "perf.json.tmp"
    tmp.write_text(json.dumps(result, indent=1, default=str))
    tmp.replace(out / "perf.json")
    return result


def _level_stats(way_prefix: str, levels, level_walls, by_way) -> dict[str, Any]:
    """Throughput (all renders over all wall time, across rounds) and latency per concurrency level."""
    out: dict[str, Any] = {}
    for c in levels:
        walls = level_walls.get(f"{way_prefix}{c}", [])
        total_pages = sum(w["pages"] for w in walls)
        total_wall = sum(w["wall_s"] for w in walls)
        out[str(c)] = {"pages_per_s": round(total_pages / total_wall, 3) if total_wall else None,
                       "rounds": walls,
                       # from the batch's start to this page's result: includes waiting for a slot
                       "latency_incl_queue_wait": summarize(by_way.get(f"{way_prefix}{c}", []))}
    return out


def _analyse(samples, level_walls, page_set, od_ways, concurrency_levels) -> dict[str, Any]:
    """Per-way, per-level and per-page statistics, speedups and throughput."""
    by_way: dict[str, list[dict[str, Any]]] = {}
    for s in samples:
        by_way.setdefault(s["way"], []).append(s)
    ways = {w: summarize(v) for w, v in by_way.items() if not w.startswith("aesenv_concurrent_")}
    levels = _level_stats("aesenv_concurrent_", concurrency_levels, level_walls, by_way)
    best = max(levels, key=lambda k: levels[k]["pages_per_s"] or 0) if levels else None
    ways["aesenv_concurrent"] = {"levels": levels, "best_concurrency": int(best) if best else None,
                                 "best_pages_per_s": levels[best]["pages_per_s"] if best else None}
    nh_levels = _level_stats("aesenv_concurrent_non_hostile_", concurrency_levels, level_walls, by_way)
    nh_levels = {c: v for c, v in nh_levels.items() if v["pages_per_s"]}
    if nh_levels:
        nh_best = max(nh_levels, key=lambda k: nh_levels[k]["pages_per_s"])
        ways["aesenv_concurrent_non_hostile"] = {"levels": nh_levels, "best_concurrency": int(nh_best),
                                                 "best_pages_per_s": nh_levels[nh_best]["pages_per_s"]}

    def med(way: str, page: str | None = None, hostile: bool | None = None) -> float | None:
        names = {p.name for p in page_set if hostile is None or p.hostile == hostile}
        return percentile([s["ms"] for s in by_way.get(way, [])
                           if (page is None or s["page"] == page) and s["page"] in names], 50)

    per_page: dict[str, Any] = {}
    # Concurrent samples are left out here: their time includes the wait for a slot in the batch.
    page_ways = [w for w in by_way if not w.startswith("aesenv_concurrent_")]
    for p in page_set:
        row: dict[str, Any] = {"hostile": p.hostile}
        for way in page_ways:
            row[way] = _r(med(way, p.name))
        row["speedup_vs_opendesign"] = _ratio(row.get("opendesign"), row.get("aesenv_sequential"))
        row["statuses"] = {w: sorted({s["status"] for s in by_way[w] if s["page"] == p.name}) for w in page_ways}
        stuck = sorted({st for s in by_way.get("aesenv_sequential", []) if s["page"] == p.name
                        for st in s.get("stages_timed_out", [])})
        od_stage = sorted({s["stage"] for s in by_way.get("opendesign", []) if s["page"] == p.name and s["stage"]})
        if stuck:
            row["aesenv_stages_timed_out"] = stuck
        if od_stage:
            row["opendesign_failed_in"] = od_stage
        per_page[p.name] = row
    page_speedups = [r["speedup_vs_opendesign"] for r in per_page.values() if r["speedup_vs_opendesign"]]
    seq = med("aesenv_sequential")
    out = {
        "ways": ways,
        "per_page": per_page,
        "speedup_vs_opendesign": _ratio(med("opendesign"), seq),
        "speedup_vs_opendesign_non_hostile": _ratio(med("opendesign", hostile=False), med("aesenv_sequential", hostile=False)),
        "speedup_median_of_pages": _r(percentile(page_speedups, 50), 2),
        "throughput_pages_per_s": ways["aesenv_concurrent"]["best_pages_per_s"],
        "throughput_by_concurrency": {c: v["pages_per_s"] for c, v in levels.items()},
        "best_concurrency": ways["aesenv_concurrent"]["best_concurrency"],
    }
    if nh_levels:
        out["throughput_non_hostile_by_concurrency"] = {c: v["pages_per_s"] for c, v in nh_levels.items()}
    if len(od_ways) > 1:
        out["speedup_vs_opendesign_headless_shell"] = _ratio(med("opendesign_headless_shell"), seq)
    return out


def _headline(result: dict[str, Any]) -> dict[str, Any]:
    speedup, growth = result.get("speedup_vs_opendesign"), result.get("memory_growth_pct")
    ways = result["ways"]
    return {
        "speedup_vs_opendesign": speedup,
        "speedup_target": TARGET_SPEEDUP,
        "speedup_target_met": speedup is not None and speedup >= TARGET_SPEEDUP,
        "memory_growth_pct": growth,
        "memory_growth_target_pct": TARGET_MEMORY_GROWTH_PCT,
        "memory_target_met": growth is not None and growth <= TARGET_MEMORY_GROWTH_PCT,
        "throughput_pages_per_s": result.get("throughput_pages_per_s"),
        "throughput_by_concurrency": result.get("throughput_by_concurrency"),
        "best_concurrency": result.get("best_concurrency"),
        "throughput_non_hostile_by_concurrency": result.get("throughput_non_hostile_by_concurrency"),
        "speedup_vs_opendesign_non_hostile": result.get("speedup_vs_opendesign_non_hostile"),
        "speedup_vs_opendesign_headless_shell": result.get("speedup_vs_opendesign_headless_shell"),
        "median_ms": {w: v.get("median_ms") for w, v in ways.items() if "median_ms" in v},
        "render_vs_floor": result.get("stage_profile", {}).get("render_vs_floor"),
    }


# --------------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.perf", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="runs/perf", help="output folder for perf.json")
    ap.add_argument("--rounds", type=int, default=None, help="rounds over the page set (default 3; quick 1)")
    ap.add_argument("--memory-renders", type=int, default=None, help="renders in the memory run (default 500; quick 40)")
    ap.add_argument("--quick", action="store_true", help=f"CI-sized run: {len(QUICK_PAGES)} pages, 1 round, "
                    "concurrency 1 and 2, 40 memory renders")
    ap.add_argument("--pages", default=None, help="comma-separated page names (default: all, or the quick set)")
    ap.add_argument("--concurrency", default=None, help="comma-separated levels (default 1,2,4; quick 1,2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cdn", choices=("mirror", "none"), default="mirror",
                    help="how the cold OpenDesign way gets CDN URLs: the vendored mirror (default) or not at all")
    ap.add_argument("--no-headless-shell-reference", action="store_true",
                    help="skip the cold headless-shell reference way")
    ap.add_argument("--no-non-hostile-throughput", action="store_true",
                    help="skip the extra concurrent pass over the non-hostile pages only")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)

    rounds = args.rounds if args.rounds is not None else (1 if args.quick else 3)
    memory = args.memory_renders if args.memory_renders is not None else (40 if args.quick else 500)
    pages = args.pages.split(",") if args.pages else (list(QUICK_PAGES) if args.quick else None)
    levels = tuple(int(c) for c in args.concurrency.split(",")) if args.concurrency else ((1, 2) if args.quick else (1, 2, 4))
    result = asyncio.run(run_perf(args.out, rounds=rounds, pages=pages, concurrency_levels=levels,
                                  memory_renders=memory, progress=not args.no_progress, seed=args.seed,
                                  headless_shell_reference=not args.no_headless_shell_reference, cdn=args.cdn,
                                  non_hostile_throughput=not args.no_non_hostile_throughput))
    print(json.dumps({"perf_json": str(Path(args.out) / "perf.json"), **result["headline"],
                      "load": result["load"]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
