"""veRL integration for aesenv: the reward function (`train.reward`), GDPO and NaN-aware GRPO
(`train.gdpo`, `train.estimators`), the multi-turn refine agent loop (`train.agent_loop`), data
builders (`python -m train.data`) and launch scripts (`train/scripts/`). veRL loads
`train.plugin` through the `verl.plugins` entry point."""
