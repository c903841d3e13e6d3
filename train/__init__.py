"""veRL integration for aesenv (GRPO-AR reward function, agent loop, GDPO). Not built yet."""
