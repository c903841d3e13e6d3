"""A rollout engine that runs on CPU inside veRL's trainer: HF transformers' `generate` behind
veRL's rollout-replica interface (`actor_rollout_ref.rollout.name=aes_hf`, registered by
train.plugin). vLLM's CPU build needs a newer transformers than veRL allows, so it cannot live
in the trainer's processes; this engine is what lets `python -m train.smoke` sample from the
policy being trained on a machine without a GPU. Not for real training: it generates one
request at a time. A vision-language policy (a folder whose config has a `vision_config`, e.g. the
smoke's tiny Qwen2-VL) generates from its pictures: the agent loop hands the prompt ids with each
picture's placeholder tokens already widened, and the pictures themselves; the folder's image
processor turns these into the `pixel_values` and grid the model reads.

Three parts, the same split as veRL's vLLM engine:
- `HFServer`, a Ray actor holding a copy of the policy: token-in/token-out `generate` as veRL's
  agent loops call it through `LLMServerClient`, and `update_weights` to take the trainer's
  weights.
- `HFServerAdapter`, the rollout object in each hybrid actor worker: veRL's colocated ("naive")
  weight sync hands it the actor's parameters after every step, which it forwards to its server.
- `HFReplica`, the replica the trainer's `LLMServerManager` builds: launches the server.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any, Generator, Optional

import ray
import torch

from verl.workers.rollout.base import BaseRollout
from verl.workers.rollout.replica import RolloutReplica, TokenOutput

logger = logging.getLogger(__name__)


PICTURED_REQUEST = "aes_hf pictured request"


def server_actor_name(replica_rank: int) -> str:
    return f"aes_hf_server_{replica_rank}"


def _full_tensor(tensor: torch.Tensor) -> torch.Tensor:
    """A whole, host-resident copy (FSDP hands out DTensor shards)."""
    if hasattr(tensor, "full_tensor"):
        tensor = tensor.full_tensor()
    return tensor.detach().to("cpu").clone().contiguous()


class HFServer:
    """One policy copy served token-in/token-out, the calls veRL's `LLMServerClient` and replica
    make on a vLLM server (control calls that free device memory have nothing to do here)."""

    def __init__(self, model_path: str, prompt_length: int, response_length: int, replica_rank: int,
                 trust_remote_code: bool = False, threads: int = 1) -> None:
        from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForImageTextToText
        # from its module: without torchvision the top-level name is transformers' placeholder
        from transformers.models.auto.image_processing_auto import AutoImageProcessor

        torch.set_num_threads(max(1, threads))
        config = AutoConfig.from_pretrained(model_path, trust_remote_code=trust_remote_code)
        self.vision = getattr(config, "vision_config", None) is not None
        loader = AutoModelForImageTextToText if self.vision else AutoModelForCausalLM
        self.model = loader.from_pretrained(model_path, dtype=torch.float32, trust_remote_code=trust_remote_code)
        self.model.eval()
        text_config = self.model.config.get_text_config()  # a VL config keeps its token ids there
        self.pad_token_id, self.eos_token_id = text_config.pad_token_id, text_config.eos_token_id
        # the picture half of the policy's processor (the text half is the agent loop's)
        self.image_processor = (AutoImageProcessor.from_pretrained(model_path, trust_remote_code=trust_remote_code)
                                if self.vision else None)
        # Never sampled: veRL's agent loop gives these tokens picture positions (mm_token_type_ids,
        # the 3-D rope index) and its actor scatters picture features into them, so a response
        # holding one has no picture behind it and fails both. A trained VL model does not write
        # them; a random tiny one, over a 400-token vocabulary, writes one in most answers.
        self.placeholders = sorted({getattr(config, key, None) for key in (
            "image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id")} - {None})
        self.prompt_length = prompt_length
        self.response_length = response_length
        self.replica_rank = replica_rank
        self.global_steps: Optional[int] = None
        self.weight_updates = 0
        self._lock = asyncio.Lock()

    async def update_weights(self, state: dict[str, torch.Tensor], global_steps: Optional[int] = None) -> int:
        """Load the trainer's parameters; unknown names are an error (a silent partial load would
        sample from a policy the trainer is not training)."""
        own = self.model.state_dict()
        unknown = sorted(set(state) - set(own))
        if unknown:
            raise ValueError(f"weights the served model does not have: {unknown[:5]}")
        async with self._lock:
            with torch.no_grad():
                for name, tensor in state.items():
                    own[name].copy_(tensor.to(own[name].dtype))
            self.global_steps = global_steps
            self.weight_updates += 1
        return len(state)

    def _pictures(self, prompt_ids: list[int], images: list[Any]) -> dict[str, torch.Tensor]:
        """The model inputs for a prompt's pictures, checked against the placeholders the prompt
        holds (a mismatch would make the model place picture features at the wrong tokens)."""
        if self.image_processor is None:
            raise NotImplementedError("this policy has no vision tower: the aes_hf rollout cannot show it pictures")
        pictures = self.image_processor(images=list(images), return_tensors="pt")
        inputs = {key: pictures[key] for key in ("pixel_values", "image_grid_thw")}
        merge = int(getattr(self.image_processor, "merge_size", 1)) ** 2
        expected = int(inputs["image_grid_thw"].prod(dim=-1).sum()) // merge
        placed = sum(1 for token in prompt_ids if token == self.model.config.image_token_id)
        if placed != expected:
            raise ValueError(f"the prompt holds {placed} image tokens, its {len(images)} picture(s) make {expected}")
        # one line per pictured request in the trainer's log (train.smoke counts them)
        print(f"{PICTURED_REQUEST}: {len(images)} picture(s), {placed} image tokens, {len(prompt_ids)} prompt tokens",
              flush=True)
        return inputs

    def _sample(self, prompt_ids: list[int], sampling: dict[str, Any], max_tokens: int,
                want_logprobs: bool, images: Optional[list[Any]] = None) -> tuple[list[int], Optional[list[float]], str]:
        temperature = float(sampling.get("temperature", 1.0))
        greedy = temperature <= 0 or sampling.get("top_k") == 1
        options: dict[str, Any] = {"max_new_tokens": max_tokens, "do_sample": not greedy,
                                   "return_dict_in_generate": True, "output_logits": want_logprobs,
                                   "pad_token_id": self.pad_token_id, "eos_token_id": self.eos_token_id}
        if not greedy:
            options["temperature"] = temperature
            top_p = sampling.get("top_p")
            if top_p is not None and float(top_p) < 1.0:
                options["top_p"] = float(top_p)
            top_k = sampling.get("top_k")
            options["top_k"] = int(top_k) if top_k is not None and int(top_k) > 0 else 0
        repetition = sampling.get("repetition_penalty")
        if repetition is not None and float(repetition) != 1.0:
            options["repetition_penalty"] = float(repetition)
        inputs = torch.tensor([prompt_ids], dtype=torch.long)
        if images:
            options.update(self._pictures(prompt_ids, images))
        if self.placeholders:
            options["suppress_tokens"] = self.placeholders
        with torch.no_grad():
            out = self.model.generate(input_ids=inputs, attention_mask=torch.ones_like(inputs), **options)
        tokens = out.sequences[0, len(prompt_ids):].tolist()
        eos = self.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos])
        finish = "completed"
        if tokens and tokens[-1] in eos_ids:
            finish = "completed"
        elif len(tokens) >= max_tokens:
            finish = "length"
        log_probs = None
        if want_logprobs:
            log_probs = [torch.log_softmax(step[0].float(), dim=-1)[token].item()
                         for step, token in zip(out.logits, tokens)]
        return tokens, log_probs, finish

    async def generate(self, prompt_ids: list[int], sampling_params: dict[str, Any], request_id: str,
                       image_data: Optional[list[Any]] = None, video_data: Optional[list[Any]] = None,
                       **kwargs: Any) -> TokenOutput:
        if video_data:
            raise NotImplementedError("the aes_hf rollout serves text and image prompts, not videos")
        prompt_ids = list(prompt_ids)
        sampling = dict(sampling_params)
        room = self.prompt_length + self.response_length - len(prompt_ids)
        requested = sampling.pop("max_tokens", sampling.pop("max_new_tokens", None))
        max_tokens = min(self.response_length, room) if requested is None else min(int(requested), room)
        if max_tokens < 1:
            raise ValueError(f"prompt of {len(prompt_ids)} tokens leaves no room to generate "
                             f"(prompt_length {self.prompt_length} + response_length {self.response_length})")
        want_logprobs = bool(sampling.pop("logprobs", False))
        async with self._lock:
            tokens, log_probs, finish = await asyncio.to_thread(self._sample, prompt_ids, sampling, max_tokens,
                                                                want_logprobs, image_data)
        return TokenOutput(token_ids=tokens, log_probs=log_probs, stop_reason=finish,
                           extra_fields={"global_steps": self.global_steps})

    def stats(self) -> dict[str, Any]:
        return {"weight_updates": self.weight_updates, "global_steps": self.global_steps}

    async def wake_up(self) -> None:
        return None

    async def sleep(self) -> None:
        return None

    async def clear_kv_cache(self) -> None:
        return None

    async def release_kv_cache(self) -> None:
        return None

    async def resume_kv_cache(self) -> None:
        return None

    async def abort_all_requests(self, reject_request: bool = False) -> None:
        return None

    async def resume_generation(self) -> None:
        return None

    async def start_profile(self, **kwargs: Any) -> None:
        return None

    async def stop_profile(self) -> None:
        return None


class HFServerAdapter(BaseRollout):
    """The hybrid worker's rollout: forwards the actor's weights to its replica's server."""

    def __init__(self, config, model_config, device_mesh, *args, **kwargs) -> None:
        super().__init__(config, model_config, device_mesh)
        world = (self.config.tensor_model_parallel_size * self.config.data_parallel_size
                 * self.config.pipeline_model_parallel_size)
        self.rank = int(os.environ.get("RANK", "0"))
        self.replica_rank = self.rank // world
        self.is_replica_leader = self.rank % world == 0
        self._server = None

    def _server_handle(self):
        if self._server is None:
            self._server = ray.get_actor(server_actor_name(self.replica_rank))
        return self._server

    async def resume(self, tags: list[str]):
        return None

    async def release(self):
        return None

    async def update_weights(self, weights: Generator[tuple[str, torch.Tensor], None, None],
                             wire_format: str = "named_tensors", **kwargs):
        if wire_format != "named_tensors":
            raise ValueError(f"the aes_hf rollout takes named tensors, not {wire_format!r}")
        state = {name: _full_tensor(tensor) for name, tensor in weights}  # every rank joins the gathers
        if self.is_replica_leader:
            await self._server_handle().update_weights.remote(state, kwargs.get("global_steps"))


class HFReplica(RolloutReplica):
    """One `HFServer` per replica, a named Ray actor the hybrid workers find for weight sync."""

    async def launch_servers(self):
        model_path = self.model_config.get("local_path") or self.model_config.path
        name = server_actor_name(self.replica_rank)
        server = ray.remote(HFServer).options(name=name, num_cpus=0, max_concurrency=self.max_concurrency).remote(
            model_path=model_path, prompt_length=self.config.prompt_length,
            response_length=self.config.response_length, replica_rank=self.replica_rank,
            trust_remote_code=bool(self.model_config.get("trust_remote_code", False)))
        await server.wake_up.remote()  # surfaces a model that does not load here, not at the first request
        self.servers = [server]
        self._server_handle = server
        self._server_address = name

    @property
    def max_concurrency(self) -> int:
        return 64
