"""The forgery corpus: does any forged artifact earn more than its honest twin?

Each case of `benchmarks/forgeries/` (format: its README) is an artifact written to raise its
own reward by changing how it is measured, beside the same artifact without the trick. Both go
through the one `RewardPipeline` with the case's configuration. A forgery *gains* on a channel
when it scores higher than its twin there, or when it turns a channel the twin is scored on into
`infra_error` or `not_applicable` (a masked channel leaves the GDPO mean); it gains on an
aggregate (`reward`, `normalized`, AesCode's `overall`) when that is higher, or when it voids the
sample (the twin has a reward, the forgery none). The report gives, per case, every targeted
channel and aggregate for both, and per channel how many forgeries gained and by how much. It
exits non-zero when any forgery gains, or when an honest twin is not scored (a broken case).

    aesenv bench forgery --out runs/forgery [--only CASE,...] [--kind web|plot|project]
                         [--judge openai:<model> --judge-base-url URL]
    aesenv bench forgery --search N [--seed S] --out runs/search [--kind ...] [--bases PREFIX,...]

`--search N` runs the forgery search instead (`benchmarks.forgery_search`): invisible mutations of
honest artifacts drawn from a grammar of hiding primitives, kept when their capture is
pixel-identical to their twin's, until N are kept; any kept mutation that raises a channel or an
aggregate is a forgery. It exits non-zero when one gains.

Cases addressed to a VLM judge or agent (`"judge": "openai:judge"`, the `prompt-*` cases) run
with the model `--judge` names; without one they run with the offline judges, where they must
not gain either.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from aesenv.lint.htmlhint import HtmlHint
from aesenv.render import RenderConfig, Renderer
from aesenv.render.models import decode_rgb
from aesenv.rewards import PipelineConfig, RewardPipeline
from aesenv.rewards.pipeline import Scored
from aesenv.rewards.record import RewardRecord
from aesenv.kinds.project.kind import PROJECT
from aesenv.tasks import Task, load_tasks
from aesenv.webdev.scored import DeliveryScores, delivery_scores, starting_files
from aesenv.webdev.session import project_task
from aesenv.webdev.tasks import CompositeTask, load_task

CASES = Path(__file__).resolve().parent / "forgeries"
WEBDEV_SUITE = Path(__file__).resolve().parent / "webdev_suite"
EPS = 1e-6
SCORED = ("ok", "failed")
ANSWER_SUFFIXES = (".html", ".py", ".txt", ".jsx")


@dataclass
class Case:
    id: str
    mechanism: str
    channels: list[str]
    task: Task
    config: dict[str, Any]
    honest: tuple[str, dict[str, bytes]]
    forged: tuple[str, dict[str, bytes]]
    webdev: CompositeTask | None = None  # a Webdev-Bench case: scored by its delivery


@dataclass
class Scores:
    """What a case compares, from a reward record or a Webdev-Bench delivery: each channel's
    (status, score) and each aggregate (None: no value, the sample is voided)."""

    ok: bool
    why: str
    channels: dict[str, tuple[str, float | None]]
    aggregates: dict[str, float | None]
    pictures: list[bytes] = field(default_factory=list, repr=False)  # the captures (`pictures`), when scored here

    @classmethod
    def of_record(cls, record: RewardRecord, pictures: list[bytes] | None = None) -> "Scores":
        aggregates: dict[str, float | None] = {"reward": record.reward, "normalized": record.normalized}
        if record.aescode:
            aggregates["aescode.overall"] = record.aescode.get("overall")
        return cls(record.status == "ok", f"{record.status} {record.failure}",
                   {n: (r.status.value, r.score) for n, r in record.channels.items()}, aggregates, pictures or [])

    @classmethod
    def of_delivery(cls, delivered: DeliveryScores) -> "Scores":
        status = "infra_error" if delivered.infra else "ok"
        return cls(not delivered.infra, delivered.infra,
                   {n: (status, v) for n, v in delivered.scores.items()}, {})


@dataclass
class Gain:
    target: str          # a channel name, or "reward" / "normalized" / "aescode.overall"
    honest: float | str | None
    forged: float | str | None
    gained: bool
    by: float = 0.0      # how much (1.0 for a masked channel or a voided sample)
    how: str = ""


@dataclass
class Outcome:
    case: str
    kind: str
    mechanism: str
    gains: list[Gain] = field(default_factory=list)
    broken: str = ""     # why the case could not be judged (its honest twin was not scored)
    capture: str = ""    # "identical", or how the forgery's capture differs from its twin's ('' for a delivery)
    seconds: float = 0.0

    @property
    def gained(self) -> bool:
        return any(g.gained for g in self.gains)


def _answer(folder: Path, name: str, start: dict[str, bytes] | None = None) -> tuple[str, dict[str, bytes]]:
    """The answer text and its other files: `name.<ext>`, or a folder `name/` of the files a
    project case writes, laid over the workspace it starts from (`start`), whose `index.html`
    is the text."""
    tree = folder / name
    if tree.is_dir():
        files = dict(start or {})
        files.update({p.relative_to(tree).as_posix(): p.read_bytes() for p in sorted(tree.rglob("*")) if p.is_file()})
        entry = files.pop("index.html", b"")
        return entry.decode("utf-8", "replace"), files
    found = [p for p in sorted(folder.glob(f"{name}.*")) if p.suffix in ANSWER_SUFFIXES]
    if len(found) != 1:
        raise ValueError(f"{folder.name}: expected one {name}.<{'|'.join(s[1:] for s in ANSWER_SUFFIXES)}> "
                         f"or a folder {name}/, found {[p.name for p in found]}")
    return found[0].read_text(), {}


def _task(spec: dict[str, Any], builtins: dict[str, Task]) -> Task:
    if "webdev" in spec:
        return project_task(load_task(WEBDEV_SUITE / spec["webdev"]))
    if "builtin" in spec:
        if spec["builtin"] not in builtins:
            raise ValueError(f"no built-in task {spec['builtin']!r}")
        return builtins[spec["builtin"]]
    return Task.model_validate(spec)


def load_cases(root: Path = CASES, only: set[str] | None = None, kind: str | None = None) -> list[Case]:
    builtins: dict[str, Task] = {}
    for suite in ("builtin:web", "builtin:plot", "builtin:aescode", "builtin:project"):
        builtins.update({t.id: t for t in load_tasks(suite)})
    cases = []
    for meta in sorted(root.glob("*/case.json")):
        folder = meta.parent
        if only and folder.name not in only:
            continue
        spec = json.loads(meta.read_text())
        task = _task(spec["task"], builtins)
        if kind and task.kind != kind:
            continue
        webdev = load_task(WEBDEV_SUITE / spec["task"]["webdev"]) if "webdev" in spec["task"] else None
        start = (starting_files(webdev) if webdev else PROJECT.initial_files(task)) if task.kind == "project" else None
        cases.append(Case(id=folder.name, mechanism=spec.get("mechanism", ""), channels=list(spec.get("channels", [])),
                          task=task, config=dict(spec.get("config", {})), webdev=webdev,
                          honest=_answer(folder, "honest", start), forged=_answer(folder, "forged", start)))
    return cases


def compare(case: Case, honest: Scores | RewardRecord, forged: Scores | RewardRecord) -> list[Gain]:
    """Every targeted channel and every aggregate, honest against forged (see the module)."""
    return compare_scores(case.channels, honest, forged)


def compare_scores(channels: list[str], honest: Scores | RewardRecord, forged: Scores | RewardRecord) -> list[Gain]:
    """`channels` and every aggregate, honest against forged: the one rule of a gain, for the
    hand corpus and the search (`benchmarks.forgery_search`) alike."""
    honest = honest if isinstance(honest, Scores) else Scores.of_record(honest)
    forged = forged if isinstance(forged, Scores) else Scores.of_record(forged)
    gains = []
    for name in channels:
        h, f = honest.channels.get(name), forged.channels.get(name)
        if h is None or h[0] not in SCORED:
            gains.append(Gain(name, h[0] if h else None, f[0] if f else None, False, how="the twin is not scored on it"))
            continue
        if f is None or f[0] not in SCORED:
            status = f[0] if f else "absent"
            gains.append(Gain(name, h[1], status, True, 1.0, how=f"masked as {status}"))
            continue
        diff = (f[1] or 0.0) - (h[1] or 0.0)
        gains.append(Gain(name, h[1], f[1], diff > EPS, max(0.0, diff)))
    for name, h_value in honest.aggregates.items():
        f_value = forged.aggregates.get(name)
        if h_value is None:
            continue
        if f_value is None:
            gains.append(Gain(name, h_value, None, True, 1.0, how="voided (no reward)"))
            continue
        diff = f_value - h_value
        gains.append(Gain(name, h_value, f_value, diff > EPS, max(0.0, diff)))
    return gains


async def _scores(case: Case, answer: tuple[str, dict[str, bytes]], pipeline: RewardPipeline) -> Scores:
    text, files = answer
    if case.webdev is not None:  # delivered as a Webdev-Bench session's workspace would be
        return Scores.of_delivery(await delivery_scores(pipeline.backends, case.webdev, {"index.html": text.encode(), **files}))
    scored = await pipeline.score(case.task, text, files=files or None)
    return Scores.of_record(scored.record, pictures(scored))


def pictures(scored: Scored) -> list[bytes]:
    """The captures that decide whether two answers look the same: every figure of a plot, else
    the page's (or the project's) full-page screenshot."""
    if scored.plot is not None:
        return [f.png for f in scored.plot.figures if f.png]
    rendering = scored.rendering
    return [rendering.full_page_png] if rendering is not None and rendering.full_page_png else []


def pixel_difference(a: np.ndarray | None, b: np.ndarray | None) -> str:
    """How two decoded captures differ ('' when they are pixel-identical)."""
    if a is None or b is None:
        return "no capture"
    if a.shape != b.shape:
        return f"size {a.shape[1]}x{a.shape[0]} -> {b.shape[1]}x{b.shape[0]}"
    delta = np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2)
    changed = int((delta > 0).sum())
    return f"{changed} px differ (max {int(delta.max())}/255)" if changed else ""


def capture_difference(honest: list[bytes], forged: list[bytes]) -> str:
    """'identical' when every picture is pixel-identical, else how they differ."""
    if not honest or not forged:
        return "no capture"
    if len(honest) != len(forged):
        return f"{len(honest)} pictures -> {len(forged)}"
    found = [f"picture {i + 1}: {d}" for i, (a, b) in enumerate(zip(honest, forged))
             if a != b and (d := pixel_difference(decode_rgb(a), decode_rgb(b)))]
    return "; ".join(found[:3]) or "identical"


async def judge_case(case: Case, pipeline: RewardPipeline) -> Outcome:
    start = time.perf_counter()
    out = Outcome(case.id, case.task.kind, case.mechanism)
    honest, forged = await asyncio.gather(_scores(case, case.honest, pipeline), _scores(case, case.forged, pipeline))
    if not honest.ok:
        out.broken = f"the honest twin was not scored: {honest.why}"[:300]
    else:
        out.gains = compare(case, honest, forged)
        out.capture = capture_difference(honest.pictures, forged.pictures) if case.webdev is None else ""
    out.seconds = round(time.perf_counter() - start, 2)
    return out


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    per: dict[str, dict[str, Any]] = defaultdict(lambda: {"forgeries": 0, "gained": 0, "max_gain": 0.0, "cases": []})
    for o in outcomes:
        for g in o.gains:
            row = per[g.target]
            row["forgeries"] += 1
            if g.gained:
                row["gained"] += 1
                row["max_gain"] = max(row["max_gain"], g.by)
                row["cases"].append(o.case)
    return {"cases": len(outcomes), "forgeries_that_gain": sum(o.gained for o in outcomes),
            "broken_cases": [o.case for o in outcomes if o.broken],
            "by_kind": {k: sum(o.kind == k for o in outcomes) for k in sorted({o.kind for o in outcomes})},
            "per_target": dict(sorted(per.items()))}


def report_md(outcomes: list[Outcome], totals: dict[str, Any]) -> str:
    lines = ["# Forgery corpus", "",
             f"{totals['cases']} cases ({', '.join(f'{n} {k}' for k, n in totals['by_kind'].items())}); "
             f"**{totals['forgeries_that_gain']} forgeries gain**; {len(totals['broken_cases'])} broken cases.", "",
             "| channel / aggregate | forgeries | gained | max gain |", "|---|---|---|---|"]
    for target, row in totals["per_target"].items():
        lines.append(f"| {target} | {row['forgeries']} | {row['gained']} | {row['max_gain']:.4f} |")
    lines += ["", "| case | kind | mechanism | capture | verdict |", "|---|---|---|---|---|"]
    for o in outcomes:
        verdict = ("BROKEN: " + o.broken) if o.broken else ("GAINS on " + ", ".join(
            f"{g.target} ({g.honest} → {g.forged})" for g in o.gains if g.gained)) if o.gained else "no gain"
        lines.append(f"| {o.case} | {o.kind} | {o.mechanism} | {o.capture} | {verdict} |")
    return "\n".join(lines) + "\n"


VLM_PLACEHOLDER = "openai:judge"


def configured(case: Case, judge: str | None, judge_base_url: str | None) -> dict[str, Any]:
    """The case's pipeline configuration, its VLM placeholder replaced by `judge` (or dropped for
    the offline judges when there is none)."""
    config = dict(case.config)
    if config.get("judge") == VLM_PLACEHOLDER:
        if judge:
            config["judge"] = judge
            if judge_base_url:
                config["judge_options"] = {**config.get("judge_options", {}), "base_url": judge_base_url}
        else:
            config.pop("judge")
    return config


async def run(cases: list[Case], concurrency: int = 2, progress: bool = True, judge: str | None = None,
              judge_base_url: str | None = None) -> list[Outcome]:
    renderer = Renderer(RenderConfig())
    linter = HtmlHint()
    pipelines: dict[str, RewardPipeline] = {}
    slots = asyncio.Semaphore(concurrency)
    done = 0
    try:
        await renderer.start()

        async def one(case: Case) -> Outcome:
            nonlocal done
            config = configured(case, judge, judge_base_url)
            key = json.dumps(config, sort_keys=True)
            if key not in pipelines:
                pipelines[key] = RewardPipeline(PipelineConfig(**config), renderer=renderer, linter=linter)
            async with slots:
                try:
                    outcome = await judge_case(case, pipelines[key])
                except Exception as exc:  # noqa: BLE001 - a case that breaks the runner is reported, not fatal
                    outcome = Outcome(case.id, case.task.kind, case.mechanism,
                                      broken=f"the case raised {type(exc).__name__}: {exc}"[:300])
            done += 1
            if progress:
                mark = "BROKEN" if outcome.broken else "GAINS" if outcome.gained else "ok"
                print(f"[{done}/{len(cases)}] {case.id}: {mark}", file=sys.stderr, flush=True)
            return outcome

        return list(await asyncio.gather(*(one(c) for c in cases)))
    finally:
        for pipeline in pipelines.values():
            await pipeline.sandbox.close()
        await linter.close()
        await renderer.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="aesenv bench forgery", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="runs/forgery", help="folder for report.json and report.md")
    parser.add_argument("--only", default="", help="comma-separated case ids")
    parser.add_argument("--kind", choices=["web", "plot", "project"], help="only cases of this kind")
    parser.add_argument("--cases", default=str(CASES), help="the corpus folder")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--judge", help="openai:<model> for the cases addressed to a VLM (default: offline judges)")
    parser.add_argument("--judge-base-url", help="the OpenAI-compatible endpoint for --judge")
    parser.add_argument("--no-progress", action="store_true")
    search = parser.add_argument_group("the search (benchmarks.forgery_search)")
    search.add_argument("--search", type=int, default=0, metavar="N",
                        help="run the forgery search until N mutations are pixel-identical to their twins")
    search.add_argument("--seed", type=int, default=0, help="the search's seed (the same seed, the same mutations)")
    search.add_argument("--max-tries", type=int, default=0, help="mutations to try at most (default 4N)")
    search.add_argument("--artifact-timeout", type=float, default=120.0, help="seconds per scored artifact")
    search.add_argument("--bases", default="", help="only bases whose id starts with one of these (comma-separated)")
    args = parser.parse_args(argv)
    if args.search:
        from benchmarks import forgery_search
        return forgery_search.main(args)
    only = {c for c in args.only.split(",") if c} or None
    cases = load_cases(Path(args.cases), only, args.kind)
    if not cases:
        print("no forgery cases matched", file=sys.stderr)
        return 2
    outcomes = asyncio.run(run(cases, args.concurrency, not args.no_progress, args.judge, args.judge_base_url))
    totals = summary(outcomes)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps({"summary": totals, "cases": [asdict(o) for o in outcomes]}, indent=1))
    (out / "report.md").write_text(report_md(outcomes, totals))
    print(report_md(outcomes, totals))
    return 1 if totals["forgeries_that_gain"] or totals["broken_cases"] else 0


if __name__ == "__main__":
    sys.exit(main())
