"""The system programs aesenv needs, and how a fresh machine gets them.

One declarative table (`NEEDS`) says, per need, how to tell it is met (a program on PATH, a
font family fontconfig knows) and which Debian package meets it. `make setup`, `.ci/run` and
`aesenv doctor` all read it. Set-up installs only what is missing, runs `apt-get update` once and
only when something must be installed, and never asks for a package that an installed (or
about to be installed) package already provides or conflicts with: NodeSource's `nodejs` ships
its own npm and conflicts with Debian's.

Standard library only: `make setup` runs this file with the system Python, before any
virtual environment exists (`python3 aesenv/sysdeps.py install`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

CHROMIUM_CANDIDATES = (
    "chromium-headless-shell",
    "/usr/lib/chromium/chromium-headless-shell",
    "chromium",
    "chromium-browser",
    "google-chrome",
)


@dataclass(frozen=True)
class Need:
    name: str
    why: str
    package: str
    """The Debian package that meets the need."""
    programs: tuple[str, ...] = ()
    """Met when any of these is an executable (a name on PATH or an absolute path)."""
    font_family: str = ""
    """Met when fontconfig knows this family."""
    group: str = "base"
    """`base` is what `make setup` installs; `docker` is what `.ci/run` adds for the Docker sandbox."""

    def met(self) -> bool:
        if self.programs:
            return any(_executable(p) for p in self.programs)
        return _font_known(self.font_family)


NEEDS: tuple[Need, ...] = (
    Need("chromium", "renders pages", "chromium-headless-shell", programs=CHROMIUM_CANDIDATES),
    Need("node", "runs HTMLHint", "nodejs", programs=("node",)),
    Need("npm", "installs HTMLHint and the vendored libraries", "npm", programs=("npm",)),
    Need("bwrap", "isolates the local sandbox (bubblewrap)", "bubblewrap", programs=("bwrap",)),
    Need("fontconfig", "lets set-up and Chromium find fonts", "fontconfig", programs=("fc-list",)),
    Need("font-liberation", "metric-compatible Arial/Times/Courier", "fonts-liberation2",
         font_family="Liberation Sans"),
    Need("font-dejavu", "wide-coverage fallback font", "fonts-dejavu-core", font_family="DejaVu Sans"),
    Need("font-emoji", "colour emoji", "fonts-noto-color-emoji", font_family="Noto Color Emoji"),
    # Chinese, Japanese and Korean pages draw empty boxes without it: Chromium falls back to any
    # installed CJK font whatever family the page names, so one package covers all four scripts.
    Need("font-cjk", "Chinese, Japanese and Korean text", "fonts-noto-cjk", font_family="Noto Sans CJK SC"),
    Need("dockerd", "the Docker engine for the docker sandbox", "docker.io", programs=("dockerd",), group="docker"),
    Need("debootstrap", "builds the sandbox image without a registry", "debootstrap",
         programs=("debootstrap",), group="docker"),
)
GROUPS = tuple(dict.fromkeys(n.group for n in NEEDS))


def _executable(program: str) -> bool:
    if os.sep in program:
        return os.path.isfile(program) and os.access(program, os.X_OK)
    return shutil.which(program) is not None


def _font_known(family: str) -> bool:
    if not shutil.which("fc-list"):
        return False
    out = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True, timeout=30)
    return any(family in line.split(",") for line in out.stdout.splitlines())


def missing(groups: tuple[str, ...] = ("base",), assume_missing: tuple[str, ...] = ()) -> list[Need]:
    """The needs of `groups` not met on this machine; `assume_missing` names needs to treat as unmet
    (a dry run of set-up on a machine that lacks them)."""
    unknown = set(assume_missing) - {n.name for n in NEEDS}
    if unknown:
        raise SystemExit(f"unknown need(s): {', '.join(sorted(unknown))}; known: {', '.join(n.name for n in NEEDS)}")
    return [n for n in NEEDS if n.group in groups and (n.name in assume_missing or not n.met())]


# --- Debian's package database -------------------------------------------------------------

_RELATION_NAME = re.compile(r"^\s*([a-z0-9][a-z0-9+.-]*)")


def _relation_names(field: str) -> set[str]:
    """Package names in a Provides/Conflicts field ("npm, nodejs-dev (<= 0.8) | x" → {npm, nodejs-dev, x})."""
    names = set()
    for alternative in re.split(r"[,|]", field):
        m = _RELATION_NAME.match(alternative)
        if m:
            names.add(m.group(1))
    return names


def _installed_claims() -> dict[str, str]:
    """Package name → the installed package that provides or conflicts with it."""
    out = subprocess.run(["dpkg-query", "-W", "-f", "${db:Status-Abbrev}|${Package}|${Provides}|${Conflicts}\n"],
                         capture_output=True, text=True, timeout=60)
    claims: dict[str, str] = {}
    for line in out.stdout.splitlines():
        status, package, provides, conflicts = (line.split("|") + ["", "", ""])[:4]
        if status.startswith("ii"):
            for name in _relation_names(provides) | _relation_names(conflicts):
                claims.setdefault(name, package)
    return claims


def _candidate_claims(package: str) -> set[str]:
    """What the version apt would install of `package` provides or conflicts with."""
    out = subprocess.run(["apt-cache", "show", "--no-all-versions", package], capture_output=True, text=True,
                         timeout=60)
    fields = dict(re.findall(r"^(Provides|Conflicts): (.*)$", out.stdout, flags=re.M))
    return _relation_names(fields.get("Provides", "")) | _relation_names(fields.get("Conflicts", ""))


@dataclass
class Plan:
    install: list[str]
    """Packages to ask apt for, in need order."""
    covered: dict[str, str]
    """Need → the package (installed or planned) that already carries it, so it is not asked for."""


def plan(needs: list[Need]) -> Plan:
    """The packages that meet `needs` without asking for one that is provided by, or conflicts
    with, a package that is installed or planned before it (NodeSource's nodejs and Debian's npm)."""
    installed = _installed_claims()
    install: list[str] = []
    covered: dict[str, str] = {}
    planned_claims: dict[str, str] = {}
    for need in needs:
        holder = planned_claims.get(need.package) or installed.get(need.package)
        if holder and holder != need.package:
            covered[need.name] = holder
            continue
        if need.package not in install:
            install.append(need.package)
            for name in _candidate_claims(need.package):
                planned_claims.setdefault(name, need.package)
    return Plan(install, covered)


def _root_prefix() -> list[str] | None:
    if os.geteuid() == 0:
        return []
    return ["sudo"] if shutil.which("sudo") else None


def install_command(packages: list[str]) -> str:
    prefix = "" if os.geteuid() == 0 else "sudo "
    return f"{prefix}apt-get install -y {' '.join(packages)}"


def describe(needs: list[Need]) -> list[str]:
    """One line per unmet need: what it is for and the package that meets it."""
    return [f"missing {n.name} ({n.why}): Debian package {n.package}" for n in needs]


def _apt(args: list[str], prefix: list[str]) -> int:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    return subprocess.run(prefix + ["apt-get", *args], env=env, stdin=subprocess.DEVNULL).returncode


def install(groups: tuple[str, ...], quiet: bool = False) -> int:
    needs = missing(groups)
    if not needs:
        print(f"system programs present ({', '.join(groups)})")
        return 0
    for line in describe(needs):
        print(line)
    prefix = _root_prefix()
    if not shutil.which("apt-get") or prefix is None:
        why = "apt-get is not available" if not shutil.which("apt-get") else "not root and no sudo"
        print(f"cannot install automatically ({why}). Install the packages above (Debian/Ubuntu names) "
              f"with your system's package manager, e.g.: {install_command([n.package for n in needs])}",
              file=sys.stderr)
        return 1
    quiet_flags = ["-qq"] if quiet else ["-q"]
    print("apt-get update")
    if _apt(["update", *quiet_flags], prefix) != 0:
        print(f"apt-get update failed; after fixing apt, run: {install_command([n.package for n in needs])}",
              file=sys.stderr)
        return 1
    the_plan = plan(needs)
    for need, holder in the_plan.covered.items():
        print(f"{need}: carried by package {holder}, not asking apt for a conflicting one")
    if the_plan.install:
        print(f"apt-get install {' '.join(the_plan.install)}")
        if _apt(["install", "-y", *quiet_flags, "--no-install-recommends", *the_plan.install], prefix) != 0:
            print(f"apt-get install failed; to retry by hand: {install_command(the_plan.install)}", file=sys.stderr)
            return 1
    still = missing(groups)
    if still:
        for line in describe(still):
            print(line, file=sys.stderr)
        hints = {n.name: f"package {the_plan.covered[n.name]} should carry it: "
                         f"apt-get install --reinstall {the_plan.covered[n.name]}"
                 for n in still if n.name in the_plan.covered}
        for name, hint in hints.items():
            print(f"{name}: {hint}", file=sys.stderr)
        return 1
    print("system programs installed")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sysdeps", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("check", "plan", "install"),
                        help="check: list what is missing; plan: the apt packages set-up would ask for "
                             "(no install); install: install what is missing")
    parser.add_argument("--group", action="append", choices=GROUPS,
                        help="needs to consider (default: base; repeat for more)")
    parser.add_argument("--assume-missing", default="", help="comma-separated needs to treat as unmet (plan only)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    groups = tuple(args.group or ("base",))
    if args.action == "install":
        return install(groups, quiet=args.quiet)
    assume = tuple(n for n in args.assume_missing.split(",") if n)
    needs = missing(groups, assume)
    if args.action == "check":
        if args.json:
            print(json.dumps([{"need": n.name, "why": n.why, "package": n.package} for n in needs]))
        else:
            for line in describe(needs) or [f"system programs present ({', '.join(groups)})"]:
                print(line)
            if needs:
                print(f"to install: {install_command([n.package for n in needs])} (or `make setup`)")
        return 1 if needs else 0
    the_plan = plan(needs)
    if args.json:
        print(json.dumps({"missing": [n.name for n in needs], "install": the_plan.install,
                          "covered": the_plan.covered}))
    else:
        print(" ".join(the_plan.install))
    return 0


if __name__ == "__main__":
    sys.exit(main())
