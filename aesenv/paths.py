"""Where aesenv keeps what it installs and caches (`AESENV_HOME`, default ~/.cache/aesenv)."""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    return Path(os.environ.get("AESENV_HOME", Path.home() / ".cache" / "aesenv"))


def node_dir() -> Path:
    """npm project holding HTMLHint (and, later, the vendored front-end libraries)."""
    return home() / "node"
