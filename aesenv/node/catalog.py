"""The catalog of vendored packages (`catalog.json`) and the package.json generated from it.

Why a catalog: the mirror (aesenv/render/vendor.py) needs more than npm's pins. For each library
it needs its cdnjs names, where cdnjs' flat files live in the npm package, which requested
versions a build may answer, and example URLs as model-written pages write them, so that a test
can prove every entry is actually served. Keeping all of that, and the versions, in one file means
adding a library is one edit: `python -m aesenv.node.catalog --lock` then rewrites package.json and
package-lock.json, `aesenv setup` installs them, and tests/test_vendor_catalog.py checks the
entry end to end.

`python -m aesenv.node.catalog` writes package.json; `--check` only reports whether it is
current (exit 1 when not); `--lock` also refreshes package-lock.json with npm.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["Catalog", "LibraryEntry", "BuildEntry", "FontEntry", "load_catalog", "package_json",
           "dependencies"]

PACKAGE_DESCRIPTION = (
    "Node tools aesenv runs (HTMLHint for the execution channel) and the vendored front-end libraries and web "
    "fonts the renderer serves offline in place of CDNs (aesenv/render/vendor.py). Generated from catalog.json by "
    "`python -m aesenv.node.catalog`: edit the catalog, not this file. Aliased names hold a second major of the "
    "same package.")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class VersionRange(_Strict):
    """Requested versions in [min, below): `{"min": "7", "below": "11"}` is 7.x to 10.x."""

    min: str
    below: str


class BuildEntry(_Strict):
    """One installed copy of a library."""

    version: str
    alias: str | None = None  # package.json key for a second major: "chart.js-3": "npm:chart.js@3.9.1"
    also_serves: VersionRange | None = None
    why: str = ""
    examples: list[str] = Field(min_length=1)


class LibraryEntry(_Strict):
    npm: str
    cdnjs: list[str] = []
    cdnjs_dirs: list[str] = [""]
    policy: Literal["same-major", "any", "three"] = "same-major"
    why: str = ""
    builds: list[BuildEntry] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_unaliased_build(self) -> "LibraryEntry":
        if sum(b.alias is None for b in self.builds) > 1:
            raise ValueError(f"{self.npm}: only one build may be installed under the plain name; alias the others")
        if len({b.version for b in self.builds}) != len(self.builds):
            raise ValueError(f"{self.npm}: two builds of the same version")
        return self


class FontEntry(_Strict):
    family: str
    npm: str = Field(pattern=r"^@fontsource/[a-z0-9-]+$")
    version: str
    examples: list[str] = Field(min_length=1)


class ToolEntry(_Strict):
    npm: str
    version: str
    why: str = ""


class SkippedEntry(_Strict):
    name: str
    reason: str


class Catalog(_Strict):
    about: list[str] = []
    tools: list[ToolEntry] = []
    libraries: list[LibraryEntry] = []
    fonts: list[FontEntry] = []
    skipped: list[SkippedEntry] = []

    @model_validator(mode="after")
    def _unique_keys(self) -> "Catalog":
        keys = list(_dependency_items(self))
        seen: set[str] = set()
        for key, _ in keys:
            if key in seen:
                raise ValueError(f"package.json key {key!r} appears twice in the catalog")
            seen.add(key)
        if len({lib.npm for lib in self.libraries}) != len(self.libraries):
            raise ValueError("a library is listed twice; give it several builds instead")
        return self


def _dependency_items(catalog: Catalog):
    for tool in catalog.tools:
        yield tool.npm, tool.version
    for lib in catalog.libraries:
        for build in lib.builds:
            yield (build.alias, f"npm:{lib.npm}@{build.version}") if build.alias else (lib.npm, build.version)
    for font in catalog.fonts:
        yield font.npm, font.version


def dependencies(catalog: Catalog) -> dict[str, str]:
    """package.json `dependencies`, in catalog order: tools, libraries (each build), fonts."""
    return dict(_dependency_items(catalog))


def package_json(catalog: Catalog) -> str:
    """The text of aesenv/node/package.json for this catalog."""
    doc = {"name": "aesenv-node-tools", "private": True, "description": PACKAGE_DESCRIPTION,
           "dependencies": dependencies(catalog)}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def parse_catalog(text: str) -> Catalog:
    return Catalog.model_validate_json(text)


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    """The catalog shipped with the package (validated once per process)."""
    return parse_catalog((resources.files("aesenv.node") / "catalog.json").read_text(encoding="utf-8"))


def _node_dir() -> Path:
    return Path(str(resources.files("aesenv.node")))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m aesenv.node.catalog", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when package.json is not what the catalog says")
    ap.add_argument("--lock", action="store_true",
                    help="after writing package.json, refresh package-lock.json (npm install --package-lock-only)")
    args = ap.parse_args(argv)
    here = _node_dir()
    target = here / "package.json"
    want = package_json(parse_catalog((here / "catalog.json").read_text(encoding="utf-8")))
    current = target.read_text(encoding="utf-8") if target.is_file() else ""
    if args.check:
        if current != want:
            print(f"{target} is out of date: run `python -m aesenv.node.catalog --lock`", file=sys.stderr)
            return 1
        print(f"{target} matches the catalog")
        return 0
    if current != want:
        target.write_text(want, encoding="utf-8")
        print(f"wrote {target}")
    else:
        print(f"{target} already matches the catalog")
    if args.lock:
        npm = shutil.which("npm")
        if not npm:
            print("npm not found: cannot refresh package-lock.json", file=sys.stderr)
            return 1
        subprocess.run([npm, "install", "--package-lock-only", "--no-audit", "--no-fund"], cwd=here, check=True)
        print(f"refreshed {here / 'package-lock.json'}; run `aesenv setup` to install it")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
