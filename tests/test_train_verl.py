"""train/ against the installed veRL on CPU: plugin registration, the reward function through
veRL's reward-loop worker, the estimators through veRL's advantage computation, the refine agent
loop through veRL's agent-loop worker (fake LLM server, tiny random-weight model made here), the
data builder through veRL's dataset, and every shipped config through Hydra and veRL's validation."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("verl", reason="the verl extra is not installed (pip install -e '.[verl]')")

import torch  # noqa: E402
from hydra import compose, initialize_config_dir  # noqa: E402
from verl import DataProto  # noqa: E402

from aesenv.rewards import RewardRecord  # noqa: E402
from aesenv.channels import ChannelResult, ChannelStatus  # noqa: E402
from aesenv.tasks import load_tasks  # noqa: E402
from policies.template import TemplatePolicy  # noqa: E402
from train import data as train_data  # noqa: E402
from train.agent_loop import AGENT_NAME, AesRefineAgentLoop  # noqa: E402
from train.reward import close_pipelines  # noqa: E402
from support.tiny_models import build_text  # noqa: E402

CONFIG_DIR = Path(__file__).resolve().parents[1] / "train" / "config"
SHIPPED = sorted(p.stem for p in CONFIG_DIR.glob("*.yaml") if not p.stem.startswith("sft_"))  # the PPO configs


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    """The tiny random Qwen2 the vLLM tests serve (support.tiny_models; no downloads)."""
    path = tmp_path_factory.mktemp("tiny_qwen2")
    build_text(path)
    return str(path)


# The CPU tests score with the offline judge, which training refuses without the explicit switch.
OFFLINE_JUDGE = ("reward.custom_reward_function.reward_kwargs.judge=offline",
                 "reward.custom_reward_function.reward_kwargs.allow_offline_judge=true")


def composed(name: str, *overrides: str):
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        return compose(config_name=name, overrides=["hydra.searchpath=[pkg://verl.trainer.config]", *overrides])


@pytest.fixture(scope="module", autouse=True)
async def _close_reward_pipelines():
    yield
    await close_pipelines()


def test_plugin_is_loaded_by_verl_through_the_entry_point():
    from importlib.metadata import entry_points

    from verl.experimental.agent_loop.agent_loop import _agent_loop_registry
    from verl.trainer.ppo import core_algos

    assert [ep.value for ep in entry_points(group="verl.plugins") if ep.name == "aesenv"] == ["train.plugin"]
    assert core_algos.get_adv_estimator_fn("aes_grpo").__module__ == "train.estimators"
    assert getattr(core_algos.get_adv_estimator_fn("gdpo"), "aesenv", False)
    assert AGENT_NAME in _agent_loop_registry


# (lr, clip, prompts per step) each config trains with: AesCoder's unless listed (WebCoder's).
PAPER_SETTINGS = {"grpo_webcoder_project": (2e-6, 0.2, 16), "gdpo_aescode": (5e-6, 0.5, 128),
                  "gdpo_aescode_32b": (5e-6, 0.5, 128)}


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_config_composes_and_passes_verl_validation(name, tiny_model, tmp_path):
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    train_data.build("builtin:web", tmp_path)
    cfg = composed(name, f"actor_rollout_ref.model.path={tiny_model}", f"data.train_files={tmp_path}/train.parquet",
                   f"data.val_files={tmp_path}/test.parquet")
    validate_config(cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))
    actor = cfg.actor_rollout_ref.actor
    lr, clip, batch = PAPER_SETTINGS.get(name, (3e-6, 0.5, 64))
    assert (actor.optim.lr, actor.clip_ratio_low, actor.clip_ratio_high, actor.kl_loss_coef) == (lr, clip, clip, 0.001)
    assert actor.use_kl_loss is (name != "grpo_webcoder_project")  # WebCoder's objective has no KL term
    assert cfg.actor_rollout_ref.rollout.n == 8 and cfg.data.train_batch_size == batch
    assert cfg.reward.custom_reward_function.path == "pkg://train.reward"
    assert cfg.algorithm.adv_estimator in ("aes_grpo", "gdpo", "aes_segment_grpo")
    if cfg.algorithm.adv_estimator == "gdpo":
        assert not cfg.trainer.use_v1
        channels = cfg.reward.custom_reward_function.reward_kwargs.get("channels")
        if channels:  # every channel a GDPO key, and every key a channel the reward function fills
            assert sorted(cfg.algorithm.gdpo_reward_keys) == sorted(f"aes_{c}" for c in channels)
            from train import reward

            reward.pipeline_config(**{**cfg.reward.custom_reward_function.reward_kwargs, "judge": "offline",
                                      "allow_offline_judge": True})
    if cfg.algorithm.adv_estimator == "aes_segment_grpo":  # compacted rollouts: several samples each
        from omegaconf import OmegaConf

        from aesenv.context import ContextConfig

        assert cfg.trainer.use_v1
        loops = OmegaConf.load(CONFIG_DIR.parents[1] / cfg.actor_rollout_ref.rollout.agent.agent_loop_config_path)
        loop = next(entry for entry in loops if entry.name == AGENT_NAME)
        assert loop._target_ == "train.agent_loop.AesRefineAgentLoop" and loop.max_samples == 6
        assert ContextConfig(**loop.context).compact_at_tokens < loop.rollout_window
        assert loop.rollout_window >= cfg.data.max_response_length  # samples are cut from the window


def test_the_project_launch_script_composes_through_main_ppo(tmp_path):
    """`--cfg job` prints what main_ppo would train with: the credit estimator, and the loop's
    context settings by an absolute path (Ray workers may not share the launcher's directory)."""
    import os
    import subprocess
    import sys

    script = CONFIG_DIR.parent / "scripts" / "grpo_webcoder_project.sh"
    env = {**os.environ, "PYTHON": sys.executable}
    out = subprocess.run([str(script), str(tmp_path / "model"), str(tmp_path), "8", "--cfg", "job"], env=env,
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "adv_estimator: aes_segment_grpo" in out.stdout
    assert f"agent_loop_config_path: {CONFIG_DIR}/agent_loops/webcoder_project.yaml" in out.stdout


def test_training_defaults_to_a_vlm_judge_and_the_offline_one_needs_a_switch(tiny_model, monkeypatch, caplog):
    from aesenv.models import DEFAULT_VLM_JUDGE
    from train import reward

    kwargs = composed("grpo_ar_single_turn", f"actor_rollout_ref.model.path={tiny_model}"
                      ).reward.custom_reward_function.reward_kwargs
    assert kwargs.judge == DEFAULT_VLM_JUDGE and not kwargs.allow_offline_judge
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AESENV_JUDGE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="has no endpoint"):
        reward.pipeline_config(**kwargs)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert reward.pipeline_config(**kwargs).judge == DEFAULT_VLM_JUDGE
    with pytest.raises(ValueError, match="allow_offline_judge=true.*not a training reward"):
        reward.pipeline_config(judge="offline")
    monkeypatch.setattr(reward, "_WARNED_OFFLINE", False)
    with caplog.at_level("WARNING"):
        assert reward.pipeline_config(judge="offline", allow_offline_judge=True).judge == "offline"
    assert "pairwise" in caplog.text  # the warning quotes the measured fidelity


def test_data_rows_load_in_verls_dataset(tiny_model, tmp_path):
    from verl.utils import hf_tokenizer
    from verl.utils.dataset.rl_dataset import RLHFDataset

    counts = train_data.build("builtin:plot", tmp_path, multi_turn=True)
    cfg = composed("grpo_multi_turn", f"actor_rollout_ref.model.path={tiny_model}", "data.max_prompt_length=100000")
    dataset = RLHFDataset(data_files=[str(tmp_path / "train.parquet")], tokenizer=hf_tokenizer(tiny_model),
                          config=cfg.data)
    assert len(dataset) == counts["train"]
    row = dataset[0]
    assert row["agent_name"] == AGENT_NAME and row["extra_info"]["env_id"] == "AesPlotRefine-v0"
    assert row["raw_prompt"][0]["role"] == "system" and row["raw_prompt"][1]["role"] == "user"


def test_stage_one_sft_config_composes_with_the_papers_settings():
    from verl.utils.config import omega_conf_to_dataclass

    cfg = composed("sft_stage1")
    optim = omega_conf_to_dataclass(cfg.optim)  # veRL's own optimizer config accepts it
    assert (optim.optimizer, optim.lr, optim.lr_warmup_steps_ratio, optim.lr_scheduler_type) == \
        ("AdamW", 1e-5, 0.1, "cosine")
    assert (cfg.trainer.total_epochs, cfg.data.train_batch_size, cfg.data.max_length) == (3, 128, 8192)


def test_sft_rows_from_an_answers_file_load_in_verls_sft_dataset(tiny_model, tmp_path):
    from verl.utils import hf_tokenizer
    from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset

    tasks = load_tasks("builtin:web")
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"id": t.id, "answer": f"```html\n<p>{t.id}</p>\n```"}) + "\n"
                               for t in tasks[:-1]))  # the last task has no answer
    counts = train_data.build("builtin:web", tmp_path / "sft", sft_answers=str(answers), val_fraction=0)
    assert counts == {"no_answer": 1, "train": len(tasks) - 1, "test": len(tasks) - 1}
    cfg = composed("sft_stage1")
    dataset = MultiTurnSFTDataset(parquet_files=[str(tmp_path / "sft" / "train.parquet")],
                                  tokenizer=hf_tokenizer(tiny_model), config=cfg.data)
    assert len(dataset) == len(tasks) - 1
    item = dataset[0]
    assert item["loss_mask"].sum() > 0  # the answer is trained on
    assert item["loss_mask"].sum() < item["input_ids"].shape[0]  # the prompt is not


