"""The served application: one OpenEnv app per env id (`openenv`'s `create_app`: `/reset`,
`/step`, `/state`, `/schema`, `/metadata`, `/health` and the `/ws` session socket), mounted at
`/<env id>/` (and at `/` when one env is served), behind `Guard`, an ASGI layer that:

- checks the token (`AESENV_SERVE_TOKEN`) on every HTTP request and WebSocket handshake when one
  is set: `Authorization: Bearer <token>` (or `?token=` for clients that cannot set headers; the
  access log is off, so it is never written down). Off loopback a server without a token refuses
  to start (`check_bind`).
- bounds every request body and WebSocket message (`max_message_bytes`): a larger one is refused
  with 413 or closes the socket (1009), before anything parses it;
- bounds the sessions of the whole server (`max_sessions`, all env ids together): one more gets
  OpenEnv's typed `CAPACITY_REACHED` error;
- ends a session's step in flight when its client disconnects (OpenEnv's handler only notices at
  its next read): the session's env sees its `Connection` go and cancels the step, so nothing a
  gone client started keeps running, and OpenEnv's handler then closes the session as usual.

Each env's app also has aesenv's own routes (`env_routes`): `/schema` and `/metadata` that
describe this env (`aesenv.serve.describe`: OpenEnv's stock ones show the base `State` and no
readme), the stateless `POST /score` (single-turn: a task and an answer, scored without a
session), `GET /tasks` (paged) and `GET /frames/<id>` (a record's frames by reference). OpenEnv's
`POST /reset` and `POST /step` each run on a fresh env; their OpenAPI text says so, and episodes
live on `/ws`.

`/envs` lists what is served; `/health` answers without a token (liveness only).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import ipaddress
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from fastapi import FastAPI, HTTPException, Query
from fastapi.routing import APIRoute
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.types import ConcurrencyConfig, EnvironmentMetadata, WSErrorCode
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from aesenv.version import __version__
from aesenv.serve import describe
from aesenv.serve.forms import served_mode
from aesenv.wire import (AesAction, AesObservation, AesState, ScoreRequest, ScoreResponse, TaskPage,
                                 TaskSummary)
from aesenv.serve.sessions import CONNECTION, AesServedEnv, Connection, Hub, ServeSettings

log = logging.getLogger(__name__)
TOKEN_ENV = "AESENV_SERVE_TOKEN"
OPEN_PATHS = {"/health"}  # liveness, for orchestrators: says nothing else

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict]]
Send = Callable[[dict], Awaitable[None]]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Loopback may go without a token; any other address needs one."""
    if not is_loopback(host) and not token:
        raise ValueError(f"refusing to serve on {host} without a token: set {TOKEN_ENV} (clients send it as "
                         "'Authorization: Bearer <token>'), or bind to 127.0.0.1")
    if token is not None and len(token) < 16:
        raise ValueError(f"{TOKEN_ENV} is too short: use at least 16 characters (e.g. `openssl rand -hex 24`)")


