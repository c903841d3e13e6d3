"""The serving image's entry point: lay out the writable AESENV_HOME (the read-only node tools and
project packages linked in), then run `aesenv serve` on the shared Unix socket with the given flags."""

from __future__ import annotations

import os
import sys

from aesenv.serve.container import HOME_IN_IMAGE, RUNTIME_HOME, SOCKET


def main() -> None:
    os.makedirs(os.path.join(RUNTIME_HOME, "matplotlib"), exist_ok=True)
    for part in ("node", "project"):
        link = os.path.join(RUNTIME_HOME, part)
        if not os.path.lexists(link):
            os.symlink(os.path.join(HOME_IN_IMAGE, part), link)
    os.environ.update(AESENV_HOME=RUNTIME_HOME, HOME="/tmp", MPLCONFIGDIR=os.path.join(RUNTIME_HOME, "matplotlib"))
    if os.path.exists(SOCKET):
        os.unlink(SOCKET)
    args = sys.argv[1:] or []
    if args[:1] and not args[0].startswith("-"):  # a command of its own (`docker run IMAGE aesenv ...`)
        os.execvp(args[0], args)
    os.umask(0o011)  # the socket: reachable by the host user through the shared directory
    os.execv(sys.executable, [sys.executable, "-m", "aesenv.cli", "serve", "--uds", SOCKET, *args])


if __name__ == "__main__":
    main()
