"""Finding and launching Chromium.

Playwright's own browser download is preferred when present; otherwise the system's
Chromium (Debian's `chromium-headless-shell` first: same pixels, about half the cost).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from aesenv.sysdeps import CHROMIUM_CANDIDATES

# Without these, Chromium keeps dialing Google services; on a closed network that stalls.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--mute-audio",
    "--hide-scrollbars",
    "--font-render-hinting=none",
    "--enable-unsafe-swiftshader",
    "--use-angle=swiftshader",
    "--js-flags=--max-old-space-size=512",
)


@dataclass(frozen=True)
class BrowserBinary:
    path: str
    source: str  # "env", "playwright" or "system"


class BrowserNotFound(RuntimeError):
    pass


def _playwright_managed() -> str | None:
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH", Path.home() / ".cache" / "ms-playwright"))
    if not root.is_dir():
        return None
    patterns = ("chromium_headless_shell-*/chrome-*/headless_shell", "chromium-*/chrome-linux*/chrome")
    for pattern in patterns:
        found = sorted(root.glob(pattern), reverse=True)
        if found and os.access(found[0], os.X_OK):
            return str(found[0])
    return None


def find_chromium() -> BrowserBinary:
    """The browser to launch: `AESENV_CHROMIUM`, else Playwright's, else the system's."""
    explicit = os.environ.get("AESENV_CHROMIUM")
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise BrowserNotFound(f"AESENV_CHROMIUM={explicit} is not an executable file")
        return BrowserBinary(explicit, "env")
    managed = _playwright_managed()
    if managed:
        return BrowserBinary(managed, "playwright")
    for name in CHROMIUM_CANDIDATES:
        path = shutil.which(name) or (name if os.access(name, os.X_OK) else None)
        if path:
            return BrowserBinary(path, "system")
    raise BrowserNotFound(
        "no Chromium found: run `make setup` (installs Debian's chromium-headless-shell), "
        "`playwright install chromium`, or set AESENV_CHROMIUM to a Chromium binary"
    )
