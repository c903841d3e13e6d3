"""The kind contract reads on its own: `Kind` is small (identity, answer format, asking and the
three slots `asking`, `scoring`, `reader`), every hook of `Kind` and of `EvidenceReader` says in its
first line whether a kind must provide it or may leave the default, `PageKind`/`PageReader` provide
every must-provide hook from a rendering, and a kind that is not a page (plot) provides them
itself. `kinds/base.py` loads no renderer: a kind that is not a page never pays for one."""

from __future__ import annotations

import inspect
import subprocess
import sys

from aesenv.kinds import KINDS
from aesenv.kinds.base import EvidenceReader, Kind
from aesenv.kinds.page import PageKind, PageReader

PLUMBING = {"__init__", "env_id"}  # not hooks: what every kind shares as is
MAX_KIND_MEMBERS = 20  # what a newcomer reads before writing a kind (issue 51)


def members(cls: type) -> set[str]:
    """The public attributes and methods a kind class defines itself: assigned, declared
    (annotated only) or set on every instance (what an instance of a bare subclass holds)."""
    names = {name for name in vars(cls) if not name.startswith("_")}
    names |= {name for name in getattr(cls, "__annotations__", {}) if not name.startswith("_")}
    bare = type("Bare", (cls,), {"name": "bare", "title": "Bare"})()
    return names | {name for name in vars(bare) if not name.startswith("_")}


def hooks(cls: type) -> dict[str, object]:
    return {name: member for name, member in vars(cls).items()
            if inspect.isfunction(member) and name not in PLUMBING}


def must_provide(contract: type) -> set[str]:
    return {name for name, member in hooks(contract).items() if inspect.getdoc(member).startswith("Must provide")}


def test_kind_has_at_most_twenty_members():
    counted = members(Kind)
    assert "channels" in counted and "evidence" in counted and "name" in counted  # the count sees all three sorts
    assert len(counted) <= MAX_KIND_MEMBERS, f"Kind has {len(counted)} members: {sorted(counted)}"


def test_each_hook_says_whether_a_kind_must_provide_it():
    for contract in (Kind, EvidenceReader):
        unsaid = [name for name, member in hooks(contract).items()
                  if not (inspect.getdoc(member) or "").startswith(("Must provide", "Optional"))]
        assert not unsaid, f"{contract.__name__} hooks that do not say whether a kind must provide them: {unsaid}"
        assert must_provide(contract), f"{contract.__name__} asks for nothing"


def test_a_page_kind_provides_every_must_provide_hook_and_every_kind_does():
    assert must_provide(Kind) - set(hooks(PageKind)) == set()
    assert must_provide(EvidenceReader) - set(hooks(PageReader)) == set()
    for name in KINDS:
        kind = type(KINDS[name])
        missing = [hook for hook in must_provide(Kind) if getattr(kind, hook) is getattr(Kind, hook)]
        reader = type(kind.reader)
        missing += [f"reader.{hook}" for hook in must_provide(EvidenceReader)
                    if getattr(reader, hook) is getattr(EvidenceReader, hook)]
        assert not missing, f"{name} does not provide {missing}"


def test_a_kind_that_provides_nothing_says_so_when_asked():
    class Bare(Kind):
        name, title = "bare", "Bare"

    bare, reader = Bare(), EvidenceReader()
    assert not hasattr(bare, "reader"), "a kind that names no reader must not get one by default"
    for owner, hook in [(bare, "evidence"), *((reader, h) for h in ("looked", "failure", "look_problem", "images"))]:
        try:
            method = getattr(owner, hook)
            method(*([None] * len([p for p in inspect.signature(method).parameters.values()
                                   if p.kind is p.POSITIONAL_OR_KEYWORD])),
                   **{p.name: None for p in inspect.signature(method).parameters.values() if p.kind is p.KEYWORD_ONLY})
        except NotImplementedError:
            continue
        raise AssertionError(f"{type(owner).__name__}.{hook} has a default, but says a kind must provide it")


def test_the_contract_loads_no_renderer():
    probe = "import sys, aesenv.kinds.base\nprint('\\n'.join(sorted(sys.modules)))"
    loaded = set(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split())
    assert not {m for m in loaded if m.startswith(("aesenv.render", "aesenv.kinds.page", "playwright"))}
