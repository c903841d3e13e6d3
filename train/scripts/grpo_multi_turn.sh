#!/usr/bin/env bash
# GRPO over multi-turn refine episodes (train/config/grpo_multi_turn.yaml); data from
# `python -m train.data --multi-turn`.
#   grpo_multi_turn.sh MODEL_PATH DATA_DIR [N_GPUS] [hydra overrides...]
exec "$(dirname "$0")/launch.sh" grpo_multi_turn "$@"
