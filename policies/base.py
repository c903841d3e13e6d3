"""The policy contract and registry are the library's (`aesenv.policy`); policies here register
into it and are found by the `aesenv.policies` entry points."""

from aesenv.policy import POLICIES, Agent, Policy, PolicyFactory, make_policy, register_policy

__all__ = ["POLICIES", "Agent", "Policy", "PolicyFactory", "make_policy", "register_policy"]