# -- the reward function through veRL's reward-loop worker ---------------------------------------

def reward_batch(tokenizer, answers: list[str], extra_infos: list[dict]) -> DataProto:
    """What the reward loop receives: right-padded responses with their attention mask."""
    encoded = [tokenizer.encode(a, add_special_tokens=False) for a in answers]
    width = max(len(e) for e in encoded)
    responses = torch.full((len(answers), width), tokenizer.pad_token_id, dtype=torch.long)
    attention = torch.zeros((len(answers), 2 + width), dtype=torch.long)
    for i, ids in enumerate(encoded):
        responses[i, : len(ids)] = torch.tensor(ids)
        attention[i, :2] = 1
        attention[i, 2: 2 + len(ids)] = 1
    return DataProto.from_dict(
        tensors={"responses": responses, "attention_mask": attention,
                 "prompts": torch.ones((len(answers), 2), dtype=torch.long)},
        non_tensors={"data_source": np.array(["aesenv/web"] * len(answers), dtype=object),
                     "reward_model": np.array([{"ground_truth": ""}] * len(answers), dtype=object),
                     "extra_info": np.array(extra_infos, dtype=object)})


@pytest.mark.slow
async def test_reward_function_through_verls_reward_loop_worker(tiny_model):
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

    task = load_tasks("builtin:web")[0]
    page = await TemplatePolicy().generate(task)
    info = {"task": task.model_dump_json(), "task_id": task.id}
    cfg = composed("grpo_ar_single_turn", f"actor_rollout_ref.model.path={tiny_model}",
                   "reward.custom_reward_function.reward_kwargs.deadline_s=60", *OFFLINE_JUDGE)
    worker = RewardLoopWorker(cfg)
    answers = [page, "Sorry, I cannot help with that.", page]
    batch = reward_batch(worker.input_tokenizer, answers, [dict(info), dict(info), {"task_id": "no-task-json"}])
    good, no_page, broken_row = await worker.compute_score_batch(batch)

    keys = set(good["reward_extra_info"])
    assert keys == set(no_page["reward_extra_info"]) == set(broken_row["reward_extra_info"])
    assert {"score", "aes_reward_valid", "aes_static", "aes_static_applicable", "aes_static_infra"} <= keys
    assert good["reward_score"] > no_page["reward_score"] and math.isfinite(no_page["reward_score"])
    assert good["reward_extra_info"]["aes_reward_valid"] == 1.0 and 0 < good["reward_extra_info"]["aes_static"] <= 1
    # A row we cannot score is masked (NaN, not 0) and counted, and it did not fail the batch.
    assert math.isnan(broken_row["reward_score"]) and broken_row["reward_extra_info"]["aes_reward_valid"] == 0.0
    assert broken_row["reward_extra_info"]["aes_static_infra"] == 1.0


