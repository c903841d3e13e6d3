"""A delivered project's Webdev-Bench scores in one call: what the forgery corpus compares between
a forged workspace and its honest twin (`benchmarks/forgeries/`, cases with `{"webdev": id}`).

`webdev_launch` is the launch check (1.0 when the start script serves the app our build made and
it renders, else 0.0), `webdev_acceptance` the weighted four-grade score of terminal acceptance on
that delivery; both None, with `infra` saying why, when our side failed.
"""

from __future__ import annotations

from dataclasses import dataclass

from aesenv.kinds.base import Backends
from aesenv.kinds.project.kind import PROJECT
from aesenv.webdev.acceptance import accept
from aesenv.kinds.project.health import Delivery, deliver
from aesenv.webdev.metrics import task_metrics
from aesenv.webdev.session import project_task
from aesenv.webdev.tasks import CompositeTask


@dataclass
class DeliveryScores:
    scores: dict[str, float | None]
    delivery: Delivery
    infra: str = ""


def starting_files(task: CompositeTask) -> dict[str, bytes]:
    """The workspace a session on `task` starts from (the scaffold with the task's files)."""
    return PROJECT.initial_files(project_task(task))


async def delivery_scores(backends: Backends, task: CompositeTask, files: dict[str, bytes]) -> DeliveryScores:
    """Deliver `files` (health check, served page) and grade every item of `task` on it."""
    delivery = await deliver(backends, files, task.port)
    if delivery.infra:
        return DeliveryScores({"webdev_launch": None, "webdev_acceptance": None}, delivery, delivery.infra)
    grades = await accept(backends, task, delivery)
    weighted = task_metrics(grades, delivery.launched)["weighted"]
    return DeliveryScores({"webdev_launch": float(delivery.launched), "webdev_acceptance": weighted}, delivery)
