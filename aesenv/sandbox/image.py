"""Build the Docker sandbox image locally, with no registry: debootstrap a minimal Debian root
filesystem with Python, install the sandbox's libraries (the plotting stack and the scientific one,
`SANDBOX_LIBRARIES`) into it from wheels at exactly the versions this environment runs (so both
backends draw the same pixels), add this machine's Node.js and npm and the installed project
packages (`RUNTIMES`, so a project builds alike on both), prune it, and `docker import` it.

The image holds only the OS and libraries; the worker's code is handed to each container when it
starts, so editing the worker never needs a rebuild. The tag is `aesenv-sandbox:<version>` and a
label carries the hash of the recipe (library versions included): `build()` skips when an image
with that hash exists.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from aesenv.version import __version__
from aesenv import paths
from aesenv.sandbox.base import RUNTIMES

SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
PACKAGES = ["python3", "libstdc++6"]  # libstdc++ for Node.js
PYTHON_VERSION = "3.11"  # bookworm's python3
SITE_PACKAGES = f"usr/local/lib/python{PYTHON_VERSION}/dist-packages"
# What a sandboxed script can import, distribution -> module. Both backends carry the same set:
# the local sandbox runs aesenv's own Python, where these are dependencies (pyproject.toml says why
# each one is there, and why scikit-learn, sympy and cartopy are not), and the image pins them to
# the versions installed here, so one script gets one verdict and the same pixels on both.
SANDBOX_LIBRARIES = {
    "numpy": "numpy", "pandas": "pandas", "matplotlib": "matplotlib", "seaborn": "seaborn", "plotly": "plotly",
    "scipy": "scipy", "statsmodels": "statsmodels", "networkx": "networkx", "astropy": "astropy",
}
PRUNE = ["var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info",
         "usr/share/locale"]
IMPORT_CHANGES = ['ENV PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 MPLBACKEND=Agg', 'CMD ["sleep", "infinity"]']
CONTENT_LABEL = "aesenv.content"
SMOKE_TEST = (f"import {', '.join(SANDBOX_LIBRARIES.values())}; matplotlib.use('Agg'); import matplotlib.pyplot; "
              "import scipy.stats, scipy.signal, statsmodels.api, astropy.units")


def image_name() -> str:
    return f"aesenv-sandbox:{__version__}"


def content_hash() -> str:
    recipe = {"suite": SUITE, "packages": PACKAGES, "wheels": wheels(), "prune": PRUNE, "changes": IMPORT_CHANGES,
              "node": node_install().version, "runtimes": {name: _lock_digest(name) for name in RUNTIMES}}
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]


class NodeInstall(NamedTuple):
    """This machine's Node.js: the image carries the same binary and npm, so a project builds
    with the same node on both backends."""

    prefix: Path  # <prefix>/bin/node, <prefix>/lib/node_modules/npm
    version: str


@functools.cache
def node_install() -> NodeInstall:
    node = shutil.which("node")
    if not node:
        raise RuntimeError("node not found: the image carries this machine's Node.js (run `make setup`)")
    prefix = Path(os.path.realpath(node)).parent.parent
    if not (prefix / "lib" / "node_modules" / "npm").is_dir():
        raise RuntimeError(f"npm not found next to {node} (expected {prefix}/lib/node_modules/npm)")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    return NodeInstall(prefix, version)


def _runtime_source(name: str) -> Path:
    """Where a runtime directory (`RUNTIMES`) is installed here."""
    return {"project_modules": paths.project_modules_dir() / "node_modules"}[name]


def _lock_digest(name: str) -> str:
    """The installed lock of a runtime directory: the image must be rebuilt when it changes."""
    stamp = _runtime_source(name) / ".aesenv-lock"
    if not stamp.is_file():
        raise RuntimeError(f"{name} is not installed here, so the image cannot carry it: run `aesenv setup`")
    return hashlib.sha256(stamp.read_bytes()).hexdigest()[:16]


def _add_node(rootfs: Path, say: Callable[[str], None]) -> None:
    """This machine's node and npm under /usr/local, and the runtime directories at their places."""
    node = node_install()
    say(f"adding Node.js {node.version} and {', '.join(RUNTIMES)}")
    bin_dir, lib_dir = rootfs / "usr/local/bin", rootfs / "usr/local/lib/node_modules"
    bin_dir.mkdir(parents=True, exist_ok=True)
    lib_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy2(node.prefix / "bin" / "node", bin_dir / "node")
    shutil.copytree(node.prefix / "lib" / "node_modules" / "npm", lib_dir / "npm", symlinks=True)
    for command, script in (("npm", "npm-cli.js"), ("npx", "npx-cli.js")):
        (bin_dir / command).symlink_to(f"../lib/node_modules/npm/bin/{script}")
    for name, inside in RUNTIMES.items():
        shutil.copytree(_runtime_source(name), rootfs / inside.lstrip("/"), symlinks=True)