@pytest.mark.slow
async def test_reward_function_deadline_masks_a_slow_sample():
    from train.reward import compute_score

    task = load_tasks("builtin:web")[0]
    page = await TemplatePolicy().generate(task)
    result = await compute_score("aesenv/web", page, "", {"task": task.model_dump_json()}, deadline_s=0.001,
                                 judge="offline", allow_offline_judge=True)
    assert result["aes_deadline_exceeded"] == 1.0 and result["aes_reward_valid"] == 0.0
    assert math.isnan(result["score"]) and math.isnan(result["aes_static"])


# -- estimators through veRL's advantage computation ---------------------------------------------

def advantage_batch(scores: list[float], uids: list[str], channels: dict[str, list[float]]) -> DataProto:
    mask = torch.tensor([[1, 1, 1, 0]] * len(scores), dtype=torch.float32)
    rewards = torch.zeros_like(mask)
    rewards[:, 2] = torch.tensor(scores)
    non_tensors = {"uid": np.array(uids, dtype=object), "aes_reward_valid": np.array([float(math.isfinite(s)) for s in scores])}
    non_tensors.update({k: np.array(v) for k, v in channels.items()})
    return DataProto.from_dict(tensors={"token_level_rewards": rewards, "response_mask": mask}, non_tensors=non_tensors)


def test_aes_grpo_through_verls_compute_advantage():
    from verl.trainer.config import AlgoConfig
    from verl.trainer.ppo.ray_trainer import compute_advantage

    batch = advantage_batch([1.0, math.nan, 3.0, 5.0, 2.0, 2.0], ["a", "a", "a", "a", "b", "b"], {})
    out = compute_advantage(batch, adv_estimator="aes_grpo", config=AlgoConfig(adv_estimator="aes_grpo"))
    adv = out.batch["advantages"]
    np.testing.assert_allclose(adv[:, 0].numpy(), [-1.0, 0.0, 0.0, 1.0, 0.0, 0.0], atol=1e-5)
    assert torch.all(adv[:, 3] == 0) and torch.isfinite(adv).all()


