"""GRPO with TRL on an env served by `aesenv serve`, through TRL's `environment_factory`.

Copy it as it is: it needs TRL (and the `websockets` it installs with the `serve` extra), not
aesenv; every rollout is one episode in a WebSocket session of the served env.

    aesenv serve --env AesWeb-v0 --env AesWebRefine-v0 &
    python examples/trl_grpo.py --url http://127.0.0.1:8000 --env AesWeb-v0 --model Qwen/Qwen2.5-0.5B-Instruct
    python examples/trl_grpo.py --url http://127.0.0.1:8000 --env AesWebRefine-v0 --model ...

- Single-turn envs (`AesWeb-v0`, `AesPlot-v0`): the env instance holds the episode; the reward
  function answers it with the rollout's completion (the `text` action) and hands TRL the
  served reward.
- Refine envs (`AesWebRefine-v0`, ...): the workspace tools are the env's methods, so TRL renders
  them as the model's tools and calls them; each call is one step (a native tool call) of the
  served episode. `get_reward` submits the workspace as it stands when the model stopped
  without submitting (the budget's rule), and returns the served reward.

Sessions ask for `options={"reward": "normalized", "images": "none", "frames": "reference"}`: a
reward in [0, 1] and small replies. Our server's failures come back as a null reward: the rollout
gets None (TRL leaves it out), never a 0. `--episodes FILE` writes one JSON line per rollout.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import urllib.request
from typing import Any

from websockets.sync.client import connect

OPTIONS = {"reward": "normalized", "images": "none", "frames": "reference"}


class ServedEpisode:
    """One WebSocket session of a served env, reused episode after episode (sync: TRL calls tools so)."""

    url: str = ""  # the env's base URL, e.g. http://127.0.0.1:8000/AesWeb-v0 (set by `main`)
    log: str | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        headers = {"Authorization": f"Bearer {os.environ['AESENV_SERVE_TOKEN']}"} if os.environ.get("AESENV_SERVE_TOKEN") else None
        # entered by hand: the session lives as long as this env (TRL keeps its envs for the whole run)
        self._ws = connect(self.url.replace("http", "ws", 1) + "/ws", max_size=2**26, additional_headers=headers,
                           open_timeout=60).__enter__()
        self.task_id: str | None = None
        self.result: dict[str, Any] | None = None  # the episode's last step, once it is over

    def _send(self, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        self._ws.send(json.dumps({"type": kind, "data": data}))
        answer = json.loads(self._ws.recv(timeout=1900))
        if answer["type"] != "observation":
            raise RuntimeError(f"the server refused the {kind}: {answer['data']}")
        return answer["data"]

    def reset(self, task_id: str, **_: Any) -> None:
        """A new episode of the dataset row's task (TRL passes the row's columns)."""
        started = self._send("reset", {"task": task_id, "options": OPTIONS})
        if started["observation"]["error"]:
            raise RuntimeError(f"reset {task_id}: {started['observation']['error']}")
        self.task_id, self.result = task_id, None
        return None

    def _step(self, action: dict[str, Any]) -> dict[str, Any]:
        result = self._send("step", action)
        error = result["observation"]["error"]
        if result["done"] or (error and error["code"] == "episode_over"):
            self.result = self.result or result
            self._write()
        return result

    def _reward(self) -> float | None:
        return None if self.result is None else self.result["reward"]  # None: our side failed, never a 0

    def _write(self) -> None:
        if not self.log:
            return
        observation = self.result["observation"]
        record = observation["info"].get("record") or {}
        line = {"env": self.url.rsplit("/", 1)[-1], "task_id": self.task_id, "reward": self.result["reward"],
                "reward_name": observation["info"].get("reward_name"), "status": record.get("status"),
                "normalized": record.get("normalized"), "end": observation["info"].get("end"),
                "turns": observation["info"].get("turn"),
                "error": observation["error"]}
        with self._lock, open(self.log, "a") as out:
            out.write(json.dumps(line) + "\n")


class SingleTurnEnv(ServedEpisode):
    """AesWeb-v0 / AesPlot-v0: no tools; `served_reward` answers with the completion."""

    def _answer(self, text: str) -> float | None:
        if self.result is None:
            self._step({"text": text})
        return self._reward()


def served_reward(completions: list, environments: list[SingleTurnEnv], **_: Any) -> list[float | None]:
    """The served env's reward for each rollout's completion (its one answer)."""
    rewards = []
    for completion, env in zip(completions, environments):
        text = completion if isinstance(completion, str) else completion[-1].get("content") or ""
        rewards.append(env._answer(text if isinstance(text, str) else json.dumps(text)))
    return rewards


class RefineEnv(ServedEpisode):
    """AesWebRefine-v0 / AesPlotRefine-v0: the workspace tools, each call one step of the episode."""

    def _call(self, name: str, **arguments: str) -> str:
        if self.result is not None:
            return "The episode has ended; nothing more runs."
        action = {"tool_calls": [{"id": f"trl-{name}", "type": "function",
                                  "function": {"name": name, "arguments": json.dumps(arguments)}}]}
        result = self._step(action)
        observation = result["observation"]
        if observation["error"]:
            return f"Error: {observation['error']['message']}"
        return observation["text"] or ""

    def write_file(self, path: str, content: str) -> str:
        """Create or overwrite a file in the workspace.

        Args:
            path: relative path, e.g. index.html
            content: the whole file
        """
        return self._call("write_file", path=path, content=content)

    def edit_file(self, path: str, old: str, new: str) -> str:
        """Replace one exact occurrence of `old` with `new` in a file.

        Args:
            path: relative path
            old: exact text to replace (it must occur exactly once)
            new: replacement text
        """
        return self._call("edit_file", path=path, old=old, new=new)

    def view_file(self, path: str) -> str:
        """Show a file's current content.

        Args:
            path: relative path
        """
        return self._call("view_file", path=path)

    def render(self) -> str:
        """Render the workspace and describe the result: DOM statistics, console errors, blocked requests."""
        return self._call("render")

    def submit(self) -> str:
        """Finish: the workspace as it is now is scored. Call it when the result is good."""
        return self._call("submit")

    def get_reward(self) -> float | None:
        """The episode's reward; a rollout that stopped without submitting submits the workspace as it is."""
        if self.result is None:
            self._call("submit")
        return self._reward()


