"""AesPlot-v0 end to end: tasks, the plot channels on real sandbox runs, infra failures masked,
the same episode on both sandbox backends, and the VLM plot judge over the scripted server."""

from __future__ import annotations

import base64
import io
import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from PIL import Image

import aesenv  # noqa: F401 - registers the envs
from aesenv.envs import make_core
from aesenv.artifact import extract_artifact
from aesenv.kinds.plot.figures import draw_figures
from aesenv.kinds.plot.vlm import COMPARE_PROMPT, RUBRIC_PROMPT, openai_plot_judge
from aesenv.render import RenderConfig, Renderer
from aesenv.rewards import ChannelStatus, PipelineConfig, RewardPipeline, RewardRecord
from aesenv.kinds.plot.channels import PlotEvidence
from aesenv.kinds.plot.channels import PlotExecutionChannel
from aesenv.sandbox import Figure, PlotRun, RunStatus, make_sandbox
from aesenv.tasks import TaskLoadError, load_tasks
from policies.plot_template import write_script

TASKS = {t.id: t for t in load_tasks("builtin:plot")}
LINE = TASKS["plot-line-city-temperatures"]


def answer(code: str) -> str:
    return f"```python\n{code}\n```"


def png(colour=(30, 90, 160), size=(64, 48)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, colour).save(buf, "PNG")
    return buf.getvalue()


# ---------------------------------------------------------------------------------------- tasks


def test_builtin_plot_suite_covers_the_categories():
    tasks = list(TASKS.values())
    assert len(tasks) >= 15
    assert all(t.kind == "plot" and "data.csv" in t.data_files for t in tasks)
    words = " ".join(t.prompt.lower() for t in tasks)
    for kind in ("line", "bar", "scatter", "histogram", "heatmap", "box", "pie", "subplots", "time series",
                 "seaborn", "plotly"):
        assert kind in words, kind


def test_pandasplotbench_rows_become_plot_tasks(tmp_path):
    gt = base64.b64encode(png()).decode()
    rows = [{"id": 7, "code_data": "import pandas as pd\ndf = pd.read_csv('data.csv')", "data_csv": "a,b\n1,2\n",
             "task__plot_description": "Plot b against a.", "task__plot_style": "Use a red line.",
             "plots_gt": [gt, "ignored"]},
            {"id": 8, "data_csv": "x\n1\n", "task__plot_description": "Histogram of x."}]
    path = tmp_path / "ppb.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    first, second = load_tasks(f"pandasplotbench:{path}")
    assert first.id == "ppb-7" and first.kind == "plot" and first.source == "pandasplotbench"
    assert first.data_files == {"data.csv": "a,b\n1,2\n"} and first.reference_image == gt
    assert "Plot b against a." in first.prompt and "Style: Use a red line." in first.prompt
    assert "pd.read_csv('data.csv')" in first.prompt
    assert second.reference_image is None and "Style" not in second.prompt
    assert [t.id for t in load_tasks(str(path))] == ["ppb-7", "ppb-8"]  # sniffed
    path.write_text(json.dumps({"id": 1, "data_csv": "a\n1\n"}))
    with pytest.raises(TaskLoadError, match="task__plot_description"):
        load_tasks(f"pandasplotbench:{path}")


def test_plot_env_refuses_web_tasks():
    with pytest.raises(ValueError, match="takes plot tasks"):
        make_core("AesPlot-v0", "builtin:web", pipeline=object())


# ------------------------------------------------------------------------------------ channels


async def test_figures_without_an_allowed_library_fail_execution():
    run = PlotRun(status=RunStatus.OK, imported=["numpy", "PIL"],
                  figures=[Figure(name="figure-1.png", kind="matplotlib", png=png())])
    artifact = extract_artifact(answer("import numpy"))
    result = await PlotExecutionChannel().score(PlotEvidence(LINE, artifact, run=run))
    assert result.status is ChannelStatus.FAILED and result.raw == -1.0
    assert "no allowed plotting library" in result.payload["reason"]


class BrokenSandbox:
    """A backend whose own side fails, as a dead worker pool would report it."""

    name = "broken"

    async def run_plot(self, code, files, limits=None):
        return PlotRun.infra_error("worker lost (WorkerLost) after 0.1 s", backend=self.name)

    async def close(self):
        pass


