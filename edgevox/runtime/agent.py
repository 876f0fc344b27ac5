"""The structural agent protocol the runtime needs: a ``name`` and ``run(task, ctx)``.

The full Agent (LLM, tools, handoffs) lives in ``edgevox.agents``; the runtime
only needs this much, so it never imports the agents package (no import cycle,
and any object with these two members can be pooled or run in the background).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from edgevox.runtime.context import AgentContext


@runtime_checkable
class RunnableAgent(Protocol):
    """Anything with a ``name`` and ``run(task, ctx)``.

    ``run`` is called on the thread of whoever runs the agent: the caller's thread for
    ``AgentPool.run``, the agent's own worker thread (``edgevox-bg-<name>``) for a
    BackgroundAgent. It should poll ``ctx.cancel_token`` during long work.
    """

    name: str

    def run(self, task: Any, ctx: AgentContext) -> Any: ...


def agent_name(agent: Any) -> str:
    """The agent's ``name``, or a TypeError saying what is missing."""
    name = getattr(agent, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{agent!r} is not an agent: it needs a non-empty str attribute 'name'")
    if not callable(getattr(agent, "run", None)):
        raise TypeError(f"agent {name!r} is not runnable: it needs a method run(task, ctx)")
    return name