def test_masked_gdpo_through_verls_compute_advantage_on_the_legacy_path():
    from verl.trainer.config import AlgoConfig
    from verl.trainer.ppo.ray_trainer import compute_advantage

    nan = math.nan
    channels = {"aes_static": [0.2, 0.4, 0.9, nan], "aes_interactive": [nan, 1.0, 0.0, 0.5]}
    batch = advantage_batch([10.0, 20.0, 30.0, 40.0], ["g"] * 4, channels)
    config = AlgoConfig(adv_estimator="gdpo", gdpo_reward_keys=["aes_static", "aes_interactive"])
    adv = compute_advantage(batch, adv_estimator="gdpo", config=config).batch["advantages"][:, 0].numpy()
    static = (np.array([0.2, 0.4, 0.9]) - 0.5) / np.std([0.2, 0.4, 0.9], ddof=1)
    inter = (np.array([1.0, 0.0, 0.5]) - 0.5) / np.std([1.0, 0.0, 0.5], ddof=1)
    np.testing.assert_allclose(adv, [static[0], (static[1] + inter[0]) / 2, (static[2] + inter[1]) / 2, inter[2]],
                               rtol=1e-4)


def test_verl_hands_channel_values_only_to_the_estimator_named_gdpo(monkeypatch):
    """Why train.plugin wraps veRL's "gdpo" slot instead of registering masked GDPO under a name of
    its own: an estimator under any other name never sees `non_tensor_batch` (the channel values),
    and `register_adv_est` refuses a taken name. If this fails after a veRL upgrade, register masked
    GDPO under its own name with `register_adv_est` and leave "gdpo" alone."""
    from verl.trainer.config import AlgoConfig
    from verl.trainer.ppo import core_algos
    from verl.trainer.ppo.ray_trainer import compute_advantage

    seen = {}

    def probe(token_level_rewards, response_mask, **kwargs):
        seen.update(kwargs)
        return torch.zeros_like(token_level_rewards), torch.zeros_like(token_level_rewards)

    monkeypatch.setitem(core_algos.ADV_ESTIMATOR_REGISTRY, "aes_probe", probe)
    batch = advantage_batch([1.0, 2.0], ["g"] * 2, {"aes_static": [0.1, 0.2]})
    compute_advantage(batch, adv_estimator="aes_probe", config=AlgoConfig(adv_estimator="aes_probe"))
    assert "index" in seen and "non_tensor_batch" not in seen
    with pytest.raises(ValueError, match="already been registered"):
        core_algos.register_adv_est("gdpo")(probe)


# -- the refine agent loop through veRL's agent-loop worker --------------------------------------

def final_record() -> dict:
    channels = {"execution": ChannelResult(status=ChannelStatus.OK, score=1.0, raw=1.0),
                "static": ChannelResult(status=ChannelStatus.OK, score=0.6, raw=60.0),
                "interactive": ChannelResult.not_applicable("nothing to interact with")}
    record = RewardRecord(task_id="t", category="Website", status="ok", reward=48.1, normalized=0.7,
                          channels=channels, artifact={"kind": "html", "sha256": "0", "bytes": 1})
    return record.model_dump(mode="json")


class FakeRefineEnv:
    """The refine-env contract: turn 1 renders (text + screenshot observation), turn 2 submits."""

    tools = [{"type": "function", "function": {"name": "submit", "parameters": {"type": "object", "properties": {}}}}]
    actions: list[str] = []

    def __init__(self, tasks, pipeline=None):
        self.turn = 0

    async def reset(self, *, task=None, seed=None):
        return [{"role": "system", "content": "You build pages."}, {"role": "user", "content": task.prompt}], {"potential": 0.0}

    async def step(self, action):
        self.actions.append(action)
        self.turn += 1
        if self.turn == 1:
            png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
            obs = [{"role": "user", "content": [{"type": "text", "text": "the page rendered"},
                                                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}}]}]
            return obs, 0.0, False, False, {"potential": 0.5, "delta_potential": 0.5}
        return [], 48.1, True, False, {"potential": 0.8, "delta_potential": 0.3, "record": final_record(),
                                       "reward_valid": True, "end": "submit"}

    async def close(self):
        pass


class FakeLLM:
    """veRL's LLM server client, answering scripted turns per episode (one request id each); each
    answer names the policy version that wrote it, as veRL's client does (turn k: version 3 + k)."""

    def __init__(self, tokenizer, turns: list[str]):
        self.tokenizer, self.turns, self.prompts = tokenizer, list(turns), {}

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        seen = self.prompts.setdefault(request_id, [])
        seen.append(list(prompt_ids))
        text = self.turns[len(seen) - 1]
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        version = 3 + len(seen)
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed",
                           extra_fields={"global_steps": version, "min_global_steps": version,
                                         "max_global_steps": version})


def serve_env(monkeypatch, env_class) -> None:
    """The agent loop gets `env_class` for every env id (its one seam to the env registry)."""
    async def make_env(self, env_id, task):
        return env_class([task])

    monkeypatch.setattr(AesRefineAgentLoop, "make_env", make_env)


@pytest.fixture
def fake_env(monkeypatch):
    serve_env(monkeypatch, FakeRefineEnv)
    FakeRefineEnv.actions = []
    yield FakeRefineEnv


