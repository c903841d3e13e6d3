"""The forgery search: invisible mutations of honest artifacts, kept when pixel-identical, scored.

`aesenv bench forgery --search N [--seed S]` draws mutations from the grammar
(`benchmarks.forgery_grammar`: hiding primitives x deliveries x content kinds x honest bases),
renders each through the one `RewardPipeline` with its base's configuration, and keeps it only when
its capture is pixel-identical to its honest twin's (a page's full-page PNG decoded to pixels, a
plot's figure PNGs, a project's webshot). A kept mutation shows nothing its twin does not, so any
channel or aggregate it raises (`benchmarks.forgery.compare`, the hand corpus's rule) is a forgery
by definition: the oracle needs no judgement, and the search needs no one to think of the trick.

The run is deterministic for a seed and a set of bases: the sequence of mutations is drawn up
front, each base's twin is scored twice (a base whose capture or scores differ between the two is
reported and its mutations are not judged on that), and the report keeps the first N
pixel-identical mutations in sequence order whatever order they finished in. A gain is counted when the mutation beats both
of the twin's runs and a second run of the mutation confirms it. Each artifact has a deadline; a
mutation that breaks is reported, never fatal. Every gain is written out as a corpus case
(`OUT/gains/<id>/`, the hand corpus's format) so `aesenv bench forgery --cases OUT/gains --only ID`
replays it.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import json
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from aesenv.kinds.project.kind import PROJECT
from aesenv.lint.htmlhint import HtmlHint
from aesenv.render import RenderConfig, Renderer
from aesenv.render.models import decode_rgb
from aesenv.rewards import PipelineConfig, RewardPipeline
from aesenv.tasks import Task, load_tasks
from aesenv.tasks.model import TextExact
from benchmarks import forgery_grammar as grammar
from benchmarks.forgery import (CASES, Gain, Scores, compare_scores, configured, load_cases, pictures,
                                pixel_difference)
from benchmarks.forgery_grammar import (DELIVERIES, PLOT_PRIMITIVES, PLOT_ROLES, PRIMITIVES, WEB_CONTENT,
                                        PlotPrimitive, Primitive, Slot)

HERE = Path(__file__).resolve().parent
PAGES = HERE / "pages"
AESCODE_PAGES = HERE / "aescode_pages"
# AesCode's deterministic channels as published and ours beside them, and the static judge (it
# reads copy): what an AesCode base is scored on.
AESCODE_CONFIG = {"reward": "aescode", "channels": ["renderable", "execution", "text", "boundary", "table_chart",
                                                     "chart", "table", "static"]}
SLOT_SIZES = ((480, 240), (360, 180), (240, 120), (160, 64), (120, 40))
PROJECT_SHARE = 0.12   # of page mutations that go to a project base (a build costs seconds)
INLINE_SHARE = 0.5     # of page mutations delivered inline (the rest: shadow roots, scripts)


# ------------------------------------------------------------------------------------------------
# Honest bases
# ------------------------------------------------------------------------------------------------


@dataclass
class Base:
    """An honest artifact and the task it answers: `text` is the answer (a page, a script, a
    project's `index.html`), `files` the rest it is scored with, `written` the files it wrote
    itself (a project's, over the starting workspace; what a saved case holds)."""

    id: str
    kind: str
    task: Task
    task_spec: dict[str, Any]
    config: dict[str, Any]
    text: str
    files: dict[str, bytes] = field(default_factory=dict)
    written: dict[str, bytes] = field(default_factory=dict)


def _spec(task: Task, builtin: set[str]) -> dict[str, Any]:
    return {"builtin": task.id} if task.id in builtin else task.model_dump(mode="json", exclude_none=True)


def load_bases(kinds: set[str] | None = None) -> list[Base]:
    """Every honest artifact we have, with its task: the hand corpus's honest twins, the benchmark
    pages, the AesCode pages (each variant: a page missing a string is a base to add it to), the
    template answers of the built-in suites, a bare page per built-in web and AesCode task, and
    each built-in project's starting workspace. Sorted by id."""
    from policies.plot_template import write_script
    from policies.template import render_page

    suites = {s: load_tasks(s) for s in ("builtin:web", "builtin:plot", "builtin:aescode", "builtin:project")}
    builtin = {t.id for tasks in suites.values() for t in tasks}
    bases: list[Base] = []
    for case in load_cases(CASES):
        if case.webdev is not None or case.task.kind not in ("web", "plot", "project"):
            continue
        text, files = case.honest
        start = PROJECT.initial_files(case.task) if case.task.kind == "project" else {}
        written = {p: b for p, b in files.items() if start.get(p) != b}
        spec = json.loads((CASES / case.id / "case.json").read_text())["task"]
        bases.append(Base(f"corpus:{case.id}", case.task.kind, case.task, spec, configured(case, None, None),
                          text, files, written))
    for line in (PAGES / "tasks.jsonl").read_text().splitlines():
        row = json.loads(line)
        page = PAGES / f"{row['id']}.html"
        if page.is_file():
            task = Task(id=f"pages-{row['id']}", kind="web", category=row["category"], prompt=row["prompt"])
            bases.append(Base(f"pages:{row['id']}", "web", task, _spec(task, builtin), {}, page.read_text()))
    aescode = {t.id: t for t in suites["builtin:aescode"]}
    for folder in sorted(p for p in AESCODE_PAGES.iterdir() if p.is_dir()):
        task = aescode.get(folder.name)
        for page in sorted(folder.glob("*.html")) if task else []:
            bases.append(Base(f"aescode:{folder.name}/{page.stem}", "web", task, _spec(task, builtin),
                              dict(AESCODE_CONFIG), page.read_text()))
    for task in suites["builtin:web"]:
        bases.append(Base(f"template:{task.id}", "web", task, _spec(task, builtin), {}, render_page(task)))
    for task in suites["builtin:aescode"]:
        bases.append(Base(f"template:{task.id}", "web", task, _spec(task, builtin), dict(AESCODE_CONFIG), render_page(task)))
    for task in [*suites["builtin:web"], *suites["builtin:aescode"]]:
        config = dict(AESCODE_CONFIG) if task.requirements else {}
        bases.append(Base(f"bare:{task.id}", "web", task, _spec(task, builtin), config, bare_page(task)))
    for task in suites["builtin:plot"]:
        try:
            script = write_script(task)
        except ValueError:
            continue
        bases.append(Base(f"template:{task.id}", "plot", task, _spec(task, builtin), {}, script))
    for task in suites["builtin:project"]:
        start = PROJECT.initial_files(task)
        entry = start.pop("index.html", b"").decode()
        bases.append(Base(f"start:{task.id}", "project", task, _spec(task, builtin), {}, entry, start, {}))
    bases = [b for b in bases if not kinds or b.kind in kinds]
    return sorted(bases, key=lambda b: b.id)


def bare_page(task: Task) -> str:
    """The page a lazy policy writes: the title and one line, nothing the task asked for besides.
    Whatever a mutation hides in it is all the content it has, so a channel that counts hidden
    content shows it here first."""
    title = grammar.title_of(task.prompt)
    if any(title.lower() in r.text.lower() for r in task.requirements if isinstance(r, TextExact)):
        title = task.id.split("-", 2)[-1].replace("-", " ").capitalize()  # never a required string
    title = html.escape(title)
    size = f"width:{task.canvas.width}px;height:{task.canvas.height}px;" if task.canvas else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n"
            f"<title>{title}</title>\n<style>\nbody {{ margin: 0; {size}font-family: Arial, Helvetica, sans-serif; "
            "background: #ffffff; color: #1f2937; }\nheader { padding: 40px 56px; }\n"
            "h1 { font-size: 40px; margin: 0 0 8px; }\np { font-size: 18px; margin: 0; }\n</style>\n</head>\n<body>\n"
            f"<header>\n<h1>{title}</h1>\n<p>More is on its way.</p>\n</header>\n</body>\n</html>\n")


# ------------------------------------------------------------------------------------------------
# Captures and slots
# ------------------------------------------------------------------------------------------------


@dataclass
class Capture:
    """What the pipeline captured of an answer: per picture a digest of its pixels and its shape,
    and the PNGs themselves (compressed; decoded again only to say how two captures differ)."""

    digests: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    pngs: tuple[bytes, ...] = ()

    @classmethod
    def of(cls, pngs: list[bytes]) -> "Capture":
        pairs = [(p, decode_rgb(p)) for p in pngs]
        pairs = [(p, a) for p, a in pairs if a is not None]
        digests = tuple(hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest() for _, a in pairs)
        return cls(digests, tuple(a.shape for _, a in pairs), tuple(p for p, _ in pairs))

    def same(self, other: "Capture") -> bool:
        return bool(self.digests) and self.digests == other.digests and self.shapes == other.shapes

    def pixels(self, i: int = 0) -> np.ndarray | None:
        return decode_rgb(self.pngs[i]) if i < len(self.pngs) else None


def find_slots(pixels: np.ndarray, viewport_height: int) -> dict[str, Slot]:
    """Places for content, from the honest capture: the first rectangle (in reading order) of one
    exact colour in the first screen (`quiet`) and below it (`quiet-below`), the busiest one in
    the first screen (`ink`), each of the largest size in `SLOT_SIZES` that fits, and `flow`."""
    height, width = pixels.shape[:2]
    differs = np.zeros((height, width), dtype=bool)
    differs[:, :-1] |= (pixels[:, :-1] != pixels[:, 1:]).any(axis=2)
    differs[:-1, :] |= (pixels[:-1, :] != pixels[1:, :]).any(axis=2)
    table = np.zeros((height + 1, width + 1), dtype=np.int64)
    table[1:, 1:] = differs.cumsum(0).cumsum(1)
    slots = {"flow": Slot("flow")}
    margin, step = 16, 8

    def windows(w: int, h: int, y_lo: int, y_hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ys = np.arange(max(y_lo, margin), min(y_hi, height - margin) - h + 1, step)
        xs = np.arange(margin, width - margin - w + 1, step)
        if not len(ys) or not len(xs):
            return ys, xs, np.zeros((0, 0))
        yy, xx = np.meshgrid(ys, xs, indexing="ij")
        sums = table[yy + h, xx + w] - table[yy, xx + w] - table[yy + h, xx] + table[yy, xx]
        return ys, xs, sums

    screen = min(viewport_height, height)
    for name, (lo, hi) in (("quiet", (0, screen)), ("quiet-below", (screen, height))):
        for w, h in SLOT_SIZES:
            ys, xs, sums = windows(w, h, lo, hi)
            hits = np.argwhere(sums == 0)
            if len(hits):
                y, x = int(ys[hits[0][0]]), int(xs[hits[0][1]])
                slots[name] = Slot(name, x, y, w, h, tuple(int(v) for v in pixels[y, x]))
                break
    for w, h in SLOT_SIZES:
        ys, xs, sums = windows(w, h, 0, screen)
        if sums.size and sums.max() > 0:
            at = np.unravel_index(int(sums.argmax()), sums.shape)
            y, x = int(ys[at[0]]), int(xs[at[1]])
            slots["ink"] = Slot("ink", x, y, w, h, tuple(int(v) for v in pixels[y, x]))
            break
    return slots


# ------------------------------------------------------------------------------------------------
# The plan: a deterministic sequence of mutations
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    index: int
    primitive: str
    family: str
    delivery: str  # a page delivery, or "plot"
    content: str   # a content kind, or a plot role
    base: str
    slot: str      # the slot kind asked for ("" for plots)

    @property
    def id(self) -> str:
        safe = self.base.replace(":", "-").replace("/", "-")
        return f"s{self.index:05d}-{self.primitive}-{self.delivery}-{self.content}-{safe}"


def _contents_for(base: Base, primitive: Primitive) -> list[str]:
    probe = Slot("quiet")
    usable = []
    for name, make in WEB_CONTENT.items():
        if base.kind == "project" and name not in ("section", "copy", "heading", "control"):
            continue
        content = make(base.task, probe)
        if content is None or (primitive.text_only and content.graphic):
            continue
        usable.append(name)
    return usable


def plan(bases: list[Base], seed: int, limit: int) -> list[Plan]:
    """`limit` mutations, drawn from `seed`: rounds over every primitive (page and plot) in a
    shuffled order, each paired with a base, a content kind, a delivery and a slot drawn at random
    among those that fit."""
    rng = random.Random(seed)
    pages = [b for b in bases if b.kind == "web"]
    projects = [b for b in bases if b.kind == "project"]
    plots = [b for b in bases if b.kind == "plot" and "plotly" not in b.text]  # the primitives are matplotlib's
    groups: dict[str, list[Base]] = defaultdict(list)
    for b in pages:
        groups[b.id.split(":")[0]].append(b)
    primitives: list[Primitive | PlotPrimitive] = [*(PRIMITIVES if pages or projects else []),
                                                   *(PLOT_PRIMITIVES if plots else [])]
    deliveries = [d for d in DELIVERIES if d != "inline"]
    out: list[Plan] = []
    while len(out) < limit and primitives:
        before = len(out)
        order = list(primitives)
        rng.shuffle(order)
        for primitive in order:
            if len(out) >= limit:
                break
            if isinstance(primitive, PlotPrimitive):
                base = rng.choice(plots)
                out.append(Plan(len(out), primitive.name, primitive.family, "plot", rng.choice(PLOT_ROLES), base.id, ""))
                continue
            if projects and (not pages or rng.random() < PROJECT_SHARE):
                base = rng.choice(projects)
            else:  # a source first, so the many AesCode variants do not crowd out the rest
                source = rng.choice(sorted(groups))
                base = rng.choice(groups[source])
            contents = _contents_for(base, primitive)
            if not contents:
                continue
            content = rng.choice(contents)
            delivery = "inline" if rng.random() < INLINE_SHARE else rng.choice(deliveries)
            out.append(Plan(len(out), primitive.name, primitive.family, delivery, content, base.id,
                            rng.choice(primitive.slots)))
        if len(out) == before:  # nothing fits these bases: never loop
            break
    return out


# ------------------------------------------------------------------------------------------------
# Scoring
# ------------------------------------------------------------------------------------------------


@dataclass
class Twin:
    """An honest artifact scored twice: its capture, both runs' scores, and whether they agree."""

    capture: Capture | None
    runs: list[Scores]
    stable_capture: bool
    stable_scores: bool
    slots: dict[str, Slot] = field(default_factory=dict)
    problem: str = ""  # why mutations of it cannot be judged ('' when they can)


@dataclass
class Result:
    plan: Plan
    status: str          # kept | not-identical | no-slot | broken | unjudged
    detail: str = ""     # how the capture differed, why it broke, why it was not judged
    gains: list[Gain] = field(default_factory=list)
    confirmed: bool = False
    slot: str = ""       # the slot it went to (the plan's, or the first of the primitive's the base has)
    seconds: float = 0.0
    artifact: str = ""   # where the saved case is (gains only)
    save: Callable[[Path], str] | None = field(default=None, repr=False)  # writes a gain as a corpus case


    @property
    def gained(self) -> bool:
        return self.confirmed and any(g.gained for g in self.gains)


def _scores_equal(a: Scores, b: Scores) -> bool:
    return a.channels == b.channels and a.aggregates == b.aggregates


class Searcher:
    """Scores bases and mutations through one renderer and one pipeline per configuration."""

    def __init__(self, bases: list[Base], *, artifact_timeout_s: float) -> None:
        self.bases = {b.id: b for b in bases}
        self.timeout = artifact_timeout_s
        self.renderer = Renderer(RenderConfig())
        self.linter = HtmlHint()
        self.pipelines: dict[str, RewardPipeline] = {}
        self.twins: dict[tuple[str, str], asyncio.Future[Twin]] = {}

    async def __aenter__(self) -> "Searcher":
        await self.renderer.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        for pipeline in self.pipelines.values():
            await pipeline.sandbox.close()
            for channels in (pipeline.channels(k) for k in ("web", "plot", "project")):
                for channel in channels:
                    await channel.close()
        await self.linter.close()
        await self.renderer.close()

    def pipeline(self, config: dict[str, Any]) -> RewardPipeline:
        key = json.dumps(config, sort_keys=True)
        if key not in self.pipelines:
            self.pipelines[key] = RewardPipeline(PipelineConfig(**config), renderer=self.renderer, linter=self.linter)
        return self.pipelines[key]

    async def score(self, base: Base, text: str, files: dict[str, bytes]) -> tuple[Scores, Capture]:
        scored = await asyncio.wait_for(self.pipeline(base.config).score(base.task, text, files=files or None), self.timeout)
        return Scores.of_record(scored.record), Capture.of(pictures(scored))

    def twin(self, base: Base, text: str, variant: str) -> asyncio.Future[Twin]:
        """The honest twin `text` of `base` (variant '' is the base itself), scored once per run."""
        key = (base.id, variant)
        if key not in self.twins:
            self.twins[key] = asyncio.ensure_future(self._twin(base, text))
        return self.twins[key]

    async def _twin(self, base: Base, text: str) -> Twin:
        try:
            (first, capture), (second, again) = [await self.score(base, text, base.files) for _ in range(2)]
        except Exception as exc:  # noqa: BLE001 - a base that breaks is reported, never fatal
            return Twin(None, [], False, False, problem=f"the twin raised {type(exc).__name__}: {exc}"[:300])
        twin = Twin(capture, [first, second], capture.same(again), _scores_equal(first, second))
        if not first.ok:
            twin.problem = f"the twin was not scored: {first.why}"[:300]
        elif not capture.digests:
            twin.problem = "the twin has no capture"
        elif not twin.stable_capture:
            twin.problem = "the twin's capture differs between two renders"
        elif not twin.stable_scores:
            twin.problem = "the twin's scores differ between two runs: " + _score_drift(first, second)
        pixels = capture.pixels()
        if pixels is not None and base.kind != "plot":
            height = base.task.canvas.height if base.task.canvas else RenderConfig().viewport_height
            twin.slots = find_slots(pixels, height)
        return twin

    async def run(self, plan: Plan) -> Result:
        start = time.perf_counter()
        base = self.bases[plan.base]
        try:
            result = await self._run(plan, base)
        except Exception as exc:  # noqa: BLE001 - a mutation that breaks the runner is reported, not fatal
            result = Result(plan, "broken", f"{type(exc).__name__}: {exc}"[:300])
        result.seconds = round(time.perf_counter() - start, 2)
        return result

    async def _run(self, plan: Plan, base: Base) -> Result:
        twin = await self.twin(base, base.text, "")
        if twin.problem:
            return Result(plan, "unjudged", twin.problem)
        slot_kind, what = "", f"plot text ({plan.content})"
        if plan.delivery == "plot":
            primitive = next(p for p in PLOT_PRIMITIVES if p.name == plan.primitive)
            honest_text, forged_text = base.text, grammar.mutate_script(base.text, plan.content, primitive, base.task)
        else:
            primitive = next(p for p in PRIMITIVES if p.name == plan.primitive)
            slot = next((twin.slots[k] for k in (plan.slot, *primitive.slots) if k in twin.slots), None)
            if slot is None:
                return Result(plan, "no-slot", f"no {'/'.join(primitive.slots)} slot on this base")
            slot_kind = slot.kind
            content = WEB_CONTENT[plan.content](base.task, slot)
            assert content is not None  # the plan only pairs contents a base can have
            what = f"{plan.content}: {content.label}"
            mutation = grammar.mutate_page(base.text, primitive, DELIVERIES[plan.delivery], content, slot,
                                           uid=f"{plan.index:05d}")
            honest_text, forged_text = mutation.honest, mutation.forged
            if honest_text != base.text:  # the primitive's frame is in both twins
                twin = await self.twin(base, honest_text, f"{plan.primitive}@{plan.slot}")
                if twin.problem:
                    return Result(plan, "unjudged", "framed twin: " + twin.problem)
        try:
            forged, capture = await self.score(base, forged_text, base.files)
        except asyncio.TimeoutError:
            return Result(plan, "broken", f"the mutation exceeded its {self.timeout:.0f}s deadline")
        assert twin.capture is not None
        if not capture.same(twin.capture):
            return Result(plan, "not-identical", _capture_difference(twin.capture, capture))
        channels = [name for name, (status, _) in twin.runs[0].channels.items()]
        gains = _gains_over(channels, twin.runs, forged)
        result = Result(plan, "kept", gains=gains, slot=slot_kind)
        if any(g.gained for g in gains):  # confirm on a second run of the mutation
            again, capture2 = await self.score(base, forged_text, base.files)
            confirmed = _gains_over(channels, twin.runs, again)
            result.confirmed = capture2.same(twin.capture) and any(g.gained for g in confirmed)
            if result.confirmed:  # saved once the run knows it is in the report (`search`)
                result.save = lambda folder: save_case(folder, plan, base, honest_text, forged_text, gains, slot_kind, what)
            else:
                result.detail = "a gain on one run that a second run did not repeat"
        return result


def _capture_difference(honest: Capture, forged: Capture) -> str:
    if len(honest.shapes) != len(forged.shapes):
        return f"{len(honest.shapes)} pictures -> {len(forged.shapes)}"
    changed = [i for i, (a, b) in enumerate(zip(honest.digests, forged.digests)) if a != b]
    return "; ".join(f"picture {i + 1}: " + (pixel_difference(honest.pixels(i), forged.pixels(i)) or "pixels differ")
                     for i in changed[:3])


def _score_drift(a: Scores, b: Scores) -> str:
    drift = [f"{n} {a.channels[n][1]} vs {b.channels.get(n, (None, None))[1]}" for n in a.channels
             if a.channels[n] != b.channels.get(n)]
    drift += [f"{n} {v} vs {b.aggregates.get(n)}" for n, v in a.aggregates.items() if b.aggregates.get(n) != v]
    return "; ".join(drift)[:200]


def _gains_over(channels: list[str], twins: list[Scores], forged: Scores) -> list[Gain]:
    """A target gains when the mutation beats every run of its twin; `by` is the smallest margin."""
    per_run = [compare_scores(channels, honest, forged) for honest in twins]
    out = []
    for gains in zip(*per_run):
        first = gains[0]
        gained = all(g.gained for g in gains)
        out.append(Gain(first.target, first.honest, first.forged, gained, min(g.by for g in gains) if gained else 0.0,
                        first.how if gained else ""))
    return out


def save_case(folder: Path, plan: Plan, base: Base, honest: str, forged: str, gains: list[Gain], slot: str,
              what: str = "") -> str:
    """The mutation as a hand-corpus case (its README's format), so `bench forgery` replays it."""
    folder.mkdir(parents=True, exist_ok=True)
    gained = [g.target for g in gains if g.gained]
    channels = [t for t in gained if t not in ("reward", "normalized", "aescode.overall")] or gained
    spec = {"mechanism": f"search: {plan.primitive} ({plan.family}) hides {what or plan.content} via {plan.delivery}"
                         f" at the {slot or 'figure'} slot of {plan.base}",
            "channels": channels, "task": base.task_spec, "config": base.config}
    (folder / "case.json").write_text(json.dumps(spec, indent=2) + "\n")
    if base.kind == "project":
        for name, text in (("honest", honest), ("forged", forged)):
            tree = folder / name
            for path, data in {**base.written, "index.html": text.encode()}.items():
                (tree / path).parent.mkdir(parents=True, exist_ok=True)
                (tree / path).write_bytes(data)
    else:
        suffix = ".py" if base.kind == "plot" else ".html"
        (folder / f"honest{suffix}").write_text(honest)
        (folder / f"forged{suffix}").write_text(forged)
    return str(folder)


# ------------------------------------------------------------------------------------------------
# The run and its report
# ------------------------------------------------------------------------------------------------


async def search(bases: list[Base], *, seed: int, keep: int, max_tries: int, concurrency: int = 2,
                 artifact_timeout_s: float = 120.0, out: Path | None = None, progress: bool = True) -> dict[str, Any]:
    """Run the plan until `keep` mutations were pixel-identical (or `max_tries` were tried); the
    report holds the plan's prefix up to the `keep`-th kept mutation, whatever order they finished in."""
    plans = plan(bases, seed, max_tries)
    results: dict[int, Result] = {}
    started = time.perf_counter()
    next_index = 0
    prefix = [0, 0]  # the finished prefix of the plan: its length, its kept mutations

    def enough() -> bool:
        """Whether the finished prefix of the plan already holds `keep` pixel-identical mutations."""
        while prefix[0] in results and prefix[1] < keep:
            prefix[1] += results[prefix[0]].status == "kept"
            prefix[0] += 1
        return prefix[1] >= keep

    log = None
    if out is not None:  # each result as it comes, so a long run that is stopped still says what it found
        log = (out / "progress.jsonl").open("w")
    async with Searcher(bases, artifact_timeout_s=artifact_timeout_s) as searcher:
        async def worker() -> None:
            nonlocal next_index
            while next_index < len(plans) and not enough():
                item = plans[next_index]
                next_index += 1
                result = await searcher.run(item)
                results[item.index] = result
                if log is not None:
                    log.write(json.dumps({"id": item.id, "status": result.status, "gained": result.gained,
                                          "detail": result.detail,
                                          "deltas": [asdict(g) for g in result.gains if g.gained]}, default=str) + "\n")
                    log.flush()
                if progress:
                    kept = sum(r.status == "kept" for r in results.values())
                    mark = "GAINS" if result.gained else result.status
                    print(f"[{len(results)} tried, {kept} kept] {item.id}: {mark} {result.detail[:80]}",
                          file=sys.stderr, flush=True)

        try:
            await asyncio.gather(*(worker() for _ in range(concurrency)))
        finally:
            if log is not None:
                log.close()
        twins = {f"{b}{'#' + v if v else ''}": (await t) for (b, v), t in searcher.twins.items()}
    ordered, kept = [], 0
    for p in plans:
        if p.index not in results or kept >= keep:
            break
        ordered.append(results[p.index])
        kept += results[p.index].status == "kept"
    for result in ordered:
        if result.gained and result.save is not None and out is not None:
            result.artifact = result.save(out / "gains" / result.plan.id)
    return report(ordered, twins, seed=seed, seconds=time.perf_counter() - started, out=out)


def report(results: list[Result], twins: dict[str, Twin], *, seed: int, seconds: float,
           out: Path | None) -> dict[str, Any]:
    def tally(key) -> dict[str, dict[str, int]]:
        rows: dict[str, Counter] = defaultdict(Counter)
        for r in results:
            row = rows[key(r)]
            row["tried"] += 1
            row[r.status] += 1
            row["gained"] += r.gained
        return {k: dict(v) for k, v in sorted(rows.items())}

    statuses = Counter(r.status for r in results)
    gains = [r for r in results if r.gained]
    controls_kept = [r.plan.id for r in results if r.plan.family == "control" and r.status == "kept"]
    what = {p.name: p.note for p in PRIMITIVES if p.note} | {f"plot:{p.name}": p.note for p in PLOT_PRIMITIVES if p.note}
    return {
        "seed": seed, "seconds": round(seconds, 1),
        "summary": {"tried": len(results), "pixel_identical": statuses["kept"], "gained": len(gains),
                    "not_identical": statuses["not-identical"], "broken": statuses["broken"],
                    "unjudged": statuses["unjudged"], "no_slot": statuses["no-slot"],
                    "unconfirmed": sum(1 for r in results if any(g.gained for g in r.gains) and not r.confirmed),
                    "controls_kept": controls_kept},
        "per_primitive": tally(lambda r: ("plot:" if r.plan.delivery == "plot" else "") + r.plan.primitive),
        "per_family": tally(lambda r: r.plan.family),
        "per_content": tally(lambda r: r.plan.content),
        "per_delivery": tally(lambda r: r.plan.delivery),
        "per_base_source": tally(lambda r: r.plan.base.split(":")[0]),
        "primitive_notes": what,
        "bases": {k: {"problem": t.problem, "stable_capture": t.stable_capture, "stable_scores": t.stable_scores,
                      "slots": {s: asdict(v) for s, v in t.slots.items()}} for k, t in sorted(twins.items())},
        "gains": [{"id": r.plan.id, **asdict(r.plan), "slot_used": r.slot, "artifact": r.artifact,
                   "replay": (f"python -m aesenv.cli bench forgery --cases {out / 'gains'} --only {r.plan.id}"
                              if out is not None else ""),
                   "deltas": [asdict(g) for g in r.gains if g.gained]} for r in gains],
        "results": [{"id": r.plan.id, "status": r.status, "detail": r.detail, "gained": r.gained,
                     "seconds": r.seconds} for r in results],
    }


def report_md(data: dict[str, Any]) -> str:
    s = data["summary"]
    lines = ["# Forgery search", "",
             f"Seed {data['seed']}, {data['seconds']:.0f} s. **{s['tried']} mutations tried, {s['pixel_identical']} "
             f"pixel-identical, {s['gained']} gain** ({s['not_identical']} not identical, {s['broken']} broken, "
             f"{s['unjudged']} on bases that cannot be judged, {s['no_slot']} without a slot, "
             f"{s['unconfirmed']} gains a second run did not repeat).", ""]
    if s["controls_kept"]:
        lines += [f"**The pixel oracle kept a visible control: {s['controls_kept']}**", ""]
    for title, key in (("primitive", "per_primitive"), ("family", "per_family"), ("content", "per_content"),
                       ("delivery", "per_delivery"), ("base", "per_base_source")):
        lines += [f"| {title} | tried | pixel-identical | gained | not identical | broken | unjudged |",
                  "|---|---|---|---|---|---|---|"]
        for name, row in data[key].items():
            lines.append(f"| {name} | {row.get('tried', 0)} | {row.get('kept', 0)} | {row.get('gained', 0)} | "
                         f"{row.get('not-identical', 0)} | {row.get('broken', 0)} | {row.get('unjudged', 0)} |")
        lines.append("")
    if data["gains"]:
        lines += ["## Gains, by primitive", ""]
        by_primitive: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for g in data["gains"]:
            by_primitive[("plot:" if g["delivery"] == "plot" else "") + g["primitive"]].append(g)
        for primitive, found in sorted(by_primitive.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            lines += [f"### {primitive} ({len(found)})", "", "| mutation | deltas |", "|---|---|"]
            for g in found:
                deltas = ", ".join(f"{d['target']} {_fmt(d['honest'])} → {_fmt(d['forged'])}" for d in g["deltas"])
                lines.append(f"| {g['id']} | {deltas} |")
            lines.append("")
        if data["gains"][0]["replay"]:
            replay = data["gains"][0]["replay"].rsplit(" --only ", 1)[0]
            lines += [f"Replay one: `{replay} --only <mutation>` (each is a corpus case in the gains folder).", ""]
    unjudged = {k: v["problem"] for k, v in data["bases"].items() if v["problem"]}
    if unjudged:
        lines += ["## Bases that cannot be judged", ""] + [f"- {k}: {v}" for k, v in unjudged.items()] + [""]
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def main(args: Any) -> int:
    """`bench forgery --search N`: the CLI half (arguments parsed by `benchmarks.forgery.main`)."""
    kinds = {k for k in (args.kind,) if k} or None
    bases = load_bases(kinds)
    if args.bases:
        wanted = [w for w in args.bases.split(",") if w]
        bases = [b for b in bases if any(b.id.startswith(w) for w in wanted)]
    if not bases:
        print("no honest bases matched", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = asyncio.run(search(bases, seed=args.seed, keep=args.search, max_tries=args.max_tries or 4 * args.search,
                              concurrency=args.concurrency, artifact_timeout_s=args.artifact_timeout, out=out,
                              progress=not args.no_progress))
    (out / "search.json").write_text(json.dumps(data, indent=1, default=str))
    (out / "search.md").write_text(report_md(data))
    print(report_md(data))
    s = data["summary"]
    return 1 if s["gained"] or s["controls_kept"] else 0
