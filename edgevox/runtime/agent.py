"""The structural check the runtime makes on an agent before pooling or running it.

The agent contract is one protocol, :class:`edgevox.agents.base.Agent` (``name``,
``stream(task, ctx)``, ``run(task, ctx)`` derived from ``stream``). The runtime calls
only ``run`` (on the caller's thread for ``AgentPool.run``, on the agent's own worker
thread ``edgevox-bg-<name>`` for a BackgroundAgent), so it checks ``name`` and ``run``;
:func:`edgevox.agents.run.run_child` checks ``stream`` with the same function. It refers to
the protocol for typing only, so the runtime never imports the agents package (no import cycle).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from edgevox.agents.base import Agent


def agent_name(agent: Agent, *, method: str = "run") -> str:
    """The agent's ``name``, or a TypeError saying what is missing: a non-empty str ``name`` and a
    callable ``method`` (the runtime calls ``run``; a composite runs a child by ``stream``)."""
    name = getattr(agent, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(
            f"{agent!r} is not an agent: it needs a non-empty str attribute 'name' and a method {method}(task, ctx)"
        )
    if not callable(getattr(agent, method, None)):
        raise TypeError(f"agent {name!r} has no {method}(task, ctx); subclass edgevox.agents.AgentBase")
    return name
