"""`aesenv bench aescode`: AesCode's reported scores (§3.4) over three rollouts per prompt, render
failures in the denominator, our infrastructure failures left out and counted."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from aesenv.channels import ChannelResult, ChannelStatus
from aesenv.rewards import RewardRecord
from benchmarks import aescode

ROOT = Path(__file__).resolve().parents[1]


def ok(score: float, **payload) -> ChannelResult:
    return ChannelResult(status=ChannelStatus.OK if score == 1 else ChannelStatus.FAILED, score=score, raw=score,
                         payload=payload)


def record(task_id: str, status: str = "ok", **channels: ChannelResult) -> RewardRecord:
    return RewardRecord(task_id=task_id, category="Website", status=status, reward=None, normalized=None,
                        channels=channels, artifact={"kind": "html", "sha256": "0", "bytes": 1})


def scored(task_id: str, text: float, boundary: float, dims: tuple[float, float, float]) -> RewardRecord:
    content, layout, style = dims
    return record(task_id, renderable=ok(1.0), text=ok(text), boundary=ok(boundary),
                  table_chart=ChannelResult.not_applicable("no table or chart"), vgr=ok(1.0),
                  checklist=ok(0.5, dimensions={"content": content, "layout": layout, "style": style}))


def test_three_rollouts_are_averaged_with_render_failures_in_the_denominator():
    failed_render = ChannelResult(status=ChannelStatus.FAILED, score=0.0, raw=0.0)
    records = [
        scored("a#1", 1.0, 1.0, (1.0, 1.0, 1.0)),        # rule 1.0, visual 1.0
        scored("a#2", 0.5, 1.0, (0.0, 0.5, 1.0)),        # rule 0.75, visual 0.5
        record("a#3", renderable=failed_render, text=ok(0.0), checklist=ok(0.0)),  # did not render: 0, 0
        scored("b#1", 0.0, 1.0, (1.0, 0.0, 0.5)),        # rule 0.5, visual 0.5
        scored("b#2", 1.0, 0.0, (0.5, 0.5, 0.5)),        # rule 0.5, visual 0.5
        record("b#3", status="infra_error"),             # ours: left out, counted
    ]
    report = aescode.aescode_metrics(records)
    a = {"rule": round((1.0 + 0.75 + 0) / 3, 4), "visual": 0.5, "overall": round((1.0 + 0.625 + 0) / 3, 4)}
    b = {"rule": 0.5, "visual": 0.5, "overall": 0.5}
    assert report["per_prompt"] == {"a": {**a, "rollouts": 3}, "b": {**b, "rollouts": 2}}
    assert report["rule"] == pytest.approx((a["rule"] + b["rule"]) / 2, abs=1e-4)
    assert report["overall"] == pytest.approx((a["overall"] + b["overall"]) / 2, abs=1e-4)
    assert report["visual"] == 0.5
    assert report["execution"] == 0.8 and report["render_failures"] == 1 and report["infra_excluded"] == 1
    assert report["prompts"] == 2 and report["rollouts"] == 3


def test_the_runner_is_an_aesenv_bench_entry_point():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["aesenv.benchmarks"]
    assert declared["aescode"] == "benchmarks.aescode:main"
    assert aescode.ROLLOUTS == 3 and aescode.build_parser().parse_args(["--out", "x"]).rollouts == 3
    assert aescode.CHANNELS == ["renderable", "text", "boundary", "table_chart", "checklist"]  # no VGR


def test_bench_aescode_scores_each_prompt_three_times_with_the_checklist_as_visual(openai_server, tmp_path,
                                                                                   monkeypatch):
    """End to end: the template policy on two AesCode tasks, three rollouts each, the checklist
    answered by a VLM endpoint that says "cannot tell" to every question (Visual 0)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-aescode-bench-000000")

    def cannot_tell(request) -> dict:
        questions = re.findall(r"^(\d+)\. ", request.text, re.M)
        return {"answers": [{"id": int(i), "answer": "cannot_tell", "evidence": ""} for i in questions]}

    openai_server.default = cannot_tell
    out = tmp_path / "run"
    assert aescode.main(["--tasks", "builtin:aescode", "--limit", "2", "--policy", "template",
                         "--judge", "openai:test-model", "--judge-base-url", openai_server.url,
                         "--no-progress", "--out", str(out)]) == 0
    records = [RewardRecord.model_validate_json(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert sorted(r.task_id.rsplit("#", 1)[1] for r in records) == ["1", "1", "2", "2", "3", "3"]
    assert all("vgr" not in r.channels and r.channels["checklist"].counts for r in records)
    report = json.loads((out / "summary.json").read_text())["aescode"]
    assert report["prompts"] == 2 and report["rollouts"] == 3 and report["infra_excluded"] == 0
    assert report["visual"] == 0.0
    by_hand = {}
    for r in records:
        by_hand.setdefault(r.task_id.rsplit("#", 1)[0], []).append(aescode.rollout_scores(r)["rule"])
    expected = round(sum(sum(v) / len(v) for v in by_hand.values()) / len(by_hand), 4)
    assert report["rule"] == pytest.approx(expected, abs=1e-4) and report["rule"] > 0
