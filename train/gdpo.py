"""GDPO with applicability masks, and plain GRPO on the scalar, as pure functions and as veRL
advantage estimators.

GDPO (AesCode): every reward channel is normalized within its rollout group over the rollouts
where it applies, then a rollout's advantage is the mean of its applicable channel advantages.
Normalizing per channel keeps a high-variance channel from drowning the others, and masking
keeps "not applicable" and "our infrastructure failed" out of the statistics instead of
pretending they scored 0. A NaN score is treated as not applicable, which is how an infra
failure travels through veRL's reward tensors (see `train.reward`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

EPS = 1e-6


def gdpo_advantages(scores: Any, applicable: Any, group_ids: Sequence[Any] | np.ndarray, *, eps: float = EPS) -> Any:
    """`scores` [B, C], `applicable` [B, C] bool, `group_ids` [B] (any hashable) -> advantages [B].

    Per channel and group: (x - mean) / (std + eps) over the applicable rollouts (unbiased std,
    as veRL's GRPO). A channel with a single applicable rollout in its group gives that rollout
    0 (nothing to compare against); a zero-variance group gives 0. A rollout with no applicable
    channel gets 0, so it neither pushes nor pulls the policy. numpy in, numpy out; torch in,
    torch out (same dtype and device)."""
    if _is_torch(scores):
        import torch

        result = _gdpo_numpy(scores.detach().cpu().double().numpy(), _to_numpy(applicable), _to_numpy(group_ids), eps)
        return torch.as_tensor(result, dtype=scores.dtype, device=scores.device)
    return _gdpo_numpy(np.asarray(scores, dtype=np.float64), np.asarray(applicable), np.asarray(group_ids), eps)


def _is_torch(value: Any) -> bool:
    return type(value).__module__.startswith("torch")


def _to_numpy(value: Any) -> np.ndarray:
    return value.detach().cpu().numpy() if _is_torch(value) else np.asarray(value)


def _gdpo_numpy(scores: np.ndarray, applicable: np.ndarray, group_ids: np.ndarray, eps: float) -> np.ndarray:
    if scores.ndim != 2 or applicable.shape != scores.shape or group_ids.shape != scores.shape[:1]:
        raise ValueError(f"want scores [B, C], applicable [B, C], group_ids [B]; got {scores.shape}, "
                         f"{applicable.shape}, {group_ids.shape}")
    mask = applicable.astype(bool) & np.isfinite(scores)
    group = np.unique(group_ids, return_inverse=True)[1].reshape(-1)
    n_groups, n_channels = int(group.max(initial=-1)) + 1, scores.shape[1]
    values = np.where(mask, scores, 0.0)

    count = np.zeros((n_groups, n_channels))
    np.add.at(count, group, mask)
    total = np.zeros((n_groups, n_channels))
    np.add.at(total, group, values)
    mean = total / np.maximum(count, 1)
    deviation = np.where(mask, values - mean[group], 0.0)
    squares = np.zeros((n_groups, n_channels))
    np.add.at(squares, group, deviation**2)
    std = np.sqrt(squares / np.maximum(count - 1, 1))

    comparable = mask & (count[group] > 1)
    channel_adv = np.where(comparable, deviation / (std[group] + eps), 0.0)
    n_applicable = mask.sum(axis=1)
    return np.where(n_applicable > 0, channel_adv.sum(axis=1) / np.maximum(n_applicable, 1), 0.0)


def grpo_advantages(scores: Any, group_ids: Sequence[Any] | np.ndarray, *, eps: float = EPS) -> Any:
    """Plain GRPO on one scalar per rollout; NaN (an infra failure) is left out of its group and
    gets advantage 0. Identical to veRL's GRPO on groups without NaN and with ≥2 rollouts."""
    if _is_torch(scores):
        import torch

        column = scores.reshape(-1, 1)
        return gdpo_advantages(column, torch.ones_like(column, dtype=torch.bool), group_ids, eps=eps)
    column = np.asarray(scores, dtype=np.float64).reshape(-1, 1)
    return gdpo_advantages(column, np.ones_like(column, dtype=bool), group_ids, eps=eps)
