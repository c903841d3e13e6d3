"""The pipeline, its config and the aggregators are written once over kinds: no module under
`aesenv/rewards/` spells a channel some kind offers (the names come from the kinds' registries,
not from a list kept here), and a kind's entry point agrees with the kind it loads."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from aesenv.kinds import BUILTIN, KINDS, default_channels

REWARDS = Path(__file__).resolve().parents[1] / "aesenv" / "rewards"


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string nodes that are docstrings (prose a reader may use channel names in)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def spelled_names(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) for each string literal in `source` (docstrings aside) that is one of `names`."""
    tree = ast.parse(source)
    prose = _docstrings(tree)
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
                  and node.value in names)


def test_the_checker_finds_a_channel_name_in_code_and_not_in_prose():
    source = '"""Scores execution."""\nGATE = "execution"\ndef f():\n    """static"""\n    return {"static": 1}\n'
    assert spelled_names(source, {"execution", "static"}) == [(2, "execution"), (5, "static")]


@pytest.mark.parametrize("kind", ["web", *[name for name in KINDS if name != "web"]])
def test_rewards_spells_no_channel_of_a_kind(kind):
    names = set(KINDS[kind].channels)
    assert {"execution", "static"} <= set(KINDS["web"].channels)  # the registry the names come from is the real one
    found = [f"{path.name}:{line}: {name!r}" for path in sorted(REWARDS.glob("*.py"))
             for line, name in spelled_names(path.read_text(encoding="utf-8"), names)]
    assert not found, f"aesenv/rewards/ names {kind} channels:\n" + "\n".join(found)


def test_each_entry_point_declares_its_kinds_default_channels_and_the_config_default_is_their_union():
    for entry in BUILTIN:
        kind = KINDS[entry.name]
        assert entry.channels == tuple(kind.scoring.default_channels), entry.name
        assert set(kind.scoring.default_channels) <= set(kind.channels), entry.name
    union = [name for entry in BUILTIN for name in KINDS[entry.name].scoring.default_channels]
    assert default_channels() == list(dict.fromkeys(union))


def test_rewards_spells_no_kind_name():
    found = [f"{path.name}:{line}: {name!r}" for path in sorted(REWARDS.glob("*.py"))
             for line, name in spelled_names(path.read_text(encoding="utf-8"), set(KINDS))]
    assert not found, "aesenv/rewards/ names kinds:\n" + "\n".join(found)
