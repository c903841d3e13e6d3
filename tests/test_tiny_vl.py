"""The smoke's tiny Qwen2-VL policy (train.tiny_models.build_vl) loads the way veRL's workers load
it, and the CPU rollout (`aes_hf`) generates from an AesCode row's reference picture.

veRL's `hf_processor` turns a processor that fails to load into a warning and `None` (the trainer
then refuses every row with a picture), so these tests check the class it returns, not only that
it returns."""

from __future__ import annotations

import asyncio
import base64
import io

import pytest
from PIL import Image


@pytest.fixture(scope="module")
def tiny_vl(tmp_path_factory):
    from train.tiny_models import build_vl

    path = tmp_path_factory.mktemp("tiny_vl")
    build_vl(path)
    return path


def _png(color: str, size=(1440, 900)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


def _row_item(tmp_path, tiny_vl, png: bytes):
    """An AesCode-style row with its reference picture, through the dataset veRL's trainer makes
    (`data.custom_cls`, train.dataset) with the processor veRL loads."""
    from omegaconf import OmegaConf
    from verl.trainer.ppo.utils import create_rl_dataset
    from verl.utils import hf_processor, hf_tokenizer

    from aesenv.tasks import Task
    from train import data as train_data

    task = Task(id="poster", prompt="Design a sale poster.", canvas={"width": 1440, "height": 900},
                reference_image=base64.b64encode(png).decode(),
                requirements=[{"type": "text_exact", "text": "Spring Sale"}])
    row = train_data.to_row(task, 0, multi_turn=False, reference_png=png)
    train_data.write_parquet([row], tmp_path / "train.parquet")
    cfg = OmegaConf.create({"prompt_key": "prompt", "image_key": "images", "max_prompt_length": 1152,
                            "filter_overlong_prompts": True, "return_raw_chat": True,
                            "custom_cls": {"path": "pkg://train.dataset", "name": "AesRLHFDataset"}})
    processor = hf_processor(str(tiny_vl))
    dataset = create_rl_dataset([str(tmp_path / "train.parquet")], cfg, hf_tokenizer(str(tiny_vl)), processor)
    assert len(dataset) == 1
    return processor, dataset[0]


def test_the_tiny_vl_model_and_processor_load_through_verls_own_calls(tiny_vl):
    """`hf_processor` (veRL's workers and agent loops) returns the Qwen2-VL processor with the
    model's 3-D rope index bound, from the saved folder, without torchvision; `hf_tokenizer` the
    tokenizer with the vision tokens; the model is a Qwen2-VL, the class veRL's patches key on."""
    from transformers import AutoConfig, AutoModelForImageTextToText
    from verl.utils import hf_processor, hf_tokenizer

    from train import qwen2_vl

    processor = hf_processor(str(tiny_vl))
    assert processor is not None and type(processor).__name__ == "Qwen2VLProcessor"
    assert not qwen2_vl.needed() or isinstance(processor, qwen2_vl.Qwen2VLProcessor)
    assert callable(processor.get_rope_index)
    tokenizer = hf_tokenizer(str(tiny_vl))
    assert tokenizer.convert_tokens_to_ids("<|image_pad|>") == AutoConfig.from_pretrained(str(tiny_vl)).image_token_id
    model = AutoModelForImageTextToText.from_pretrained(str(tiny_vl))
    assert type(model).__name__ == "Qwen2VLForConditionalGeneration" and model.config.model_type == "qwen2_vl"

    # the picture is bounded at smoke size: 1440x900 becomes at most 64 image tokens
    inputs = processor(text=["<|vision_start|><|image_pad|><|vision_end|>"], images=[Image.new("RGB", (1440, 900))],
                       return_tensors="pt")
    image_tokens = int((inputs["input_ids"] == model.config.image_token_id).sum())
    assert 4 <= image_tokens <= 64
    assert image_tokens == int(inputs["image_grid_thw"].prod()) // processor.image_processor.merge_size ** 2


def test_the_plugin_registers_the_image_only_processor_where_torchvision_is_missing():
    """veRL's workers get the registration by importing veRL (its plugin entry point)."""
    import verl  # noqa: F401
    from transformers import Qwen2VLConfig
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING

    from train import qwen2_vl

    registered = PROCESSOR_MAPPING._extra_content.get(Qwen2VLConfig)
    assert (registered is qwen2_vl.Qwen2VLProcessor) == qwen2_vl.needed()


def test_the_aes_hf_rollout_generates_from_a_row_with_its_picture(tmp_path, tiny_vl):
    """The row's prompt as the agent loop builds it (its picture's tokens widened) and the picture
    itself reach the model: two references make two different distributions over the answer."""
    from train.cpu_rollout import HFServer
    from train.dataset import pictures

    server = HFServer(str(tiny_vl), prompt_length=1152, response_length=8, replica_rank=0)
    assert server.vision
    results = []
    for color in ("red", "navy"):
        processor, item = _row_item(tmp_path / color, tiny_vl, _png(color))
        messages = item["raw_prompt"]
        images = pictures(messages)  # as the agent loop takes them (train.dataset, without torchvision)
        assert images and len(images) == 1
        text = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        prompt_ids = processor(text=[text], images=images, return_tensors="pt")["input_ids"][0].tolist()
        assert server.model.config.image_token_id in prompt_ids
        out = asyncio.run(server.generate(prompt_ids, {"temperature": 0, "logprobs": True}, f"r-{color}",
                                          image_data=images))
        assert 1 <= len(out.token_ids) <= 8 and len(out.log_probs) == len(out.token_ids)
        results.append(out.log_probs[0])
    assert results[0] != pytest.approx(results[1], abs=1e-6)


def test_the_aes_hf_rollout_refuses_pictures_that_do_not_match_the_prompt(tiny_vl):
    from train.cpu_rollout import HFServer

    server = HFServer(str(tiny_vl), prompt_length=64, response_length=4, replica_rank=0)
    prompt = [server.model.config.image_token_id] * 3  # a 1440x900 picture makes more tokens than 3
    with pytest.raises(ValueError, match="image tokens"):
        asyncio.run(server.generate(prompt, {"temperature": 0}, "r", image_data=[Image.new("RGB", (1440, 900))]))
    with pytest.raises(NotImplementedError, match="videos"):
        asyncio.run(server.generate([1, 2], {"temperature": 0}, "r", video_data=[object()]))


def test_verls_qwen2_vl_forward_takes_a_micro_batch_without_pictures(tiny_vl):
    """AesCode mixes pictured and text-only rows; veRL's forward runs the vision tower on a dummy
    picture for a micro-batch with none, and under transformers 5 its own branch fails on the
    tower's output object. The plugin's wrap (train.qwen2_vl) computes it; the picture path is
    veRL's own, unchanged."""
    import torch
    import verl  # noqa: F401 - the plugin wraps the forward here
    from transformers import AutoModelForImageTextToText
    from verl.models.transformers import qwen2_vl as verl_qwen2_vl

    model = AutoModelForImageTextToText.from_pretrained(str(tiny_vl), dtype=torch.float32).model
    ids = torch.tensor([[5, 6, 7, 8]])
    wrapped = verl_qwen2_vl._get_input_embeds
    assert getattr(wrapped, "aesenv", False)
    embeds, mask = wrapped(model, ids, torch.ones_like(ids))
    assert embeds.shape == (1, 4, model.config.text_config.hidden_size) and torch.isfinite(embeds).all()
    assert torch.equal(embeds, model.get_input_embeddings()(ids))  # the dummy picture adds exactly zero
    # veRL's own branch, as shipped: what the wrap is for (drop the wrap once this passes)
    with pytest.raises(AttributeError, match="mean"):
        wrapped.original(model, ids, torch.ones_like(ids))


def test_the_aes_hf_rollout_never_samples_a_picture_placeholder(tiny_vl, monkeypatch):
    """A response holding <|image_pad|> (or another vision token) has no picture behind it: veRL's
    agent loop then fails computing its 3-D positions, and its actor scattering features. The
    random tiny model would write one in most answers; the rollout suppresses them."""
    from transformers import AutoConfig

    from train.cpu_rollout import HFServer

    config = AutoConfig.from_pretrained(str(tiny_vl))
    vision_tokens = {config.image_token_id, config.video_token_id, config.vision_start_token_id,
                     config.vision_end_token_id}
    server = HFServer(str(tiny_vl), prompt_length=64, response_length=48, replica_rank=0)
    seen = {}
    generate = server.model.generate

    def recording(**kwargs):
        seen.update(kwargs)
        return generate(**kwargs)

    monkeypatch.setattr(server.model, "generate", recording)
    out = asyncio.run(server.generate([5, 6, 7], {"temperature": 1.0}, "r"))
    assert set(seen["suppress_tokens"]) == vision_tokens
    assert not vision_tokens & set(out.token_ids)


def test_verls_flops_counter_reads_a_qwen2_vl_config(tiny_vl):
    """veRL's actor estimates MFU after every batch; for `qwen2_vl` with pictures its table names
    the Qwen3-VL estimator, which reads vision-config names Qwen2-VL does not have. The plugin's
    entry (train.qwen2_vl) maps them; veRL's own entry, as shipped, fails."""
    import verl  # noqa: F401 - the plugin replaces the table entry here
    from transformers import AutoConfig
    from verl.utils.flops_counter import ESTIMATE_FUNC

    config = AutoConfig.from_pretrained(str(tiny_vl))
    estimate = ESTIMATE_FUNC[config.model_type]  # as FlopsCounter.estimate_flops looks it up
    assert estimate(config, 220, [100, 120], 1.0, images_seqlens=[240]) > estimate(config, 220, [100, 120], 1.0) > 0
    with pytest.raises(AttributeError, match="intermediate_size"):
        ESTIMATE_FUNC["qwen2_vl"].original(config, 220, [100, 120], 1.0, images_seqlens=[240])


def test_every_thread_gets_the_same_answer_on_veRLs_image_path(monkeypatch):
    """veRL's agent loop reads several rows' pictures at once in threads; each must take the same
    path (train.dataset), the one a fresh process finds: a thread that saw `qwen_vl_utils`
    half-imported took veRL's path without torchvision and failed the smoke's rollout."""
    import subprocess
    import sys
    import threading

    from train import dataset

    fresh = subprocess.run([sys.executable, "-c", "from qwen_vl_utils import process_vision_info"],
                           capture_output=True).returncode == 0
    for name in [n for n in sys.modules if n.startswith("qwen_vl_utils")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(dataset, "_vision_utils", None)
    start = threading.Barrier(8)
    answers = []

    def ask():
        start.wait()
        answers.append(dataset.vision_utils_importable())

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [fresh] * 8
