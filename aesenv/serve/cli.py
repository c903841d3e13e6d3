"""`aesenv serve`: its flags and what it runs (here, or `--docker` in the serving image)."""

from __future__ import annotations

import argparse
import os

from aesenv.rewards import PipelineConfig


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="serve the envs over OpenEnv's HTTP/WebSocket protocol (loopback by default; "
                                     "another address needs AESENV_SERVE_TOKEN)")
    p.add_argument("--env", action="append", default=[],
                   help="an env id to serve (repeat; default: every registered env and AesWebdevBench-v0)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--uds", help="listen on this Unix socket instead of host:port")
    p.add_argument("--max-sessions", type=int, default=8, help="sessions at once, all envs together")
    p.add_argument("--session-idle-s", type=float, default=600.0, help="a session idle this long is closed")
    p.add_argument("--session-max-s", type=float, default=4 * 3600.0, help="a session's longest life")
    p.add_argument("--step-timeout-s", type=float, default=1800.0, help="one reset or step's deadline")
    p.add_argument("--max-message-mb", type=float, default=8.0, help="largest request or WebSocket message")
    p.add_argument("--judge", default="offline", help="static judge: offline or openai:<model>")
    p.add_argument("--sandbox", default="local", choices=["local", "docker"], help="where untrusted code runs")
    p.add_argument("--tasks", action="append", default=[], metavar="ENV_ID=SOURCE",
                   help="an env's task suite (default: its kind's built-in suite)")
    p.add_argument("--docker", action="store_true",
                   help="run the server in the serving image (built when missing or stale): the env, its sandbox "
                        "and Chromium inside one unprivileged container with no network")
    p.add_argument("--build", action="store_true", help="with --docker: rebuild the image even when up to date")
    p.add_argument("--build-only", action="store_true", help="with --docker: build the image (when needed) and stop")
    p.add_argument("--log-level", default="warning")
    p.set_defaults(fn=run)


def settings_of(args: argparse.Namespace):
    from aesenv.serve.sessions import ServeSettings, suite_of_webdev

    tasks = {}
    for item in args.tasks:
        env_id, sep, source = item.partition("=")
        if not sep:
            raise ValueError(f"--tasks takes ENV_ID=SOURCE, not {item!r}")
        tasks[env_id] = source
    return ServeSettings(env_ids=args.env, max_sessions=args.max_sessions, session_idle_s=args.session_idle_s,
                         session_max_s=args.session_max_s, step_timeout_s=args.step_timeout_s,
                         max_message_bytes=int(args.max_message_mb * 2**20), tasks=tasks,
                         pipeline=PipelineConfig(judge=args.judge, sandbox=args.sandbox),
                         webdev_suite=suite_of_webdev())


def run(args: argparse.Namespace) -> int:
    from aesenv.serve.app import TOKEN_ENV, check_bind, serve

    token = os.environ.get(TOKEN_ENV) or None
    settings = settings_of(args)
    settings.served()  # an unknown env id fails here, before anything starts
    if args.docker:
        from aesenv.serve.container import serve_in_docker

        check_bind(args.host, token)
        if args.judge != "offline" or args.sandbox != "local":
            raise ValueError("the serving image has no network and no Docker engine inside: it runs --judge offline "
                             "with its own sandbox; for a VLM judge, run `aesenv serve` here with --sandbox docker")
        return serve_in_docker(settings, host=args.host, port=args.port, token=token, rebuild=args.build,
                               build_only=args.build_only)
    where = args.uds or f"http://{args.host}:{args.port}"
    print(f"aesenv serve: {', '.join(settings.served())} on {where} (max {settings.max_sessions} sessions"
          f"{', token required' if token else ''})", flush=True)
    serve(settings, host=args.host, port=args.port, uds=args.uds, token=token, log_level=args.log_level)
    return 0
