"""`aesenv bench opendesign|pandasplotbench|compare`: schema, resume, refusal, server as policy and judge."""

import json
import re
from pathlib import Path

import pytest

from aesenv.channels import ChannelResult, ChannelStatus
from aesenv.cli import main as cli
from aesenv.rewards import RewardRecord
from benchmarks.stats import diff_ci, mean_ci
from support.aescoder_script import STATIC_JUDGE_MARK, scripted_aescoder

ROOT = Path(__file__).resolve().parents[1]
SLICE = ROOT / "benchmarks" / "data" / "opendesign_slice.jsonl"
PPB = ROOT / "benchmarks" / "data" / "pandasplotbench_sample.jsonl"
CATEGORIES = {"Website", "3D Design", "Game Dev", "UI Component", "Data Visualization"}

SUMMARY_KEYS = {"n", "n_total", "n_infra_error", "good_rate", "per_category", "static_total_mean", "alignment_mean",
                "aesthetics_mean", "structure_mean", "interactive_mean", "execution_pass_rate",
                "execution_failed_rules", "reward_mean", "failures", "channel_infra_errors", "judge_usage", "judge_variance", "wall_s", "policy", "judge",
                "mode", "provenance"}
BLOCK_KEYS = {"n", "static_total_mean", "alignment_mean", "aesthetics_mean", "structure_mean", "good_rate",
              "interactive_mean", "reward_mean"}


def bench(*args: str) -> int:
    return cli(["bench", *args, "--no-progress"] if args[0] != "compare" else ["bench", *args])