class Guard:
    """Token, size and session bounds around the whole app (see the module's docstring)."""

    def __init__(self, app: Callable, *, token: str | None, max_bytes: int, max_sessions: int) -> None:
        self.app, self.token, self.max_bytes, self.max_sessions = app, token, max_bytes, max_sessions
        self.active = 0  # open WebSocket sessions and HTTP env calls in flight

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        if not self._authorized(scope):
            return await self._refuse(scope, receive, send, 401, "unauthorized",
                                      f"a valid token is required ({TOKEN_ENV}; send 'Authorization: Bearer <token>')")
        if kind == "http":
            return await self._http(scope, receive, send)
        return await self._websocket(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        if self.token is None or (scope["type"] == "http" and scope.get("path", "").rstrip("/") in OPEN_PATHS):
            return True
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        given = headers.get("authorization", "")
        given = given[7:].strip() if given[:7].lower() == "bearer " else ""
        if not given:
            given = (parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token") or [""])[0]
        return hmac.compare_digest(given.encode(), self.token.encode())

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, status: int, code: str, message: str) -> None:
        if scope["type"] == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008 if status == 401 else 1011, "reason": code})
            return
        body = json.dumps({"error": {"code": code, "message": message}}).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", []))
        declared = headers.get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > self.max_bytes:
            return await self._refuse(scope, receive, send, 413, "too_large",
                                      f"request bodies are limited to {self.max_bytes} bytes")
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return await self._refuse(scope, receive, send, 413, "too_large",
                                          f"request bodies are limited to {self.max_bytes} bytes")
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        body, replayed = b"".join(chunks), False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        counted = scope.get("method") == "POST" and scope.get("path", "").rstrip("/").endswith(("/reset", "/step",
                                                                                                 "/score"))
        if counted and self.active >= self.max_sessions:
            return await self._refuse(scope, receive, send, 503, "capacity_reached",
                                      f"the server runs at most {self.max_sessions} sessions at once; retry later")
        self.active += counted
        try:
            await self.app(scope, replay, send)
        finally:
            self.active -= counted

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.active >= self.max_sessions:
            await receive()  # websocket.connect
            await send({"type": "websocket.accept"})
            with contextlib.suppress(asyncio.TimeoutError):  # answer the client's first message, so it reads why
                await asyncio.wait_for(receive(), 10)
            error = {"type": "error", "data": {"message": f"the server runs at most {self.max_sessions} sessions at "
                                                          "once; retry later", "code": WSErrorCode.CAPACITY_REACHED.value,
                                               "max_sessions": self.max_sessions}}
            await send({"type": "websocket.send", "text": json.dumps(error)})
            await send({"type": "websocket.close", "code": 1013})
            return
        self.active += 1
        inbox: asyncio.Queue[dict] = asyncio.Queue()
        connection = Connection()
        bound = CONNECTION.set(connection)  # the app's task inherits it: its env sees the client go
        try:
            app_task = asyncio.ensure_future(self.app(scope, inbox.get, send))
        finally:
            CONNECTION.reset(bound)

        async def pump() -> None:
            try:
                while True:
                    message = await receive()
                    text, data = message.get("text"), message.get("bytes")
                    if message["type"] == "websocket.receive" and len(text or data or "") > self.max_bytes:
                        with contextlib.suppress(Exception):
                            await send({"type": "websocket.close", "code": 1009, "reason": "message too large"})
                        message = {"type": "websocket.disconnect", "code": 1009}
                    if message["type"] == "websocket.disconnect":
                        return
                    inbox.put_nowait(message)
            finally:  # however the client went (or the server's receive failed), the session ends
                inbox.put_nowait({"type": "websocket.disconnect", "code": 1006})
                connection.gone.set()  # a step in flight ends now (`AesServedEnv._bounded`)

        pump_task = asyncio.ensure_future(pump())
        try:
            await asyncio.wait({app_task}, return_when=asyncio.ALL_COMPLETED)
            if not app_task.cancelled() and app_task.exception() is not None:
                log.info("serve: a session ended on a send to a gone client (%s)", type(app_task.exception()).__name__)
        finally:
            self.active -= 1
            pump_task.cancel()
            await asyncio.gather(pump_task, return_exceptions=True)
            if not app_task.done():
                app_task.cancel()
                await asyncio.gather(app_task, return_exceptions=True)


def build_app(settings: ServeSettings, *, token: str | None = None) -> tuple[Guard, Hub]:
    """The ASGI app serving `settings.served()` env ids, and the hub its sessions share."""
    hub = Hub(settings)
    served = settings.served()
    apps: dict[str, Any] = {}
    concurrency = ConcurrencyConfig(max_concurrent_envs=settings.max_sessions, session_timeout=settings.session_idle_s)
    for env_id in served:
        apps[env_id] = create_app(functools.partial(AesServedEnv, hub, env_id), AesAction, AesObservation,
                                  env_name=env_id, concurrency_config=concurrency)
        env_routes(apps[env_id], hub, env_id)

    async def envs(_) -> JSONResponse:
        return JSONResponse({"aesenv": __version__, "envs": served, "paths": {e: f"/{e}" for e in served},
                             "max_sessions": settings.max_sessions, "active_sessions": len(hub.sessions),
                             "sessions": {e: sum(s.env_id == e for s in hub.sessions) for e in served}})

    async def health(_) -> JSONResponse:
        return JSONResponse({"status": "healthy"})

    @contextlib.asynccontextmanager
    async def lifespan(_):
        await hub.start()
        for app in apps.values():  # OpenEnv's idle-session reaper (mounted apps get no lifespan of their own)
            await _run_handlers(app.router.on_startup)
        try:
            yield
        finally:
            for app in apps.values():
                await _run_handlers(app.router.on_shutdown)
            await hub.close()

    routes: list[Any] = [Route("/envs", envs), Route("/health", health)]
    routes += [Mount(f"/{env_id}", app=app) for env_id, app in apps.items()]
    if len(served) == 1:
        routes.append(Mount("/", app=apps[served[0]]))
    root = Starlette(routes=routes, lifespan=lifespan)
    return Guard(root, token=token, max_bytes=settings.max_message_bytes, max_sessions=settings.max_sessions), hub


