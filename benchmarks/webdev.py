"""Webdev-Bench: `aesenv bench webdev --policy SPEC --out DIR`.

Each composite task of the suite (default `benchmarks/webdev_suite`, see `aesenv.webdev.tasks`)
runs as one session (`aesenv.webdev.session`): requirements revealed round by round, the
simulated user's gate after each delivery (`--user offline` or `openai:<model>`), terminal
acceptance on the hidden checklist at the end. Tasks run concurrently up to `--concurrency`, with
a progress bar: here, or with `--ray [ADDRESS]` as whole tasks on a pool of `--ray-actors` Ray
actors (each with its own policy, pipeline, user and grader; the records are the same). Records
are appended to `DIR/records.jsonl` as tasks finish, and a rerun into the same DIR skips the
tasks already graded (one that failed on the policy's or our side runs again), here or on Ray;
a rerun with another policy, user or suite content is refused (`aesenv.runner.claim_run`).

Policies: any agent (`openai:<model>` with OPENAI_BASE_URL, `hf:<path>`), and the scripted
`webdev-reference` (the suite's reference implementation: its ceiling) and `do-nothing` (its floor).

Writes `DIR/summary.json` (RS, FS, IS, VS, DSR and the weighted score overall and per starting
condition, wall time per task), `DIR/report.html` (per task: the round timeline with the gate's
verdicts, critiques and screenshots, and every item's grade), `DIR/episodes/<task>/` (the
conversation, replayable: trajectory.json and timeline.html) and `DIR/screenshots/<task>/`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import html
import json
import time
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

from tqdm import tqdm

from aesenv.rewards import PipelineConfig, RewardPipeline
from aesenv.rewards.service import RayPool, add_ray_arguments, ray_address
from aesenv.runner import claim_run, load_records
from aesenv.text import safe_name
from aesenv.trajectory import write_trajectory
from aesenv.webdev.gate import make_user
from aesenv.webdev.graders import make_grader
from aesenv.webdev.metrics import METRICS, suite_metrics
from aesenv.webdev.session import SECONDS_PER_REQUIREMENT, TURNS_PER_REQUIREMENT, TaskRun, WebdevRecord, run_task
from aesenv.webdev.tasks import CompositeTask, load_suite
from benchmarks.runs import opened_policy

SUITE = Path(__file__).with_name("webdev_suite")


def fingerprint(task: CompositeTask) -> str:
    return hashlib.sha256(task.model_dump_json().encode()).hexdigest()[:16]


def summarize(records: list[WebdevRecord], *, policy: str, user: str, wall_s: float) -> dict[str, Any]:
    graded = [r for r in records if r.status == "ok"]
    per_start: dict[str, list[WebdevRecord]] = {}
    for r in graded:
        per_start.setdefault(r.start, []).append(r)
    return {
        "benchmark": "webdev", "policy": policy, "user": user, "n": len(graded), "n_total": len(records),
        "not_graded": {r.task_id: f"{r.status}: {r.error}" for r in records if r.status != "ok"},
        "metrics": suite_metrics([r.metrics for r in graded]),
        "per_start": {start: suite_metrics([r.metrics for r in rs]) for start, rs in sorted(per_start.items())},
        "tasks": {r.task_id: {"start": r.start, "status": r.status, "end": r.end, "metrics": r.metrics,
                              "reached": r.reached, "deliveries": len(r.rounds),
                              "returned": sum(not x.passed for x in r.rounds), "turns": r.turns, "wall_s": r.wall_s}
                  for r in records},
        "wall_s": round(wall_s, 1),
    }


def worker_spec(args: argparse.Namespace) -> dict[str, Any]:
    """What a task runs with, here or on a Ray actor (and what a rerun into the same DIR must match)."""
    spec = {"benchmark": "webdev", "policy": args.policy, "user": args.user, "grader": args.grader,
            "seconds_per_requirement": args.seconds_per_requirement}
    if args.turns_per_requirement is not None:  # ours: a run without it keeps the identity it always had
        spec["turns_per_requirement"] = args.turns_per_requirement
    return {**spec, "env_url": args.env_url} if getattr(args, "env_url", None) else spec


@contextlib.asynccontextmanager
async def opened_runner(spec: dict[str, Any]) -> AsyncIterator[Callable[[CompositeTask], Awaitable[TaskRun]]]:
    """`run(task)` with one policy, pipeline, simulated user and grader for every task."""
    user, grader = make_user(spec["user"]), make_grader(spec["grader"])
    try:
        async with opened_policy(spec["policy"]) as agent, RewardPipeline(PipelineConfig()) as pipeline:
            async def run_one(task: CompositeTask) -> TaskRun:
                return await run_task(task, agent, pipeline, user, grader=grader,
                                      seconds_per_requirement=spec["seconds_per_requirement"],
                                      turns_per_requirement=spec.get("turns_per_requirement"))
            yield run_one
    finally:
        for model_facing in (user, grader):
            close = getattr(model_facing, "close", None)
            if close is not None:
                await close()


class WebdevWorker:
    """A Ray actor that runs whole tasks with its own `opened_runner`, opened on its first task
    (an actor's constructor cannot await)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self._stack = contextlib.AsyncExitStack()
        self._run: Callable[[CompositeTask], Awaitable[TaskRun]] | None = None
        self._starting = asyncio.Lock()

    async def run(self, task: CompositeTask) -> TaskRun:
        async with self._starting:
            if self._run is None:
                self._run = await self._stack.enter_async_context(opened_runner(self.spec))
        return await self._run(task)

    async def close(self) -> None:
        self._run = None
        await self._stack.aclose()


@contextlib.asynccontextmanager
async def remote_runner(spec: dict[str, Any], url: str) -> AsyncIterator[Callable[[CompositeTask], Awaitable[TaskRun]]]:
    """`run(task)` with the policy here and the session (env, gate, user, acceptance) served at `url`
    (`aesenv serve`: its `AesWebdevBench-v0`); the record is the server's."""
    from aesenv.envs.remote import AsyncRemoteEnv
    from aesenv.serve.webdev import WEBDEV_ENV_ID
    from aesenv.trajectory import Trajectory
    from aesenv.webdev.session import project_task

    async with opened_policy(spec["policy"]) as agent:
        async def run_one(task: CompositeTask) -> TaskRun:
            env = AsyncRemoteEnv(url, WEBDEV_ENV_ID)
            trajectory = Trajectory(env_id=WEBDEV_ENV_ID, task=project_task(task).model_dump(mode="json"),
                                    policy=agent.name, first_turn=[])
            record = WebdevRecord(task_id=task.id, title=task.title, start=task.start, policy=agent.name,
                                  user=spec["user"], end="infra_error", status="infra_error")
            try:
                messages, _ = await env.reset(task.id)
                trajectory.first_turn, conversation = messages, list(messages)
                while True:
                    t = time.perf_counter()
                    try:
                        action = await agent.act(conversation, env.tools)
                    except Exception as exc:  # noqa: BLE001 - the agent failing ends its task, not the run
                        record = record.model_copy(update={"status": "policy_error", "end": "agent_error",
                                                           "error": f"{type(exc).__name__}: {exc}"})
                        break
                    agent_ms, t = (time.perf_counter() - t) * 1000, time.perf_counter()
                    observation, reward, terminated, truncated, info = await env.step(action)
                    conversation += [action, *observation]
                    trajectory.record_step(action, list(observation), None, terminated, truncated, info,
                                           agent_ms=agent_ms, env_ms=(time.perf_counter() - t) * 1000)
                    if terminated or truncated:
                        if info.get("webdev_record"):
                            record = WebdevRecord.model_validate(info["webdev_record"])
                        else:
                            record = record.model_copy(update={"error": info.get("error", "no record")})
                        break
            except Exception as exc:  # noqa: BLE001 - the server or the connection: ours, this task only
                record = record.model_copy(update={"error": f"{type(exc).__name__}: {exc}"})
            finally:
                await env.close()
            trajectory.end = record.end
            return TaskRun(record, trajectory, {})

        yield run_one


@contextlib.asynccontextmanager
async def task_runner(spec: dict[str, Any], ray: str | None, actors: int) -> AsyncIterator[Callable]:
    """`run(task)` here, or with `ray` ("local" or a cluster address) on a pool of `actors`
    `WebdevWorker`s: a task whose actor dies runs again on a replacement, and its record is
    written once, by this process."""
    if ray is None:
        async with opened_runner(spec) as run_one:
            yield run_one
        return
    async with RayPool(WebdevWorker, spec, actors=actors, address=ray_address(ray)) as pool:
        yield lambda task: pool.call("run", task, label=f"webdev task {task.id}")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    tasks = load_suite(args.suite, [t for t in args.tasks.split(",") if t] or None)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    spec = worker_spec(args)
    claim_run(out, spec, tasks, fingerprint)
    records_path = out / "records.jsonl"
    done = {i: r for i, r in load_records(records_path, WebdevRecord).items() if r.status == "ok"}
    todo = [t for t in tasks if t.id not in done]
    started = time.monotonic()
    bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), desc="webdev tasks", unit="task",
               disable=args.no_progress)
    pipelines = args.ray_actors if args.ray is not None else 1
    slots, lock = asyncio.Semaphore(args.concurrency * pipelines), asyncio.Lock()
    try:
        if args.env_url and args.ray is not None:
            raise ValueError("--env-url and --ray both say where tasks run: give one")
        runner = remote_runner(spec, args.env_url) if args.env_url else task_runner(spec, args.ray, args.ray_actors)
        async with runner as run_one:
            async def one(task: CompositeTask) -> None:
                async with slots:
                    result = await run_one(task)
                name = safe_name(task.id)
                shots = out / "screenshots" / name
                shots.mkdir(parents=True, exist_ok=True)
                for file, data in result.screenshots.items():
                    (shots / file).write_bytes(data)
                write_trajectory(result.trajectory, out / "episodes" / name)
                async with lock:
                    with records_path.open("a", encoding="utf-8") as fh:
                        fh.write(result.record.model_dump_json() + "\n")
                bar.update(1)
                bar.set_postfix_str(f"{task.id} RS={result.record.metrics.get('RS')}")

            await asyncio.gather(*(one(t) for t in todo))
    finally:
        bar.close()
    final = load_records(records_path, WebdevRecord)
    records = [final[t.id] for t in tasks if t.id in final]
    summary = summarize(records, policy=args.policy, user=args.user, wall_s=time.monotonic() - started)
    summary["grader"] = args.grader
    (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    criteria = {item.id: item.criterion for task in tasks for item in task.items()}
    (out / "report.html").write_text(report_html(records, summary, criteria), encoding="utf-8")
    return summary


_STYLE = """body{font:14px/1.5 system-ui,sans-serif;margin:0;background:#f5f6f8;color:#1d2330}
header{background:#1d2330;color:#fff;padding:20px 28px}main{padding:20px 28px;max-width:1400px}
.cards{display:flex;gap:10px;flex-wrap:wrap}.card{background:#fff;border-radius:8px;padding:10px 14px;min-width:110px}
.card b{display:block;font-size:20px}section{background:#fff;border-radius:10px;margin:18px 0;padding:14px 18px}
table{border-collapse:collapse;width:100%}th,td{padding:5px 8px;border-bottom:1px solid #e6e8ee;text-align:left;vertical-align:top}
.pass{color:#067647}.return{color:#b42318}.g3{background:#dcfae6}.g2{background:#fef0c7}.g1{background:#fee4e2}.g0{background:#fda29b}
.rounds{display:grid;grid-template-columns:repeat(auto-fill,minmax(240px,1fr));gap:12px}
figure{margin:0}figure img{width:100%;border:1px solid #d0d5dd;border-radius:6px}figcaption{font-size:12px}"""


def _metric_cards(metrics: dict[str, Any]) -> str:
    return "".join(f'<div class="card">{m}<b>{metrics.get(m)}</b></div>' for m in METRICS)


def report_html(records: list[WebdevRecord], summary: dict[str, Any], criteria: dict[str, str]) -> str:
    """`criteria`: item id -> its acceptance criterion (shown beside its grade)."""
    esc = html.escape
    parts = [f"<!doctype html><meta charset=utf-8><title>Webdev-Bench: {esc(summary['policy'])}</title>",
             f"<style>{_STYLE}</style><header><h1>Webdev-Bench: {esc(summary['policy'])}</h1>"
             f"user {esc(summary['user'])} · grader {esc(summary['grader'])} · {summary['n']} of {summary['n_total']} tasks graded · "
             f"{summary['wall_s']} s</header><main><div class=cards>{_metric_cards(summary['metrics'])}</div>"]
    for start, metrics in summary["per_start"].items():
        parts.append(f"<h3>start: {esc(start)}</h3><div class=cards>{_metric_cards(metrics)}</div>")
    for r in records:
        name = safe_name(r.task_id)
        parts.append(f"<section><h2>{esc(r.title)} <small>({esc(r.task_id)}, start {esc(r.start)})</small></h2>"
                     f"<p>status {esc(r.status)} · end {esc(r.end)} {esc(r.error)} · delivered {r.delivered} · "
                     f"{r.turns} turns · {r.wall_s} s · <a href='episodes/{name}/timeline.html'>conversation</a></p>"
                     f"<div class=cards>{_metric_cards(r.metrics)}</div><h3>Rounds</h3><div class=rounds>")
        for x in r.rounds:
            verdict = "pass" if x.passed else "return"
            shot = f"<img src='screenshots/{name}/{x.screenshot}' loading=lazy>" if x.screenshot else "(no page)"
            health = "app up" if x.health.serving else esc(x.health.problem or "not up")
            parts.append(f"<figure>{shot}<figcaption><b>{esc(x.requirement)}</b> attempt {x.attempt} · "
                         f"<span class={verdict}>{verdict}</span> at {x.at_s} s · {x.turns} turns · {health}"
                         f"<br>{esc(x.critique)}</figcaption></figure>")
        parts.append("</div><h3>Hidden checklist</h3><table><tr><th>requirement</th><th>item</th><th>criterion</th>"
                     "<th>dimension</th><th>weight</th><th>grade</th><th>found</th></tr>")
        for g in r.grades:
            found = esc(g.problem or json.dumps(g.parts, ensure_ascii=False)[:300])
            parts.append(f"<tr><td>{esc(g.requirement)}</td><td>{esc(g.id)}</td><td>{esc(criteria.get(g.id, ''))}</td>"
                         f"<td>{g.dimension}</td><td>{g.weight}</td><td class=g{g.grade}>{g.grade}</td>"
                         f"<td><code>{found}</code></td></tr>")
        parts.append("</table></section>")
    return "".join(parts) + "</main>"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aesenv bench webdev", description=__doc__.split("\n\n")[0])
    p.add_argument("--policy", required=True,
                   help="openai:<model> | hf:<path> | webdev-reference (the suite's ceiling) | do-nothing (its floor)")
    p.add_argument("--user", default="offline", help="the simulated user at each round's gate: offline | openai:<model>")
    p.add_argument("--grader", default="offline",
                   help="terminal acceptance: offline (the items' executable checks) | openai:<vlm> (an agent "
                        "that operates the app)")
    p.add_argument("--suite", default=str(SUITE), help="a suite folder (one sub-folder per task)")
    p.add_argument("--tasks", default="", help="comma-separated task ids (default: the whole suite)")
    p.add_argument("--concurrency", type=int, default=1, help="tasks at once per pipeline (with --ray: per actor)")
    add_ray_arguments(p)
    p.add_argument("--seconds-per-requirement", type=float, default=SECONDS_PER_REQUIREMENT,
                   help="the task's wall-time budget per requirement, gate included (default %(default)s)")
    p.add_argument("--turns-per-requirement", type=int,
                   help=f"ours: also cap the agent's turns per requirement and attempt (e.g. {TURNS_PER_REQUIREMENT}); "
                        "Webdev-Bench budgets by wall time alone (default: no turn cap)")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--env-url", help="run the sessions on the server there (`aesenv serve`, the serving image): "
                                     "its simulated user and grader (offline), this policy")
    p.add_argument("--out", required=True)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    summary = asyncio.run(run(args))
    m = summary["metrics"]
    print(f"webdev ({summary['policy']}, user {summary['user']}): {summary['n']}/{summary['n_total']} graded  "
          + "  ".join(f"{k}={m[k]}" for k in METRICS))
    for start, block in summary["per_start"].items():
        print(f"  {start:<12} n={block['n']} " + " ".join(f"{k}={block[k]}" for k in METRICS))
    for task_id, t in summary["tasks"].items():
        print(f"  {task_id:<22} RS={t['metrics'].get('RS')} end={t['end']} deliveries={t['deliveries']} "
              f"returned={t['returned']} {t['wall_s']} s")
    print(f"wrote {args.out}/summary.json and {args.out}/report.html")
    return 0 if summary["n"] else 3


if __name__ == "__main__":
    raise SystemExit(main())
