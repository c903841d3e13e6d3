"""docs/reproduction.md against what runs: every row's value against the composed training config
or the code, every row pinned by a test that exists, and every pinned value, drifted where it is
set, failing its row; and the tests the table names for the published behaviour this repository
had drifted from (AesCode's channels, its references through veRL's overlong filter, its
candidate-only VGR and OCR layout, its reported Rule/Visual/Overall and training length;
GRPO-AR's per-sequence and WebCoder's token-weighted loss through veRL's policy loss; per-kind
reward fields)."""

from __future__ import annotations

import ast
import copy
import functools
import importlib
import io
import math
import re
from pathlib import Path

import pytest
import yaml

pytest.importorskip("verl", reason="the verl extra is not installed (pip install -e '.[verl]')")

from hydra import compose, initialize_config_dir  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "docs" / "reproduction.md"
CONFIG_DIR = ROOT / "train" / "config"
LOOP = ROOT / "train" / "config" / "agent_loops" / "webcoder_project.yaml"


def rows(kind: str = "Set in") -> list[dict[str, str]]:
    """Every row of docs/reproduction.md's tables that have a `kind` column, as {column: cell}
    (backticks stripped): the reproduction rows ("Set in"), or what is not built ("Why not here")."""
    out, header = [], None
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if header is None:
            header = cells
        elif not set(line) <= set("|-: ") and kind in header:
            out.append({h: c.strip("`").replace("\\|", "|") for h, c in zip(header, cells)})
    return out


@functools.cache
def _composed(name: str):
    """A shipped config composed over veRL's, as the launch script trains with it (read-only: a
    test that changes it works on a copy)."""
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        return compose(config_name=name, overrides=["hydra.searchpath=[pkg://verl.trainer.config]"])


def _loop_entry() -> dict:
    return next(e for e in yaml.safe_load(LOOP.read_text()) if e["name"] == "aesenv_refine")


def actual(where: str):
    kind, _, rest = where.partition(":")
    if kind == "cfg":
        name, key = rest.split(":", 1)
        value = OmegaConf.select(_composed(name), key, throw_on_missing=True)
        return OmegaConf.to_container(value) if OmegaConf.is_config(value) else value
    if kind == "loop":
        entry = _loop_entry()
        for part in rest.split("."):
            entry = entry[part]
        return entry
    if kind == "py":
        module, name = rest.split(":", 1)
        value = importlib.import_module(module)
        for part in name.split("."):
            value = getattr(value, part)
        return value
    raise ValueError(f"unknown location {where!r}")


def _same(got, want) -> bool:
    if isinstance(got, tuple):
        got = list(got)
    if isinstance(want, dict):
        return {str(getattr(k, "value", k)): v for k, v in got.items()} == want
    if isinstance(want, float) or isinstance(got, float):
        return math.isclose(float(got), float(want))
    return got == want


ROWS = rows()


def test_the_table_has_a_row_per_published_item_for_each_paper():
    text = TABLE.read_text(encoding="utf-8")
    assert [h for h in re.findall(r"^## (.+)$", text, re.M)] == ["AesCoder (GRPO-AR, OpenDesign)", "WebCoder (Webdev-World)",
                                                               "AesCode (decoupled rewards, GDPO)", "Not built here"]
    assert len(ROWS) >= 70 and all(r["Pinned by"] for r in ROWS)
    assert len(ROW_IDS) == len(set(ROW_IDS))
    gaps = rows("Why not here")
    assert len(gaps) >= 5 and all(g["Paper"] and g["Why not here"] for g in gaps)


ROW_IDS = [f"{r['Item']} ({r['Set in'].split(':')[1] if r['Set in'].startswith('cfg:') else r['Set in'].split(':')[0]})"
           for r in ROWS]


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_every_row_matches_what_runs(row):
    check_row(row)


