"""Qwen2-VL on this stack (veRL with transformers 5, with or without torchvision): what the smoke's
tiny VL policy (train.tiny_models.build_vl) needs from veRL and transformers, added through their
registries, never by editing them. `register()` runs in every veRL process (train.plugin).

1. An image-only processor. transformers' `Qwen2VLProcessor` always loads a video processor, and
   every video processor needs torchvision: where torchvision cannot be imported (a CPU torch
   beside PyPI's CUDA torchvision), `AutoProcessor.from_pretrained` fails for any Qwen2-VL folder,
   veRL's `hf_processor` turns that into a warning and `None`, and the trainer then refuses the
   rows' pictures. The subclass below has no video processor (its `__init__` does not name one,
   so transformers neither loads nor checks it); images take exactly transformers' path. It keeps
   the name `Qwen2VLProcessor` because veRL binds the model's 3-D rope index by processor class
   name (`verl.utils.tokenizer.hf_processor`). `AutoProcessor.register` maps Qwen2VLConfig to it
   only where torchvision is missing; the registry is consulted for a folder that names no
   `processor_class` (a named class is looked up among transformers' own first), which is how
   `build_vl` saves the tiny model. A published checkpoint names its processor and keeps
   transformers' class.

2. Micro-batches without a picture. veRL's Qwen2-VL forward (`verl.models.transformers.qwen2_vl.
   _get_input_embeds`) runs the vision tower on a dummy picture when a micro-batch has none (so
   every rank's backward touches the tower) and adds `0 * image_embeds.mean()`; with transformers
   5 the tower returns a `BaseModelOutputWithPooling`, which that branch does not unpack (its
   picture branches do, through `unpack_visual_output`), and the actor fails with "object has no
   attribute 'mean'". AesCode's rows mix pictured and text-only prompts, so any micro-batch of
   text-only rows hits it. The module-level function is wrapped: micro-batches with pictures go
   to veRL's own code; the text-only branch is veRL's, with the tower's output unpacked.

3. The MFU estimate. veRL's flops table (`verl.utils.flops_counter.ESTIMATE_FUNC`) counts
   `qwen2_vl` with its Qwen3-VL estimator, whose vision part reads Qwen3-VL's names
   (`intermediate_size`, `out_hidden_size`, `hidden_size` as the tower's width); Qwen2-VL's vision
   config has `embed_dim`, `mlp_ratio` and `hidden_size` as the merger's output, so the actor's
   first step with pictures fails ("'Qwen2VLVisionConfig' object has no attribute
   'intermediate_size'"). The table entry is replaced by the same estimator over Qwen2-VL's
   vision config under those names (a metric only: the tower's MLP is two plain linears in both).
"""

from __future__ import annotations

from typing import Any, Callable

from transformers.models.qwen2_vl import processing_qwen2_vl


class Qwen2VLProcessor(processing_qwen2_vl.Qwen2VLProcessor):
    """Qwen2-VL's processor over images and text only (videos need torchvision)."""

    def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
        super().__init__(image_processor=image_processor, tokenizer=tokenizer, video_processor=None,
                         chat_template=chat_template, **kwargs)


def needed() -> bool:
    """Whether transformers' own Qwen2-VL processor cannot load here (no usable torchvision)."""
    from transformers.utils import is_torchvision_available

    return not is_torchvision_available()


def register_processor() -> bool:
    """Map Qwen2VLConfig to the image-only processor in AutoProcessor where it is needed."""
    if not needed():
        return False
    from transformers import AutoProcessor, Qwen2VLConfig
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING

    if PROCESSOR_MAPPING._extra_content.get(Qwen2VLConfig) is not Qwen2VLProcessor:
        AutoProcessor.register(Qwen2VLConfig, Qwen2VLProcessor, exist_ok=True)
    return True


def text_only_embeds(original: Callable[..., Any]) -> Callable[..., Any]:
    """veRL's `_get_input_embeds` with its no-picture branch unpacking the tower's output (2.)."""
    if getattr(original, "aesenv", False):
        return original

    def _get_input_embeds(model, input_ids, attention_mask=None, pixel_values=None, pixel_values_videos=None,
                          image_grid_thw=None, video_grid_thw=None):
        if pixel_values is not None or pixel_values_videos is not None:
            return original(model, input_ids, attention_mask, pixel_values, pixel_values_videos,
                            image_grid_thw, video_grid_thw)
        import torch
        from verl.utils.transformers_compat import unpack_visual_output

        inputs_embeds = model.get_input_embeddings()(input_ids)
        config = model.config.vision_config
        patch_dim = config.in_channels * config.temporal_patch_size * config.patch_size**2
        dummy = torch.zeros((16, patch_dim), dtype=inputs_embeds.dtype, device=inputs_embeds.device)
        grid = torch.tensor([[1, 4, 4]], dtype=torch.long, device=inputs_embeds.device)
        image_embeds, _ = unpack_visual_output(model.visual(dummy, grid_thw=grid))
        inputs_embeds = inputs_embeds + 0.0 * image_embeds.mean()
        if attention_mask is not None:
            attention_mask = attention_mask.to(inputs_embeds.device)
        return inputs_embeds, attention_mask

    _get_input_embeds.aesenv = True
    _get_input_embeds.original = original
    return _get_input_embeds


def register_forward() -> None:
    from verl.models.transformers import qwen2_vl

    qwen2_vl._get_input_embeds = text_only_embeds(qwen2_vl._get_input_embeds)


def qwen2_vl_flops(qwen3_vl_flops: Callable[..., Any]) -> Callable[..., Any]:
    """veRL's Qwen3-VL flops estimator reading a Qwen2-VL config (3.)."""
    if getattr(qwen3_vl_flops, "aesenv", False):
        return qwen3_vl_flops

    def estimate(config, tokens_sum, batch_seqlens, delta_time, **kwargs):
        from types import SimpleNamespace

        tower = config.vision_config
        vision = SimpleNamespace(
            num_heads=tower.num_heads, depth=tower.depth, hidden_size=tower.embed_dim,
            intermediate_size=int(tower.embed_dim * tower.mlp_ratio), out_hidden_size=tower.hidden_size,
            spatial_merge_size=tower.spatial_merge_size, in_channels=tower.in_channels,
            temporal_patch_size=tower.temporal_patch_size, patch_size=tower.patch_size)
        view = SimpleNamespace(text_config=config.text_config, vision_config=vision)
        return qwen3_vl_flops(view, tokens_sum, batch_seqlens, delta_time, **kwargs)

    estimate.aesenv = True
    estimate.original = qwen3_vl_flops
    return estimate


def register_flops() -> None:
    from verl.utils import flops_counter

    flops_counter.ESTIMATE_FUNC["qwen2_vl"] = qwen2_vl_flops(flops_counter.ESTIMATE_FUNC["qwen2_vl"])


def register() -> None:
    register_processor()
    register_forward()
    register_flops()
