"""What a served env says about itself, enough to write a client from: `/schema` (every message's
JSON schema, reset's parameters, the action forms this env takes, its tools and budget, which
calls hold a session and which do not, the error codes and whether each ends the episode),
`/metadata` (OpenEnv's fields, a readme among them).

Built from the wire models, the forms registry and the env's own core (`Hub.described`), so it
cannot drift from what the server does.
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.types import EnvironmentMetadata

from aesenv.serve.forms import ANSWER_TOOL, FORMS, served_mode
from aesenv.wire import (ENDS_EPISODE, AesAction, AesObservation, AesState, ResetParams, ScoreRequest,
                                 ScoreResponse, SessionOptions, TaskPage)
from aesenv.version import __version__

CALLS: dict[str, dict[str, Any]] = {
    "WS /ws": {"session": True, "means": "one session, one env: messages {type: reset|step|state|mcp|close, data}. "
                                         "Episodes live here."},
    "POST /score": {"session": False, "single_turn_only": True,
                    "means": "a task and an answer, scored at once: the reward and the record (ScoreRequest -> "
                             "ScoreResponse)"},
    "GET /tasks?offset=&limit=": {"session": False, "means": "the task ids, categories and prompts (TaskPage)"},
    "GET /frames/<id>": {"session": False, "means": "a frame the record gave by reference (options.frames)"},
    "GET /schema, GET /metadata, GET /health": {"session": False, "means": "this description; liveness"},
    "POST /reset, POST /step, GET /state": {
        "session": False, "means": "OpenEnv's HTTP calls: each runs on a fresh env that is closed when the call "
                                   "returns, so POST /step after POST /reset answers `no_episode`. Use /ws for "
                                   "episodes, POST /score for one answer."},
    "POST /mcp, WS /mcp": {
        "session": "with `openenv/session/create` (HTTP: pass its session_id in each call's params) or per socket",
        "means": "MCP JSON-RPC: tools/list, tools/call (the env's tools, and `start_episode` to begin one); over "
                 "/ws the same as a message of type `mcp`"},
}

ERRORS: dict[str, str] = {
    "no_episode": "a step with no episode running: reset first",
    "episode_over": "a step after the episode ended: reset for a new one",
    "bad_task": "the task id is not in GET /tasks, or the whole task does not validate",
    "bad_options": "reset got an unknown parameter or option",
    "bad_action": "the action is in a form this env cannot use (action_forms); the episode goes on",
    "step_timeout": "our side did not finish in time (infra); the episode is over",
    "session_expired": "the session outlived its longest life; open a new one",
    "session_closed": "the session was closed (idle, server stopping, client gone)",
    "infra": "our side failed (never a score: reward null); the episode is over",
}


def schema(hub: Any, env_id: str) -> dict[str, Any]:
    """GET /<env>/schema: OpenEnv's three schemas (the real state model) and what else a client needs."""
    mode = served_mode(env_id)
    budget = hub.budget(env_id)
    return {
        "env_id": env_id, "mode": mode,
        "action": AesAction.model_json_schema(),
        "observation": AesObservation.model_json_schema(),
        "state": AesState.model_json_schema(),
        "reset": ResetParams.model_json_schema(),
        "options": SessionOptions.model_json_schema(),
        "score": ({"request": ScoreRequest.model_json_schema(), "response": ScoreResponse.model_json_schema()}
                  if mode == "single" else None),
        "tasks": TaskPage.model_json_schema(),
        "action_forms": FORMS[mode].described,
        "tools": [ANSWER_TOOL] if mode == "single" else hub.tools(env_id),
        "budget": budget.model_dump(mode="json") if budget is not None else None,
        "episode": _episode(mode, budget),
        "reward": {"default": hub.settings.pipeline.reward, "scales": {
            "paper": "AesCoder's Eq. 1: 0.1*exec(+-1) + 0.8*static(0-100) + 0.1*interactions (about -0.1..80+)",
            "normalized": "the weighted mean of the applicable channels' [0, 1] scores"},
            "null_means": "our side failed (reward_valid false, error.infra true): never a 0"},
        "calls": CALLS,
        "errors": {code: {"done": ENDS_EPISODE[code], "means": means} for code, means in ERRORS.items()},
    }


def _episode(mode: str, budget: Any) -> str:
    if mode == "single":
        return "one step: the answer is scored and the episode ends (a bad_action does not use the step up)"
    if budget is None:
        return "rounds of requirements, each delivered by `submit`, until acceptance or the time is up"
    return (f"up to {budget.max_turns} turns (every message, invalid calls included) and {budget.max_wall_s:g} s; "
            "`submit` ends it, and so does the budget (then the workspace is scored as it is)")


def readme(hub: Any, env_id: str) -> str:
    """The env's readme (markdown), as `/metadata`'s `readme_content`."""
    mode = served_mode(env_id)
    forms = FORMS[mode].described
    tools = [ANSWER_TOOL] if mode == "single" else hub.tools(env_id)
    lines = [f"# {env_id}", "", _summary(env_id, mode), "",
             "## Episodes", "",
             f"Open the WebSocket `/{env_id}/ws` and send `{{\"type\": \"reset\", \"data\": {{...}}}}`, then "
             "`{\"type\": \"step\", \"data\": <action>}` until `done`. Reset takes `task` (an id from "
             f"`GET /{env_id}/tasks`, or a whole task `{{\"prompt\": ..., \"category\": ...}}`), or `seed`, and "
             "`options`: `reward` (`paper` 0-100 or `normalized` 0-1), `images` (`full`, `thumbnail`, `none`), "
             "`frames` (`inline`, `reference`).", "",
             f"The episode: {_episode(mode, hub.budget(env_id))}.", "",
             "## Actions", ""]
    for name in ("text", "message", "tool_calls"):
        lines.append(f"- `{name}`: {forms[name]['means']}")
    lines += [f"- a wrong form: {forms['wrong_form']}", "",
              "Tools: " + ", ".join(f"`{t['function']['name']}`" for t in tools) if tools else "Tools: given each round.",
              "", "## Stateless calls", ""]
    if mode == "single":
        lines.append(f"`POST /{env_id}/score` with `{{\"task\": ..., \"answer\": ...}}` returns the reward and the "
                     "record without a session.")
    lines += ["OpenEnv's `POST /reset` and `POST /step` each run on a fresh env: an episode needs the WebSocket. "
              "`/schema` has every message's JSON schema and the error codes.", ""]
    return "\n".join(lines)


def _summary(env_id: str, mode: str) -> str:
    if mode == "webdev":
        return ("A Webdev-Bench task, round by round: you develop a web project with tools; the server runs the "
                "gate, the simulated user and the terminal acceptance.")
    from aesenv.kinds import mode_of

    kind = mode_of(env_id)[0]
    what = f"{kind.title} ({kind.name}) artifacts"
    if mode == "single":
        return (f"Single-turn {what}: one answer, rendered in a hermetic browser (or run, for plots) and scored by "
                "aesenv's reward pipeline (execution, static aesthetics, interactions).")
    return (f"Multi-turn {what}: a workspace edited with tools (write, edit, render, run, submit), scored at the "
            "end by the same pipeline.")


def metadata(hub: Any, env_id: str) -> EnvironmentMetadata:
    return EnvironmentMetadata(name=env_id, version=__version__, author="aesenv", readme_content=readme(hub, env_id),
                               description=f"aesenv {env_id} ({served_mode(env_id)}): code aesthetics, rendered in "
                                           "a hermetic browser and scored by aesenv's reward pipeline")


__all__ = ["CALLS", "ERRORS", "metadata", "readme", "schema"]
