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
- `VERL_PLATFORM=cpu` (train.cpu_platform) and `actor_rollout_ref.rollout.name=aes_hf`
  (train.cpu_rollout): a CPU device platform and an HF-transformers rollout engine, so veRL's
  trainer takes real steps on a machine without a GPU (`python -m train.smoke`). Both are
  registered through veRL's own registries (its platform registry, its rollout replica registry
  and the table `get_rollout_class` reads) and are chosen only by name: GPU runs never see them.
- Qwen2-VL policies (train.qwen2_vl): where torchvision cannot be imported, `AutoProcessor` maps
  Qwen2VLConfig to an image-only processor, so veRL's `hf_processor` loads the smoke's tiny VL
  policy instead of warning and handing the trainer none; and veRL's Qwen2-VL forward takes a
  micro-batch without pictures under transformers 5 (its dummy-picture branch, unpacked).
"""

from __future__ import annotations

from train import cpu_platform

cpu_platform.register_platform()  # before the imports below can ask veRL for its platform

from verl.trainer.ppo import core_algos  # noqa: E402

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


def _register_cpu_training() -> None:
    """The CPU platform and the `aes_hf` rollout, both loaded lazily by veRL when named."""
    from verl.workers.rollout import base as rollout_base
    from verl.workers.rollout.replica import RolloutReplicaRegistry

    from train.cpu_rollout_names import ROLLOUT_ADAPTER, ROLLOUT_NAME, load_replica

    rollout_base._ROLLOUT_REGISTRY.setdefault((ROLLOUT_NAME, "async"), ROLLOUT_ADAPTER)
    RolloutReplicaRegistry.register(ROLLOUT_NAME, load_replica)


def _trl_value_head_check() -> None:
    """veRL asks `is_trl_available()` before it imports trl's `AutoModelForCausalLMWithValueHead`
    (model building, every FSDP actor's start); trl 1.x (our `trl` extra) no longer ships that class,
    so an installed trl made every actor fail to start. The check is narrowed to what the callers
    mean, "trl has the value-head model", in place before they bind it by name."""
    from verl.utils import import_utils

    current = import_utils.is_trl_available
    if getattr(current, "aesenv", False):
        return

    def trl_has_value_head_model() -> bool:
        if not current():
            return False
        import importlib

        for module_name in ("trl.experimental.ppo", "trl"):
            try:
                if hasattr(importlib.import_module(module_name), "AutoModelForCausalLMWithValueHead"):
                    return True
            except ImportError:
                continue
        return False

    trl_has_value_head_model.aesenv = True
    import sys

    for module in (import_utils, sys.modules.get("verl.models.transformers.monkey_patch"),
                   sys.modules.get("verl.utils.model")):
        if module is not None:
            module.is_trl_available = trl_has_value_head_model


def register() -> None:
    _trl_value_head_check()
    cpu_platform.register()
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
    _register_cpu_training()
    from train import qwen2_vl

    qwen2_vl.register()


register()
