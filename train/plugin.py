"""veRL plugin (entry point group `verl.plugins`, loaded by `import verl` in every process,
Ray workers included): registers aesenv's advantage estimators and agent loop.

- `algorithm.adv_estimator=aes_grpo`: GRPO on the scalar reward, infra failures (NaN) excluded.
- `algorithm.adv_estimator=gdpo` with `trainer.use_v1=False` and
  `algorithm.gdpo_reward_keys=[aes_execution,aes_static,aes_interactive]`: masked GDPO on
  aesenv batches (veRL's own GDPO for everything else). This one cannot go through
  `register_adv_est` under a name of its own: veRL's `compute_advantage` hands the per-sample
  channel values (`non_tensor_batch`) only to the estimator named exactly "gdpo", and
  `register_adv_est` refuses a taken name, so the plugin wraps that slot in place (pinned by
  tests/test_train_verl.py::test_verl_hands_channel_values_only_to_the_estimator_named_gdpo).
- `algorithm.adv_estimator=aes_segment_grpo` (or `aes_rollout_grpo`, its ablation) with the v1
  trainer: segment credit over compacted rollouts. veRL's v1 advantage step hands an estimator
  neither the sample keys nor anything per sample but scores, so the plugin extends that step
  (`compute_advantage_for_multi_trajectories`, which has the keys) for these two names and
  leaves every other estimator to veRL (pinned by tests/test_train_verl.py::
  test_the_v1_trainer_computes_advantages_through_the_extended_step).
- `agent_name: aesenv_refine` in the data: the multi-turn refine agent loop.
"""

from __future__ import annotations

from verl.trainer.ppo import core_algos

from train.estimators import SEGMENT_ESTIMATORS, aes_grpo, masked_gdpo_slot, multi_trajectory_slot, refuse_outside_v1

AES_GRPO = "aes_grpo"


def _extend_multi_trajectory_step() -> None:
    """Wrap the step where it is defined and where the v1 trainer bound it (if already imported)."""
    import sys

    from verl.trainer.ppo.v1 import utils

    for module in (utils, sys.modules.get("verl.trainer.ppo.v1.trainer_base")):
        current = getattr(module, "compute_advantage_for_multi_trajectories", None)
        if current is not None and not getattr(current, "aesenv", False):
            module.compute_advantage_for_multi_trajectories = multi_trajectory_slot(current)


def register() -> None:
    if AES_GRPO not in core_algos.ADV_ESTIMATOR_REGISTRY:
        core_algos.register_adv_est(AES_GRPO)(aes_grpo)
    for name in SEGMENT_ESTIMATORS:
        if name not in core_algos.ADV_ESTIMATOR_REGISTRY:
            core_algos.register_adv_est(name)(refuse_outside_v1)
    _extend_multi_trajectory_step()
    current = core_algos.ADV_ESTIMATOR_REGISTRY["gdpo"]
    if not getattr(current, "aesenv", False):
        # Not register_adv_est: it refuses a taken name, and only "gdpo" gets the channel values.
        core_algos.ADV_ESTIMATOR_REGISTRY["gdpo"] = masked_gdpo_slot(current)
    import train.agent_loop  # noqa: F401 - registers the `aesenv_refine` agent loop


register()
