"""Gymnasium registration of aesenv's environments (done on `import aesenv`)."""

from __future__ import annotations

import gymnasium as gym

ENV_IDS = {"AesWeb-v0": "aesenv.envs.web:AesWebEnv", "AesPlot-v0": "aesenv.envs.plot:AesPlotEnv",
           "AesWebRefine-v0": "aesenv.envs.refine:AesWebRefineEnv",
           "AesPlotRefine-v0": "aesenv.envs.refine:AesPlotRefineEnv"}


def register_envs() -> None:
    for env_id, entry_point in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point, max_episode_steps=None)