async def test_crashing_script_is_a_failed_execution_not_an_infra_error(plot_pipeline):
    scored = await plot_pipeline.score(LINE, answer("import matplotlib.pyplot as plt\nplt.plot([1, 2])\n"
                                                    "raise KeyError('no such column: temp')"))
    record = scored.record
    assert record.status == "ok" and record.reward is not None and record.reward < 0
    execution, static = record.channels["execution"], record.channels["static"]
    assert execution.status is ChannelStatus.FAILED and execution.raw == -1.0
    assert static.status is ChannelStatus.FAILED and static.raw == 0.0
    assert "KeyError" in record.failure and "no such column" in execution.payload["traceback"]


async def test_script_that_draws_nothing_fails_both_channels(plot_pipeline):
    record = (await plot_pipeline.score(LINE, answer("import matplotlib.pyplot as plt\nprint('done')"))).record
    assert record.channels["execution"].raw == -1.0 and "no figure" in record.failure
    assert record.channels["static"].status is ChannelStatus.FAILED


async def test_sandbox_infra_failure_is_masked(renderer):
    pipeline = RewardPipeline(renderer=renderer, sandbox=BrokenSandbox())
    record = (await pipeline.score(LINE, answer(write_script(LINE)))).record
    await pipeline.close_parts()
    assert record.status == "infra_error" and record.reward is None and record.normalized is None
    assert all(c.status is ChannelStatus.INFRA_ERROR and c.score is None for c in record.channels.values())
    assert record.failure == ""


async def test_a_sandbox_that_cannot_start_is_an_infra_error(renderer):
    pipeline = RewardPipeline(renderer=renderer, sandbox=make_sandbox("local", python="/nonexistent/python3"))
    record = (await pipeline.score(LINE, answer(write_script(LINE)))).record
    await pipeline.sandbox.close()
    await pipeline.close_parts()
    assert record.status == "infra_error" and record.reward is None
    assert "sandbox" in record.channels["execution"].payload["reason"]


async def test_prose_answer_fails_without_running(plot_pipeline):
    scored = await plot_pipeline.score(LINE, "I would draw a line chart of the temperatures.")
    assert scored.plot is None and scored.record.channels["execution"].raw == -1.0
    assert scored.record.failure.startswith("unsupported")


async def test_plotly_figure_is_judged_from_what_plotly_draws(plot_pipeline):
    """Formerly judged from its JSON (whose claims the script writes): now from plotly.js's drawing."""
    task = TASKS["plot-plotly-bar-population"]
    scored = await plot_pipeline.score(task, answer(write_script(task)))
    figure = scored.plot.figures[0]
    assert figure.kind == "plotly" and figure.png is not None, figure.meta
    static = scored.record.channels["static"]
    assert static.status is ChannelStatus.OK, static.payload
    assert static.payload["evidence"]["alignment"]["chart_kind"]["found"] == ["bar"]
    assert static.payload["evidence"]["geometry_measured"] == [True]


@pytest.mark.slow
async def test_plotly_figure_is_drawn_by_chromium():
    import plotly.express as px

    fig = px.bar(x=["Asia", "Europe"], y=[4753, 742], title="Population")
    run = PlotRun(status=RunStatus.OK, figures=[Figure(name="plotly-1.json", kind="plotly", plotly_json=fig.to_json())])
    async with Renderer(RenderConfig()) as renderer:  # default deadlines: plotly.js takes seconds to load
        drawn = await draw_figures(run, renderer)
    figure = drawn.figures[0]
    assert figure.png is not None, figure.meta
    image = np.asarray(Image.open(io.BytesIO(figure.png)).convert("RGB"))
    assert image.shape[:2] == (450, 700) and image.std() > 5
    assert [t["text"] for t in figure.meta["texts"] if t["role"] in ("title", "suptitle")] == ["Population"]
    assert figure.meta["axes"][0]["artists"].get("Rectangle") == 2


@pytest.mark.slow
async def test_template_policy_answers_every_builtin_task(plot_pipeline):
    for task in TASKS.values():
        record = (await plot_pipeline.score(task, answer(write_script(task)))).record
        assert record.channels["execution"].raw == 1.0, (task.id, record.channels["execution"].payload)
        assert record.channels["static"].raw >= 70, (task.id, record.channels["static"].payload["rationale"])


# ------------------------------------------------------------------------- env, both backends


def docker_unavailable() -> str:
    from aesenv.sandbox.docker import engine_problem

    return engine_problem()


@pytest.fixture(params=["local", "docker"])
def backend(request):
    if request.param == "docker" and (problem := docker_unavailable()):
        pytest.skip(f"docker sandbox unavailable: {problem}")
    return request.param


