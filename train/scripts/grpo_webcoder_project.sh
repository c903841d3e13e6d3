#!/usr/bin/env bash
# GRPO over Webdev-World projects (train/config/grpo_webcoder_project.yaml); data from
# `python -m train.data --tasks builtin:project --multi-turn --out DATA_DIR`.
#   grpo_webcoder_project.sh MODEL_PATH DATA_DIR [N_GPUS] [hydra overrides...]
exec "$(dirname "$0")/launch.sh" grpo_webcoder_project "$@"
