"""Segment credit assignment (train.credit) against hand computations and random message trees."""

import random

import pytest

from train.credit import MessageTree, keep_recent, segment_offsets, select_paths


def _weighted_sum(deltas, counts):
    return sum(d * n for d, n in zip(deltas, counts))


def test_offsets_match_a_hand_computation():
    gamma = 0.995
    phi, counts = [0.2, 0.5, 0.4], [10, 20, 30]
    r0, r1 = gamma * 0.5 - 0.2, gamma * 0.4 - 0.5
    b = [r0 + gamma * r1, r1, 0.0]
    mean = (10 * b[0] + 20 * b[1] + 30 * b[2]) / 60
    assert segment_offsets(phi, counts) == pytest.approx([x - mean for x in b], abs=1e-12)


def test_a_segment_that_improved_the_artifact_gains_over_one_that_broke_it():
    deltas = segment_offsets([0.1, 0.8, 0.3, 0.3], [50, 50, 50, 50])
    assert deltas[0] > deltas[2]  # segment 0 led to the jump; segment 1 led to the drop


def test_clipping_happens_before_the_recentring():
    deltas = segment_offsets([0.0, 0.0, 20.0], [1, 1, 1])
    # unclipped: b = [19.80, 19.90, 0] minus their mean 13.23 -> [6.57, 6.67, -13.23]; clipped to ±5
    assert deltas == pytest.approx([5 - 5 / 3, 5 - 5 / 3, -5 - 5 / 3], abs=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_offsets_sum_to_zero_token_weighted_after_clipping(seed):
    rng = random.Random(seed)
    k = rng.randint(2, 9)
    phi = [rng.uniform(-30, 30) for _ in range(k)]
    counts = [rng.randint(0, 4000) for _ in range(k)]
    counts[rng.randrange(k)] += 1
    deltas = segment_offsets(phi, counts)
    assert abs(_weighted_sum(deltas, counts)) <= 1e-9 * sum(counts)
    assert all(abs(d) <= 10.0 + 1e-9 for d in deltas)  # clipped to ±5, then shifted by at most 5


def test_missing_potential_means_broadcast_and_one_segment_means_no_offset():
    assert segment_offsets([0.3, None, 0.5], [1, 2, 3]) is None
    assert segment_offsets([0.3, float("nan")], [1, 2]) is None
    assert segment_offsets([0.7], [120]) == [0.0]
    assert segment_offsets([0.1, 0.9], [0, 0]) == [0.0, 0.0]


def test_bad_shapes_are_errors():
    with pytest.raises(ValueError, match="2 potentials for 3 segments"):
        segment_offsets([0.1, 0.2], [1, 2, 3])
    with pytest.raises(ValueError, match="at least one segment"):
        segment_offsets([], [])
    with pytest.raises(ValueError, match=">= 0"):
        segment_offsets([0.1, 0.2], [1, -2])


def test_selection_keeps_first_last_and_the_largest_increases():
    phi = [0.0, 0.1, 0.1, 0.9, 0.9, 0.2, 0.25, 0.3, 0.3, 0.5]
    # interior ΔΦ: 1: +0.1, 3: +0.8, 5: −0.7 (the largest change, but a regression), 6: +0.05,
    # 7: +0.05, others 0. WebCoder keeps the largest increases: 5 is left out.
    assert select_paths(phi) == [0, 1, 3, 6, 7, 9]
    assert select_paths(phi[:5]) == [0, 1, 2, 3, 4]
    falling = [1.0, 0.2, 0.9, 0.1, 0.8, 0.0, 0.7, 0.6]  # ΔΦ: 1: −0.8, 2: +0.7, 3: −0.8, 4: +0.7, 5: −0.8, 6: +0.7
    assert select_paths(falling, 5) == [0, 2, 4, 6, 7]


def test_selection_is_evenly_spaced_when_potentials_are_missing():
    chosen = select_paths([None] * 22)
    assert chosen[0] == 0 and chosen[-1] == 21 and len(chosen) == 6
    gaps = [b - a for a, b in zip(chosen, chosen[1:])]
    assert max(gaps) - min(gaps) <= 3


def test_keep_recent_cuts_from_the_front():
    ids, mask = keep_recent(list(range(10)), [0, 1] * 5, cap=4)
    assert ids == [6, 7, 8, 9] and mask == [0, 1, 0, 1]
    assert keep_recent([5, 6, 7], [1, 0, 1], cap=4) == ([5, 6, 7], [1, 0, 1])  # under the cap: whole
    assert keep_recent([5, 6, 7, 8], [1, 0, 1, 1], cap=4) == ([5, 6, 7, 8], [1, 0, 1, 1])  # at the cap: whole
    with pytest.raises(ValueError, match="differ in length"):
        keep_recent([1, 2], [1])


def test_two_samples_are_the_first_and_the_last_path_and_fewer_are_refused():
    assert select_paths([0.1, 0.9, 0.2, 0.5], 2) == [0, 3]
    assert select_paths([0.1, 0.9], 2) == [0, 1]
    with pytest.raises(ValueError, match="max_samples must be >= 2"):
        select_paths([0.1, 0.9, 0.2], 1)


def _random_rollout(rng: random.Random) -> MessageTree:
    """An episode with tool results after every turn, folds (an older tool result becomes a stub:
    the rewritten context shares its earlier turns with the old one) and compactions that rebuild
    the context from the system prompt, the task, a summary and the most recent turns."""
    tree = MessageTree()
    system, task = {"role": "system", "content": "sys"}, {"role": "user", "content": "build a page"}
    context = [system, task]
    for turn in range(rng.randint(1, 25)):
        reply = {"role": "assistant", "content": f"turn {turn} {rng.random():.6f}",
                 "tool_calls": [{"id": f"c{turn}", "function": {"name": "write_file", "arguments": "{}"}}]}
        tree.record(list(context), reply)
        context = context + [reply, {"role": "tool", "tool_call_id": f"c{turn}", "content": f"ok {turn}"}]
        tools = [i for i, m in enumerate(context) if m["role"] == "tool" and not m["content"].startswith("[folded")]
        if len(tools) > 2 and rng.random() < 0.3:
            oldest = tools[0]
            context = context[:oldest] + [{**context[oldest], "content": "[folded]"}] + context[oldest + 1:]
        elif rng.random() < 0.2:
            recent = context[-rng.choice([0, 2, 4]):] if len(context) > 6 else []
            context = [system, task, {"role": "user", "content": f"summary at {turn}"}] + recent
    return tree


@pytest.mark.parametrize("seed", range(40))
def test_every_generated_turn_is_trained_by_exactly_one_retained_path(seed):
    rng = random.Random(seed)
    tree = _random_rollout(rng)
    count = len(tree.paths)
    retained = sorted({0, count - 1} | set(rng.sample(range(count), k=min(count, rng.randint(0, 4)))))
    masks = tree.ownership(retained)
    trained_by: dict = {}
    for index in retained:
        for node, trains in zip(tree.paths[index], masks[index]):
            assert not trains or (node.generated and node.role == "assistant")  # tool and prompt tokens never
            if trains:
                trained_by.setdefault(node.key, []).append(index)
    generated_in_retained = {n.key for i in retained for n in tree.paths[i] if n.generated}
    assert set(trained_by) == generated_in_retained
    assert all(len(owners) == 1 for owners in trained_by.values())
    first_seen = {}
    for index in retained:
        for node in tree.paths[index]:
            first_seen.setdefault(node.key, index)
    assert all(owners[0] == first_seen[key] for key, owners in trained_by.items())


def test_a_compaction_starts_a_new_path_that_shares_the_prefix():
    tree = MessageTree()
    system, task = {"role": "system", "content": "s"}, {"role": "user", "content": "t"}
    first = {"role": "assistant", "content": "a1"}
    assert tree.record([system, task], first) == 0
    tool = {"role": "tool", "tool_call_id": "x", "content": "r1"}
    assert tree.record([system, task, first, tool], {"role": "assistant", "content": "a2"}) == 0
    summary = {"role": "user", "content": "summary"}
    assert tree.record([system, task, summary], {"role": "assistant", "content": "a3"}) == 1
    assert [n.role for n in tree.paths[0]] == ["system", "user", "assistant", "tool", "assistant"]
    assert tree.paths[1][:2] == tree.paths[0][:2] and tree.paths[1][2].role == "user"
    assert tree.ownership([0, 1]) == {0: [False, False, True, False, True], 1: [False, False, False, True]}


def test_random_rollouts_share_generated_turns_across_paths():
    """The property test above is only meaningful if folds make later paths repeat earlier turns."""
    shared = 0
    for seed in range(40):
        tree = _random_rollout(random.Random(seed))
        seen: set = set()
        for path in tree.paths:
            keys = {n.key for n in path if n.generated}
            shared += len(keys & seen)
            seen |= keys
    assert shared > 20


def _recorded(potentials_at_ends: list[float], turns_per_segment: int = 2) -> dict:
    """A trajectory.json as `aesenv run` writes it: steps with their segment, and compactions."""
    steps, compactions, turn, before = [], [], 0, 0.0
    for segment, phi in enumerate(potentials_at_ends):
        for _ in range(turns_per_segment):
            turn += 1
            steps.append({"turn": turn, "segment": segment, "potential": phi, "delta_potential": phi - before,
                          "action": {"role": "assistant", "content": "edit the page " * 10}, "observation": [],
                          "reward": None, "terminated": False, "truncated": False, "tool_results": [],
                          "agent_ms": 1.0, "env_ms": 1.0})
            before = phi
        if segment < len(potentials_at_ends) - 1:
            compactions.append({"segment": segment, "before_turn": turn + 1, "potential": phi, "summary": "note " * 20,
                                "tokens_before": 3000, "tokens_after": 900})
    return {"env_id": "AesWebProject-v0", "task": {"id": "t"}, "policy": "scripted", "first_turn": [],
            "reward": 0.7, "steps": steps, "compactions": compactions}


def test_a_recorded_trajectory_reads_back_as_training_would_weigh_it():
    from train.credit import starting_potentials, trajectory_segments

    segments = trajectory_segments(_recorded([0.2, 0.2, 0.9, 0.9]))
    assert [s["potential"] for s in segments] == [0.2, 0.2, 0.9, 0.9] and all(s["retained"] for s in segments)
    expected = segment_offsets(starting_potentials(0.0, [0.2, 0.2, 0.9, 0.9]), [s["tokens"] for s in segments])
    assert [s["offset"] for s in segments] == pytest.approx(expected, abs=1e-6)
    assert segments[0]["offset"] > segments[3]["offset"]  # the last segment's own change is not shaped
    dropped = trajectory_segments(_recorded([0.1, 0.2, 0.9, 0.35, 0.35, 0.5, 0.55, 0.55]), max_samples=4)
    # interior ΔΦ: +0.1, +0.7, −0.55, 0, +0.15, +0.05: the two largest increases, not the fall at 3
    assert [s["segment"] for s in dropped if s["retained"]] == [0, 2, 5, 7]
    assert starting_potentials(0.0, [0.5, 0.7]) == [0.0, 0.5]
    handed_over = trajectory_segments({**_recorded([0.6, 0.6, 0.9]), "start_potential": 0.6})
    assert handed_over[0]["offset"] < handed_over[1]["offset"]  # looking at what was there earns nothing
    unknown = trajectory_segments({**_recorded([0.6, 0.9]), "start_potential": None})
    assert [s["offset"] for s in unknown] == [None, None]  # the start's look failed on our side: broadcast


def test_the_credit_command_prints_each_segment(tmp_path, capsys):
    import json

    from train.credit import main

    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(_recorded([0.2, 0.9])))
    main([str(path)])
    out = capsys.readouterr().out
    assert "segment 0: turns [1, 2], Φ 0.200" in out and "segment 1: turns [3, 4], Φ 0.900" in out and "δ +" in out
    assert "2 of 2 segments retained, 0 broadcast" in out


