"""The serving image: the whole episode in one container (the env server, its sandbox workers
under bubblewrap, Chromium, Node.js with HTMLHint, the vendored libraries and the project packages),
built locally with no registry, as the sandbox image is (`aesenv.sandbox.image`).

Two layers. The base (`aesenv-serve-base:<version>`): debootstrap a minimal Debian, then in it
apt installs this machine's Chromium build (`chromium-headless-shell`, the same version, so the
pixels are the same), bubblewrap and the fonts; pip installs aesenv's dependencies and the `serve`
extra's at the versions installed here; this machine's node and npm, and AESENV_HOME's node tools
and project packages, are copied in; `docker import`. Its label is the hash of that recipe, so it
is rebuilt only when one of those changes. The code (`aesenv-serve:<version>`): this checkout's
tracked files (aesenv, policies, benchmarks, train) over the base, a `docker build` of seconds,
labelled with their hash.

`aesenv serve --docker` runs it: unprivileged (not --privileged; every capability dropped but the
few the sandbox and browser launchers need to put jobs and the browser in namespaces and under
uids that own nothing and hold no capability; no-new-privileges), a read-only root, tmpfs for
/tmp, memory and pid limits, and no network at all (`--network none`): the server listens on a
Unix socket in a directory shared with the host, and this process forwards a loopback TCP port
(or the --host given, with the token) to it. Inside, the local sandbox isolates each job as it
does on a host (`aesenv.sandbox.local`), and the browser runs in a network namespace of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from aesenv.version import __version__
from aesenv import paths
from aesenv.sandbox.image import MIRROR, SUITE, client, node_install

BASE = "aesenv-serve-base"
IMAGE = "aesenv-serve"
CONTENT_LABEL = "aesenv.content"
OWNER_LABEL = "aesenv.serve"
PYTHON_VERSION = "3.11"  # bookworm's python3 (the version aesenv's dependencies are pinned for)
SITE = f"usr/local/lib/python{PYTHON_VERSION}/dist-packages"
SRC = "/opt/aesenv/src"
HOME_IN_IMAGE = "/opt/aesenv/home"  # node tools and project packages (read-only)
RUNTIME_HOME = "/tmp/aesenv"  # AESENV_HOME at run time: links to the above, and what must be writable
SOCKET_DIR = "/run/aesenv"
SOCKET = f"{SOCKET_DIR}/serve.sock"
APT_PACKAGES = ["libatomic1", "bubblewrap", "fonts-liberation2", "fonts-dejavu-core", "fonts-noto-color-emoji", "util-linux",
                "ca-certificates"]
DEBOOTSTRAP_PACKAGES = ["python3", "libstdc++6"]
SOURCES = (f"deb {MIRROR} {SUITE} main\ndeb {MIRROR} {SUITE}-updates main\n"
           f"deb http://deb.debian.org/debian-security {SUITE}-security main\n")
CODE_DIRS = ("aesenv", "policies", "benchmarks", "train")
PRUNE = ["var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info"]
# What the container may do, and no more: the local sandbox's bubblewrap and the browser launcher
# make namespaces and mounts (SYS_ADMIN, SYS_CHROOT, SETPCAP to drop the bounding set, NET_ADMIN to
# bring up the loopback of a job's own network namespace: the container itself has no other
# interface), switch to the job and browser uids (SETUID, SETGID), and the worker keeps what it
# needs to own, measure, kill and clean up after a job (`aesenv.sandbox.base.WORKER_CAPS`).
CAPABILITIES = ("SYS_ADMIN", "SYS_CHROOT", "SETPCAP", "NET_ADMIN", "SETUID", "SETGID", "CHOWN", "KILL", "DAC_OVERRIDE", "FOWNER",
                "SYS_PTRACE")


def chromium_version() -> str:
    """This machine's Debian Chromium build: the image installs exactly it."""
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "chromium-headless-shell"], capture_output=True,
                         text=True)
    if out.returncode != 0 or not out.stdout.strip():
        raise RuntimeError("chromium-headless-shell is not installed here (Debian's package): run `make setup`; the "
                           "image carries the same build")
    return out.stdout.strip()


