"""Interaction agents: label a live page, act on it, and score whether it responded."""

from aesenv.interact.explorer import OfflineExplorer
from aesenv.interact.labeling import draw_marks, label
from aesenv.interact.models import Action, InteractionReport, Labeling, Mark, MarkKind, Step, Verdict

__all__ = ["Action", "InteractionReport", "Labeling", "Mark", "MarkKind", "OfflineExplorer", "Step", "Verdict",
           "draw_marks", "label"]