def check_row(row: dict[str, str]) -> None:
    """The row's value where it is set (or, for behaviour, the function or class that defines it),
    and its pinning test exists."""
    where, here = row["Set in"], row["Here"]
    if where.startswith("code:"):
        path, name = where[5:].split(":")
        tree = ast.parse((ROOT / path).read_text())
        assert name in {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    elif here.startswith("≥"):
        assert actual(where) >= float(here[1:]), row
    else:
        assert _same(actual(where), yaml.safe_load(here)), (row, actual(where))
    test_file, _, test_name = row["Pinned by"].partition("::")
    source = (ROOT / test_file).read_text()
    assert not test_name or re.search(rf"^(async )?def {re.escape(test_name)}\(", source, re.M), row["Pinned by"]


def drifted(value, here: str):
    """A value a default could drift to: of the same kind, unlike `value` (below the bound for a
    `≥ N` row)."""
    if here.startswith("≥"):
        return float(here[1:]) - 1
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value * 2 + 1
    if isinstance(value, str):
        return value + "-drifted"
    if isinstance(value, (list, tuple)):
        return list(value)[:-1] if len(value) > 1 else [*value, "drifted"]
    if isinstance(value, dict):
        key = next(iter(value))
        return {**value, key: drifted(value[key], "")}
    return "drifted"


VALUE_ROWS = [(i, r) for i, r in zip(ROW_IDS, ROWS) if not r["Set in"].startswith("code:")]


@pytest.mark.parametrize("row", [r for _, r in VALUE_ROWS], ids=[i for i, _ in VALUE_ROWS])
def test_a_drifted_default_fails_its_row(row, monkeypatch):
    """Each value the table pins, changed where it is set (in the composed config, the loop's
    settings, or the constant), makes its row fail: no row is pinned by a check that cannot fail."""
    where, here = row["Set in"], row["Here"]
    kind, _, rest = where.partition(":")
    new = drifted(actual(where), here)
    if kind == "cfg":
        name, key = rest.split(":", 1)
        original = _composed
        changed = copy.deepcopy(original(name))
        OmegaConf.update(changed, key, new, merge=False)
        monkeypatch.setitem(globals(), "_composed", lambda n: changed if n == name else original(n))
    elif kind == "loop":
        entry = _loop_entry()
        *path, last = rest.split(".")
        node = entry
        for part in path:
            node = node[part]
        node[last] = new
        monkeypatch.setitem(globals(), "_loop_entry", lambda: entry)
    else:
        module, name = rest.split(":", 1)
        *path, last = name.split(".")
        owner = importlib.import_module(module)
        for part in path:
            owner = getattr(owner, part)
        monkeypatch.setattr(owner, last, new)
    with pytest.raises(AssertionError):
        check_row(row)


# -- the behaviour the rows name -----------------------------------------------------------------


def test_the_grpo_ar_loss_averages_each_sequence_over_its_own_length():
    """veRL's `seq-mean-token-mean` is GRPO's 1/G Σ_i 1/|o_i| Σ_t: a short rollout's tokens weigh
    more than a long one's, where `token-mean` weighs every token in the batch alike. Through
    veRL's own policy loss with the composed GRPO-AR actor config."""
    lengths, advantages = [2, 4], [1.0, 3.0]
    per_sequence = -(1.0 + 3.0) / 2  # by hand: each sequence's mean, then their mean
    per_token = -(2 * 1.0 + 4 * 3.0) / 6
    assert _policy_loss("grpo_ar_single_turn", lengths, advantages) == pytest.approx(per_sequence)
    switched = _policy_loss("grpo_ar_single_turn", lengths, advantages, loss_agg_mode="token-mean")
    assert switched == pytest.approx(per_token) != pytest.approx(per_sequence)


def _policy_loss(config_name: str, lengths: list[int], advantages: list[float], **override) -> float:
    """veRL's own policy loss (the composed actor config's loss mode and aggregation, its real
    ActorConfig) on one rollout's samples at ratio 1: sample k trains `lengths[k]` tokens, each
    with advantage `advantages[k]`."""
    import torch
    from verl.trainer.ppo.core_algos import get_policy_loss_fn
    from verl.utils.config import omega_conf_to_dataclass

    actor_cfg = OmegaConf.merge(_composed(config_name).actor_rollout_ref.actor, override)
    actor = omega_conf_to_dataclass(actor_cfg)
    width = max(lengths)
    mask, adv = torch.zeros(len(lengths), width), torch.zeros(len(lengths), width)
    for k, (n, a) in enumerate(zip(lengths, advantages)):
        mask[k, :n], adv[k, :n] = 1.0, a
    same = torch.zeros(len(lengths), width)
    loss, _ = get_policy_loss_fn(actor.policy_loss.loss_mode)(
        old_log_prob=same, log_prob=same, advantages=adv, response_mask=mask, loss_agg_mode=actor.loss_agg_mode,
        config=actor)
    return float(loss)


def test_the_webcoder_loss_weighs_every_token_alike_so_offsets_keep_the_rollout_advantage():
    """Eq. 9 (token-mean): with Â = 1 and segment offsets [0.503, 0.208, -0.188] on samples of
    [100, 300, 600] trained tokens (token-weighted to zero), the rollout's loss is -Â = -1.000.
    The per-sequence mean (our switch) gives -1.174: the offsets stop being zero-sum, and a rollout
    that keeps six samples would weigh six times one that keeps one."""
    lengths, offsets = [100, 300, 600], [0.503, 0.208, -0.188]
    advantages = [1.0 + d for d in offsets]
    assert _policy_loss("grpo_webcoder_project", lengths, advantages) == pytest.approx(-1.000, abs=5e-4)
    switched = _policy_loss("grpo_webcoder_project", lengths, advantages, loss_agg_mode="seq-mean-token-mean")
    assert switched == pytest.approx(-1.174, abs=5e-4)
    # Two rollouts of 600 trained tokens, Â = +1 kept as six samples and Â = -1 kept as one: they
    # cancel token for token; per sequence the six-sample rollout outweighs the other 6:1.
    lengths, advantages = [100] * 6 + [600], [1.0] * 6 + [-1.0]
    assert _policy_loss("grpo_webcoder_project", lengths, advantages) == pytest.approx(0.0, abs=1e-6)
    assert _policy_loss("grpo_webcoder_project", lengths, advantages, loss_agg_mode="seq-mean-token-mean") == \
        pytest.approx(-5 / 7)


def test_aescode_channels_as_published():
    from aesenv.rewards import PipelineConfig
    from aesenv.kinds.web.verifiers import AESCODE_CHANNELS

    channels = actual("cfg:gdpo_aescode:reward.custom_reward_function.reward_kwargs.channels")
    assert channels == AESCODE_CHANNELS and len(channels) == 7
    assert "execution" not in channels and "table" not in channels and "chart" not in channels
    assert PipelineConfig(channels=channels, reward="aescode").channels_for("web") == channels


def _record(**scores):
    from aesenv.channels import ChannelResult, ChannelStatus

    return {name: (ChannelResult(status=ChannelStatus.OK, score=value, raw=value, payload=payload)
                   if value is not None else ChannelResult.not_applicable("none"))
            for name, (value, payload) in scores.items()}


def test_rule_visual_overall_as_published():
    """AesCode §3.4: Rule = mean(Text, Boundary, Table/Chart), Visual = mean of the checklist's
    Content, Layout and Style, Overall = their mean; VGR (training only) and s_exec (a diagnostic)
    are not reported. A record the paper scores 0.55 scored 0.80 under the old aggregate, which
    stays as `aescode_channels` (Rule over every deterministic channel, VGR as Visual)."""
    from aesenv.kinds.web.aescode import aescode_scores
    from aesenv.rewards.aggregate import AGGREGATORS

    channels = _record(renderable=(1.0, {}), text=(1.0, {}), boundary=(1.0, {}), table_chart=(0.4, {}),
                       layout=(1.0, {}), whitespace=(1.0, {}), vgr=(0.7, {}),
                       checklist=(0.3, {"dimensions": {"content": 0.2, "layout": 0.3, "style": 0.4}}))
    assert aescode_scores(channels) == {"rule": 0.8, "visual": 0.3, "overall": 0.55}
    assert AGGREGATORS["aescode"](channels) == 0.55
    assert AGGREGATORS["aescode_channels"](channels) == pytest.approx(((5 + 0.4) / 6 + 0.7) / 2) == 0.8
    assert actual("cfg:gdpo_aescode:reward.custom_reward_function.reward_kwargs.reward") == "aescode_channels"


def test_the_vgr_judge_sees_the_candidate_only():
    from aesenv.tasks import Task
    from aesenv.kinds.web.verifiers.vgr import VgrOptions, implied_target, vlm_messages
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), "white").save(buffer, "PNG")
    picture = __import__("base64").b64encode(buffer.getvalue()).decode()
    task = Task(id="t", prompt="A poster", canvas={"width": 400, "height": 300}, reference_image=picture,
                requirements=[{"type": "text_exact", "text": "Spring Sale"}, {"type": "text_exact", "text": "20% off"}])
    paper = implied_target(task)
    assert not [p for p in paper.predicates if p.id.startswith(("req-text-", "ref-place-"))]
    sent = vlm_messages(paper, buffer.getvalue())
    assert sum(part.get("type") == "image_url" for part in sent[1]["content"]) == 1
    ours = implied_target(task, options=VgrOptions(text_presence=True, show_reference=True))
    ids = [p.id for p in ours.predicates]
    assert "req-text-1" in ids and "ref-place-req-text-2" in ids  # the variants, when switched on


