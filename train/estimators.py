"""veRL advantage estimators over aesenv rewards (registered by `train.plugin`).

- `aes_grpo`: GRPO on the scalar `score`, where NaN (an infra failure, see `train.reward`) is
  left out of its group and gets advantage 0. Works on veRL's default (v1) trainer. veRL's own
  `grpo` must not be used with aesenv rewards: it would turn one NaN into a NaN loss.
- `gdpo` (replaced): veRL passes per-sample data (`non_tensor_batch`) only to the estimator
  named exactly "gdpo", and only its legacy trainer (`trainer.use_v1=False`) has that data at
  advantage time. So the plugin wraps that slot: batches scored by aesenv (they carry
  `aes_reward_valid`) get masked GDPO over `algorithm.gdpo_reward_keys` (channel keys such as
  `aes_static`; NaN = not applicable); any other batch goes to veRL's own GDPO unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from train.gdpo import gdpo_advantages, grpo_advantages

AESENV_MARKER = "aes_reward_valid"


def _sequence_scores(token_level_rewards: torch.Tensor, response_mask: torch.Tensor) -> torch.Tensor:
    """The outcome reward sits on one token; a NaN there survives the sum (NaN·0 is NaN)."""
    return torch.where(response_mask.bool(), token_level_rewards, torch.zeros_like(token_level_rewards)).sum(-1)


def _broadcast(advantages: torch.Tensor, response_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    per_token = advantages.to(response_mask.device, torch.float32).unsqueeze(-1) * response_mask
    return per_token, per_token


def aes_grpo(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index: np.ndarray,
             config: Any = None, **_: Any) -> tuple[torch.Tensor, torch.Tensor]:
    scores = _sequence_scores(token_level_rewards, response_mask)
    return _broadcast(grpo_advantages(scores, np.asarray(index)), response_mask)


def aes_gdpo(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index: np.ndarray,
             non_tensor_batch: dict[str, np.ndarray], keys: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    missing = [k for k in keys if k not in non_tensor_batch]
    if missing:
        raise KeyError(f"GDPO channel keys {missing} are not in the batch; aesenv sent {sorted(non_tensor_batch)}")
    scores = np.stack([np.asarray(non_tensor_batch[k], dtype=np.float64) for k in keys], axis=1)
    valid_sample = np.isfinite(_sequence_scores(token_level_rewards, response_mask).cpu().numpy())
    applicable = np.isfinite(scores) & valid_sample[:, None]
    advantages = gdpo_advantages(scores, applicable, np.asarray(index))
    return _broadcast(torch.as_tensor(advantages), response_mask)


def masked_gdpo_slot(verl_gdpo: Callable[..., tuple[torch.Tensor, torch.Tensor]]):
    """The estimator registered as "gdpo": aesenv batches get masked GDPO, others veRL's."""

    def gdpo(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index: np.ndarray,
             config: Any = None, non_tensor_batch: dict[str, np.ndarray] | None = None, **kwargs: Any):
        if non_tensor_batch is None or AESENV_MARKER not in non_tensor_batch:
            return verl_gdpo(token_level_rewards=token_level_rewards, response_mask=response_mask, index=index,
                             config=config, non_tensor_batch=non_tensor_batch, **kwargs)
        keys = list((config.get("gdpo_reward_keys") if config is not None else None) or [])
        if not keys:
            raise ValueError("aesenv GDPO needs algorithm.gdpo_reward_keys, e.g. [aes_execution,aes_static,aes_interactive]")
        return aes_gdpo(token_level_rewards, response_mask, index, non_tensor_batch, keys)

    gdpo.aesenv = True  # lets the plugin see it already wrapped this slot
    return gdpo
