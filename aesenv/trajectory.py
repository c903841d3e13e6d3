"""Drive a refine episode with an agent, record everything, and show it as an HTML timeline.

`run_episode` is the loop every agent shares: the env's first turn, then the agent's assistant
message → `env.step` → the observation messages appended, until the episode ends. The
`Trajectory` keeps the messages, tool calls, rewards, potentials and the final record; with a
`ContextConfig` the loop also folds old tool results and compacts the context when it grows too
long (`aesenv.context`), and each compaction is recorded as the end of a development segment;
`write_trajectory` stores it as `trajectory.json` (images as files under `images/`) and
`timeline.html`, a self-contained page (images inlined, so it can be sent on its own) that reads
top to bottom like the conversation.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from aesenv.context import ContextConfig, compact, estimate_tokens, fold, summary_request
from aesenv.envs.refine import AsyncRefineEnv
from aesenv.jsonl import dumps
from aesenv.policy import Agent
from aesenv.tasks import Task


class StepRecord(BaseModel):
    turn: int
    action: dict[str, Any]  # the assistant message
    observation: list[dict[str, Any]]
    reward: float | None  # None for NaN (our own failure)
    terminated: bool
    truncated: bool
    potential: float
    delta_potential: float
    tool_results: list[dict[str, Any]]
    agent_ms: float
    env_ms: float
    segment: int = 0  # development segment: how many compactions came before this turn


class Compaction(BaseModel):
    """The context was rebuilt before `before_turn`: segment `segment` ended there."""

    segment: int
    before_turn: int
    potential: float  # Φ when the segment ended: the artifact's state after its last turn
    tokens_before: int  # estimated, the context that would have been sent
    tokens_after: int
    summary: str  # the policy's handover note


class Trajectory(BaseModel):
    env_id: str
    task: dict[str, Any]
    policy: str
    first_turn: list[dict[str, Any]]
    steps: list[StepRecord] = Field(default_factory=list)
    reward: float | None = None
    end: str = ""
    record: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    error: str = ""  # the agent failed (not the env): the episode stopped there, unscored (no answer is not a bad one)
    compactions: list[Compaction] = Field(default_factory=list)
    start_potential: float | None = 0.0  # what the starting workspace is worth (None: unknown; env info)

    def record_step(self, action: dict[str, Any], observation: list[dict[str, Any]], reward: float | None,
                    terminated: bool, truncated: bool, info: dict[str, Any], *, agent_ms: float,
                    env_ms: float) -> StepRecord:
        """Append one env step as the refine env reported it (`info`); a NaN reward is None."""
        step = StepRecord(
            turn=info["turn"], action=action, observation=observation,
            reward=None if reward is None or math.isnan(reward) else reward, terminated=terminated,
            truncated=truncated, potential=info["potential"], delta_potential=info["delta_potential"],
            tool_results=info["tool_results"], agent_ms=round(agent_ms, 1), env_ms=round(env_ms, 1),
            segment=len(self.compactions))
        self.steps.append(step)
        return step

    @property
    def segment_potentials(self) -> list[float]:
        """Φ at the end of each development segment, the last one the episode's final Φ."""
        ends = [c.potential for c in self.compactions]
        return ends + ([self.steps[-1].potential] if self.steps else [])


async def run_episode(env: AsyncRefineEnv, agent: Agent, *, task: Task | str | None = None,
                      seed: int | None = None, context: ContextConfig | None = None) -> Trajectory:
    """One episode until submit or budget. An agent failure ends the recording with `error` set."""
    messages, info = await env.reset(task=task, seed=seed)
    trajectory = Trajectory(env_id=env.env_id, task=info["task"], policy=agent.name, first_turn=messages,
                            start_potential=info.get("start_potential", 0.0))
    conversation = list(messages)
    potential = float(info.get("potential", 0.0))
    done = False
    while not done:
        t = time.perf_counter()
        try:
            if context is not None:
                conversation = await _managed(conversation, agent, context, trajectory, potential)
            action = await agent.act(conversation, env.tools)
        except Exception as exc:  # noqa: BLE001 - record why the agent stopped, keep what happened
            trajectory.error = f"agent {agent.name} failed: {type(exc).__name__}: {exc}"
            break
        agent_ms = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        observation, reward, terminated, truncated, info = await env.step(action)
        env_ms = (time.perf_counter() - t) * 1000
        conversation += [action, *observation]
        done = terminated or truncated
        potential = info["potential"]
        trajectory.start_potential = info.get("start_potential", trajectory.start_potential)
        trajectory.record_step(action, observation, reward, terminated, truncated, info,
                               agent_ms=agent_ms, env_ms=env_ms)
        if done:
            trajectory.reward, trajectory.end, trajectory.record = trajectory.steps[-1].reward, info["end"], info["record"]
    usage = getattr(agent, "usage", None)
    trajectory.usage = usage.model_dump() if isinstance(usage, BaseModel) else None
    return trajectory