async def run_refine_batch(tiny_model, llm, env_id: str, response_length: int = 256, task=None) -> DataProto:
    """Two episodes of one task (default: the first web task) through veRL's AgentLoopWorker
    (plain object, no Ray)."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

    cfg = composed("grpo_multi_turn", f"actor_rollout_ref.model.path={tiny_model}", "data.max_prompt_length=256",
                   f"data.max_response_length={response_length}", *OFFLINE_JUDGE)
    worker = AgentLoopWorker(cfg, llm_client=llm)
    task = task or load_tasks("builtin:web")[0]
    row = {"task": task.model_dump_json(), "env_id": env_id, "task_id": task.id}
    batch = DataProto.from_dict(non_tensors={
        "raw_prompt": np.array([[{"role": "user", "content": task.prompt}]] * 2, dtype=object),
        "agent_name": np.array([AGENT_NAME] * 2, dtype=object),
        "extra_info": np.array([dict(row), dict(row)], dtype=object),
        "data_source": np.array(["aesenv/web"] * 2, dtype=object),
        "reward_model": np.array([{"ground_truth": ""}] * 2, dtype=object),
        "uid": np.array(["u", "u"], dtype=object)})
    return await worker.generate_sequences(batch)


async def test_refine_agent_loop_through_verls_agent_loop_worker(tiny_model, fake_env):
    from verl.utils import hf_tokenizer

    tokenizer = hf_tokenizer(tiny_model)
    turns = ["render index.html", "submit the page"]
    llm = FakeLLM(tokenizer, turns)
    out = await run_refine_batch(tiny_model, llm, "FakeRefine-v0")

    assert sorted(fake_env.actions) == sorted(turns * 2)
    assert len(llm.prompts) == 2 and all(len(p) == 2 for p in llm.prompts.values())
    policy_tokens = sum(len(tokenizer.encode(t, add_special_tokens=False)) + 1 for t in turns)
    mask, responses = out.batch["response_mask"][0], out.batch["responses"][0]
    assert int(mask.sum()) == policy_tokens  # every generated token, and nothing else, is the policy's
    first_obs = mask.tolist().index(0)
    observation = tokenizer.decode(responses[first_obs: first_obs + 20].tolist())
    assert "the page rendered" in observation  # the env's text came back as unmasked context
    # The second generate saw the first answer and the observation (one growing context).
    first, second = next(iter(llm.prompts.values()))
    assert second[: len(first)] == first and len(second) > len(first)
    last = int(out.batch["attention_mask"][0, 256:].sum()) - 1
    assert out.batch["rm_scores"][0, last].item() == pytest.approx(48.1)
    assert out.non_tensor_batch["aes_static"][0] == pytest.approx(0.6)
    assert math.isnan(out.non_tensor_batch["aes_interactive"][0])
    assert out.non_tensor_batch["aes_interactive_applicable"][0] == 0.0
    assert list(out.non_tensor_batch["potentials"][0]) == [0.0, 0.5, 0.8]


async def test_refine_agent_loop_submits_when_the_response_budget_runs_out(tiny_model, fake_env):
    from verl.utils import hf_tokenizer

    llm = FakeLLM(hf_tokenizer(tiny_model), ["render index.html " * 10])
    out = await run_refine_batch(tiny_model, llm, "FakeRefine-v0", response_length=16)
    assert fake_env.actions.count({"name": "submit", "arguments": {}}) == 2  # one per episode, sent by the loop
    assert out.batch["responses"].shape[1] == 16
    assert out.non_tensor_batch["aes_static"][0] == pytest.approx(0.6)


@pytest.mark.slow
async def test_refine_agent_loop_drives_a_project_episode(tiny_model):
    """The real AesWebProject-v0 under veRL's worker: a webshot builds and shows the app, submit
    has the verifier rebuild and score it."""
    from verl.utils import hf_tokenizer

    task = next(t for t in load_tasks("builtin:project") if t.id == "project-fix-anchors")
    llm = FakeLLM(hf_tokenizer(tiny_model), ['<tool_call name="webshot"></tool_call>',
                                             '<tool_call name="submit"></tool_call>'])
    out = await run_refine_batch(tiny_model, llm, "AesWebProject-v0", response_length=4096, task=task)
    last = int(out.batch["attention_mask"][0, 256:].sum()) - 1
    assert out.batch["rm_scores"][0, last].item() == pytest.approx(0.7, abs=0.05)  # G=1, one link broken
    potentials = list(out.non_tensor_batch["potentials"][0])
    assert len(potentials) == 3 and 0 < potentials[1] < 1 and potentials[2] == potentials[1]
    assert out.non_tensor_batch["episode_end"][0] == "submit"
    # veRL's per-sample metrics name the project's channels, not the web kind's as infra failures.
    assert out.non_tensor_batch["aes_project_gate"][0] == 1.0 and 0 < out.non_tensor_batch["aes_project_det"][0] < 1
    assert out.non_tensor_batch["aes_project_vlm_infra"][0] == 0.0
    assert out.non_tensor_batch["aes_static_infra"][0] == 0.0 and out.non_tensor_batch["aes_static_applicable"][0] == 0.0


class BrokenRefineEnv(FakeRefineEnv):
    async def step(self, action):
        raise RuntimeError("renderer crashed")


async def test_refine_agent_loop_masks_an_episode_whose_env_fails(tiny_model, monkeypatch):
    from verl.utils import hf_tokenizer

    serve_env(monkeypatch, BrokenRefineEnv)
    out = await run_refine_batch(tiny_model, FakeLLM(hf_tokenizer(tiny_model), ["render index.html"]), "BrokenRefine-v0")
    last = int(out.batch["attention_mask"][0, 256:].sum()) - 1
    assert math.isnan(out.batch["rm_scores"][0, last].item())  # masked, not a 0 that looks like a score
    assert list(out.non_tensor_batch["aes_reward_valid"]) == [0.0, 0.0]


# -- segment credit: the estimators through the v1 trainer's advantage step ----------------------

def credit_batch(rollouts: dict[str, list[tuple[float, int, float]]]) -> tuple[DataProto, list[str]]:
    """Samples as veRL's v1 trainer hands them to its advantage step: right-padded rows keyed
    `{uid}_{session}_{index}`, built with the agent loop's score layout. `rollouts` maps
    "uid_session" to its samples (R, trained tokens, δ_k); each row also has 3 untrained tokens."""
    from train.estimators import credit_scores

    keys, rows = [], []
    for rollout, samples in rollouts.items():
        for index, (reward, trained, offset) in enumerate(samples):
            mask = torch.tensor([0] * 3 + [1] * trained, dtype=torch.int64)
            keys.append(f"{rollout}_{index}")
            rows.append((mask, credit_scores(len(mask), reward, mask, offset)))
    width = max(len(m) for m, _ in rows)
    pad = lambda t: torch.cat([t, torch.zeros(width - len(t), dtype=t.dtype)])  # noqa: E731
    batch = DataProto.from_dict(tensors={"response_mask": torch.stack([pad(m) for m, _ in rows]),
                                         "token_level_scores": torch.stack([pad(s) for _, s in rows])},
                                non_tensors={"uid": np.array([k.split("_")[0] for k in keys], dtype=object)})
    batch.batch["token_level_rewards"] = batch.batch["token_level_scores"]
    return batch, keys


def v1_advantages(batch: DataProto, keys: list[str], estimator: str) -> torch.Tensor:
    """The advantage step exactly as veRL's v1 trainer calls it (the name it bound at import)."""
    from verl.trainer.config import AlgoConfig
    from verl.trainer.ppo.v1 import trainer_base

    return trainer_base.compute_advantage_for_multi_trajectories(
        batch, batch_keys=keys, adv_estimator=estimator, num_repeat=2,
        config=AlgoConfig(adv_estimator=estimator)).batch["advantages"]


