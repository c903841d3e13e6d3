"""Where aesenv keeps what it installs and caches (`AESENV_HOME`, default ~/.cache/aesenv)."""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    return Path(os.environ.get("AESENV_HOME", Path.home() / ".cache" / "aesenv"))


def node_dir() -> Path:
    """npm project holding HTMLHint (and, later, the vendored front-end libraries)."""
    return home() / "node"


def project_modules_dir() -> Path:
    """npm project holding what project tasks build with (React, Vite): its node_modules is the
    read-only node_modules of every project workspace in the sandbox."""
    return home() / "project"
