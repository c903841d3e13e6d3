"""Credit assignment over a long-horizon rollout (WebCoder §2.3), as pure functions.

A rollout that outgrows its context is compacted: the context is rewritten and a new branch of
the message tree starts. Each root-to-leaf path is a candidate training sample, and the
compaction boundaries cut the rollout into development segments. The outcome advantage of the
rollout is redistributed across its segments by the artifact potentials Φ (the score of what the
agent had built by the end of each segment), so a segment that improved the artifact is pushed
up and one that broke it is pushed down, while the rollout's total credit is unchanged.

Nothing here knows veRL: the agent loop builds the tree and the estimator applies the offsets,
and each piece can be checked on its own.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

GAMMA = 0.995
OFFSET_CLIP = 5.0
MAX_SAMPLES = 6  # K_max: retained paths per rollout
SAMPLE_TOKEN_CAP = 65_536


def segment_offsets(potentials: Sequence[float | None], token_counts: Sequence[int], gamma: float = GAMMA,
                    clip: float = OFFSET_CLIP) -> list[float] | None:
    """δ_k per retained segment, or None when any Φ is missing (the caller broadcasts instead).

    `potentials[k]` is Φ when segment k began (the artifact it inherited: the episode's first Φ
    for segment 0, then Φ at each compaction), so r_k is the change segment k made. The last
    segment's own change is not shaped: the outcome R already scores where it ended.
    Shaped rewards r_j = γΦ_{j+1} − Φ_j (j < K−1), r_{K−1} = 0; offsets b_k = Σ_{j≥k} γ^{j−k} r_j;
    δ_k = b_k minus its token-weighted mean (weights n_k, the loss tokens of segment k), clipped to
    ±clip, then re-centred so that Σ_k n_k δ_k = 0: the offsets move credit between segments and
    never add to or take from the rollout's advantage."""
    if len(potentials) != len(token_counts):
        raise ValueError(f"{len(potentials)} potentials for {len(token_counts)} segments")
    if not potentials:
        raise ValueError("a rollout has at least one segment")
    if any(n < 0 for n in token_counts):
        raise ValueError(f"token counts must be >= 0, got {list(token_counts)}")
    if any(p is None or not math.isfinite(p) for p in potentials):
        return None
    phi = [float(p) for p in potentials]
    k = len(phi)
    shaped = [gamma * phi[j + 1] - phi[j] for j in range(k - 1)] + [0.0]
    offsets = [0.0] * k
    running = 0.0
    for j in range(k - 1, -1, -1):
        running = shaped[j] + gamma * running
        offsets[j] = running
    total = sum(token_counts)
    if total == 0:
        return [0.0] * k
    weights = [n / total for n in token_counts]
    mean = sum(w * b for w, b in zip(weights, offsets))
    clipped = [max(-clip, min(clip, b - mean)) for b in offsets]
    centre = sum(w * d for w, d in zip(weights, clipped))
    return [d - centre for d in clipped]


def starting_potentials(first: float | None, ends: Sequence[float | None]) -> list[float | None]:
    """Φ when each retained segment began, from what the starting workspace is worth (the env
    measures it at reset; None only when that measurement failed on our side) and Φ when each
    ended (a segment that absorbed dropped ones begins where the previous retained one ended)."""
    return [first, *ends[:-1]]


def select_paths(potentials: Sequence[float | None], max_samples: int = MAX_SAMPLES) -> list[int]:
    """Which of a rollout's paths (chronological) become samples: the first and the last always,
    then the interior paths whose segment raised Φ the most (the largest increases Φ_i − Φ_{i−1},
    `potentials` being Φ when each segment ended: WebCoder keeps the segments that built the
    artifact up, not its largest regressions), or evenly spaced interior paths when any
    potential is missing. Returned in chronological order."""
    count = len(potentials)
    if max_samples < 2:
        raise ValueError("max_samples must be >= 2 (the first and the last path)")
    if count <= max_samples:
        return list(range(count))
    interior = list(range(1, count - 1))
    wanted = max_samples - 2
    if any(p is None or not math.isfinite(p) for p in potentials):
        step = len(interior) / wanted
        chosen = {interior[int(step * (i + 0.5))] for i in range(wanted)}
    else:
        by_change = sorted(interior, key=lambda i: (-(potentials[i] - potentials[i - 1]), i))
        chosen = set(by_change[:wanted])
    return sorted({0, count - 1} | chosen)


@dataclass(frozen=True)
class TreeMessage:
    """One message of a context, keyed by its position and content so that the same turn seen
    again in a later context (a shared prefix) is recognised as the same node."""

    position: int
    role: str
    digest: str
    generated: bool  # written by the policy in this rollout (trainable); tool output and prompts never are

    @property
    def key(self) -> tuple[int, str]:
        return (self.position, self.digest)


