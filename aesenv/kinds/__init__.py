"""Artifact kinds: one registered `Kind` per kind of answer (`web` pages, `plot` scripts, ...).

Everything kind-specific lives in the kind's module; the rest of aesenv is written once over
`KINDS`. To add a kind, subclass `Kind` and call `register_kind` (see `aesenv.kinds.base`).
"""

from aesenv.kinds.base import KINDS, Kind, Look, Workbench, env_ids, kind_of, mode_of, register_kind
from aesenv.kinds.plot import PLOT, PlotKind
from aesenv.kinds.project import PROJECT, ProjectKind
from aesenv.kinds.web import WEB, WebKind


def channel_names() -> list[str]:
    """Every channel some registered kind offers."""
    return sorted({name for kind in KINDS for name in KINDS[kind].channels})


__all__ = ["KINDS", "PLOT", "PROJECT", "WEB", "Kind", "Look", "PlotKind", "ProjectKind", "WebKind", "Workbench", "channel_names", "env_ids",
           "kind_of", "mode_of", "register_kind"]
