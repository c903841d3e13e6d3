"""aesenv as a `verifiers` environment (taskset id `aesenv_vf`): see `aesenv.serve.verifiers_env`."""

from aesenv.serve.verifiers_env import (AesChatHarness, AesTask, AesTaskConfig, AesTaskData, AesTaskset, AesTasksetConfig,
                                        load_environment)

__all__ = ["AesChatHarness", "AesTask", "AesTaskConfig", "AesTaskData", "AesTaskset", "AesTasksetConfig", "load_environment"]