def test_the_credit_command_prints_each_segment_and_counts_broadcasts(tmp_path, capsys):
    """`python -m train.credit` on two recordings: one whose start is known (every retained segment
    gets its offset, printed as trajectory_segments computes it) and one whose start is unknown
    (broadcast, and said so)."""
    import json

    from train.credit import main, trajectory_segments

    known = {**_recorded([0.2, 0.5, 0.9]), "start_potential": 0.1}
    unknown = {**_recorded([0.4, 0.8]), "start_potential": None, "reward": None}
    paths = []
    for name, recorded in (("known", known), ("unknown", unknown)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(recorded))
        paths.append(str(path))
    main([*paths, "--max-samples", "2"])
    lines = capsys.readouterr().out.splitlines()
    segments = trajectory_segments(known, 2)
    first, last = segments[0], segments[2]
    assert lines[0] == f"{paths[0]}: t, reward 0.7, start Φ 0.100"
    assert lines[1] == f"  segment 0: turns [1, 2], Φ 0.200, ~{first['tokens']} tokens, δ {first['offset']:+.4f}"
    assert lines[2] == f"  segment 1: turns [3, 4], Φ 0.500, ~{segments[1]['tokens']} tokens, δ dropped"
    assert lines[3] == f"  segment 2: turns [5, 6], Φ 0.900, ~{last['tokens']} tokens, δ {last['offset']:+.4f}"
    assert lines[4] == "  2 of 3 segments retained, 0 broadcast"
    assert lines[5] == f"{paths[1]}: t, reward None, start Φ unknown"
    assert lines[6].endswith("δ broadcast") and lines[7].endswith("δ broadcast")
    assert lines[8] == "  2 of 2 segments retained, 2 broadcast" and len(lines) == 9


