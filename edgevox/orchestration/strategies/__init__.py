"""Orchestration strategies: several agents answering as one, one module per strategy.

* :class:`Pipeline` (``pipeline.py``), :class:`Swarm` (``swarm.py``),
  :class:`Supervisor` (``supervisor.py``), the review :class:`Loop` (``loop.py``), all
  :class:`Orchestration` subclasses (``base.py``).
"""

from __future__ import annotations

from edgevox.agents.base import CONTEXT_PREFIX
from edgevox.orchestration.strategies.base import Orchestration, check_agents
from edgevox.orchestration.strategies.loop import APPROVED, Loop
from edgevox.orchestration.strategies.pipeline import Pipeline
from edgevox.orchestration.strategies.supervisor import Supervisor
from edgevox.orchestration.strategies.swarm import Swarm

__all__ = [
    "APPROVED",
    "CONTEXT_PREFIX",
    "Loop",
    "Orchestration",
    "Pipeline",
    "Supervisor",
    "Swarm",
    "check_agents",
]