@pytest.mark.slow
def test_aesplot_episode_on_each_backend(backend):
    env = gym.make("AesPlot-v0", sandbox=backend, render_mode="rgb_array")
    try:
        obs, info = env.reset(options={"task": LINE.id})
        assert obs["prompt"] == LINE.prompt and obs["data_files"] == "data.csv"
        assert obs["data_preview"].startswith("data.csv:\nmonth,Oslo,Madrid,Cairo")
        obs, reward, terminated, truncated, info = env.step(answer(write_script(LINE)))
        record = RewardRecord.model_validate(info["record"])
        assert terminated and not truncated and info["reward_valid"]
        assert record.provenance["sandbox"] == backend
        assert record.channels["execution"].payload["backend"] == backend
        assert reward == pytest.approx(record.reward) and record.channels["static"].raw > 60
        frame = env.render()
        assert frame.dtype == np.uint8 and frame.shape[2] == 3 and frame.std() > 5
    finally:
        env.close()


@pytest.mark.slow
def test_aesplot_passes_the_gymnasium_checker():
    env = gym.make("AesPlot-v0", render_mode="rgb_array")
    try:
        check_env(env.unwrapped, skip_render_check=False)
    finally:
        env.close()


def test_sandbox_keyword_is_accepted_and_recorded_by_the_web_env():
    env = gym.make("AesWeb-v0", sandbox="docker")
    try:
        assert env.unwrapped._core.pipeline.config.sandbox == "docker"
        assert env.unwrapped._core.pipeline.provenance("plot")["sandbox"] == "docker"
    finally:
        env.close()


# ------------------------------------------------------------------------------ VLM plot judge


def _vlm_answer(alignment=30.0, aesthetics=20.0, structure=22.0):
    return {"alignment": alignment, "aesthetics": aesthetics, "structure": structure,
            "total": alignment + aesthetics + structure, "rationale": "same bars, labels readable"}


async def test_vlm_plot_judge_compares_against_the_reference(openai_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-plot-test-key-0123456789")
    judge = openai_plot_judge("test-model", base_url=openai_server.url, cache_dir=tmp_path, backoff_s=0.01)
    reference = base64.b64encode(png((200, 30, 30))).decode()
    task = LINE.model_copy(update={"reference_image": reference})
    figures = [Figure(name="figure-1.png", kind="matplotlib", png=png())]
    openai_server.script(_vlm_answer(), _vlm_answer(20, 15, 10))
    compared = await judge.judge(task, figures)
    graded = await judge.judge(LINE, figures)
    await judge.close()
    first, second = openai_server.requests
    assert first.messages[0]["content"] == COMPARE_PROMPT and len(first.images) == 2
    assert first.images[0] == png((200, 30, 30))
    assert second.messages[0]["content"] == RUBRIC_PROMPT and len(second.images) == 1
    assert compared.total == 72 and compared.evidence["images"]["mode"] == "compare"
    assert graded.total == 45


async def test_vlm_plot_judge_failure_masks_the_static_channel(openai_server, tmp_path, monkeypatch, renderer):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-plot-test-key-0123456789")
    openai_server.default = lambda req: "not json"
    config = PipelineConfig(judge="openai:test-model", judge_options={
        "base_url": openai_server.url, "cache_dir": str(tmp_path), "retries": 1, "backoff_s": 0.01})
    pipeline = RewardPipeline(config, renderer=renderer)
    record = (await pipeline.score(LINE, answer(write_script(LINE)))).record
    await pipeline.sandbox.close()
    await pipeline.close_parts()
    await pipeline.judge("plot").close()
    assert record.channels["execution"].raw == 1.0
    assert record.channels["static"].status is ChannelStatus.INFRA_ERROR
    assert record.status == "infra_error" and record.reward is None


async def test_plot_record_is_a_function_of_the_answer(plot_pipeline):
    from aesenv.envs.base import deterministic_view

    text = answer(write_script(LINE))
    first, second = [deterministic_view((await plot_pipeline.score(LINE, text)).record) for _ in range(2)]
    assert first == second


async def test_a_script_that_never_ends_is_a_failed_execution(renderer):
    from aesenv.sandbox import SandboxLimits

    sandbox = make_sandbox("local", workers=1, limits=SandboxLimits(timeout_s=2))
    pipeline = RewardPipeline(renderer=renderer, sandbox=sandbox)
    record = (await pipeline.score(LINE, answer("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nwhile True:\n"
                                                "    pass"))).record
    await sandbox.close()
    await pipeline.close_parts()
    assert record.status == "ok" and record.channels["execution"].raw == -1.0
    assert record.failure.startswith("timeout")