def test_segment_credit_through_the_v1_advantage_step_matches_a_hand_computation():
    from train.credit import segment_offsets

    offsets = segment_offsets([0.2, 0.8, 0.5], [4, 6, 5])  # a rollout of three samples
    rollouts = {"a_0": [(0.7, n, d) for n, d in zip([4, 6, 5], offsets)], "a_1": [(0.1, 7, 0.0)],
                "a_2": [(math.nan, 4, 0.0), (math.nan, 3, 0.0)],  # our infrastructure failed
                "b_0": [(0.5, 2, 0.0)]}  # alone in its group
    batch, keys = credit_batch(rollouts)
    adv = v1_advantages(batch, keys, "aes_segment_grpo")
    mask = batch.batch["response_mask"].bool()
    outcome = (np.array([0.7, 0.1]) - 0.4) / (np.std([0.7, 0.1], ddof=1) + 1e-6)  # one data point per rollout
    for row, expected in enumerate([outcome[0] + d for d in offsets] + [outcome[1], 0.0, 0.0, 0.0]):
        np.testing.assert_allclose(adv[row][mask[row]].numpy(), expected, atol=1e-5)
        assert torch.all(adv[row][~mask[row]] == 0)
    credit = sum(float((adv[row] - outcome[0])[mask[row]].sum()) for row in range(3))
    assert credit == pytest.approx(0.0, abs=1e-4)  # the offsets move credit, they add none
    with pytest.raises(ValueError, match="carry different outcomes"):  # not laid out by our agent loop
        v1_advantages(*credit_batch({"c_0": [(0.2, 3, 0.0), (0.9, 3, 0.0)]}), "aes_segment_grpo")
    flat = v1_advantages(*credit_batch(rollouts), "aes_rollout_grpo")  # the ablation: broadcast
    for row in range(3):
        np.testing.assert_allclose(flat[row][mask[row]].numpy(), outcome[0], atol=1e-5)