def wheels() -> list[str]:
    """The sandbox's libraries pinned to the versions installed here."""
    if missing := missing_libraries():
        raise RuntimeError(f"not installed here, so the image cannot match this environment: {', '.join(missing)}"
                           " (run `make setup`)")
    return [f"{name}=={metadata.version(name)}" for name in SANDBOX_LIBRARIES]


def missing_libraries() -> list[str]:
    """The sandbox's libraries this environment lacks (an environment set up before they were added)."""
    missing = []
    for name in SANDBOX_LIBRARIES:
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return missing


def client(timeout: int = 60):
    """The Docker engine (from the environment: DOCKER_HOST or the local socket). Here rather than
    in `aesenv.sandbox.docker`, which imports this module, so that `build()` needs no cycle."""
    import docker

    return docker.from_env(timeout=timeout)


def build(force: bool = False, mirror: str = MIRROR, say: Callable[[str], None] = print) -> str:
    """Build the image unless an identical one exists; returns its name."""
    engine = client(timeout=600)
    name, digest = image_name(), content_hash()
    existing = [i for i in engine.images.list(name=name.split(":")[0]) if name in i.tags]
    if existing and existing[0].labels.get(CONTENT_LABEL) == digest and not force:
        say(f"{name} is up to date (recipe {digest})")
        return name
    if not shutil.which("debootstrap"):
        raise RuntimeError("debootstrap not found: apt-get install debootstrap")
    with tempfile.TemporaryDirectory(prefix="aesenv-image-", dir="/var/tmp") as tmp:
        rootfs = Path(tmp) / "rootfs"
        _debootstrap(rootfs, mirror, say)
        say("installing " + " ".join(wheels()))
        arch = platform.machine()
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--no-warn-conflicts", "--target", str(rootfs / SITE_PACKAGES), "--only-binary=:all:",
                        "--implementation", "cp", "--python-version", PYTHON_VERSION,
                        "--platform", f"manylinux2014_{arch}", "--platform", f"manylinux_2_28_{arch}", *wheels()],
                       check=True)
        _add_node(rootfs, say)
        for relative in PRUNE:
            shutil.rmtree(rootfs / relative, ignore_errors=True)
        (rootfs / "var/lib/apt/lists/partial").mkdir(parents=True, exist_ok=True)
        say("smoke test: importing the sandbox's libraries in the new root")
        subprocess.run(["chroot", str(rootfs), "python3", "-c", SMOKE_TEST], check=True)
        subprocess.run(["chroot", str(rootfs), "node", f"{RUNTIMES['project_modules']}/vite/bin/vite.js", "--version"],
                       check=True, stdout=subprocess.DEVNULL)
        tarball = Path(tmp) / "rootfs.tar"
        say("packing the root filesystem")
        subprocess.run(["tar", "-C", str(rootfs), "--numeric-owner", "-cf", str(tarball), "."], check=True)
        say(f"importing {tarball.stat().st_size / 2**20:.0f} MiB as {name}")
        repository, tag = name.split(":")
        engine.api.import_image(src=str(tarball), repository=repository, tag=tag,
                                changes=[f"LABEL {CONTENT_LABEL}={digest}", *IMPORT_CHANGES])
    image = engine.images.get(name)
    if image.labels.get(CONTENT_LABEL) != digest:
        raise RuntimeError(f"import of {name} did not produce the expected image")
    for old in existing:
        if old.id != image.id:
            _remove_quietly(engine, old.id, say)
    say(f"built {name} (recipe {digest})")
    return name


def _remove_quietly(engine, image_id: str, say: Callable[[str], None]) -> None:
    """Drop the image this build replaced (kept when a container still uses it)."""
    import docker

    try:
        engine.images.remove(image_id)
        say(f"removed the replaced image {image_id[:19]}")
    except docker.errors.APIError as exc:
        say(f"kept the replaced image {image_id[:19]}: {exc.explanation}")


def _debootstrap(rootfs: Path, mirror: str, say: Callable[[str], None]) -> None:
    """debootstrap with a progress bar over its steps (retrieve, unpack, configure)."""
    from tqdm import tqdm

    command = ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(rootfs), mirror]
    say("debootstrap " + " ".join(command[1:]))
    tail: list[str] = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process, \
            tqdm(desc="debootstrap", unit=" steps", mininterval=2) as bar:
        for line in process.stdout:
            tail = (tail + [line.rstrip()])[-20:]
            if line.startswith("I: "):
                bar.set_postfix_str(line[3:60].strip(), refresh=False)
                bar.update()
    if process.returncode != 0:
        raise RuntimeError("debootstrap failed:\n" + "\n".join(tail))
