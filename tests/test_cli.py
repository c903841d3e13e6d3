import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from aesenv.cli import main

GOOD = Path(__file__).parent / "data" / "good_page.html"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aesenv.cli", *args], capture_output=True, text=True, timeout=180)


def test_doctor_reports_required_tools():
    out = run_cli("doctor", "--json")
    report = json.loads(out.stdout)
    assert out.returncode == 0, out.stdout
    assert report["checks"]["chromium"]["ok"] and report["checks"]["htmlhint"]["ok"]
    assert "docker" in report["checks"]


def test_render_writes_the_viewport_or_the_full_page_at_the_asked_size(tmp_path):
    """The PNG is the page at the asked width: the viewport's height, or with --full-page the
    document's whole height as the JSON summary reports it (the sample page is taller than a screen)."""
    shot, full = tmp_path / "shot.png", tmp_path / "full.png"
    out = run_cli("render", str(GOOD), "-o", str(shot), "--width", "1000", "--height", "700")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"wrote {shot} (ok, ")
    assert Image.open(shot).size == (1000, 700)
    out = run_cli("render", str(GOOD), "-o", str(full), "--full-page", "--width", "1000", "--height", "700", "--json")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["status"] == "ok" and summary["page_height"] > 700
    assert Image.open(full).size == (1000, round(summary["page_height"]))


def test_score_json_is_the_record_contract(tmp_path):
    out = run_cli("score", str(GOOD), "--prompt", "A landing page for a coffee roastery with a shop and a subscription plan",
                  "--category", "Website", "--json")
    assert out.returncode == 0, out.stderr
    record = json.loads(out.stdout)
    channels = record["channels"]
    assert set(channels) == {"execution", "static", "interactive"}
    assert record["status"] == "ok" and record["category"] == "Website"
    # the sample page passes the lint; the reward is AesCoder's Eq. 1 over the channels' raw scores
    assert channels["execution"]["status"] == "ok" and channels["execution"]["raw"] == 1.0
    assert channels["static"]["status"] == "ok" and 0 < channels["static"]["raw"] <= 100
    assert channels["static"]["payload"]["judge"] == "offline-design"
    assert record["reward"] == pytest.approx(0.1 * channels["execution"]["raw"] + 0.8 * channels["static"]["raw"]
                                             + 0.1 * channels["interactive"]["raw"])


def test_score_with_a_task_file(tmp_path):
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"id": "roastery", "kind": "web", "category": "website",
                                "prompt": "A landing page for a coffee roastery."}))
    out = run_cli("score", str(GOOD), "--task", str(task), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["task_id"] == "roastery"


def test_unknown_category_is_a_clear_error(capsys):
    assert main(["score", str(GOOD), "--prompt", "x", "--category", "Spaceship"]) == 2
    assert "unknown category" in capsys.readouterr().err


def test_missing_file_is_a_clear_error():
    with pytest.raises(SystemExit, match="no such file"):
        main(["score", "/nonexistent.html", "--prompt", "x"])


def test_serve_judge_prints_the_vllm_command_and_where_to_point_aesenv(capsys):
    assert main(["serve-judge", "--model", "Qwen/Qwen2.5-VL-72B-Instruct", "--tensor-parallel-size", "4",
                 "--port", "8100"]) == 0
    out = capsys.readouterr().out
    command = next(line for line in out.splitlines() if line.startswith("vllm serve "))
    args = command.split()
    assert args[2] == "Qwen/Qwen2.5-VL-72B-Instruct"
    assert args[args.index("--tensor-parallel-size") + 1] == "4" and args[args.index("--port") + 1] == "8100"
    assert "export OPENAI_BASE_URL=http://<this-host>:8100/v1" in out
    assert "--judge openai:Qwen/Qwen2.5-VL-72B-Instruct" in out


def test_serve_judge_exec_without_vllm_is_a_clear_error(capsys, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert main(["serve-judge", "--exec"]) == 2
    assert "no `vllm` on PATH" in capsys.readouterr().err