STATELESS_NOTE = ("\n\n**aesenv: stateless.** This call runs on a fresh env that is closed when it returns: "
                  "`POST /step` after `POST /reset` answers `no_episode`. Episodes live on the `/ws` WebSocket "
                  "(reset, then step); one answer is scored by `POST /score`. See `GET /schema` (`calls`).")


def env_routes(app: FastAPI, hub: Hub, env_id: str) -> None:
    """aesenv's routes on one env's OpenEnv app (see the module's docstring)."""
    ours = {"/schema", "/metadata"}
    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", None) not in ours]
    for route in app.router.routes:
        if isinstance(route, APIRoute) and route.path in ("/reset", "/step", "/state"):
            route.description = (route.description or "") + STATELESS_NOTE
    single = served_mode(env_id) == "single"

    @app.get("/schema", tags=["Schema"], summary="Every message's schema, reset's parameters, action forms, budgets")
    async def schema() -> dict[str, Any]:
        return describe.schema(hub, env_id)

    @app.get("/metadata", response_model=EnvironmentMetadata, tags=["Environment Info"],
             summary="The env's name, description, version and readme")
    async def metadata() -> EnvironmentMetadata:
        return describe.metadata(hub, env_id)

    @app.get("/tasks", response_model=TaskPage, tags=["Environment Info"], summary="The env's tasks, a page at a time")
    async def tasks(offset: int = Query(0, ge=0), limit: int = Query(50, ge=1, le=500),
                    category: str | None = Query(None, max_length=100)) -> TaskPage:
        listed = hub.catalog(env_id)
        if category is not None:
            listed = [t for t in listed if _category(t).lower() == category.lower()]
        return TaskPage(env_id=env_id, total=len(listed), offset=offset, limit=limit,
                        tasks=[TaskSummary(id=t.id, category=_category(t), prompt=_prompt(t)[:500])
                               for t in listed[offset:offset + limit]])

    @app.get("/frames/{ident}", tags=["Environment Info"], summary="A record's frame given by reference")
    async def frame(ident: str) -> Response:
        data = hub.frames.get(ident)
        if data is None:
            raise HTTPException(404, f"no frame {ident[:40]!r} here (frames are kept a while, then dropped)")
        return Response(data, media_type="image/png" if data[:4] == b"\x89PNG" else "image/jpeg")

    @app.post("/score", response_model=ScoreResponse, tags=["Environment Control"],
              summary="Score one answer to one task, with no session (single-turn envs)")
    async def score(request: ScoreRequest) -> JSONResponse:
        if not single:
            raise HTTPException(404, f"{env_id} is multi-turn: its episodes live on /ws (POST /score is for the "
                                     "single-turn envs)")
        answer = await scored(hub, env_id, request)
        status = 200 if answer.error is None else (503 if answer.error.infra else 400)
        return JSONResponse(answer.model_dump(mode="json"), status_code=status)


async def scored(hub: Hub, env_id: str, request: ScoreRequest) -> ScoreResponse:
    """One single-turn episode on a session of its own, closed at the end."""
    env = AesServedEnv(hub, env_id)
    try:
        observation = await env.reset_async(task=request.task, options=request.options)
        if observation.error is None:
            action = request.action if request.action is not None else AesAction(text=request.answer)
            observation = await env.step_async(action)
    finally:
        await env.aclose()
    record = observation.info.get("record") if observation.error is None else None
    return ScoreResponse(task_id=observation.task_id, reward=observation.reward,
                         reward_valid=observation.error is None and observation.reward_valid,
                         reward_name=observation.info.get("reward_name"), record=record,
                         messages=observation.messages if observation.error is None else [], error=observation.error)


def _category(task: Any) -> str:
    category = getattr(task, "category", None)
    return str(getattr(category, "value", category) or getattr(task, "start", ""))


def _prompt(task: Any) -> str:
    return getattr(task, "prompt", None) or getattr(task, "brief", "") or ""


async def _run_handlers(handlers: list[Callable]) -> None:
    for handler in handlers:
        result = handler()
        if asyncio.iscoroutine(result):
            await result


def serve(settings: ServeSettings, *, host: str = "127.0.0.1", port: int = 8000, uds: str | None = None,
          token: str | None = None, log_level: str = "warning") -> None:
    """Run the server until interrupted (`aesenv serve`)."""
    import uvicorn

    if uds is None:
        check_bind(host, token)
    elif token is not None:
        check_bind("127.0.0.1", token)
    app, _ = build_app(settings, token=token)
    config = uvicorn.Config(app, host=host, port=port, uds=uds, ws_max_size=settings.max_message_bytes,
                            access_log=False, log_level=log_level, lifespan="on", ws_ping_interval=20.0,
                            ws_ping_timeout=30.0, timeout_graceful_shutdown=30)
    uvicorn.Server(config).run()