def python_pins() -> list[str]:
    """The distributions installed here that the image needs (aesenv[serve]'s dependency closure,
    walked through the installed metadata), pinned: the image resolves against these, and only a
    change among them asks for a new base."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    installed = {canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions() if d.metadata["Name"]}
    pins: dict[str, str] = {}
    todo = [(Requirement(line), "") for line in [*requirements(), *NO_DEPS]]
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        dist = installed.get(name)
        if dist is None or name in ("aesenv", "pip", "setuptools", "wheel"):
            continue
        extras = sorted(requirement.extras)
        key = f"{name}[{','.join(extras)}]"
        if key in pins:
            continue
        pins[key] = f"{dist.metadata['Name']}=={dist.version}"
        if name == "openenv-core":  # installed without its declared dependencies (the serve extra has them)
            continue
        for line in dist.requires or []:
            child = Requirement(line)
            todo += [(child, e) for e in extras] or [(child, "")]
            if extras:
                todo.append((child, ""))
    return sorted(set(pins.values()))


def requirements() -> list[str]:
    """aesenv's own dependencies and the serve extra's, as the checkout's pyproject.toml declares them."""
    import tomllib

    project = tomllib.loads((checkout_root() / "pyproject.toml").read_text())["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["serve"]]


NO_DEPS = ["openenv-core==0.3.0"]  # as `make setup` installs it (pyproject.toml's serve extra says why)


def _tree_digest(root: Path, skip: tuple[str, ...] = ()) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file() and not any(part in skip for part in path.parts):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(str(path.stat().st_size).encode())
    return digest.hexdigest()[:16]


def base_recipe() -> dict:
    return {"suite": SUITE, "debootstrap": DEBOOTSTRAP_PACKAGES, "apt": APT_PACKAGES, "chromium": chromium_version(),
            "requirements": requirements(), "no_deps": NO_DEPS, "pins": python_pins(), "node": node_install().version,
            "home": {name: _tree_digest(paths.home() / name) for name in ("node", "project")}, "prune": PRUNE}


def code_files(checkout: Path) -> list[str]:
    """The checkout's tracked files the image carries (as they are now in the work tree)."""
    listed = subprocess.run(["git", "-C", str(checkout), "ls-files", "-z", "--", *CODE_DIRS, "pyproject.toml"],
                            capture_output=True, check=True).stdout.split(b"\0")
    return sorted(name.decode() for name in listed if name and (checkout / name.decode()).is_file())


def code_digest(checkout: Path, files: list[str]) -> str:
    digest = hashlib.sha256()
    for name in files:
        digest.update(name.encode() + b"\0" + (checkout / name).read_bytes())
    return digest.hexdigest()[:16]


def checkout_root() -> Path:
    root = Path(paths.__file__).resolve().parents[1]  # aesenv/paths.py → the checkout
    if not (root / "pyproject.toml").is_file():
        raise RuntimeError(f"{root} is not an aesenv checkout: the serving image is built from one")
    return root


def _image_label(engine, name: str) -> str | None:
    import docker

    try:
        return engine.images.get(name).labels.get(CONTENT_LABEL)
    except docker.errors.ImageNotFound:
        return None


def _image_id(engine, name: str) -> str | None:
    import docker

    try:
        return engine.images.get(name).id
    except docker.errors.ImageNotFound:
        return None


def _drop_replaced(engine, name: str, previous: str | None, say: Callable[[str], None]) -> None:
    """Remove the image `name` pointed at before this build (images of 2.5 GB add up)."""
    from aesenv.sandbox.image import _remove_quietly

    if previous is not None and previous != _image_id(engine, name):
        _remove_quietly(engine, previous, say)


def build(force: bool = False, say: Callable[[str], None] = print) -> str:
    """Build what is missing or stale; returns the image's name."""
    engine = client(timeout=1800)
    base, base_digest = f"{BASE}:{__version__}", hashlib.sha256(
        json.dumps(base_recipe(), sort_keys=True).encode()).hexdigest()[:16]
    previous_base = None
    if force or _image_label(engine, base) != base_digest:
        previous_base = _image_id(engine, base)
        _build_base(engine, base, base_digest, say)
    checkout = checkout_root()
    files = code_files(checkout)
    name, digest = f"{IMAGE}:{__version__}", f"{base_digest}-{code_digest(checkout, files)}"
    if not force and _image_label(engine, name) == digest:
        say(f"{name} is up to date ({digest})")
        return name
    previous_code = _image_id(engine, name)
    with tempfile.TemporaryDirectory(prefix="aesenv-serve-code-", dir="/var/tmp") as tmp:
        context = Path(tmp)
        for rel in files:
            target = context / "src" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(checkout / rel, target)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w",
                        str(context / "wheel"), str(checkout)], check=True, stdout=subprocess.DEVNULL)
        wheel = next((context / "wheel").glob("aesenv-*.whl"))
        subprocess.run([sys.executable, "-m", "zipfile", "-e", str(wheel), str(context / "unpacked")], check=True)
        info = next((context / "unpacked").glob("aesenv-*.dist-info"))
        shutil.copytree(info, context / "site" / info.name)
        (context / "site" / "aesenv-src.pth").write_text(SRC + "\n")
        (context / "Dockerfile").write_text(
            f"FROM {base}\nCOPY src {SRC}\nCOPY site /{SITE}/\n"
            f"RUN python3 -c 'import aesenv.serve.sessions, aesenv.cli' && python3 -m compileall -q {SRC}\n"
            f"LABEL {CONTENT_LABEL}={digest}\n")
        say(f"building {name} (code {digest})")
        subprocess.run(["docker", "build", "--quiet", "-t", name, str(context)], check=True, stdout=subprocess.DEVNULL)
    _drop_replaced(engine, name, previous_code, say)  # the old code layer first: it sits on the old base
    _drop_replaced(engine, base, previous_base, say)
    return name


