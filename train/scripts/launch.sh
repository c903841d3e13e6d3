#!/usr/bin/env bash
# Shared launcher: veRL's main_ppo with one of train/config/*.yaml composed over veRL's own configs.
#   launch.sh CONFIG MODEL_PATH DATA_DIR [N_GPUS] [hydra overrides...]
# DATA_DIR holds train.parquet and test.parquet (python -m train.data). Extra overrides win,
# e.g. trainer.nnodes=2 reward.num_workers=16 reward.custom_reward_function.reward_kwargs.judge=openai:gpt-4o.
# PYTHON picks the interpreter (default: python3). `--cfg job` as an override prints the composed config.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,6p' "$0" >&2
  exit 2
fi
config=$1 model=$2 data=$3
shift 3
gpus=8
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then gpus=$1; shift; fi
here=$(cd "$(dirname "$0")/.." && pwd)
loops=()  # a config's agent-loop settings, by absolute path (Ray workers may start elsewhere)
if [ -f "$here/config/agent_loops/${config#grpo_}.yaml" ]; then
  loops=("actor_rollout_ref.rollout.agent.agent_loop_config_path=$here/config/agent_loops/${config#grpo_}.yaml")
fi
exec "${PYTHON:-python3}" -m verl.trainer.main_ppo \
  --config-path="$here/config" --config-name="$config" \
  'hydra.searchpath=[pkg://verl.trainer.config]' \
  "${loops[@]}" \
  actor_rollout_ref.model.path="$model" \
  data.train_files="$data/train.parquet" data.val_files="$data/test.parquet" \
  trainer.n_gpus_per_node="$gpus" \
  "$@"