def test_a_message_digest_covers_every_field_that_makes_it_another_message():
    """Two context messages share a tree node only when role, content, tool calls, name and tool
    call id all agree; key order inside a tool call does not matter; any content digests."""
    import datetime

    from train.credit import _digest

    base = {"role": "tool", "content": "ok", "tool_calls": [{"id": "1", "function": {"name": "render"}}],
            "name": "render", "tool_call_id": "c1"}
    variants = [{**base, "role": "user"}, {**base, "content": "not ok"}, {**base, "tool_calls": []},
                {**base, "name": "write_file"}, {**base, "tool_call_id": "c2"}]
    digests = {_digest(m) for m in [base, *variants]}
    assert len(digests) == 6 and all(len(d) == 16 for d in digests)
    reordered = {**base, "tool_calls": [{"function": {"name": "render"}, "id": "1"}]}
    assert _digest(reordered) == _digest(base)
    assert _digest({**base, "extra": "not part of the message"}) == _digest(base)
    assert len(_digest({"role": "user", "content": datetime.date(2026, 12, 4)})) == 16


def test_a_context_that_is_exactly_the_current_path_continues_its_segment():
    """The policy answers twice in a row (no tool result between): the second context is the path
    so far, neither longer nor rewritten, and stays in the same segment."""
    tree = MessageTree()
    context = [{"role": "system", "content": "sys"}, {"role": "user", "content": "build a page"}]
    first = {"role": "assistant", "content": "a plan"}
    assert tree.record(context, first) == 0
    assert tree.record([*context, first], {"role": "assistant", "content": "the page"}) == 0
    assert len(tree.paths) == 1 and len(tree.paths[0]) == 4


