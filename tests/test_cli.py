import json
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_render_writes_png(tmp_path):
    shot = tmp_path / "shot.png"
    out = run_cli("render", str(GOOD), "-o", str(shot), "--full-page")
    assert out.returncode == 0, out.stderr
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_score_json_is_the_record_contract(tmp_path):
    out = run_cli("score", str(GOOD), "--prompt", "A landing page for a coffee roastery with a shop and a subscription plan",
                  "--category", "Website", "--json")
    assert out.returncode == 0, out.stderr
    record = json.loads(out.stdout)
    assert isinstance(record["reward"], float) and isinstance(record["normalized"], float)
    assert set(record["channels"]) == {"execution", "static", "interactive"}
    assert record["channels"]["execution"]["raw"] in (-1.0, 1.0)


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
