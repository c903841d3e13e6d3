"""Context management (aesenv.context): folding old tool results, compaction by a handover note,
and a recorded episode that shows its compaction boundaries and segment Φ."""

import json

import pytest

from aesenv.context import (SUMMARY_HEADER, ContextConfig, asks_for_summary, compact, estimate_tokens, fold,
                            rebuild, summary_request)
from aesenv.envs import make_core
from aesenv.envs.refine import RefineBudget
from aesenv.trajectory import run_episode, timeline_html, write_trajectory
from test_refine import TASK


def _call(i: int, name: str, **arguments) -> dict:
    return {"role": "assistant", "content": "",
            "tool_calls": [{"id": f"c{i}", "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def _result(i: int, text: str) -> dict:
    return {"role": "tool", "tool_call_id": f"c{i}", "content": text}


HEAD = [{"role": "system", "content": "You build pages."}, {"role": "user", "content": "Build a cafe page."}]


def _conversation(turns: int) -> list[dict]:
    messages = list(HEAD)
    for i in range(turns):
        messages += [_call(i, "view_file" if i % 2 else "run", path="index.html"), _result(i, f"output {i} " * 50)]
    return messages


def test_fold_keeps_the_recent_results_and_stubs_the_rest():
    messages = _conversation(6)
    folded = fold(messages, ContextConfig(fold_after=2))
    results = [m for m in folded if m["role"] == "tool"]
    assert [r["content"].startswith("[folded") for r in results] == [True] * 4 + [False] * 2
    assert "an earlier result of run" in results[0]["content"] and "of view_file" in results[1]["content"]
    assert [m.get("tool_call_id") for m in folded] == [m.get("tool_call_id") for m in messages]  # no call orphaned
    assert estimate_tokens(folded) < estimate_tokens(messages)
    assert fold(folded, ContextConfig(fold_after=2)) == folded  # folding twice changes nothing


def test_fold_drops_old_screenshots_but_keeps_their_text():
    render = {"role": "user", "content": [{"type": "text", "text": "Rendered: 0 errors"},
                                          {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]}
    folded = fold([*HEAD, render, dict(render)], ContextConfig(fold_after=1))
    assert folded[2]["content"] == "Rendered: 0 errors\n[earlier screenshot folded]"
    assert folded[3] == render


def test_rebuild_keeps_head_note_and_recent_turns_whole():
    messages = _conversation(5)
    rebuilt = rebuild(messages, "Built the hero; menu next.", ContextConfig(keep_recent_turns=2))
    assert rebuilt[:2] == HEAD
    assert rebuilt[2] == {"role": "user", "content": f"{SUMMARY_HEADER}\n\nBuilt the hero; menu next."}
    assert rebuilt[3:] == messages[-4:]  # the last two calls with their results
    assert rebuild(messages, "  ", ContextConfig(keep_recent_turns=0))[2:] == [
        {"role": "user", "content": f"{SUMMARY_HEADER}\n\n(the policy wrote no note)"}]
    assert rebuild(messages[:4], "note", ContextConfig(keep_recent_turns=3))[3:] == messages[2:4]  # fewer turns than kept
    long = rebuild(messages, "x" * 10_000, ContextConfig(max_summary_chars=500))
    assert len(long[2]["content"]) == len(SUMMARY_HEADER) + 2 + 500


def test_the_summary_request_asks_for_a_note_without_tools():
    asked = summary_request(HEAD, ContextConfig(summary_words=120))
    request = asked[-1]
    assert request["role"] == "user" and "at most 120 words" in request["content"] and "do not call a tool" in request["content"]
    assert asks_for_summary(asked) and not asks_for_summary(HEAD)


def test_a_compaction_keeps_fewer_turns_when_they_would_not_shrink_the_context():
    messages = _conversation(6)  # each result ~150 estimated tokens
    roomy = compact(messages, "note", ContextConfig(compact_at_tokens=4000, keep_recent_turns=2, fold_after=4))
    assert roomy[3:] == fold(messages, ContextConfig(fold_after=4))[-4:]  # both turns fit under half
    tight = compact(messages, "note", ContextConfig(compact_at_tokens=300, keep_recent_turns=2, fold_after=4))
    assert len(tight) < len(roomy) and estimate_tokens(tight) <= 150


def _page(version: int) -> str:
    items = "".join(f'<li class="item">Drink {i}<span>${3 + i % 4}.50</span></li>' for i in range(12 * version))
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Corner Cafe</title></head>'
            f'<body><h1>Corner Cafe</h1><p>Espresso, Latte and Mocha</p><ul>{items}</ul></body></html>')


class _GrowingPageAgent:
    """Writes a bigger page and renders it, three times, then submits; answers a summary request
    with a note. Its pages are long, so a small context threshold forces compactions."""

    name = "growing-page"

    def __init__(self) -> None:
        self.plan = [("write_file", {"path": "index.html", "content": _page(v)}) if i % 2 == 0 else ("render", {})
                     for v in (1, 2, 3) for i in (0, 1)] + [("submit", {})]
        self.summary_requests = 0
        self.seen: list[list[dict]] = []

    async def act(self, messages, tools=None):
        self.seen.append(messages)
        if "Your context is nearly full" in str(messages[-1].get("content")):
            assert not tools
            self.summary_requests += 1
            return {"role": "assistant", "content": f"Note {self.summary_requests}: page written, menu growing."}
        name, arguments = self.plan.pop(0)
        return _call(len(self.plan), name, **arguments)


@pytest.mark.slow
async def test_a_recorded_episode_shows_its_compactions_and_segment_potentials(pipeline, tmp_path):
    env = make_core("AesWebRefine-v0", [TASK], pipeline=pipeline, budget=RefineBudget(max_turns=10))
    agent = _GrowingPageAgent()
    context = ContextConfig(compact_at_tokens=900, fold_after=1, keep_recent_turns=1)
    trajectory = await run_episode(env, agent, task="cafe", context=context)
    await env.close()
    assert trajectory.end == "submit" and not trajectory.error
    assert len(trajectory.compactions) == agent.summary_requests >= 2
    for c in trajectory.compactions:
        assert c.tokens_after < c.tokens_before and c.summary.startswith(SUMMARY_HEADER)
        step_before = trajectory.steps[c.before_turn - 2]
        assert c.potential == step_before.potential  # Φ when the segment ended
    assert [s.segment for s in trajectory.steps] == sorted(s.segment for s in trajectory.steps)
    assert trajectory.steps[-1].segment == len(trajectory.compactions)
    assert trajectory.segment_potentials[-1] == trajectory.steps[-1].potential
    assert len(trajectory.segment_potentials) == len(trajectory.compactions) + 1
    after = agent.seen[[i for i, m in enumerate(agent.seen) if "Your context" in str(m[-1].get("content"))][0] + 1]
    assert after[:2] == trajectory.first_turn and after[2]["content"].startswith(SUMMARY_HEADER)

    write_trajectory(trajectory, tmp_path)
    page = timeline_html(trajectory, tmp_path)
    assert page.count('class="turn compaction"') == len(trajectory.compactions)
    assert "compaction: segment 0 ended at Φ" in page and "segments, Φ" in page
    stored = json.loads((tmp_path / "trajectory.json").read_text())
    assert len(stored["compactions"]) == len(trajectory.compactions)


@pytest.mark.slow
async def test_without_a_context_config_nothing_is_folded_or_compacted(pipeline):
    env = make_core("AesWebRefine-v0", [TASK], pipeline=pipeline, budget=RefineBudget(max_turns=10))
    agent = _GrowingPageAgent()
    trajectory = await run_episode(env, agent, task="cafe")
    await env.close()
    assert not trajectory.compactions and agent.summary_requests == 0
    assert all(not str(m.get("content")).startswith("[folded") for m in agent.seen[-1])
