"""The `aesenv` command: setup, doctor, render, score, demo."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from aesenv.version import __version__
from aesenv.aggregators import AGGREGATORS
from aesenv.kinds import env_ids
from aesenv.models import add_judge_args


def _cmd_setup(args: argparse.Namespace) -> int:
    from aesenv import paths
    from aesenv.node import install_lock, install_node_tools
    from aesenv.render import BrowserNotFound, find_chromium

    target = install_node_tools(quiet=args.quiet)
    print(f"node tools installed in {target}")
    target = install_lock("aesenv.kinds.project.modules", paths.project_modules_dir(), quiet=args.quiet)
    print(f"project packages (React, Vite) installed in {target}")
    try:
        binary = find_chromium()
        print(f"chromium: {binary.path} ({binary.source})")
    except BrowserNotFound as exc:
        print(f"warning: {exc}", file=sys.stderr)
        return 1
    return 0


def _probe(cmd: list[str], timeout: float = 20) -> tuple[bool, str]:
    if not shutil.which(cmd[0]):
        return False, f"{cmd[0]} not found"
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"{' '.join(cmd)} timed out"
    text = (out.stdout or out.stderr).strip().splitlines()
    return out.returncode == 0, text[0] if text else f"exit {out.returncode}"


def _cmd_doctor(args: argparse.Namespace) -> int:
    from aesenv.lint.htmlhint import htmlhint_module_dir
    from aesenv.render import BrowserNotFound, Renderer, find_chromium

    from aesenv import sysdeps

    checks: dict[str, dict[str, object]] = {}
    unmet = sysdeps.missing(sysdeps.GROUPS)
    checks["system"] = {"ok": not any(n.group == "base" for n in unmet),
                        "detail": "; ".join(sysdeps.describe(unmet)) + (
                            f" -- to install: {sysdeps.install_command([n.package for n in unmet])}" if unmet
                            else "") or "all system programs present"}
    checks["python"] = {"ok": True, "detail": sys.version.split()[0]}
    checks["aesenv"] = {"ok": True, "detail": __version__}
    try:
        checks["playwright"] = {"ok": True, "detail": metadata.version("playwright")}
    except metadata.PackageNotFoundError:
        checks["playwright"] = {"ok": False, "detail": "not installed"}
    try:
        binary = find_chromium()

        async def launch() -> str:
            async with Renderer(binary=binary) as r:
                return r.provenance["browser_version"]

        version = asyncio.run(asyncio.wait_for(launch(), 60))
        checks["chromium"] = {"ok": True, "detail": f"{version} at {binary.path} ({binary.source})"}
    except (BrowserNotFound, Exception) as exc:  # noqa: BLE001 - report any launch failure
        checks["chromium"] = {"ok": False, "detail": str(exc).splitlines()[0]}
    checks["node"] = dict(zip(("ok", "detail"), _probe(["node", "--version"])))
    pkg = htmlhint_module_dir() / "package.json"
    checks["htmlhint"] = ({"ok": True, "detail": json.loads(pkg.read_text())["version"]} if pkg.is_file()
                          else {"ok": False, "detail": "not installed: run `aesenv setup`"})
    from aesenv.paths import project_modules_dir

    vite = project_modules_dir() / "node_modules" / "vite" / "package.json"
    checks["projects"] = ({"ok": True, "detail": f"vite {json.loads(vite.read_text())['version']}"}
                                  if vite.is_file() else {"ok": False, "detail": "not installed: run `aesenv setup`"})
    ok, detail = _probe(["docker", "version", "--format", "{{.Server.Version}}"])
    checks["docker"] = {"ok": ok, "detail": detail if ok else f"optional, unavailable: {detail}", "optional": True}
    from aesenv.sandbox.docker import engine_problem
    from aesenv.sandbox.local import describe_isolation

    checks["sandbox"] = describe_isolation()
    problem = engine_problem()
    checks["sandbox-docker"] = {"ok": not problem, "detail": problem or "engine and image ready", "optional": True}
    required_ok = all(c["ok"] for c in checks.values() if not c.get("optional"))
    if args.json:
        print(json.dumps({"ok": required_ok, "checks": checks}, indent=2))
    else:
        for name, c in checks.items():
            mark = "ok " if c["ok"] else ("-- " if c.get("optional") else "ERR")
            print(f"[{mark}] {name:<11} {c['detail']}")
    return 0 if required_ok else 1


def _read_page(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    p = Path(path)
    if not p.is_file():
        raise SystemExit(f"error: no such file: {path}")
    return p.read_bytes()


def _cmd_render(args: argparse.Namespace) -> int:
    from aesenv.artifact import extract_artifact
    from aesenv.render import RenderConfig, Renderer

    artifact = extract_artifact(_read_page(args.page))
    if not artifact.renderable:
        print(f"error: not a renderable page: {artifact.reason or artifact.kind.value}", file=sys.stderr)
        return 2
    config = RenderConfig(viewport_width=args.width, viewport_height=args.height, online=args.online)

    async def go():
        async with Renderer(config) as r:
            return await r.render(artifact.code)

    rendering = asyncio.run(go())
    png = rendering.full_page_png if args.full_page else rendering.viewport_png
    if png is None:
        print(f"error: no screenshot ({rendering.status.value}: {rendering.error})", file=sys.stderr)
        return 1
    Path(args.output).write_bytes(png)
    print(json.dumps(rendering.summary(), indent=2) if args.json else
          f"wrote {args.output} ({rendering.status.value}, {len(rendering.elements)} visible elements)")
    return 0


def _task_from_args(args: argparse.Namespace):
    from aesenv.tasks import Task

    if args.task:
        return Task.model_validate_json(Path(args.task).read_text(encoding="utf-8"))
    if not args.prompt:
        raise SystemExit("error: give --prompt TEXT (and --category) or --task TASK.json")
    return Task(id=args.task_id, prompt=args.prompt, category=args.category)


def _cmd_score(args: argparse.Namespace) -> int:
    from aesenv.render import RenderConfig
    from aesenv.rewards import PipelineConfig, RewardPipeline

    task = _task_from_args(args)
    from aesenv.models import JudgeSpec

    judge_options = JudgeSpec.from_args(args).options()
    channels = {"channels": args.channels.split(",")} if args.channels else {}
    config = PipelineConfig(judge=args.judge, judge_options=judge_options, reward=args.reward,
                            render=RenderConfig(online=args.online), sandbox=args.sandbox, **channels)
    raw = _read_page(args.page)

    async def go():
        async with RewardPipeline(config).validate() as pipeline:  # a bad flag fails before any page
            return await pipeline.score(task, raw)

    scored = asyncio.run(go())
    record = scored.record
    if args.screenshot and scored.picture:
        Path(args.screenshot).write_bytes(scored.picture)
        record.screenshot = args.screenshot
    if args.json:
        from aesenv.jsonl import dumps

        print(dumps(record, indent=2))
    else:
        print(f"task {record.task_id} ({record.category}) status={record.status}"
              + (f" failure={record.failure}" if record.failure else ""))
        print(f"reward (paper) = {record.reward}   normalized = {record.normalized}")
        if record.aescode:
            print("aescode: " + "   ".join(f"{name} = {value}" for name, value in record.aescode.items()))
        for name, c in record.channels.items():
            note = c.payload.get("rationale") or c.payload.get("reason") or ""
            print(f"  {name:<12} {c.status.value:<15} raw={c.raw} score={c.score} {note}")
    return 0 if record.status == "ok" else 3


def _cmd_demo(args: argparse.Namespace) -> int:
    from aesenv.render import RenderConfig
    from aesenv.rewards import PipelineConfig
    from aesenv.runner import run_and_report
    from aesenv.policy import make_policy
    from aesenv.tasks import load_tasks

    tasks = load_tasks(args.tasks)[: args.limit or None]
    policy = make_policy(args.policy)
    config = PipelineConfig(render=RenderConfig(online=args.online), sandbox=args.sandbox)
    summary = asyncio.run(run_and_report(tasks, policy, args.out, config=config, concurrency=args.concurrency,
                                         title=f"aesenv demo: {policy.name} on {args.tasks}", ray=args.ray,
                                         ray_actors=args.ray_actors))
    print(f"{summary['n_total']} episodes, mean reward {summary['reward_mean']}, "
          f"static mean {summary['static_total_mean']}, good rate {summary['good_rate']}, "
          f"infra errors {summary['n_infra_error']}")
    print(f"wrote {args.out}/summary.json and {args.out}/report.html")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from aesenv.envs import make_core
    from aesenv.envs.refine import RefineBudget
    from aesenv.policy import Agent, make_policy
    from aesenv.render import RenderConfig
    from aesenv.rewards import PipelineConfig
    from aesenv.context import ContextConfig
    from aesenv.tasks import Task
    from aesenv.trajectory import run_episode, write_trajectory

    policy = make_policy(args.policy)
    if not isinstance(policy, Agent):
        raise ValueError(f"policy {policy.name!r} answers single turns only; refine episodes need an agent "
                         "(openai:<model>, hf:<model>, repair)")
    task_file = Path(args.task) if args.task else None
    if task_file is not None and task_file.is_file():
        task = Task.model_validate_json(task_file.read_text(encoding="utf-8"))
        tasks: str | list[Task] | None = [task]
    else:
        task, tasks = args.task, args.tasks
    config = PipelineConfig(judge=args.judge, render=RenderConfig(online=args.online), sandbox=args.sandbox)
    budget = RefineBudget(max_turns=args.max_turns, max_wall_s=args.max_wall_s)
    context = None
    if args.compact_at_tokens or args.fold_after is not None:
        context = ContextConfig(**{k: v for k, v in {"compact_at_tokens": args.compact_at_tokens,
                                                      "fold_after": args.fold_after}.items() if v is not None})

    async def go():
        env = make_core(args.env, tasks, config=config, budget=budget, remote=args.env_url)
        try:
            return await run_episode(env, policy, task=task, seed=args.seed, context=context)
        finally:
            await env.close()
            if hasattr(policy, "close"):
                await policy.close()

    try:
        trajectory = asyncio.run(go())
    except KeyError as exc:  # an unknown task id
        raise ValueError(exc.args[0]) from None
    timeline = write_trajectory(trajectory, args.out)
    print(f"{args.env} task {trajectory.task['id']} with {trajectory.policy}: {len(trajectory.steps)} turns, "
          f"ended by {trajectory.end or 'agent error'}, reward {trajectory.reward}"
          + (f"\n{trajectory.error}" if trajectory.error else ""))
    print(f"wrote {args.out}/trajectory.json and {timeline}")
    return 0 if trajectory.reward is not None and not trajectory.error else 3


BENCHMARK_ENTRY_POINTS = "aesenv.benchmarks"


def benchmarks() -> dict[str, metadata.EntryPoint]:
    """`aesenv bench NAME ARGS...` runs the `main(ARGS)` an `aesenv.benchmarks` entry point names."""
    return {ep.name: ep for ep in metadata.entry_points(group=BENCHMARK_ENTRY_POINTS)}


def _cmd_data(args: argparse.Namespace) -> int:
    from aesenv.data.plots import PlotDataConfig, build_plot_data
    from aesenv.data.prompts import PromptDataConfig, build_prompt_data
    from aesenv.data.web import WebDataConfig, build_web_data

    common = {"out": Path(args.out), "model": args.model, "base_url": args.base_url, "concurrency": args.concurrency}
    if args.split == "web":
        if args.teacher_base_url and len(args.teacher_base_url) != len(args.teacher or []):
            raise ValueError("give one --teacher-base-url per --teacher, or none")
        run = build_web_data(WebDataConfig(**common, teachers=args.teacher or [],
                                           teacher_base_urls=args.teacher_base_url or [], scale=args.scale,
                                           per_keyword=args.per_keyword, target=args.target, judge=args.judge,
                                           seed=args.seed, embedding=args.embedding,
                                           embedding_base_url=args.embedding_base_url,
                                           rank_by=args.rank_by, require_lint=args.require_lint))
    elif args.split == "plot":
        if not args.tasks:
            raise ValueError("aesenv data plot needs --tasks (plot tasks with data, e.g. pandasplotbench:F)")
        run = build_plot_data(PlotDataConfig(**common, tasks=args.tasks, sandbox=args.sandbox))
    else:
        if not args.source:
            raise ValueError("aesenv data prompts needs --source (JSONL of {id, description})")
        run = build_prompt_data(PromptDataConfig(**common, source=args.source))
    summary = asyncio.run(run)
    print(json.dumps({"counts": summary["counts"], "usage_total": summary["usage_total"], "wall_s": summary["wall_s"]}))
    print(f"wrote {args.out}/summary.json and the stage files next to it")
    return 0


def _cmd_sandbox(args: argparse.Namespace) -> int:
    from aesenv.sandbox.image import build

    try:
        build(force=args.force)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _cmd_serve_judge(args: argparse.Namespace) -> int:
    from aesenv.llm.serve import JudgeServer

    server = JudgeServer(**{k: v for k, v in {"model": args.model, "port": args.port,
                                              "tensor_parallel_size": args.tensor_parallel_size,
                                              "max_model_len": args.max_model_len}.items() if v is not None})
    if not args.exec:
        print(server.instructions())
        return 0
    if shutil.which("vllm") is None:
        raise FileNotFoundError("no `vllm` on PATH: pip install vllm on the GPU node, or drop --exec to print the command")
    os.execvp("vllm", server.command())


def _cmd_bench(args: argparse.Namespace) -> int:
    return int(benchmarks()[args.benchmark].load()(args.rest) or 0)


def build_parser() -> argparse.ArgumentParser:
    from aesenv.rewards.service import add_ray_arguments

    parser = argparse.ArgumentParser(prog="aesenv", description=__doc__)
    parser.add_argument("--version", action="version", version=f"aesenv {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("setup", help="install the Node tools (HTMLHint) and check the browser")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(fn=_cmd_setup)

    p = sub.add_parser("doctor", help="check browser, Node/HTMLHint and Docker")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=_cmd_doctor)

    p = sub.add_parser("render", help="render a page to a PNG")
    p.add_argument("--online", action="store_true", help="let unknown hosts through to the real network")
    p.add_argument("page", help="HTML file (or model answer containing one), - for stdin")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--full-page", action="store_true")
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=960)
    p.add_argument("--json", action="store_true", help="print the rendering summary as JSON")
    p.set_defaults(fn=_cmd_render)

    p = sub.add_parser("score", help="score a page (or model answer) and print its RewardRecord")
    p.add_argument("--online", action="store_true", help="let unknown hosts through to the real network")
    p.add_argument("page", help="HTML file (or model answer containing one), - for stdin")
    p.add_argument("--prompt")
    p.add_argument("--category", default="Website")
    p.add_argument("--task", help="a Task JSON file instead of --prompt/--category")
    p.add_argument("--task-id", default="cli")
    add_judge_args(p)
    p.add_argument("--reward", default="paper", choices=list(AGGREGATORS),
                   help="a registered aggregate (the task's kind must declare it)")
    p.add_argument("--channels", help="comma-separated reward channels (default: execution,static,interactive; "
                   "AesCode: execution,text,boundary,chart,table,layout,whitespace,checklist)")
    p.add_argument("--screenshot", help="also write the full-page screenshot (or a plot's first figure) here")
    p.add_argument("--sandbox", default="local", choices=["local", "docker"], help="where plot scripts run")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=_cmd_score)

    p = sub.add_parser("demo", help="run a policy on a task suite; write summary.json and report.html")
    p.add_argument("--online", action="store_true", help="let unknown hosts through to the real network")
    p.add_argument("--tasks", default="builtin:web")
    p.add_argument("--policy", default="template")
    p.add_argument("--out", default="runs/demo")
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--sandbox", default="local", choices=["local", "docker"], help="where plot scripts run")
    add_ray_arguments(p)
    p.set_defaults(fn=_cmd_demo)

    p = sub.add_parser("run", help="drive a multi-turn refine episode with an agent; record the trajectory "
                                   "and an HTML timeline (timeline.html)")
    p.add_argument("--env", default=env_ids("refine")[0], choices=env_ids("refine"))  # the first registered kind's
    p.add_argument("--policy", required=True, help="openai:<model> (OPENAI_BASE_URL, OPENAI_API_KEY), hf:<model>, repair, "
                                                   "project-repair (AesWebProject-v0)")
    p.add_argument("--task", help="a Task JSON file, or a task id in --tasks (default: one picked by --seed)")
    p.add_argument("--tasks", help="task suite (default: the env's builtin suite)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/episode")
    p.add_argument("--max-turns", type=int, default=16)
    p.add_argument("--max-wall-s", type=float, default=900.0)
    p.add_argument("--judge", default="offline", help="static judge for the final score: offline or openai:<model>")
    p.add_argument("--online", action="store_true", help="let unknown hosts through to the real network")
    p.add_argument("--sandbox", default="local", choices=["local", "docker"], help="where plot scripts and `run` go")
    p.add_argument("--compact-at-tokens", type=int,
                   help="manage the context: fold old tool results, and once it would pass this many (estimated) "
                        "tokens have the policy write a handover note and rebuild it (off by default)")
    p.add_argument("--fold-after", type=int, help="with context management: tool results kept whole (default 4)")
    p.add_argument("--env-url", help="drive the env served there (`aesenv serve`) instead of one in this process")
    p.set_defaults(fn=_cmd_run)

    p = sub.add_parser("data", help="build AesCoder-style training data through OpenAI-compatible endpoints "
                                    "(resumable; `load_tasks` and `train.data --sft` read what it writes)")
    p.add_argument("split", choices=["web", "plot", "prompts"],
                   help="web: instructions and pages; plot: scripts for given data; prompts: RL prompts")
    p.add_argument("--out", required=True)
    p.add_argument("--model", required=True, help="the model that writes (keywords, instructions, scripts, rewrites)")
    p.add_argument("--base-url", help="its OpenAI-compatible endpoint (default OPENAI_BASE_URL)")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--teacher", action="append", help="web: a teacher model that answers (repeat: two)")
    p.add_argument("--teacher-base-url", action="append", help="web: each teacher's endpoint, in --teacher order")
    p.add_argument("--scale", type=float, default=0.001,
                   help="web: share of the paper's keyword split (9,000 Website, 2,500 each other category)")
    p.add_argument("--per-keyword", type=int, default=20, help="web: instructions per keyword")
    p.add_argument("--target", type=int, help="web: instructions kept after K-means (default: the paper's share, "
                                              "200K of 400K)")
    p.add_argument("--judge", help="web: the static judge that ranks the teachers' pages (default: the VLM judge, "
                                   "as the paper; `offline` is a proxy)")
    p.add_argument("--embedding", default="minilm", help="web: instruction embeddings for K-means: minilm (local) "
                                                         "or openai:<model> (the paper: text-embedding-3-large)")
    p.add_argument("--embedding-base-url", help="web: the embedding endpoint (default --base-url)")
    p.add_argument("--rank-by", default="judge", choices=["judge", "reward"],
                   help="web: rank the teachers' pages by the judge's score of each rendering (the paper) or, "
                        "ours, by the whole Eq. 1 reward")
    p.add_argument("--require-lint", action="store_true",
                   help="web (ours): keep a teacher's page only when it also passes the HTMLHint rules")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tasks", help="plot: plot tasks with their data (pandasplotbench:F, jsonl:F)")
    p.add_argument("--sandbox", default="local", choices=["local", "docker"], help="plot: where scripts run")
    p.add_argument("--source", help="prompts: JSONL of {id, description} to rewrite")
    p.set_defaults(fn=_cmd_data)

    p = sub.add_parser("sandbox", help="sandbox tools: `build` makes the docker sandbox image locally")
    p.add_argument("action", choices=["build"])
    p.add_argument("--force", action="store_true", help="rebuild even when an identical image exists")
    p.set_defaults(fn=_cmd_sandbox)

    p = sub.add_parser("serve-judge", help="print (or --exec) the `vllm serve` command for an open VLM judge on a "
                                           "GPU node, and how to point aesenv at it")
    p.add_argument("--model", help="the judge model (default: the default VLM judge's)")
    p.add_argument("--port", type=int)
    p.add_argument("--tensor-parallel-size", type=int, help="GPUs to shard the model over")
    p.add_argument("--max-model-len", type=int)
    p.add_argument("--exec", action="store_true", help="run it here instead of printing it")
    p.set_defaults(fn=_cmd_serve_judge)

    from aesenv.serve.cli import add_parser as add_serve_parser

    add_serve_parser(sub)

    names = sorted(benchmarks())
    p = sub.add_parser("bench", help="run a benchmark: " + (", ".join(names) or "none installed (pip install -e .)"))
    p.add_argument("benchmark", choices=names)
    p.add_argument("rest", nargs=argparse.REMAINDER, help="the benchmark's own arguments (e.g. --out DIR)")
    p.set_defaults(fn=_cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except KeyboardInterrupt:
        return 130
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
