"""Artifact kinds: one registered `Kind` per kind of answer (`web` pages, `plot` scripts, ...).

A kind is one package (`aesenv.kinds.web`, `.plot`, `.project`) holding its channels, judges,
evidence, prompts and Φ; the rest of aesenv is written once over `KINDS`. The built-in kinds are
registered here by string entry point, with their Gymnasium ids, so `import aesenv` loads none of
them: a kind's package is imported when it is first looked up (`KINDS["web"]`, `kind_of(task)`,
`gym.make("AesWeb-v0")`). A new kind is one package and one `register_kind` call (eager) or one
`register_builtin`-style line (lazy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import gymnasium as gym

from aesenv.aggregators import AGGREGATORS, BREAKDOWNS
from aesenv.kinds.envs import DEFAULT_ENVS, env_id
from aesenv.registry import Registry

if TYPE_CHECKING:
    from aesenv.kinds.base import Kind
    from aesenv.tasks import Task

KINDS: "Registry[Kind]" = Registry("artifact kind")
_ENV_IDS: dict[str, tuple[str, str]] = {}  # env id -> (kind name, mode)
_DEFAULT_CHANNELS: dict[str, tuple[str, ...]] = {}  # kind name -> the channels it is scored with by default


@dataclass(frozen=True)
class KindEntry:
    """A kind known by strings alone: enough to register its env ids without importing it."""

    name: str
    title: str
    target: str  # "module:attribute" of the `Kind` instance
    envs: tuple[tuple[str, str, str], ...] = tuple((m, s, e) for m, (s, e) in DEFAULT_ENVS.items())
    channels: tuple[str, ...] = ()  # its `Kind.scoring.default_channels`, known without importing it


def _register_envs(name: str, title: str, envs) -> None:
    for mode, suffix, entry_point in envs:
        ident = env_id(title, suffix)
        _ENV_IDS[ident] = (name, mode)
        if ident not in gym.registry:
            gym.register(id=ident, entry_point=entry_point, kwargs={"kind": name}, max_episode_steps=None)


def register_entry(entry: KindEntry) -> None:
    """Register a kind by its entry point (loaded on first lookup) and its Gymnasium ids."""
    KINDS.register_lazy(entry.name, entry.target)
    _register_envs(entry.name, entry.title, entry.envs)
    _DEFAULT_CHANNELS.setdefault(entry.name, entry.channels)


def register_kind(kind: "Kind") -> "Kind":
    """Register a built `kind` and its Gymnasium ids. Registering the same object again is a no-op."""
    KINDS.register(kind.name)(kind)
    _register_envs(kind.name, kind.title, [(m, s, e) for m, (s, e) in kind.envs.items()])
    _DEFAULT_CHANNELS.setdefault(kind.name, tuple(kind.scoring.default_channels))
    return kind


def unregister_kind(name: str) -> None:
    """Take a registered kind and its Gymnasium ids away again: a kind registered for one test
    module must not change the default channels or `validate()` of every test that runs after it."""
    KINDS.unregister(name)
    _DEFAULT_CHANNELS.pop(name, None)
    for ident in [i for i, (kind, _) in _ENV_IDS.items() if kind == name]:
        del _ENV_IDS[ident]
        gym.registry.pop(ident, None)


BUILTIN = (
    KindEntry("web", "Web", "aesenv.kinds.web.kind:WEB", channels=("execution", "static", "interactive")),
    KindEntry("plot", "Plot", "aesenv.kinds.plot.kind:PLOT", channels=("execution", "static")),
    KindEntry("project", "WebProject", "aesenv.kinds.project.kind:PROJECT",
              envs=(("refine", "", "aesenv.envs.project:project_env"),)),
)
for _entry in BUILTIN:
    register_entry(_entry)

# The built-in aggregators (`Kind.scoring.rewards` names them), beside the kinds they score: AesCoder's
# Eq. 1 is shared by pages and plots, AesCode's is the web kind's, WebCoder's the project kind's.
BUILTIN_AGGREGATORS = {
    "paper": "aesenv.judging.aescoder:paper",
    "normalized": "aesenv.judging.aescoder:normalized",
    "aescode": "aesenv.kinds.web.aescode:aescode",
    "aescode_channels": "aesenv.kinds.web.aescode:aescode_channels",
    "webcoder": "aesenv.kinds.project.aggregate:webcoder",
}
for _name, _target in BUILTIN_AGGREGATORS.items():
    AGGREGATORS.register_lazy(_name, _target)
BREAKDOWNS.register_lazy("aescode", "aesenv.kinds.web.aescode:aescode_scores")


def kind_of(task: "Task") -> "Kind":
    if task.kind not in KINDS:
        raise ValueError(f"task {task.id}: {task.kind!r} tasks have no registered kind (registered: {list(KINDS)})")
    return KINDS[task.kind]


def env_ids(mode: str | None = None) -> list[str]:
    """Every registered env id (of one mode: `single` or `refine`), without loading a kind."""
    return [ident for ident, (_, m) in _ENV_IDS.items() if mode in (None, m)]


def kinds_with(mode: str) -> list[str]:
    """The registered kinds that have an env of `mode` (`single`, `refine`), in registration order,
    without loading a kind: what a surface that offers one mode may be given."""
    return list(dict.fromkeys(name for name, m in _ENV_IDS.values() if m == mode))


def mode_of(env_id: str) -> "tuple[Kind, str]":
    """(kind, mode) of a registered env id."""
    if env_id not in _ENV_IDS:
        raise ValueError(f"{env_id!r} is not an aesenv env; registered: {env_ids()}")
    name, mode = _ENV_IDS[env_id]
    return KINDS[name], mode


def default_channels() -> list[str]:
    """`PipelineConfig.channels` when a config names none: every registered kind's default
    channels, in registration order, each once (no kind is loaded)."""
    return list(dict.fromkeys(name for names in _DEFAULT_CHANNELS.values() for name in names))


def channel_names() -> list[str]:
    """Every channel some registered kind offers (loads every kind)."""
    return sorted({name for kind in KINDS for name in KINDS[kind].channels})


__all__ = ["BUILTIN", "BUILTIN_AGGREGATORS", "KINDS", "KindEntry", "channel_names", "default_channels", "env_ids", "kind_of", "kinds_with", "mode_of", "register_entry",
           "register_kind", "unregister_kind"]