def test_the_v1_trainer_computes_advantages_through_the_extended_step():
    """Why the plugin wraps `compute_advantage_for_multi_trajectories`: it is the only step of the
    v1 trainer that knows which samples one rollout returned (the batch keys). If this fails after
    a veRL upgrade, find where the keys reach the advantage computation now."""
    import inspect

    from verl.trainer.config import AlgoConfig
    from verl.trainer.ppo.ray_trainer import compute_advantage
    from verl.trainer.ppo.v1 import trainer_base

    source = inspect.getsource(trainer_base.PPOTrainer._compute_advantage)
    assert "compute_advantage_for_multi_trajectories(" in source and "batch_keys=batch.keys" in source
    assert getattr(trainer_base.compute_advantage_for_multi_trajectories, "aesenv", False)
    batch, keys = credit_batch({"g_0": [(1.0, 3, 0.0)], "g_1": [(3.0, 3, 0.0)]})
    plain = v1_advantages(batch, keys, "aes_grpo")  # every other estimator is veRL's business, unchanged
    assert plain[0, 3].item() == pytest.approx(-0.7071, abs=1e-3) and plain[1, 3].item() == pytest.approx(0.7071, abs=1e-3)
    with pytest.raises(ValueError, match="v1 trainer"):
        compute_advantage(batch, adv_estimator="aes_segment_grpo", config=AlgoConfig(adv_estimator="aes_segment_grpo"))
    with pytest.raises(ValueError, match="use_kl_in_reward"):
        from verl.trainer.ppo.v1.trainer_base import compute_advantage_for_multi_trajectories as step
        step(batch, batch_keys=keys, adv_estimator="aes_segment_grpo",
             config=AlgoConfig(adv_estimator="aes_segment_grpo", use_kl_in_reward=True))


class LongRefineEnv(FakeRefineEnv):
    """Three turns with long observations (so a small threshold compacts after each) and a Φ
    that rises, then falls: 0.2 after turn 1, 0.6 after turn 2, 0.5 at submit."""

    rewards: list[float] = []

    async def step(self, action):
        self.actions.append(action)
        self.turn += 1
        if self.turn < 3:
            report = f"turn {self.turn} rendered: " + "the hero section and the menu grid are visible " * 8
            return [{"role": "user", "content": report}], 0.0, False, False, {"potential": [0.2, 0.6][self.turn - 1]}
        reward = self.rewards.pop(0)
        return [], reward, True, False, {"potential": 0.5, "record": final_record(), "end": "submit"}


async def compacting_rollouts(tiny_model, monkeypatch, max_samples: int, **loop: object) -> tuple[dict[str, dict], object]:
    """Two rollouts of the loop with a context small enough to compact after every turn, through
    veRL's v1 worker step that stores a rollout's samples (TransferQueue's put captured); `loop`:
    more of the loop's settings."""
    import types

    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker, _agent_loop_registry
    from verl.trainer.ppo.v1 import agent_loop_tq
    from verl.utils import hf_tokenizer

    monkeypatch.setitem(_agent_loop_registry, AGENT_NAME, {
        "_target_": "train.agent_loop.AesRefineAgentLoop", "max_samples": max_samples,
        "context": {"compact_at_tokens": 400, "keep_recent_turns": 1, "fold_after": 1, "summary_words": 40},
        **loop})
    serve_env(monkeypatch, LongRefineEnv)
    LongRefineEnv.actions, LongRefineEnv.rewards = [], [40.0, 60.0]
    tokenizer = hf_tokenizer(tiny_model)
    replies = ["write the hero", "NOTE one: hero written", "add the menu", "NOTE two: menu added", "submit now"]
    llm = FakeLLM(tokenizer, replies)
    cfg = composed("grpo_multi_turn", f"actor_rollout_ref.model.path={tiny_model}", "data.max_prompt_length=256",
                   "data.max_response_length=4096", *OFFLINE_JUDGE)
    worker = AgentLoopWorker(cfg, llm_client=llm)
    worker._agent_loop_postprocess = types.MethodType(
        agent_loop_tq.AgentLoopWorkerTQ.__ray_actor_class__._agent_loop_postprocess, worker)
    stored: dict[str, dict] = {}

    async def kv_batch_put(keys, fields, tags, partition_id):
        stored.update({key: fields[i] for i, key in enumerate(keys)})

    monkeypatch.setattr(agent_loop_tq.tq, "async_kv_batch_put", kv_batch_put)
    task = load_tasks("builtin:web")[0]
    row = {"task": task.model_dump_json(), "env_id": "LongRefine-v0", "task_id": task.id}
    for session in (0, 1):
        await worker._run_agent_loop({}, {"step": 0, "sample_index": 0, "rollout_n": 2, "validate": False},
                                     agent_name=AGENT_NAME, trace=False, session_id=session, uid="u", global_steps=1,
                                     raw_prompt=[{"role": "user", "content": task.prompt}], extra_info=dict(row))
    assert len(llm.prompts) == 2 and all(len(p) == 5 for p in llm.prompts.values())
    return stored, tokenizer