def _digest(message: dict[str, Any]) -> str:
    material = {k: message.get(k) for k in ("role", "content", "tool_calls", "name", "tool_call_id")}
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
class MessageTree:
    """Every context the policy saw in one rollout, as a tree of messages.

    `record(context, reply)` is called once per generation: the messages the policy was given and
    the message it wrote. A context that extends the current path continues it; one that does not
    (a compaction rewrote it) starts a branch at their common prefix. `paths` are the root-to-leaf
    paths in chronological order: the candidate samples, one per segment."""

    paths: list[list[TreeMessage]] = field(default_factory=list)

    def record(self, context: Sequence[dict[str, Any]], reply: dict[str, Any],
               carried: Mapping[int, TreeMessage] | None = None) -> int:
        """Add one generation; returns the index of the path (segment) it belongs to. `carried`
        maps context positions to the earlier nodes they are: turns a rebuild kept, which stay
        the turn they were (trained by the first retained path that holds them, not twice)."""
        carried = carried or {}
        nodes = [carried.get(i) or self._node(i, m, generated=False) for i, m in enumerate(context)]
        current = self.paths[-1] if self.paths else None
        if current is not None and _extends(nodes, current):
            nodes = current + nodes[len(current):]  # keep the generated flags of earlier turns
            self.paths[-1] = nodes
        else:
            shared = _common_prefix(nodes, current) if current is not None else 0
            nodes = (current[:shared] if current is not None else []) + nodes[shared:]
            self.paths.append(nodes)
        nodes.append(self._node(len(nodes), reply, generated=True))
        return len(self.paths) - 1

    @staticmethod
    def _node(position: int, message: dict[str, Any], generated: bool) -> TreeMessage:
        return TreeMessage(position=position, role=str(message.get("role", "")), digest=_digest(message),
                           generated=generated)

    def ownership(self, retained: Sequence[int]) -> dict[int, list[bool]]:
        """Per retained path, which of its messages it trains (M_{k,u} = e_{k,u}·1[O(q_{k,u}) = k]):
        a generated turn is trained by the first retained path that contains it and is context
        (mask 0) in later ones; prompts and tool responses are never trained."""
        owned: set[tuple[int, str]] = set()
        masks: dict[int, list[bool]] = {}
        for index in sorted(retained):
            mask = []
            for node in self.paths[index]:
                trains = node.generated and node.key not in owned
                if trains:
                    owned.add(node.key)
                mask.append(trains)
            masks[index] = mask
        return masks


def _extends(nodes: list[TreeMessage], path: list[TreeMessage]) -> bool:
    return len(nodes) >= len(path) and all(a.key == b.key for a, b in zip(nodes, path))


def _common_prefix(nodes: list[TreeMessage], path: list[TreeMessage]) -> int:
    shared = 0
    for a, b in zip(nodes, path):
        if a.key != b.key:
            break
        shared += 1
    return shared


def response_room(prompt_length: int, response_length: int, sample_cap: int | None = SAMPLE_TOKEN_CAP) -> int:
    """How many response tokens a sample keeps: at most veRL's response length and, with
    WebCoder's cap on the whole path (prompt and response together), what the prompt leaves of
    `sample_cap`. `sample_cap=None` caps the response alone."""
    if sample_cap is None:
        return response_length
    if prompt_length >= sample_cap:
        raise ValueError(f"a {prompt_length}-token prompt leaves no room under the {sample_cap}-token sample cap")
    return min(response_length, sample_cap - prompt_length)


def keep_recent(token_ids: Sequence[int], loss_mask: Sequence[int], cap: int = SAMPLE_TOKEN_CAP
                ) -> tuple[list[int], list[int]]:
    """A sample over the cap keeps its most recent tokens (the latest turns carry the segment's work)."""
    if len(token_ids) != len(loss_mask):
        raise ValueError("token ids and loss mask differ in length")
    start = max(0, len(token_ids) - cap)
    return list(token_ids[start:]), list(loss_mask[start:])


def trajectory_segments(trajectory: dict[str, Any], max_samples: int = MAX_SAMPLES) -> list[dict[str, Any]]:
    """The segments of a recorded episode (`aesenv run ... --compact-at-tokens N`, its
    trajectory.json) as training would weigh them: turns, Φ at the end, the policy's tokens
    (estimated: its actions and the note that closed the segment), whether the segment would be
    a sample, and δ_k over the retained ones (None: broadcast)."""
    from aesenv.context import estimate_tokens
    from aesenv.trajectory import Trajectory

    recorded = Trajectory.model_validate(trajectory)
    segments = []
    for index, potential in enumerate(recorded.segment_potentials):
        own = [s for s in recorded.steps if s.segment == index]
        written = [s.action for s in own]
        if index < len(recorded.compactions):
            written.append({"role": "assistant", "content": recorded.compactions[index].summary})
        segments.append({"segment": index, "turns": [s.turn for s in own], "potential": potential,
                         "tokens": estimate_tokens(written)})
    retained = select_paths([s["potential"] for s in segments], max_samples)
    offsets = segment_offsets(starting_potentials(recorded.start_potential, [segments[k]["potential"] for k in retained]),
                              [segments[k]["tokens"] for k in retained])
    for position, k in enumerate(retained):
        segments[k]["offset"] = None if offsets is None else round(offsets[position], 6)
    for segment in segments:
        segment["retained"] = "offset" in segment
    return segments


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m train.credit", description=trajectory_segments.__doc__)
    parser.add_argument("trajectories", nargs="+", help="trajectory.json files written by `aesenv run`")
    parser.add_argument("--max-samples", type=int, default=MAX_SAMPLES)
    args = parser.parse_args(argv)
    for path in args.trajectories:
        with open(path) as handle:
            trajectory = json.load(handle)
        start = trajectory.get("start_potential")
        print(f"{path}: {trajectory.get('task', {}).get('id', '?')}, reward {trajectory.get('reward')}, "
              f"start Φ {'unknown' if start is None else f'{start:.3f}'}")
        segments = trajectory_segments(trajectory, args.max_samples)
        for s in segments:
            offset = "dropped" if not s["retained"] else ("broadcast" if s["offset"] is None else f"{s['offset']:+.4f}")
            print(f"  segment {s['segment']}: turns {s['turns']}, Φ {s['potential']:.3f}, ~{s['tokens']} tokens, δ {offset}")
        retained = [s for s in segments if s["retained"]]
        broadcast = sum(s["offset"] is None for s in retained)
        print(f"  {len(retained)} of {len(segments)} segments retained, {broadcast} broadcast")


if __name__ == "__main__":
    main()
