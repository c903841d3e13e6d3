"""The pinned npm packages aesenv runs or serves: HTMLHint and the vendored CDN libraries.

What is carried, at which versions, is decided in `catalog.json` (see `catalog.py`), from which
`package.json` is generated and `package-lock.json` locked; `aesenv setup` installs the lock into
`AESENV_HOME/node` with `npm ci`.
"""

from __future__ import annotations

import shutil
import subprocess
from importlib import resources
from pathlib import Path

from aesenv import paths


class NodeToolsError(RuntimeError):
    pass


def install_lock(package: str, target: Path, quiet: bool = False) -> Path:
    """`npm ci` the package.json and package-lock.json shipped in the Python package `package`
    into `target`; a no-op when `target` already holds that lock."""
    npm = shutil.which("npm")
    if not npm:
        raise NodeToolsError("npm not found: install Node.js with npm (e.g. `apt-get install nodejs npm`)")
    target.mkdir(parents=True, exist_ok=True)
    lock = (resources.files(package) / "package-lock.json").read_text()
    stamp = target / "node_modules" / ".aesenv-lock"
    if stamp.is_file() and stamp.read_text() == lock:
        return target
    (target / "package.json").write_text((resources.files(package) / "package.json").read_text())
    (target / "package-lock.json").write_text(lock)
    cmd = [npm, "ci", "--no-audit", "--no-fund", "--omit=dev"] + (["--silent"] if quiet else [])
    subprocess.run(cmd, cwd=target, check=True)
    stamp.write_text(lock)
    return target


def install_node_tools(quiet: bool = False) -> Path:
    """Install (or refresh) the pinned packages; a no-op when the lock file is unchanged."""
    return install_lock("aesenv.node", paths.node_dir(), quiet)