def _poster(lines: list[tuple[str, tuple[int, int]]], size=(640, 360)) -> bytes:
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 30)
    for text, at in lines:
        draw.text(at, text, fill="black", font=font)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


@pytest.mark.slow
async def test_layout_reads_text_blocks_from_an_image_reference_with_ocr():
    """The reference is a picture: both images are read with the OCR engine, and a headline moved
    across the canvas loses its credit where one left in place keeps it."""
    pytest.importorskip("rapidocr_onnxruntime")
    from aesenv.kinds.web.verifiers.ocr import read_blocks
    from aesenv.kinds.web.verifiers.reference import _layout

    lines = [("Spring Sale", (40, 40)), ("Everything must go", (300, 260))]
    reference = _poster(lines)
    same = _poster(lines)
    moved = _poster([("Spring Sale", (380, 40)), ("Everything must go", (300, 260))])
    ref_blocks, ref_size = await read_blocks(reference)
    assert {b.text for b in ref_blocks} == {"Spring Sale", "Everything must go"}
    kept = _layout(ref_blocks, ref_size, *await read_blocks(same), "ocr")
    shifted = _layout(ref_blocks, ref_size, *await read_blocks(moved), "ocr")
    assert kept.score == 1.0 and kept.payload["method"] == "ocr"
    assert shifted.score == pytest.approx(0.5, abs=0.01)  # one of two blocks in place


