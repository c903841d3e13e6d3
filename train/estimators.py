"""veRL advantage estimators over aesenv rewards (registered by `train.plugin`).

- `aes_grpo`: GRPO on the scalar `score`, where NaN (an infra failure, see `train.reward`) is
  left out of its group and gets advantage 0. Works on veRL's default (v1) trainer. veRL's own
  `grpo` must not be used with aesenv rewards: it would turn one NaN into a NaN loss.
- `gdpo` (replaced): veRL passes per-sample data (`non_tensor_batch`) only to the estimator
  named exactly "gdpo", and only its legacy trainer (`trainer.use_v1=False`) has that data at
  advantage time. So the plugin wraps that slot: batches scored by aesenv (they carry
  `aes_reward_valid`) get masked GDPO over `algorithm.gdpo_reward_keys` (channel keys such as
  `aes_static`; NaN = not applicable); any other batch goes to veRL's own GDPO unchanged.
- `aes_segment_grpo`: WebCoder's segment credit for rollouts that return several samples (one per
  retained context): the rollout advantage, one data point per rollout, plus each segment's
  Φ-based offset δ_k on its tokens. `aes_rollout_grpo` is the same without the offsets (every
  token of a rollout gets its advantage), the ablation. Both run in the v1 trainer's
  multi-trajectory advantage step, which the plugin extends (`multi_trajectory_slot`).
"""

from __future__ import annotations

import math
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


# -- segment credit over rollouts that return several samples (WebCoder §2.3) ---------------------
#
# A rollout that was compacted returns one sample per retained context (`train.agent_loop`). veRL's
# v1 trainer stores them under keys `{uid}_{session}_{index}` and hands the advantage step only the
# token-level scores, the response mask and the uid, so each sample's scores carry what the
# estimator needs (`credit_scores`): the rollout's outcome R on the last response token, as veRL
# puts it, plus the sample's segment offset δ_k on each of its trained tokens. A rollout's δ_k are
# token-weighted to zero, so its samples' scores still average to R.

SEGMENT_ESTIMATORS = {"aes_segment_grpo": True, "aes_rollout_grpo": False}  # name -> offsets applied


def credit_scores(length: int, reward: float, mask: torch.Tensor, offset: float) -> torch.Tensor:
    """A sample's token-level scores: R on its last token, δ_k on every trained token."""
    scores = torch.zeros(length, dtype=torch.float32)
    scores[-1] = reward
    return scores + float(offset) * mask.to(torch.float32)


def read_credit(scores: torch.Tensor, mask: torch.Tensor) -> tuple[float, float]:
    """(R, δ_k) back from one (right-padded) row of `credit_scores`. δ_k sits alone on the first
    trained token whenever the sample trains two or more tokens (the agent loop only gives offsets
    then); R is on the last response token, which is the last position that is trained or non-zero."""
    values = scores.double()
    trained = mask.bool()
    positions = torch.nonzero(trained | (values != 0)).flatten()
    if positions.numel() == 0:
        return 0.0, 0.0
    if torch.isnan(values).any():
        return math.nan, 0.0
    loss = torch.nonzero(trained).flatten()
    offset = float(values[loss[0]]) if loss.numel() >= 2 else 0.0
    last = int(positions[-1])
    return float(values[last]) - (offset if bool(trained[last]) else 0.0), offset


def segment_grpo(data: Any, batch_keys: list[str], *, offsets: bool, norm_adv_by_std: bool = True,
                 eps: float = 1e-6) -> Any:
    """Â = (R − μ_x)/(σ_x + ε) over each prompt's rollouts, one data point per rollout however
    many samples it returned (NaN rollouts left out, advantage 0), then Â + δ_k on every trained
    token of sample k (`offsets`; without them every token gets Â: the broadcast ablation)."""
    scores, mask = data.batch["token_level_scores"], data.batch["response_mask"]
    rollouts: dict[str, list[int]] = {}
    for row, key in enumerate(batch_keys):
        uid, session, _ = key.rsplit("_", 2)
        rollouts.setdefault(f"{uid}_{session}", []).append(row)
    names = list(rollouts)
    credit = [read_credit(scores[row], mask[row]) for row in range(len(batch_keys))]
    outcome = []
    for name in names:
        rewards = [credit[row][0] for row in rollouts[name]]
        if any(math.isnan(r) for r in rewards):
            outcome.append(math.nan)
            continue
        if max(rewards) - min(rewards) > 1e-4 * max(1.0, abs(rewards[0])):
            raise ValueError(f"the samples of rollout {name} carry different outcomes {rewards}: "
                             "not scored by aesenv's agent loop (train.agent_loop)")
        outcome.append(rewards[-1])
    groups = np.array([name.rsplit("_", 1)[0] for name in names], dtype=object)
    values = np.asarray(outcome, dtype=np.float64)
    if norm_adv_by_std:
        advantage = grpo_advantages(values, groups, eps=eps)
    else:
        advantage = np.zeros_like(values)
        for group in set(groups):
            members = (groups == group) & np.isfinite(values)
            advantage[members] = values[members] - values[members].mean()
    per_token = torch.zeros_like(scores, dtype=torch.float32)
    for index, name in enumerate(names):
        for row in rollouts[name]:
            valid = math.isfinite(outcome[index])
            shift = credit[row][1] if offsets and valid else 0.0
            per_token[row] = (float(advantage[index]) + shift) * mask[row].to(torch.float32) if valid else 0.0
    data.batch["advantages"] = per_token
    data.batch["returns"] = per_token
    return data


def refuse_outside_v1(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, **_: Any):
    """What the segment estimators' registry entries do when called without the v1 trainer's
    sample keys: there is no telling which samples came from one rollout."""
    raise ValueError("aes_segment_grpo / aes_rollout_grpo need veRL's v1 trainer (trainer.use_v1=true): only its "
                     "advantage step knows which samples one rollout returned")


def multi_trajectory_slot(original: Callable[..., Any]) -> Callable[..., Any]:
    """veRL's `compute_advantage_for_multi_trajectories` with the segment estimators added: they
    need the batch keys (which samples are one rollout), which only this step has."""

    def compute_advantage_for_multi_trajectories(data, batch_keys, adv_estimator, gamma=1.0, lam=1.0, num_repeat=1,
                                                 norm_adv_by_std_in_grpo=True, config=None):
        name = str(getattr(adv_estimator, "value", adv_estimator))
        if name not in SEGMENT_ESTIMATORS:
            return original(data, batch_keys=batch_keys, adv_estimator=adv_estimator, gamma=gamma, lam=lam,
                            num_repeat=num_repeat, norm_adv_by_std_in_grpo=norm_adv_by_std_in_grpo, config=config)
        if config is not None and config.get("use_kl_in_reward", False):
            raise ValueError(f"{name} reads the rollout outcome from the scores: use the KL loss "
                             "(actor.use_kl_loss), not algorithm.use_kl_in_reward")
        return segment_grpo(data, list(batch_keys), offsets=SEGMENT_ESTIMATORS[name],
                            norm_adv_by_std=norm_adv_by_std_in_grpo)

    compute_advantage_for_multi_trajectories.aesenv = True
    return compute_advantage_for_multi_trajectories