def test_a_turn_a_rebuild_carried_is_trained_once_by_the_first_retained_path_that_holds_it():
    """A compaction keeps the policy's last turn in the rebuilt context (`carried`): it stays the
    generated turn it was, so when the path that wrote it is dropped the rebuilt path trains it, and
    when both are kept only the first does."""
    tree = MessageTree()
    system, task = {"role": "system", "content": "sys"}, {"role": "user", "content": "build a page"}
    written = {"role": "assistant", "content": "wrote index.html"}
    assert tree.record([system, task], written) == 0
    kept = tree.paths[0][-1]
    rebuilt = [system, task, {"role": "user", "content": "summary of the work so far"}, written]
    assert tree.record(rebuilt, {"role": "assistant", "content": "polished it"}, carried={3: kept}) == 1
    assert tree.paths[1][3] is kept
    assert tree.ownership([1])[1] == [False, False, False, True, True]  # the dropped path's turn is trained here
    both = tree.ownership([0, 1])
    assert both[0] == [False, False, True] and both[1] == [False, False, False, False, True]


def test_the_sample_cap_covers_prompt_and_response_together():
    """WebCoder's 65,536-token cap is on a sample's whole path: the prompt's tokens come out of it."""
    from train.credit import SAMPLE_TOKEN_CAP, response_room

    assert SAMPLE_TOKEN_CAP == 65_536
    assert response_room(8_192, 65_536) == 65_536 - 8_192
    assert response_room(100, 1_000, sample_cap=2_000) == 1_000  # veRL's response length still bounds it
    assert response_room(8_192, 65_536, sample_cap=None) == 65_536  # the switch: the response alone
    with pytest.raises(ValueError, match="no room"):
        response_room(70_000, 65_536)