def test_an_aescode_row_loads_with_its_image_through_verls_multimodal_dataset(tmp_path):
    """A task whose reference is a picture becomes a row in veRL's multimodal format, and the
    dataset veRL's trainer makes from the AesCode config (RLHFDataset through `data.custom_cls`,
    with a VL processor and the overlong filter on) keeps it and puts the picture in the user turn."""
    import base64

    from verl.trainer.ppo.utils import create_rl_dataset
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from aesenv.tasks import Task
    from support.tiny_models import build_processor
    from train import data as train_data

    png = _poster([("Spring Sale", (40, 40))], size=(64, 48))
    task = Task(id="poster", prompt="Design a sale poster.", canvas={"width": 640, "height": 480},
                reference_image=base64.b64encode(png).decode(),
                requirements=[{"type": "text_exact", "text": "Spring Sale"}])
    assert train_data.wants_reference(task, multi_turn=False) and not train_data.wants_reference(task, multi_turn=True)
    row = train_data.to_row(task, 0, multi_turn=False, reference_png=png)
    train_data.write_parquet([row], tmp_path / "train.parquet")
    processor = build_processor()
    cfg = _composed("gdpo_aescode").data
    assert cfg.filter_overlong_prompts
    dataset = create_rl_dataset([str(tmp_path / "train.parquet")], cfg, processor.tokenizer, processor)
    assert isinstance(dataset, RLHFDataset) and len(dataset) == 1
    item = dataset[0]
    user = item["raw_prompt"][-1]["content"]
    images = [part for part in user if part["type"] == "image"]
    assert len(images) == 1 and images[0]["image"].size == (64, 48)
    assert any(part["type"] == "text" and "Design a sale poster." in part["text"] for part in user)


def test_every_aescode_reference_survives_verls_overlong_filter(tmp_path):
    """The built-in AesCode rows, nine with a rendered reference (up to 1440x900 and 1080x1350),
    through the dataset veRL's trainer makes from the AesCode config, with the overlong filter on
    and a Qwen2-VL processor bounded as Qwen2.5-VL's (1,872 image tokens for 1080x1350): every
    row is kept. veRL's own image path cannot run here (it imports torchvision), and veRL's class
    alone then counts every imaged row as overlong and drops it."""
    import pandas as pd
    from verl.trainer.ppo.utils import create_rl_dataset
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from support.tiny_models import QWEN25_VL_PIXELS, build_processor
    from train import data as train_data
    from train.dataset import AesRLHFDataset, vision_utils_importable

    counts = train_data.build("builtin:aescode", tmp_path, val_fraction=0)
    rows = pd.read_parquet(tmp_path / "train.parquet")
    imaged = int(rows["images"].notna().sum())
    assert counts["with_image"] == imaged == 9 and counts["train"] == len(rows) == 22
    cfg = _composed("gdpo_aescode").data
    assert cfg.filter_overlong_prompts and cfg.max_prompt_length == 4096
    processor = build_processor(QWEN25_VL_PIXELS)
    files = [str(tmp_path / "train.parquet")]
    dataset = create_rl_dataset(files, cfg, processor.tokenizer, processor)
    assert type(dataset) is AesRLHFDataset and isinstance(dataset, RLHFDataset)
    assert len(dataset) == 22  # every row, the nine with a reference included
    shown = [item for item in (dataset[i] for i in range(len(dataset)))
             if any(p["type"] == "image" for m in item["raw_prompt"] if isinstance(m["content"], list)
                    for p in m["content"])]
    assert len(shown) == imaged
    if not vision_utils_importable():
        assert len(RLHFDataset(data_files=files, tokenizer=processor.tokenizer, config=cfg,
                               processor=processor)) == 22 - imaged
    inherited = OmegaConf.merge(cfg, {"max_prompt_length": 1024})  # what the config trained with before
    assert len(create_rl_dataset(files, inherited, processor.tokenizer, processor)) == 22 - imaged


