"""What a model sees of a plot task: the description, the data files and their first rows.

The env's observation carries the same preview, and chat policies send `plot_request(task)`,
so a model always knows the file names and columns its script will find in its workspace.
"""

from __future__ import annotations

from aesenv.tasks import Task

PREVIEW_ROWS = 5
PREVIEW_CHARS = 2000


def data_preview(task: Task, rows: int = PREVIEW_ROWS) -> dict[str, str]:
    """Header and first `rows` lines of each data file (capped), by file name."""
    return {name: "\n".join(text.splitlines()[: rows + 1])[:PREVIEW_CHARS] for name, text in task.data_files.items()}


def plot_request(task: Task) -> str:
    parts = [task.prompt.strip()]
    for name, head in data_preview(task).items():
        parts.append(f"The file `{name}` is in the working directory. Its first lines:\n```\n{head}\n```")
    parts.append("Answer with one complete Python script in a ```python block. It runs on its own with "
                 "matplotlib, seaborn, plotly and pandas available and no network; the figures it leaves "
                 "open (or shows) are the answer.")
    return "\n\n".join(parts)
