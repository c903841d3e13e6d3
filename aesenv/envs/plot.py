"""`AesPlot-v0`: single-turn plot generation. One step: the answer's Python script runs in the
sandbox (`sandbox="local"` by default, or `"docker"`) next to the task's data files, and its
figures are scored by the plot channels (execution ±1, static 0–100).

Observation: the plot description (with any style request), the data file names and their first
rows. `render()` shows the first figure the script drew that has a picture (plotly figures have
one only when the plot judge needed it; see `RewardPipeline._score_plot`).
"""

from __future__ import annotations

from aesenv.envs.base import AesEnv, AsyncAesEnv
from aesenv.plots.prompt import data_preview
from aesenv.rewards import Scored
from aesenv.tasks import Task

BLANK_FIGURE = (480, 640)  # matplotlib's default figure at 100 dpi


class AsyncAesPlotEnv(AsyncAesEnv):
    env_id = "AesPlot-v0"
    kind = "plot"
    default_tasks = "builtin:plot"

    def observe(self, task: Task) -> dict[str, str]:
        preview = data_preview(task)
        return {"prompt": task.prompt, "category": task.category.value, "data_files": "\n".join(preview),
                "data_preview": "\n\n".join(f"{name}:\n{head}" for name, head in preview.items())}


class AesPlotEnv(AesEnv):
    core_class = AsyncAesPlotEnv
    observation_lengths = {"prompt": 100_000, "category": 64, "data_files": 10_000, "data_preview": 100_000}

    def frame(self, last: Scored | None) -> tuple[bytes | None, tuple[int, int]]:
        figures = [f for f in (last.plot.figures if last and last.plot else []) if f.png]
        return (figures[0].png if figures else None), BLANK_FIGURE