def trained_text(sample: dict, tokenizer, trained: bool = True) -> str:
    mask = sample["response_mask"].bool()
    return tokenizer.decode(sample["responses"][mask if trained else ~mask].tolist(), skip_special_tokens=trained)


async def test_a_compacting_rollout_returns_samples_that_train_each_turn_once(tiny_model, monkeypatch):
    """Three samples per rollout, the same prompt, each generated turn trained in exactly one
    sample (a turn a rebuild kept is context later), tool output in none; then veRL's v1
    advantage step gives each sample the rollout's advantage plus its δ_k."""
    from train.credit import segment_offsets
    from train.estimators import read_credit

    stored, tokenizer = await compacting_rollouts(tiny_model, monkeypatch, max_samples=6)
    keys = sorted(stored)
    assert keys == [f"u_{s}_{i}" for s in (0, 1) for i in (0, 1, 2)]
    first = [stored[k] for k in keys[:3]]
    assert all(s["prompts"].tolist() == first[0]["prompts"].tolist() for s in first)  # the shared head
    trained = [trained_text(s, tokenizer) for s in first]
    assert trained == ["write the heroNOTE one: hero written", "add the menuNOTE two: menu added", "submit now"]
    context = [trained_text(s, tokenizer, trained=False) for s in first]
    assert "write the hero" in context[1] and "NOTE one: hero written" in context[1]  # kept turn and note: context
    assert all("turn 1 rendered" not in t for t in trained)  # tool output is never trained
    counts = [int(s["response_mask"].sum()) for s in first]
    offsets = segment_offsets([0.0, 0.2, 0.6], counts)  # Φ when each segment began
    for sample, offset in zip(first, offsets):
        reward, carried = read_credit(sample["rm_scores"], sample["response_mask"])
        assert reward == pytest.approx(40.0) and carried == pytest.approx(offset, abs=1e-6)
        assert sample["extra_fields"]["segment_potentials"] == [0.2, 0.6, 0.5]
        # veRL's v1 trainer reads the versions behind every sample (its staleness metrics)
        assert (sample["extra_fields"]["min_global_steps"], sample["extra_fields"]["max_global_steps"]) == (4, 8)

    from tensordict import TensorDict
    rows = TensorDict({name: torch.nested.as_nested_tensor([stored[k][name] for k in keys], layout=torch.jagged)
                       for name in ("response_mask", "rm_scores")}, batch_size=len(keys)).to_padded_tensor()
    batch = DataProto(batch=rows, non_tensor_batch={"uid": np.array(["u"] * len(keys), dtype=object)})
    batch.batch["token_level_scores"] = batch.batch["token_level_rewards"] = batch.batch["rm_scores"]
    adv = v1_advantages(batch, keys, "aes_segment_grpo")
    outcome = (40.0 - 50.0) / (np.std([40.0, 60.0], ddof=1) + 1e-6)  # the first rollout's
    for row, offset in enumerate(offsets):
        trained_adv = adv[row][batch.batch["response_mask"][row].bool()]
        np.testing.assert_allclose(trained_adv.numpy(), outcome + offset, atol=1e-4)


async def test_a_sample_keeps_its_most_recent_tokens_within_the_cap_on_prompt_and_response(tiny_model, monkeypatch):
    """WebCoder's sample cap is on the whole path: with `sample_cap` a sample's prompt and response
    together stay within it, the response cut from the front (its most recent tokens kept)."""
    def lengths(stored: dict[str, dict]) -> dict[str, tuple[int, int]]:
        return {k: (len(s["prompts"]), int(s["response_mask"].numel())) for k, s in stored.items()}

    whole, _ = await compacting_rollouts(tiny_model, monkeypatch, max_samples=6)
    cap = max(p + r for p, r in lengths(whole).values()) - 7
    capped, _ = await compacting_rollouts(tiny_model, monkeypatch, max_samples=6, sample_cap=cap)
    assert sorted(capped) == sorted(whole)
    assert all(p + r <= cap for p, r in lengths(capped).values())
    cut = [k for k in whole if sum(lengths(whole)[k]) > cap]
    assert cut and all(lengths(capped)[k][1] == cap - lengths(capped)[k][0] for k in cut)
    for k in cut:
        assert whole[k]["responses"][-lengths(capped)[k][1]:].tolist() == capped[k]["responses"].tolist()


async def test_a_kept_turn_of_a_dropped_context_is_trained_by_the_next_sample(tiny_model, monkeypatch):
    """With two samples a rollout keeps its first and last contexts; the middle one's turn that
    the last rebuild kept ("add the menu") is trained there, its note is lost with it."""
    stored, tokenizer = await compacting_rollouts(tiny_model, monkeypatch, max_samples=2)
    assert sorted(stored) == [f"u_{s}_{i}" for s in (0, 1) for i in (0, 1)]
    assert [trained_text(stored[f"u_0_{i}"], tokenizer) for i in (0, 1)] == [
        "write the heroNOTE one: hero written", "add the menusubmit now"]
    assert stored["u_0_1"]["extra_fields"]["segment_potentials"] == [0.2, 0.5]
