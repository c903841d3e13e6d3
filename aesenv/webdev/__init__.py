"""Webdev-Bench (WebCoder, App. B.2) on the project environment: composite tasks whose
requirements are revealed round by round (`tasks`), the mechanical health check and the page a
round delivers (`health`), the simulated user's gate (`gate`), terminal acceptance on the hidden
checklist (`acceptance`), the published metrics (`metrics`) and one task's session (`session`).
The runner is `aesenv bench webdev` (`benchmarks/webdev.py`)."""

from aesenv.webdev.acceptance import ItemGrade, accept
from aesenv.webdev.gate import USERS, Verdict, make_user
from aesenv.webdev.metrics import suite_metrics, task_metrics
from aesenv.webdev.session import RoundRecord, TaskRun, WebdevRecord, run_task
from aesenv.webdev.tasks import ChecklistItem, CompositeTask, Expect, Requirement, Step, load_suite, load_task

__all__ = ["USERS", "ChecklistItem", "CompositeTask", "Expect", "ItemGrade", "Requirement", "RoundRecord", "Step",
           "TaskRun", "Verdict", "WebdevRecord", "accept", "load_suite", "load_task", "make_user", "run_task",
           "suite_metrics", "task_metrics"]