async def _managed(conversation: list[dict], agent: Agent, context: ContextConfig, trajectory: Trajectory,
                   potential: float) -> list[dict]:
    """The conversation folded, and compacted (the agent writing its handover note) when it would
    still exceed the threshold; a compaction is recorded on the trajectory."""
    folded = fold(conversation, context)
    tokens = estimate_tokens(folded)
    if tokens <= context.compact_at_tokens:
        return folded
    note = await agent.act(summary_request(folded, context), [])
    summary = note.get("content") or ""
    rebuilt = compact(folded, summary if isinstance(summary, str) else str(summary), context)
    trajectory.compactions.append(Compaction(
        segment=len(trajectory.compactions), before_turn=len(trajectory.steps) + 1, potential=potential,
        tokens_before=tokens, tokens_after=estimate_tokens(rebuilt), summary=rebuilt[2]["content"]))
    return rebuilt


def _externalize(messages: list[dict], images: Path, prefix: str) -> list[dict]:
    """Messages with inline data: images written to files and replaced by their relative path."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            parts = []
            for part in content:
                url = part.get("image_url", {}).get("url", "") if part.get("type") == "image_url" else ""
                if url.startswith("data:") and ";base64," in url:
                    header, _, data = url.partition(";base64,")
                    raw = base64.b64decode(data)
                    name = f"{prefix}-{hashlib.sha256(raw).hexdigest()[:12]}.{header.split('/')[-1]}"
                    (images / name).write_bytes(raw)
                    parts.append({"type": "image_file", "path": f"images/{name}"})
                else:
                    parts.append(part)
            content = parts
        out.append({**m, "content": content})
    return out


def write_trajectory(trajectory: Trajectory, out_dir: str | Path) -> Path:
    """`trajectory.json`, `images/`, and `timeline.html` in `out_dir`; returns the timeline's path."""
    out = Path(out_dir)
    images = out / "images"
    images.mkdir(parents=True, exist_ok=True)
    stored = trajectory.model_copy(update={
        "first_turn": _externalize(trajectory.first_turn, images, "turn-0"),
        "steps": [s.model_copy(update={"observation": _externalize(s.observation, images, f"turn-{s.turn}")})
                  for s in trajectory.steps]})
    (out / "trajectory.json").write_text(dumps(stored, indent=2), encoding="utf-8")
    timeline = out / "timeline.html"
    timeline.write_text(timeline_html(stored, out), encoding="utf-8")
    return timeline


_STYLE = """
body{font:14px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
header{background:#1d2330;color:#fff;padding:20px 28px}header h1{margin:0;font-size:20px}
main{max-width:1100px;margin:0 auto;padding:20px}
.turn{background:#fff;border-radius:10px;box-shadow:0 1px 3px rgba(0,0,0,.08);margin:14px 0;padding:12px 16px}
.meta{color:#5b6475;font-size:12px}.bad{color:#b42318}.good{color:#067647}
.msg{border-left:4px solid #c9ced8;margin:8px 0;padding:4px 10px}
.msg.assistant{border-color:#2e6be6}.msg.tool,.msg.user{border-color:#7a5af8}.msg.system{border-color:#98a2b3}
.role{font-weight:600;font-size:12px;text-transform:uppercase;color:#5b6475}
pre{white-space:pre-wrap;word-break:break-word;background:#f4f5f7;padding:8px;border-radius:6px;max-height:420px;overflow:auto;font-size:12px}
img{max-width:100%;border:1px solid #d0d5dd;border-radius:6px}
.compaction{background:#fffaeb;border:1px dashed #dc6803}
"""