def dataset(url: str, limit: int, refine: bool):
    """The served env's tasks as a conversational dataset (`GET /tasks`), one row per task."""
    from datasets import Dataset

    with urllib.request.urlopen(f"{url}/tasks?limit={limit}", timeout=60) as response:
        tasks = json.loads(response.read())["tasks"]
    ask = (" Build it in the workspace with the tools (write_file index.html, render to look), then call submit."
           if refine else " Answer with the whole page in one ```html block.")
    return Dataset.from_list([{"prompt": [{"role": "user", "content": t["prompt"] + ask}], "task_id": t["id"]}
                              for t in tasks])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8000")
    parser.add_argument("--env", default="AesWeb-v0")
    parser.add_argument("--model", required=True, help="a causal LM whose chat template TRL can parse tool calls of")
    parser.add_argument("--steps", type=int, default=2, help="optimizer steps")
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--generations", type=int, default=2, help="GRPO's group size")
    parser.add_argument("--max-completion-length", type=int, default=64)
    parser.add_argument("--out", default="runs/trl_grpo")
    parser.add_argument("--episodes", help="write one JSON line per rollout here")
    args = parser.parse_args(argv)

    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    refine = "Refine" in args.env
    env_class = RefineEnv if refine else SingleTurnEnv
    env_class.url, env_class.log = f"{args.url.rstrip('/')}/{args.env}", args.episodes
    tokenizer = AutoTokenizer.from_pretrained(args.model, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype="float32")
    config = GRPOConfig(output_dir=args.out, max_steps=args.steps, per_device_train_batch_size=args.generations,
                        num_generations=args.generations, max_completion_length=args.max_completion_length,
                        learning_rate=1e-5, logging_steps=1, save_strategy="no", report_to="none", use_cpu=True,
                        bf16=False, max_tool_calling_iterations=4 if refine else None)
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=config, environment_factory=env_class,
                          reward_funcs=[] if refine else [served_reward],
                          train_dataset=dataset(env_class.url, args.tasks, refine))
    trainer.train()
    summary = {"env": args.env, "global_step": trainer.state.global_step, "tools": [t.__name__ for t in trainer.tools],
               "losses": [row["loss"] for row in trainer.state.log_history if "loss" in row],
               "rewards": [row["reward"] for row in trainer.state.log_history if "reward" in row]}
    print(json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    main()