def test_pictures_reach_the_processor_as_rgb_in_order_and_a_video_is_refused(tmp_path):
    """What `AesRLHFDataset` hands the processor where veRL's image path cannot run: the image
    parts' pictures (given or by path) in order, as RGB; a video needs torchvision and is refused."""
    from PIL import Image

    from train.dataset import pictures

    path = tmp_path / "ref.png"
    Image.new("RGBA", (30, 20), (10, 20, 30, 128)).save(path)
    messages = [{"role": "system", "content": "You design pages."},
                {"role": "user", "content": [{"type": "text", "text": "Like this:"}, {"type": "image", "image": str(path)},
                                             {"type": "image", "image": Image.new("L", (8, 6))}]}]
    found = pictures(messages)
    assert [(p.mode, p.size) for p in found] == [("RGB", (30, 20)), ("RGB", (8, 6))]
    assert pictures([{"role": "user", "content": "text only"}]) is None
    with pytest.raises(RuntimeError, match="torchvision"):
        pictures([{"role": "user", "content": [{"type": "video", "video": "clip.mp4"}]}])


def test_aescode_trains_as_many_steps_as_the_paper():
    """400 steps for the 8B model, 520 for the 32B. veRL stops at the first of steps and epochs,
    so the epochs are set as high as the steps: a set of one batch still reaches the count."""
    for name, steps in (("gdpo_aescode", 400), ("gdpo_aescode_32b", 520)):
        trainer = _composed(name).trainer
        assert trainer.total_training_steps == steps and trainer.total_epochs >= steps


@pytest.mark.parametrize("kind", ["web", "plot", "project"])
def test_reward_fields_name_the_channels_of_the_tasks_kind(kind):
    """Every sample reports one fixed key set; the task's kind fills its own channels, and the
    other kinds' channels are not applicable to it (never an infra failure)."""
    from aesenv.channels import ChannelResult, ChannelStatus
    from aesenv.rewards import PipelineConfig, RewardRecord
    from train.reward import logged_channels, reward_fields

    config = PipelineConfig()
    own = config.channels_for(kind)
    record = RewardRecord(task_id="t", category="Website", status="ok", reward=0.5, normalized=0.5,
                          channels={n: ChannelResult(status=ChannelStatus.OK, score=0.5, raw=0.5) for n in own},
                          artifact={"kind": "html", "sha256": "0", "bytes": 1})
    fields = reward_fields(record, config, kind)
    assert {k for k in fields if k.startswith("aes_") and k.endswith("_applicable")} == \
        {f"aes_{n}_applicable" for n in logged_channels(config)}
    for name in logged_channels(config):
        mine = name in own
        assert (fields[f"aes_{name}"] == 0.5) is mine and fields[f"aes_{name}_infra"] == 0.0
        assert fields[f"aes_{name}_applicable"] == float(mine)
    if kind == "project":
        assert {"project_gate", "project_det", "project_vlm"} <= set(own)
    assert set(reward_fields(None, config, None)) == set(fields)  # the same keys when nothing was scored


def _long_page(screens: list[bool], width: int = 1280, screen: int = 960) -> bytes:
    """A long screenshot of `len(screens)` screens: each True screen carries its own blocks (a
    dark bar whose place differs per screen, and text-like stripes), each False one is blank."""
    import numpy as np
    from PIL import Image

    px = np.full((screen * len(screens), width, 3), 250, np.uint8)
    for i, drawn in enumerate(screens):
        if drawn:
            top = i * screen
            left = 100 + 250 * i
            px[top + 80: top + 400, left: left + 300] = (30, 40, 120)
            px[top + 500: top + 900: 24, 80: width - 80] = (20, 20, 20)
    out = io.BytesIO()
    Image.fromarray(px).save(out, "PNG")
    return out.getvalue()