def summary_of(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def records_of(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


def check_schema(summary: dict, n: int) -> None:
    assert SUMMARY_KEYS <= summary.keys()
    assert summary["n_total"] == n and summary["n"] + summary["n_infra_error"] == n
    for block in summary["per_category"].values():
        assert BLOCK_KEYS <= block.keys()
    assert 0 <= summary["good_rate"] <= 1 and 0 < summary["static_total_mean"] <= 100
    parts = summary["alignment_mean"] + summary["aesthetics_mean"] + summary["structure_mean"]
    assert parts == pytest.approx(summary["static_total_mean"], abs=0.01)


def one_per_category(tmp_path: Path) -> Path:
    rows, seen = [], set()
    for line in SLICE.read_text().splitlines():
        row = json.loads(line)
        if row["category"] not in seen:
            seen.add(row["category"])
            rows.append(line)
    path = tmp_path / "five.jsonl"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_slice_is_twenty_prompts_four_per_category():
    rows = [json.loads(line) for line in SLICE.read_text().splitlines()]
    assert len(rows) == 20 and all(set(r) == {"id", "prompt", "category"} for r in rows)
    assert {c: sum(r["category"] == c for r in rows) for c in CATEGORIES} == dict.fromkeys(CATEGORIES, 4)


def test_bootstrap_intervals_are_seeded_and_cover_the_mean():
    values = [60.0, 72.0, 75.0, 81.0, 90.0, 64.0]
    first, again = mean_ci(values, seed=3), mean_ci(values, seed=3)
    assert first == again and first.low < first.mean < first.high and first.n == 6
    assert mean_ci([5.0]).low is None and mean_ci([]).mean is None
    better = [v + 10 for v in values]
    paired = diff_ci(values, better, paired=True)
    assert paired.mean == 10 and paired.low == paired.high == 10  # the same shift on every item: no noise
    unpaired = diff_ci(values, better, paired=False)
    assert unpaired.mean == 10 and unpaired.low < 10 < unpaired.high
    with pytest.raises(ValueError):
        diff_ci([1.0], [1.0, 2.0], paired=True)


@pytest.mark.slow
def test_opendesign_slice_with_template_and_offline_judges(tmp_path):
    out = tmp_path / "run"
    assert bench("opendesign", "--judge", "offline", "--prompts", str(SLICE), "--policy", "template", "--out", str(out)) == 0
    summary = summary_of(out)
    check_schema(summary, 20)
    assert summary["n_infra_error"] == 0 and summary["judge"] == "offline" and summary["judge_variance"] == {}
    assert set(summary["per_category"]) == CATEGORIES and all(b["n"] == 4 for b in summary["per_category"].values())
    assert summary["judge_usage"]["requests"] == 0  # the offline judges call no model
    means = summary["means"]
    assert means["all_cases"]["n"] == 20 and means["official"]["n_static"] <= 20 and summary["retried"] == []
    assert means["official"]["static_total_mean"] >= means["all_cases"]["static_total_mean"]  # exclusions only raise it
    rules = summary["execution_failed_rules"]  # pages failing each rule, most broken first
    assert list(rules.values()) == sorted(rules.values(), reverse=True) and all(0 < v <= 1 for v in rules.values())
    if summary["execution_pass_rate"] < 1:
        assert rules
    report = (out / "report.html").read_text()
    assert report.count("data:image/jpeg;base64,") == 20
    assert not re.search(r"""(src|href)=["']https?://""", report)


def test_resume_skips_finished_items_and_a_changed_config_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    assert bench("opendesign", "--judge", "offline", "--prompts", str(SLICE), "--limit", "2", "--out", str(out)) == 0
    first = records_of(out)
    assert bench("opendesign", "--judge", "offline", "--prompts", str(SLICE), "--limit", "3", "--out", str(out)) == 0
    after = records_of(out)
    assert after[:2] == first and len(after) == 3  # two skipped, one new
    assert summary_of(out)["n_total"] == 3
    capsys.readouterr()
    assert bench("opendesign", "--judge", "offline", "--prompts", str(SLICE), "--limit", "3", "--interactor", "offline",
                 "--out", str(out)) == 2
    assert "different pipeline" in capsys.readouterr().err
    edited = tmp_path / "edited.jsonl"
    edited.write_text(SLICE.read_text().replace("bicycle repair shop", "ice cream parlour"))
    assert bench("opendesign", "--judge", "offline", "--prompts", str(edited), "--limit", "3", "--out", str(out)) == 2
    assert "different prompts" in capsys.readouterr().err
    assert len(records_of(out)) == 3  # nothing mixed in


@pytest.mark.slow
def test_opendesign_with_the_test_server_as_policy_and_judge(tmp_path, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("AESENV_JUDGE_CACHE", str(tmp_path / "cache"))
    openai_server.default = scripted_aescoder
    out = tmp_path / "run"
    prompts = one_per_category(tmp_path)
    assert bench("opendesign", "--prompts", str(prompts), "--policy", "openai:test-model", "--judge",
                 "openai:test-model", "--judge-samples", "3", "--out", str(out)) == 0
    summary = summary_of(out)
    check_schema(summary, 5)
    assert summary["n_infra_error"] == 0 and set(summary["per_category"]) == CATEGORIES
    assert summary["static_total_mean"] == 73  # median of 72, 73, 74
    variance = summary["judge_variance"]
    assert variance["samples"] == 3 and len(variance["per_item"]) == 5
    assert variance["overall"]["mean"] == 73 and variance["mean_within_item_sd"] == 1
    assert summary["judge_usage"]["requests"] >= 5 and summary["judge_usage"]["prompt_tokens"] > 0
    assert summary["policy_usage_this_invocation"]["requests"] == 5
    policy_calls = [r for r in openai_server.completions if not r.messages[0]["role"] == "system"]
    assert len(policy_calls) == 5
    assert "judge samples" in (out / "report.html").read_text()
    judged = len(openai_server.completions)
    again = tmp_path / "again"  # a fresh run: the policy is asked again, the judge's answers come from its cache
    assert bench("opendesign", "--prompts", str(prompts), "--policy", "openai:test-model", "--judge",
                 "openai:test-model", "--judge-samples", "3", "--out", str(again)) == 0
    assert summary_of(again)["judge_usage"]["cache_hits"] >= 5 and summary_of(again)["static_total_mean"] == 73
    assert not [r for r in openai_server.completions[judged:] if STATIC_JUDGE_MARK in r.text]


@pytest.mark.slow
def test_opendesign_refine_mode_records_episodes(tmp_path):
    out = tmp_path / "run"
    assert bench("opendesign", "--judge", "offline", "--prompts", str(SLICE), "--limit", "1", "--mode", "refine", "--policy", "repair",
                 "--out", str(out)) == 0
    summary = summary_of(out)
    assert summary["mode"] == "refine" and summary["n"] == 1
    assert (out / "episodes" / "1" / "timeline.html").is_file()
    assert 'href="episodes/1/timeline.html"' in (out / "report.html").read_text()


def test_the_default_judge_is_a_vlm_and_needs_an_endpoint(tmp_path, capsys, monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AESENV_JUDGE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SystemExit) as refused:  # a usage error, as argparse reports one
        bench("opendesign", "--prompts", str(SLICE), "--limit", "1", "--out", str(tmp_path / "run"))
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "openai:Qwen/Qwen2.5-VL-7B-Instruct has no endpoint" in err and "OPENAI_BASE_URL" in err
    assert not (tmp_path / "run").exists()  # refused before anything was generated


def test_refine_mode_needs_an_agent(tmp_path, capsys):
    assert bench("opendesign", "--judge", "offline", "--prompts", str(SLICE), "--limit", "1", "--mode", "refine",
                 "--out", str(tmp_path / "run")) == 2
    assert "refine mode needs an agent" in capsys.readouterr().err


def broken_answers(tmp_path: Path) -> Path:
    """Official `model_answer` rows: one script that crashes, the rest draw nothing useful."""
    rows = [{"question_id": "ppb-1", "answer_id": "a1", "model_id": "m",
             "choices": [{"index": 0, "turns": [{"content": "```python\nraise SystemExit(1)\n```", "token_len": 3}]}]}]
    for i in (2, 3, 4):
        script = "import matplotlib.pyplot as plt\nplt.plot([0, 1], [0, 0])\nplt.savefig('out.png')\n"
        rows.append({"question_id": f"ppb-{i}", "choices": [{"index": 0, "turns": [{"content": script}]}]})
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return path


def test_pandasplotbench_and_compare(tmp_path, capsys):
    good, bad, data_dir = tmp_path / "good", tmp_path / "bad", tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "part-0.jsonl").write_text(PPB.read_text())
    assert bench("pandasplotbench", "--judge", "offline", "--data", str(PPB), "--out", str(good)) == 0
    assert bench("pandasplotbench", "--judge", "offline", "--data", str(data_dir), "--policy", f"replay:{broken_answers(tmp_path)}",
                 "--out", str(bad)) in (0, 3)
    g, b = summary_of(good), summary_of(bad)
    for s in (g, b):
        assert {"error_rate", "judge_score_mean", "good_rate", "per_category", "n"} <= s.keys()
    assert g["error_rate"] == 0 and g["n"] == 4 and 0 < g["judge_score_mean"] <= 100
    assert b["error_rate"] >= 0.25 and b["judge_score_mean"] < g["judge_score_mean"]
    report = (good / "report.html").read_text()
    assert report.count("ground truth<img") == 4
    capsys.readouterr()
    assert bench("compare", str(good), str(bad), "--out", str(tmp_path / "cmp.json")) == 0
    printed = capsys.readouterr().out
    result = json.loads((tmp_path / "cmp.json").read_text())
    assert result["paired"] and result["n_shared"] == 4 and "overall" in printed
    delta = result["metrics"]["static_total"]["overall"]["delta"]
    assert delta["mean"] == pytest.approx(b["judge_score_mean"] - g["judge_score_mean"], abs=0.01)
    assert delta["low"] <= delta["mean"] <= delta["high"] < 0
    assert bench("compare", str(good), str(bad), "--out", str(tmp_path / "again.json")) == 0
    assert json.loads((tmp_path / "again.json").read_text()) == result  # seeded


def _record(task_id: str, static: float | None, interactive: float | None) -> RewardRecord:
    channels = {"static": ChannelResult(status=ChannelStatus.OK, score=static / 100, raw=static) if static is not None
                else ChannelResult.infra_error("judge down"),
                "interactive": ChannelResult(status=ChannelStatus.OK, score=interactive / 3, raw=interactive)
                if interactive is not None else ChannelResult.not_applicable("a chart")}
    return RewardRecord(task_id=task_id, category="Website", status="ok" if static is not None else "infra_error",
                        reward=None, normalized=None, channels=channels,
                        artifact={"kind": "html", "sha256": "0", "bytes": 1})


def test_opendesign_means_two_ways_and_one_retry_of_our_failures(tmp_path):
    from benchmarks.opendesign import drop_infra_records, opendesign_means

    records = [_record("a", 80.0, 2.0), _record("b", 0.0, 1.0), _record("c", 70.0, None), _record("d", None, None)]
    means = opendesign_means(records)
    assert means["all_cases"]["static_total_mean"] == 37.5  # (80 + 0 + 70 + 0) / 4
    assert means["all_cases"]["good_rate"] == 0.25 and means["all_cases"]["counted_as_zero"] == ["d"]
    assert means["official"]["static_total_mean"] == 75.0 and means["official"]["n_static"] == 2  # no 0, no failure
    assert means["official"]["good_rate"] == 0.5
    assert means["all_cases"]["interactive_mean"] == means["official"]["interactive_mean"] == 0.75  # (2+1+0+0)/4

    (tmp_path / "records.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
    assert drop_infra_records(tmp_path) == ["d"]
    kept = [RewardRecord.model_validate_json(line).task_id for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert kept == ["a", "b", "c"] and drop_infra_records(tmp_path) == []
