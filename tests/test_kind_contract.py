"""The kind contract reads on its own: every hook of `Kind` says in its first line whether a kind
must provide it or may leave the default, `PageKind` provides every must-provide hook from a
rendering, and a kind that is not a page (plot) provides them itself. `kinds/base.py` loads no
renderer: a kind that is not a page never pays for one."""

from __future__ import annotations

import inspect
import subprocess
import sys

from aesenv.kinds import KINDS
from aesenv.kinds.base import Kind
from aesenv.kinds.page import PageKind

PLUMBING = {"__init__", "env_id", "shows_reference_for"}  # not hooks: what every kind shares as is


def hooks(cls: type) -> dict[str, object]:
    return {name: member for name, member in vars(cls).items()
            if inspect.isfunction(member) and name not in PLUMBING}


def must_provide() -> set[str]:
    return {name for name, member in hooks(Kind).items() if inspect.getdoc(member).startswith("Must provide")}


def test_each_hook_says_whether_a_kind_must_provide_it():
    unsaid = [name for name, member in hooks(Kind).items()
              if not (inspect.getdoc(member) or "").startswith(("Must provide", "Optional"))]
    assert not unsaid, f"Kind hooks that do not say whether a kind must provide them: {unsaid}"
    assert must_provide(), "the contract asks for nothing"


def test_a_page_kind_provides_every_must_provide_hook_and_every_kind_does():
    assert must_provide() - set(hooks(PageKind)) == set()
    for name in KINDS:
        kind = type(KINDS[name])
        missing = [hook for hook in must_provide() if getattr(kind, hook) is getattr(Kind, hook)]
        assert not missing, f"{name} does not provide {missing}"


def test_a_kind_that_provides_nothing_says_so_when_asked():
    class Bare(Kind):
        name, title = "bare", "Bare"

    bare = Bare()
    for hook in ("looked", "failure", "look_problem", "images"):
        try:
            getattr(bare, hook)(*([None] * (len(inspect.signature(getattr(Kind, hook)).parameters) - 1)))
        except NotImplementedError:
            continue
        raise AssertionError(f"Kind.{hook} has a default, but says a kind must provide it")


def test_the_contract_loads_no_renderer():
    probe = "import sys, aesenv.kinds.base\nprint('\\n'.join(sorted(sys.modules)))"
    loaded = set(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split())
    assert not {m for m in loaded if m.startswith(("aesenv.render", "aesenv.kinds.page", "playwright"))}
