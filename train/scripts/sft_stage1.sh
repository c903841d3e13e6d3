#!/usr/bin/env bash
# Stage-I SFT (train/config/sft_stage1.yaml) with veRL's SFT trainer.
#   sft_stage1.sh MODEL_PATH DATA_DIR [N_GPUS] [hydra overrides...]
# DATA_DIR holds train.parquet and test.parquet from `python -m train.data ... --sft ANSWERS`.
# PYTHON picks the interpreter (default: python3); `--cfg job` as an override prints the config.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,5p' "$0" >&2
  exit 2
fi
model=$1 data=$2
shift 2
gpus=8
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then gpus=$1; shift; fi
here=$(cd "$(dirname "$0")/.." && pwd)
exec "${PYTHON:-python3}" -m torch.distributed.run --standalone --nproc_per_node="$gpus" -m verl.trainer.sft_trainer \
  --config-path="$here/config" --config-name=sft_stage1 \
  'hydra.searchpath=[pkg://verl.trainer.config]' \
  model.path="$model" \
  data.train_files="$data/train.parquet" data.val_files="$data/test.parquet" \
  trainer.n_gpus_per_node="$gpus" \
  "$@"
