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
- `agent_name: aesenv_refine` in the data: the multi-turn refine agent loop.
"""

from __future__ import annotations

from verl.trainer.ppo import core_algos

from train.estimators import aes_grpo, masked_gdpo_slot

AES_GRPO = "aes_grpo"


def register() -> None:
    if AES_GRPO not in core_algos.ADV_ESTIMATOR_REGISTRY:
        core_algos.register_adv_est(AES_GRPO)(aes_grpo)
    current = core_algos.ADV_ESTIMATOR_REGISTRY["gdpo"]
    if not getattr(current, "aesenv", False):
        # Not register_adv_est: it refuses a taken name, and only "gdpo" gets the channel values.
        core_algos.ADV_ESTIMATOR_REGISTRY["gdpo"] = masked_gdpo_slot(current)
    import train.agent_loop  # noqa: F401 - registers the `aesenv_refine` agent loop


register()