def _content_html(content: Any, root: Path) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return f"<pre>{html.escape(content)}</pre>"
    parts = []
    for part in content:
        if part.get("type") == "text":
            parts.append(f"<pre>{html.escape(part.get('text', ''))}</pre>")
        elif part.get("type") == "image_file":
            data = base64.b64encode((root / part["path"]).read_bytes()).decode("ascii")
            mime = "image/" + part["path"].rsplit(".", 1)[-1]
            parts.append(f'<img src="data:{mime};base64,{data}" alt="{html.escape(part["path"])}">')
    return "".join(parts)


def _message_html(m: dict, root: Path) -> str:
    body = _content_html(m.get("content"), root)
    for call in m.get("tool_calls") or []:
        function = call.get("function", {})
        arguments = function.get("arguments", "")
        try:
            arguments = json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
        except (TypeError, ValueError):
            pass
        body += f"<div>tool call <b>{html.escape(str(function.get('name')))}</b><pre>{html.escape(str(arguments))}</pre></div>"
    role = html.escape(m.get("role", ""))
    return f'<div class="msg {role}"><div class="role">{role}</div>{body}</div>'


def timeline_html(trajectory: Trajectory, root: Path) -> str:
    """The timeline page of a stored trajectory whose image files are under `root`."""
    t = trajectory
    reward = "n/a (infra error)" if t.reward is None and t.end else t.reward
    failure = (t.record or {}).get("failure", "")
    head = (f"<h1>{html.escape(t.env_id)} · {html.escape(str(t.task.get('id')))} · {html.escape(t.policy)}</h1>"
            f"<div>final reward <b>{reward}</b> · ended by {html.escape(t.end or 'agent error')} · "
            f"{len(t.steps)} turns{' · ' + html.escape(failure) if failure else ''}"
            + (f" · {len(t.segment_potentials)} segments, Φ " + " → ".join(f"{p:.3f}" for p in t.segment_potentials)
               if t.compactions else "") + "</div>")
    blocks = ['<section class="turn"><div class="meta">first turn</div>'
              + "".join(_message_html(m, root) for m in t.first_turn) + "</section>"]
    compaction_before = {c.before_turn: c for c in t.compactions}
    for s in t.steps:
        if (c := compaction_before.get(s.turn)) is not None:
            blocks.append(f'<section class="turn compaction"><div class="meta">compaction: segment {c.segment} ended '
                          f"at Φ {c.potential:.3f} · context ~{c.tokens_before} → ~{c.tokens_after} tokens</div>"
                          f"<details><summary>handover note</summary><pre>{html.escape(c.summary)}</pre></details>"
                          "</section>")
        results = ", ".join(f"{r['name']}: " + ("ok" if r["ok"] else f"<span class=bad>{html.escape(r['error'][:200])}</span>")
                            for r in s.tool_results)
        delta = f'<span class="{"good" if s.delta_potential > 0 else "bad" if s.delta_potential < 0 else ""}">' \
                f"ΔΦ {s.delta_potential:+.3f}</span>"
        blocks.append(f'<section class="turn"><div class="meta">turn {s.turn} · Φ {s.potential:.3f} {delta} · '
                      f"reward {s.reward} · agent {s.agent_ms:.0f} ms · env {s.env_ms:.0f} ms · {results}</div>"
                      + _message_html(s.action, root) + "".join(_message_html(m, root) for m in s.observation)
                      + "</section>")
    if t.error:
        blocks.append(f'<section class="turn bad">{html.escape(t.error)}</section>')
    if t.record:
        blocks.append(f'<section class="turn"><details><summary>final reward record</summary><pre>'
                      f"{html.escape(json.dumps(t.record, indent=2))}</pre></details></section>")
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{html.escape(t.env_id)} trajectory</title>"
            f"<style>{_STYLE}</style></head><body><header>{head}</header><main>{''.join(blocks)}</main></body></html>")
