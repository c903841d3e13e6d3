"""Agents that produce model text for aesenv tasks."""

from policies.base import POLICIES, Policy, make_policy, register_policy
from policies.hf import HFPolicy
from policies.openai_chat import OpenAIChatPolicy
from policies.plot_template import PlotTemplatePolicy
from policies.repair import RepairPolicy
from policies.replay import ReplayPolicy
from policies.template import TemplatePolicy

__all__ = ["POLICIES", "HFPolicy", "OpenAIChatPolicy", "PlotTemplatePolicy", "Policy", "RepairPolicy", "ReplayPolicy",
           "TemplatePolicy", "make_policy", "register_policy"]
