"""Set-up's install decisions, proved against the real package manager.

For each combination of missing pieces the planner computes what `make setup` would ask apt for,
and `apt-get install --simulate` must accept exactly that list on this machine kind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aesenv import sysdeps

SYSDEPS = Path(sysdeps.__file__)

needs_apt = pytest.mark.skipif(not shutil.which("apt-get"), reason="not a Debian-family machine (no apt-get)")


def _plan(*assume_missing: str, groups: tuple[str, ...] = ("base",)) -> sysdeps.Plan:
    return sysdeps.plan(sysdeps.missing(groups, assume_missing))


def _simulate(packages: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(["apt-get", "install", "--simulate", "--no-install-recommends", *packages],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


@needs_apt
def test_everything_present_installs_nothing():
    assert sysdeps.missing(("base",)) == [], "make setup ran before the tests, so nothing base should be missing"
    assert _plan().install == []


@needs_apt
@pytest.mark.parametrize("assume_missing", [
    ("chromium",),
    ("chromium", "fontconfig", "font-liberation", "font-dejavu", "font-emoji", "font-cjk"),
    ("node", "npm"),
    ("chromium", "node", "npm", "bwrap", "fontconfig", "font-liberation", "font-dejavu", "font-emoji", "font-cjk"),
], ids=["no-chromium", "no-chromium-no-fonts", "no-nodejs", "nothing"])
def test_apt_accepts_the_plan(assume_missing):
    plan = _plan(*assume_missing)
    assert plan.install, "something is missing, so something must be installed"
    package_of = {n.name: n.package for n in sysdeps.NEEDS}
    assert set(plan.install) <= {package_of[name] for name in assume_missing}
    assert {name for name in assume_missing if package_of[name] not in plan.install} == set(plan.covered)
    sim = _simulate(plan.install)
    assert sim.returncode == 0, (
        f"apt-get install --simulate {' '.join(plan.install)} failed (run `apt-get update` first if the "
        f"package lists are empty):\n{sim.stdout[-2000:]}\n{sim.stderr[-2000:]}")


@needs_apt
def test_docker_group_plan_is_accepted():
    plan = _plan("dockerd", "debootstrap", groups=("docker",))
    assert plan.install == ["docker.io", "debootstrap"]
    sim = _simulate(plan.install)
    assert sim.returncode == 0, sim.stdout[-2000:] + sim.stderr[-2000:]


@needs_apt
def test_a_node_without_npm_on_path_is_found_by_the_real_probe(tmp_path):
    """PATH arranged so `node` and `npm` are missing: the real probes see it, and the plan asks for
    Node.js without an npm that the nodejs candidate (NodeSource's) already carries."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("dpkg-query", "apt-cache", "fc-list", "chromium-headless-shell", "bwrap"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    out = subprocess.run([sys.executable, str(SYSDEPS), "plan", "--json"], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PATH": str(bin_dir)})
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    assert {"node", "npm"} <= set(plan["missing"])
    assert "nodejs" in plan["install"]
    if "npm" in sysdeps._candidate_claims("nodejs"):
        assert "npm" not in plan["install"] and plan["covered"]["npm"] == "nodejs"
    sim = _simulate(plan["install"])
    assert sim.returncode == 0, sim.stdout[-2000:] + sim.stderr[-2000:]


def test_a_package_an_installed_one_provides_or_conflicts_with_is_never_asked_for(monkeypatch):
    monkeypatch.setattr(sysdeps, "_installed_claims", lambda: {"npm": "nodejs"})
    monkeypatch.setattr(sysdeps, "_candidate_claims", lambda package: set())
    needs = [n for n in sysdeps.NEEDS if n.name in ("chromium", "npm")]
    plan = sysdeps.plan(needs)
    assert plan.install == ["chromium-headless-shell"]
    assert plan.covered == {"npm": "nodejs"}


def test_a_planned_package_covers_the_ones_it_carries(monkeypatch):
    monkeypatch.setattr(sysdeps, "_installed_claims", lambda: {})
    monkeypatch.setattr(sysdeps, "_candidate_claims",
                        lambda package: {"npm", "nodejs-dev"} if package == "nodejs" else set())
    plan = sysdeps.plan([n for n in sysdeps.NEEDS if n.name in ("node", "npm")])
    assert plan.install == ["nodejs"] and plan.covered == {"npm": "nodejs"}
    monkeypatch.setattr(sysdeps, "_candidate_claims", lambda package: set())
    assert sysdeps.plan([n for n in sysdeps.NEEDS if n.name in ("node", "npm")]).install == ["nodejs", "npm"]


def test_relation_fields_parse_to_names():
    assert sysdeps._relation_names("nodejs-dev (<= 0.8.22), npm (<= 1.2.14) | foo, bar:any") == {
        "nodejs-dev", "npm", "foo", "bar"}
    assert sysdeps._relation_names("") == set()


def test_without_apt_the_message_names_what_is_missing_and_the_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sysdeps, "missing", lambda groups, assume_missing=(): [sysdeps.NEEDS[0]])
    monkeypatch.setattr(sysdeps.shutil, "which", lambda name: None)
    assert sysdeps.install(("base",)) == 1
    out = capsys.readouterr()
    assert "missing chromium" in out.out
    assert "apt-get is not available" in out.err and "apt-get install -y chromium-headless-shell" in out.err


def test_an_unknown_need_is_refused():
    with pytest.raises(SystemExit, match="unknown need"):
        sysdeps.missing(("base",), ("chromiun",))


def test_check_exits_nonzero_and_lists_what_is_missing():
    out = subprocess.run([sys.executable, str(SYSDEPS), "check", "--json"], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "PATH": "/nonexistent"})
    listed = {row["need"] for row in json.loads(out.stdout)}
    assert out.returncode == 1 and {"node", "npm"} <= listed
