"""Finding and launching Chromium.

Playwright's own browser download is preferred when present; otherwise the system's
Chromium (Debian's `chromium-headless-shell` first: same pixels, about half the cost).

Where the machine allows (we are root, util-linux's `unshare` and `setpriv` exist), Chromium is
started through a small launcher: in a network namespace of its own with no interface up, so no
packet leaves it whatever a page does (WebRTC, preconnect, DNS prefetch, QUIC), and as an
unprivileged uid that owns no files, with Chromium's own sandbox on when user namespaces are
allowed. Playwright still drives it over its pipe, and the vendored-library mirror still answers
through request interception. Which isolation was in force goes into every record's provenance.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from aesenv import paths
from aesenv.sysdeps import CHROMIUM_CANDIDATES

BROWSER_UID = 199_999  # owns no files; every browser process runs as it when we can switch
BROWSER_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}  # nothing of ours: no keys
LAUNCHER = """#!/bin/sh
# aesenv's Chromium launcher (written by aesenv.render.browser): hand Playwright's profile folder to
# the browser uid, then run the real browser with no network, as that uid, without capabilities.
set -eu
for arg in "$@"; do
  case "$arg" in --user-data-dir=*) chown -R "$AESENV_BROWSER_UID:$AESENV_BROWSER_UID" "${arg#*=}";; esac
done
exec unshare --net -- setpriv --reuid="$AESENV_BROWSER_UID" --regid="$AESENV_BROWSER_UID" --clear-groups \\
  --inh-caps=-all --bounding-set=-all -- "$AESENV_CHROMIUM_REAL" "$@"
"""

# Without these, Chromium keeps dialing Google services; on a closed network that stalls.
CHROMIUM_ARGS = (
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


@dataclass(frozen=True)
class BrowserLaunch:
    """How to start the browser: what Playwright executes, with which environment, and what that gives."""

    executable: str
    env: dict[str, str]
    chromium_sandbox: bool
    """Chromium's own sandbox on (Playwright then leaves out --no-sandbox)."""
    isolation: str
    """Said in every record's provenance: the isolation in force."""


@functools.cache
def _isolation_possible() -> tuple[bool, bool, str]:
    """(network namespace + uid switch possible, Chromium's sandbox possible, why not)."""
    if os.geteuid() != 0:
        return False, False, "not root: no network namespace or uid switch for the browser"
    for tool in ("unshare", "setpriv"):
        if not shutil.which(tool):
            return False, False, f"{tool} (util-linux) not found"
    probe = subprocess.run(["unshare", "--net", "--", "true"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return False, False, f"network namespaces not permitted: {probe.stderr.strip()[:200]}"
    userns = subprocess.run(["setpriv", f"--reuid={BROWSER_UID}", f"--regid={BROWSER_UID}", "--clear-groups",
                             "--", "unshare", "--user", "--", "true"], capture_output=True, text=True, timeout=30)
    return True, userns.returncode == 0, "" if userns.returncode == 0 else "user namespaces not permitted"


def browser_launch(binary: BrowserBinary, isolate: bool = True) -> BrowserLaunch:
    """The launch for `binary`: through the isolating launcher where possible, else directly
    (and the record says the browser ran unisolated)."""
    possible, sandbox, why = _isolation_possible()
    if not (isolate and possible):
        reason = why if isolate else "isolation turned off"
        return BrowserLaunch(binary.path, dict(BROWSER_ENV), False, f"none ({reason})")
    launcher = paths.home() / "bin" / "isolated-chromium"
    if not launcher.is_file() or launcher.read_text() != LAUNCHER:
        launcher.parent.mkdir(parents=True, exist_ok=True)
        staged = launcher.with_suffix(f".{os.getpid()}")
        staged.write_text(LAUNCHER)
        staged.chmod(0o755)
        staged.replace(launcher)
    env = {**BROWSER_ENV, "AESENV_CHROMIUM_REAL": binary.path, "AESENV_BROWSER_UID": str(BROWSER_UID)}
    detail = f"network namespace without interfaces, uid {BROWSER_UID}, " + (
        "chromium sandbox on" if sandbox else f"chromium sandbox off ({why})")
    return BrowserLaunch(str(launcher), env, sandbox, detail)