def _build_base(engine, name: str, digest: str, say: Callable[[str], None]) -> None:
    from aesenv.sandbox.image import _debootstrap

    if not shutil.which("debootstrap"):
        raise RuntimeError("debootstrap not found: apt-get install debootstrap (python3 aesenv/sysdeps.py install "
                           "--group docker)")
    with tempfile.TemporaryDirectory(prefix="aesenv-serve-", dir="/var/tmp") as tmp:
        rootfs = Path(tmp) / "rootfs"
        _debootstrap_with(rootfs, _debootstrap, say)
        (rootfs / "etc/apt/sources.list").write_text(SOURCES)
        shutil.copy2("/etc/resolv.conf", rootfs / "etc/resolv.conf")
        chroot = ["chroot", str(rootfs)]
        apt_env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive", "LANG": "C.UTF-8"}
        say("apt: chromium-headless-shell " + chromium_version() + ", " + ", ".join(APT_PACKAGES))
        subprocess.run([*chroot, "apt-get", "update", "-qq"], check=True, env=apt_env)
        subprocess.run([*chroot, "apt-get", "install", "-y", "-qq", "--no-install-recommends",
                        f"chromium-headless-shell={chromium_version()}", *APT_PACKAGES], check=True, env=apt_env,
                       stdout=subprocess.DEVNULL)
        say("pip: aesenv's dependencies and the serve extra's, at this environment's versions")
        pins = Path(tmp) / "pins.txt"
        pins.write_text("\n".join(python_pins()) + "\n")
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--no-warn-conflicts", "--target", str(rootfs / SITE), "--only-binary=:all:",
                        "--implementation", "cp", "--python-version", PYTHON_VERSION,
                        "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_28_x86_64",
                        "--platform", "manylinux_2_17_x86_64", "-c", str(pins), *requirements()], check=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                        "--target", str(rootfs / SITE), "--only-binary=:all:", "--python-version", PYTHON_VERSION,
                        *NO_DEPS], check=True)
        node = node_install()
        say(f"node {node.version}, npm, and AESENV_HOME's node tools and project packages")
        bin_dir, lib_dir = rootfs / "usr/local/bin", rootfs / "usr/local/lib/node_modules"
        lib_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy2(node.prefix / "bin" / "node", bin_dir / "node")
        shutil.copytree(node.prefix / "lib" / "node_modules" / "npm", lib_dir / "npm", symlinks=True)
        for command, script in (("npm", "npm-cli.js"), ("npx", "npx-cli.js")):
            (bin_dir / command).symlink_to(f"../lib/node_modules/npm/bin/{script}")
        for part in ("node", "project"):
            shutil.copytree(paths.home() / part, rootfs / HOME_IN_IMAGE.lstrip("/") / part, symlinks=True)
        for relative in PRUNE:
            shutil.rmtree(rootfs / relative, ignore_errors=True)
        (rootfs / "var/lib/apt/lists/partial").mkdir(parents=True, exist_ok=True)
        (rootfs / "etc/resolv.conf").unlink()
        (rootfs / SOCKET_DIR.lstrip("/")).mkdir(parents=True, exist_ok=True)
        say("smoke test: the server's imports and the browser in the new root")
        subprocess.run([*chroot, "python3", "-c", "import openenv.core.env_server, uvicorn, playwright, pandas, "
                        "matplotlib, plotly, scipy"], check=True)
        subprocess.run([*chroot, "chromium-headless-shell", "--version"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        tarball = Path(tmp) / "rootfs.tar"
        say("packing the root filesystem")
        subprocess.run(["tar", "-C", str(rootfs), "--numeric-owner", "-cf", str(tarball), "."], check=True)
        say(f"importing {tarball.stat().st_size / 2**20:.0f} MiB as {name}")
        repository, tag = name.split(":")
        engine.api.import_image(src=str(tarball), repository=repository, tag=tag, changes=[
            f"LABEL {CONTENT_LABEL}={digest}",
            "ENV PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 MPLBACKEND=Agg HOME=/tmp",
            'ENTRYPOINT ["python3", "-m", "aesenv.serve.entry"]'])
    if _image_label(engine, name) != digest:
        raise RuntimeError(f"import of {name} did not produce the expected image")


def _debootstrap_with(rootfs: Path, debootstrap, say) -> None:
    """The sandbox image's debootstrap (its progress bar), with this image's packages."""
    from aesenv.sandbox import image

    saved = image.PACKAGES
    image.PACKAGES = DEBOOTSTRAP_PACKAGES
    try:
        debootstrap(rootfs, MIRROR, say)
    finally:
        image.PACKAGES = saved


# Docker's default seccomp profile refuses pivot_root, which bubblewrap needs to give each job a root
# of its own; this profile allows what a container normally may and refuses, whatever the
# capabilities, the calls that reach past a container (kernel modules, kexec, file handles that
# name host inodes, keyrings, BPF, perf, swap and clock and reboot, raw I/O ports).
SECCOMP_DENIED = ["kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "open_by_handle_at",
                  "name_to_handle_at", "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "reboot",
                  "swapon", "swapoff", "acct", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
                  "iopl", "ioperm", "quotactl", "lookup_dcookie", "userfaultfd", "vm86", "vm86old", "syslog",
                  "nfsservctl", "uselib", "fanotify_init", "move_mount", "fsopen", "fsmount", "fspick", "open_tree",
                  "mount_setattr"]


def seccomp_profile() -> str:
    return json.dumps({"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86",
                                                                             "SCMP_ARCH_X32"],
                       "syscalls": [{"names": SECCOMP_DENIED, "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]})


def run_args(name: str, image: str, socket_dir: Path, profile: Path, *, token: str | None, memory_mb: int,
             pids: int, serve_args: list[str]) -> list[str]:
    """The `docker run` of the serving container (see the module's docstring for why each flag)."""
    caps = [arg for cap in CAPABILITIES for arg in ("--cap-add", cap)]
    env = ["-e", "AESENV_SERVE_TOKEN"] if token else []
    return ["docker", "run", "--rm", "--detach", "--name", name, "--label", f"{OWNER_LABEL}={os.getpid()}",
            "--network", "none", "--read-only", "--tmpfs", "/tmp:rw,exec,size=4g,mode=1777",
            "--cap-drop", "ALL", *caps, "--security-opt", "no-new-privileges", "--security-opt", "apparmor=unconfined",
            "--security-opt", f"seccomp={profile}",
            "--memory", f"{memory_mb}m", "--pids-limit", str(pids), "--shm-size", "64m",
            "-v", f"{socket_dir}:{SOCKET_DIR}", *env, image, *serve_args]


async def _forward(host: str, port: int, sock: str, ready: Callable[[], None] | None = None) -> None:
    """Forward TCP `host:port` to the container's Unix socket, byte for byte, until cancelled."""

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(1 << 16):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            inner_reader, inner_writer = await asyncio.open_unix_connection(sock)
        except OSError:
            writer.close()
            return
        await asyncio.gather(pipe(reader, inner_writer), pipe(inner_reader, writer))

    server = await asyncio.start_server(handle, host, port)
    if ready:
        ready()
    async with server:
        await server.serve_forever()


def serve_in_docker(settings, *, host: str, port: int, token: str | None, rebuild: bool = False,
                    build_only: bool = False, memory_mb: int = 16_384, pids: int = 8192) -> int:
    """Build (when needed) and run the serving container; forward host:port to it until interrupted."""
    image = build(force=rebuild)
    if build_only:
        return 0
    workdir = Path(tempfile.mkdtemp(prefix="aesenv-serve-"))
    socket_dir, profile = workdir / "sock", workdir / "seccomp.json"
    socket_dir.mkdir(mode=0o755)
    profile.write_text(seccomp_profile())
    name = f"aesenv-serve-{port}-{os.getpid()}"
    serve_args = ["--max-sessions", str(settings.max_sessions), "--session-idle-s", str(settings.session_idle_s),
                  "--session-max-s", str(settings.session_max_s), "--step-timeout-s", str(settings.step_timeout_s),
                  "--max-message-mb", str(settings.max_message_bytes / 2**20), "--judge", settings.pipeline.judge,
                  *(arg for env_id in settings.env_ids for arg in ("--env", env_id)),
                  *(arg for env_id, source in settings.tasks.items() for arg in ("--tasks", f"{env_id}={source}"))]
    subprocess.run(run_args(name, image, socket_dir, profile, token=token, memory_mb=memory_mb, pids=pids,
                            serve_args=serve_args), check=True, stdout=subprocess.DEVNULL)
    sock = str(socket_dir / "serve.sock")
    try:
        deadline = time.monotonic() + 300
        while not os.path.exists(sock):
            state = subprocess.run(["docker", "inspect", "-f", "{{.State.Running}}", name], capture_output=True,
                                   text=True).stdout.strip()
            if state != "true" or time.monotonic() > deadline:
                logs = subprocess.run(["docker", "logs", "--tail", "40", name], capture_output=True, text=True)
                raise RuntimeError(f"the serving container did not come up:\n{logs.stdout}{logs.stderr}")
            time.sleep(0.5)
        print(f"aesenv serve --docker: container {name} ({image}), on http://{host}:{port}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_until_signal(_forward(host, port, sock)))
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


async def _until_signal(coro) -> None:
    task = asyncio.ensure_future(coro)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await task
