"""`aesenv serve` as an importable ASGI app, for OpenEnv's manifest (`openenv.yaml`: `app:
aesenv.serve.asgi:app`) and any ASGI server (`uvicorn aesenv.serve.asgi:app`).

Settings come from the environment: `AESENV_SERVE_ENVS` (comma-separated env ids; default every
one), `AESENV_SERVE_MAX_SESSIONS`, `AESENV_SERVE_JUDGE`, `AESENV_SERVE_SANDBOX`, and the token
(`AESENV_SERVE_TOKEN`) as `aesenv serve` reads it. Built on first use, so importing it is cheap.
An ASGI server binds where it is told: off loopback, set the token.
"""

from __future__ import annotations

import os
from typing import Any


def settings_from_environment() -> Any:
    from aesenv.rewards import PipelineConfig
    from aesenv.serve.sessions import ServeSettings, suite_of_webdev

    envs = [e.strip() for e in os.environ.get("AESENV_SERVE_ENVS", "").split(",") if e.strip()]
    return ServeSettings(env_ids=envs, max_sessions=int(os.environ.get("AESENV_SERVE_MAX_SESSIONS", "8")),
                         pipeline=PipelineConfig(judge=os.environ.get("AESENV_SERVE_JUDGE", "offline"),
                                                 sandbox=os.environ.get("AESENV_SERVE_SANDBOX", "local")),
                         webdev_suite=suite_of_webdev())


class _LazyApp:
    """The served app, built from the environment at the first ASGI call (lifespan included)."""

    def __init__(self) -> None:
        self._app: Any = None

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if self._app is None:
            from aesenv.serve.app import TOKEN_ENV, build_app

            self._app, _ = build_app(settings_from_environment(), token=os.environ.get(TOKEN_ENV) or None)
        await self._app(scope, receive, send)


app = _LazyApp()

__all__ = ["app", "settings_from_environment"]
