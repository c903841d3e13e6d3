#!/usr/bin/env bash
# verifiers' own evaluation entry point (`vf-eval`) on aesenv's verifiers environment (`aesenv_vf`),
# the answers scored by a served env (`aesenv serve`, POST /<env id>/score) when ENV_URL is set,
# else by a pipeline in the eval's process. The model is any OpenAI-compatible endpoint.
#
#   aesenv serve --env AesWeb-v0 &                     # the scorer (its judge, sandbox, browser)
#   BASE_URL=http://127.0.0.1:8001/v1 MODEL=Qwen/Qwen2.5-7B-Instruct ENV_URL=http://127.0.0.1:8000 \
#     examples/verifiers_eval.sh
#
# Each rollout's rewards are aesenv's channels (execution, static, interactive: [0, 1] each, the
# paper's weights); our side's failure is an errored rollout, never a 0. Results: OUT/<run>/traces.jsonl.
set -euo pipefail
: "${BASE_URL:?the model endpoint, e.g. http://127.0.0.1:8001/v1}"
: "${MODEL:?the model id the endpoint serves}"
API_KEY_VAR="${API_KEY_VAR:-OPENAI_API_KEY}"   # the variable holding the endpoint's key (any value for a local one)
export "${API_KEY_VAR}=${!API_KEY_VAR:-local}"
KIND="${KIND:-web}"                             # web or plot
args=(aesenv_vf -m "$MODEL" --client.base-url "$BASE_URL" --client.api-key-var "$API_KEY_VAR"
      -n "${TASKS:-5}" -r "${ROLLOUTS:-2}" -o "${OUT:-runs/verifiers_eval}" --no-push --no-rich
      --env.agent.runtime.type subprocess --env.taskset.kind "$KIND")
if [ -n "${ENV_URL:-}" ]; then
  args+=(--env.taskset.task.env-url "$ENV_URL")
fi
exec vf-eval "${args[@]}" "$@"
