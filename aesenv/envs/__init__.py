"""aesenv's environments: two generic classes, single-turn (`single`) and refine (`refine`), each
parameterised by the artifact kind. Gymnasium ids come from the kinds (`aesenv.kinds`), registered
with `register_kind`; `make_core` builds the async core behind an id, for callers that run an
event loop (the runner, veRL's agent loop)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from aesenv.envs.base import AsyncKindEnv
from aesenv.kinds import env_ids, mode_of


def make_core(env_id: str, tasks: Any = None, *, remote: str | None = None, **options: Any) -> AsyncKindEnv:
    """The async core of a registered env id, e.g. `make_core("AesPlotRefine-v0", [task], pipeline=p)`;
    with `remote="http://host:port"` the same interface over a served env (`aesenv.envs.remote`), whose
    server holds the tasks and the pipeline (`tasks` and `options` other than `token` stay unused)."""
    kind, _ = mode_of(env_id)
    if remote is not None:
        from aesenv.envs.remote import AsyncRemoteEnv

        return AsyncRemoteEnv(remote, env_id, token=options.get("token"))
    facade = gym.spec(env_id).entry_point
    facade = gym.envs.registration.load_env_creator(facade) if isinstance(facade, str) else facade
    facade_class = getattr(facade, "env_class", facade)  # an `EnvMaker`, or an env class registered as such
    return facade_class.core_class(tasks, kind=kind, **options)


__all__ = ["env_ids", "make_core"]
