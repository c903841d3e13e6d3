"""The `aes_hf` rollout's names, apart from its code: train.plugin registers them at `import verl`
in every process, and the engine itself (train.cpu_rollout, transformers and Ray actors) is
imported only where veRL builds a rollout of that name."""

from __future__ import annotations

ROLLOUT_NAME = "aes_hf"
ROLLOUT_ADAPTER = "train.cpu_rollout.HFServerAdapter"


def load_replica():
    from train.cpu_rollout import HFReplica

    return HFReplica