async def test_webcoder_reproduction_is_scored_over_the_whole_page():
    """f_det compares the app's long screenshot with the reference's: a copy of only the first
    screen (the rest blank), or a page that stops after it, is not a reproduction, where a
    first-screen comparison gave both full marks."""
    from aesenv.kinds.project.channels import ProjectEvidence
    from aesenv.kinds.project.census import Census, pixel_similarity
    from aesenv.kinds.project.channels import ProjectDetChannel
    from aesenv.render.models import Rendering, RenderStatus
    from aesenv.tasks import Task

    reference = _long_page([True, True, True, True])
    top_only, short = _long_page([True, False, False, False]), _long_page([True])
    assert pixel_similarity(reference, reference)["score"] == 1.0
    assert pixel_similarity(top_only, reference)["score"] < 0.75
    cut = pixel_similarity(short, reference)
    assert cut["score"] < 0.75 and cut["length"] == 0.25
    assert pixel_similarity(reference, short)["score"] < 0.75  # a page that runs on past the reference's end

    task = Task(id="r", kind="project", prompt="Reproduce it.", reference_html="<p>x</p>",
                project={"start": "reference"})

    async def f_det(page: bytes) -> float:
        shot = Rendering(status=RenderStatus.OK, full_page_png=page)
        evidence = ProjectEvidence(task, None, shot, census=Census(), reference_png=reference)
        return (await ProjectDetChannel().measure(evidence)).score

    assert await f_det(reference) == 1.0
    assert await f_det(top_only) == pixel_similarity(top_only, reference)["score"] < 0.75


async def test_a_reproduction_is_shown_and_compared_with_the_whole_reference_page(renderer):
    """The project kind's reference is the reference page's long screenshot (what the agent is
    shown and f_det compares with), not its first screen; the web kind keeps its canvas."""
    from types import SimpleNamespace

    from PIL import Image

    from aesenv.kinds.project.kind import PROJECT
    from aesenv.kinds.web.kind import WEB
    from aesenv.tasks import Task

    tall = "<body style='margin:0'>" + "".join(
        f"<section style='height:900px;background:hsl({40 * i},60%,70%)'><h2>Part {i}</h2></section>"
        for i in range(4)) + "</body>"
    task = Task(id="tall", kind="project", prompt="Reproduce it.", reference_html=tall,
                project={"start": "reference"})
    backends = SimpleNamespace(renderer=renderer)
    png, text = await PROJECT.reference(backends, task)
    assert Image.open(io.BytesIO(png)).height >= 3600 and "Part 3" in text
    first, _ = await WEB.reference(backends, task.model_copy(update={"kind": "web", "project": None}))
    assert Image.open(io.BytesIO(first)).height == renderer.config.viewport_height


def test_the_project_judge_is_shown_both_whole_pages():
    """The VLM judge sees the long screenshots whole, in parts of at most 2,400 px, top to bottom,
    where it used to see the top 2,400 px of the app."""
    import base64

    from PIL import Image

    from aesenv.kinds.project.census import Census
    from aesenv.kinds.project.judge import PART_HEIGHT, Sight, VlmProjectJudge
    from aesenv.render.models import Rendering, RenderStatus
    from aesenv.tasks import Task

    task = Task(id="r", kind="project", prompt="Reproduce it.", reference_html="<p>x</p>",
                project={"start": "reference"})
    app, reference = _long_page([True] * 6), _long_page([True] * 5)  # 5,760 and 4,800 px
    sight = Sight(task, Rendering(status=RenderStatus.OK, full_page_png=app), Census(), reference, "")
    content = VlmProjectJudge(client=None).messages(sight, "reproduction")[1]["content"]
    images = [Image.open(io.BytesIO(base64.b64decode(p["image_url"]["url"].split(",", 1)[1])))
              for p in content if p["type"] == "image_url"]
    assert PART_HEIGHT == 2400
    assert [i.height for i in images] == [2400, 2400, 2400, 2400, 960]  # the reference's 4,800 px, the app's 5,760
    said = [p["text"] for p in content if p["type"] == "text"]
    assert "The reference, in 2 parts from top to bottom:" in said and "The app, in 3 parts from top to bottom:" in said
