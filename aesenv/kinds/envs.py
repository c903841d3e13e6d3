"""The env modes every kind is served in, as strings (Gymnasium imports the env class on `make`)."""

# mode -> (id suffix, env entry point); a kind may serve other modes or classes (`Kind.envs`).
DEFAULT_ENVS = {"single": ("", "aesenv.envs.single:single_turn_env"),
                "refine": ("Refine", "aesenv.envs.refine:refine_env")}


def env_id(title: str, suffix: str) -> str:
    """`Aes<title><suffix>-v0`: a kind's Gymnasium id in one mode."""
    return f"Aes{title}{suffix}-v0"
