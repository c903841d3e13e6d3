#!/usr/bin/env bash
# GRPO-AR single turn (AesCoder's hyper-parameters, train/config/grpo_ar_single_turn.yaml).
#   grpo_ar_single_turn.sh MODEL_PATH DATA_DIR [N_GPUS] [hydra overrides...]
# CONFIG=gdpo_single_turn runs masked GDPO instead (veRL's legacy trainer).
exec "$(dirname "$0")/launch.sh" "${CONFIG:-grpo_ar_single_turn}" "$@"
