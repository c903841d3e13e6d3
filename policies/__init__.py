"""Agents that produce model text for aesenv tasks."""

from policies.base import POLICIES, Policy, make_policy, register_policy
from policies.plot_template import PlotTemplatePolicy
from policies.replay import ReplayPolicy
from policies.template import TemplatePolicy

__all__ = ["POLICIES", "PlotTemplatePolicy", "Policy", "ReplayPolicy", "TemplatePolicy", "make_policy",
           "register_policy"]
