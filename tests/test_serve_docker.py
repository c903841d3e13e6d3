"""The serving image (`aesenv serve --docker`): every env id played by OpenEnv's client and ours
through the container; the container is unprivileged, read-only and has no network; the security
benchmark passes inside it. Needs a Docker engine and debootstrap (built on first use, or by
`make serve-image`); without them the tests skip, except under CI, where they fail."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request

import pytest

pytest.importorskip("openenv", reason="the serve extra is not installed (make setup installs it)")

from aesenv.serve.container import CAPABILITIES, OWNER_LABEL  # noqa: E402
from support.serve_server import (ROOT, client_gone_mid_step, eight_sessions_without_crosstalk, free_port,  # noqa: E402
                                  play_gym, play_openenv, shipped_env_ids, wait_healthy)

pytestmark = pytest.mark.timeout(3600)
ALL_ENVS = shipped_env_ids()


def _engine_problem() -> str:
    try:
        out = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"no docker client: {exc}"
    if out.returncode != 0:
        return "no Docker engine reachable"
    if subprocess.run(["which", "debootstrap"], capture_output=True).returncode != 0:
        return "debootstrap not installed (the image is built with it)"
    return ""


@pytest.fixture(scope="module")
def container(tmp_path_factory):
    """`aesenv serve --docker` on a free port: its URL and the container's name."""
    if problem := _engine_problem():
        pytest.skip(problem)
    port = free_port()
    log = tmp_path_factory.mktemp("docker") / "serve.log"
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "aesenv.cli", "serve", "--docker", "--port", str(port),
                                    "--max-sessions", "10"], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_healthy(url, process, deadline_s=3000)
        except Exception:
            raise AssertionError(log.read_text()[-3000:]) from None
        names = subprocess.run(["docker", "ps", "--filter", f"label={OWNER_LABEL}={process.pid}", "--format",
                                "{{.Names}}"], capture_output=True, text=True, check=True).stdout.split()
        assert len(names) == 1, names
        yield url, names[0]
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=120)
    left = subprocess.run(["docker", "ps", "-aq", "--filter", f"label={OWNER_LABEL}={process.pid}"],
                          capture_output=True, text=True).stdout.split()
    assert not left, f"containers left behind: {left}"


def test_the_image_serves_every_env(container):
    url, _ = container
    assert sorted(json.loads(urllib.request.urlopen(f"{url}/envs", timeout=30).read())["envs"]) == sorted(ALL_ENVS)


@pytest.mark.parametrize("env_id", ALL_ENVS)
async def test_openenv_client_plays_every_env_in_the_image(container, env_id):
    await play_openenv(container[0], env_id)


@pytest.mark.parametrize("env_id", ALL_ENVS)
def test_our_client_plays_every_env_in_the_image(container, env_id):
    play_gym(container[0], env_id)


async def test_eight_sessions_in_the_image_do_not_cross(container):
    await eight_sessions_without_crosstalk(container[0])


async def test_a_gone_client_leaves_no_process_in_the_image(container):
    await client_gone_mid_step(container[0])


def _exec(name: str, script: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", "exec", name, "sh", "-c", script], capture_output=True, text=True,
                          timeout=timeout)


def test_the_container_is_unprivileged_read_only_and_offline(container):
    _, name = container
    config = json.loads(subprocess.run(["docker", "inspect", name], capture_output=True, text=True,
                                       check=True).stdout)[0]["HostConfig"]
    assert config["Privileged"] is False and config["ReadonlyRootfs"] is True and config["NetworkMode"] == "none"
    assert config["CapDrop"] == ["ALL"] and set(config["CapAdd"]) <= {f"CAP_{c}" for c in CAPABILITIES} | set(CAPABILITIES)
    assert "no-new-privileges" in config["SecurityOpt"] and config["Memory"] > 0 and config["PidsLimit"] > 0
    interfaces = _exec(name, "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '").stdout.split()
    assert interfaces == ["lo"]
    probe = _exec(name, "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), timeout=5)\"")
    assert probe.returncode != 0 and "unreachable" in probe.stderr.lower()
    assert _exec(name, "touch /opt/aesenv/x").returncode != 0  # read-only root


def test_security_benchmark_passes_inside_the_image(container):
    """The probe corpus on the sandbox the image runs (local: bubblewrap inside the container) and on
    its browser, from a copy of the benchmarks (the probes plant canaries beside the checkout)."""
    _, name = container
    run = _exec(name, "rm -rf /tmp/sec-src && cp -r /opt/aesenv/src /tmp/sec-src && cd /tmp/sec-src && "
                      "AESENV_HOME=/tmp/aesenv python3 -m benchmarks.security --backends local --out /tmp/sec",
                timeout=1800)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "0 not ok" in run.stdout
