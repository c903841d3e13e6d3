"""`aesenv run`: a refine episode from the command line, driven by the scripted OpenAI-compatible
server through the environment variables a user would set, recorded with its timeline."""

from __future__ import annotations

import json

import pytest

from aesenv.cli import main
from support.openai_server import tool_calls
from test_refine import BUGGY, TASK


@pytest.mark.slow
def test_run_records_an_openai_episode(openai_server, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    openai_server.script(
        tool_calls(("write_file", {"path": "index.html", "content": BUGGY})),
        tool_calls(("render", {})),
        tool_calls(("edit_file", {"path": "index.html", "old": "documnet", "new": "document"}), ("render", {})),
        tool_calls(("submit", {})),
    )
    task_file = tmp_path / "task.json"
    task_file.write_text(TASK.model_dump_json())
    out = tmp_path / "run"
    code = main(["run", "--env", "AesWebRefine-v0", "--policy", "openai:test-model", "--task", str(task_file),
                 "--out", str(out), "--max-turns", "6"])
    assert code == 0, capsys.readouterr()
    stored = json.loads((out / "trajectory.json").read_text())
    assert stored["end"] == "submit" and stored["reward"] > 0 and stored["usage"]["requests"] == 4
    assert [r["name"] for s in stored["steps"] for r in s["tool_results"]] == [
        "write_file", "render", "edit_file", "render", "submit"]
    assert "documnet is not defined" in (out / "timeline.html").read_text()
    assert "ended by submit" in capsys.readouterr().out


def test_run_refuses_single_turn_policies(tmp_path, capsys):
    assert main(["run", "--policy", "template", "--out", str(tmp_path)]) == 2
    assert "refine episodes need an agent" in capsys.readouterr().err
