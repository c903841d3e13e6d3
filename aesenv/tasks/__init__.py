"""Tasks and their loaders."""

from aesenv.tasks.loaders import LOADERS, TaskLoadError, load_tasks, register_loader
from aesenv.tasks.model import Canvas, Category, ChartData, ChecklistItem, TableData, Task, TextExact

__all__ = ["LOADERS", "Canvas", "Category", "ChartData", "ChecklistItem", "TableData", "Task", "TaskLoadError",
           "TextExact", "load_tasks", "register_loader"]
