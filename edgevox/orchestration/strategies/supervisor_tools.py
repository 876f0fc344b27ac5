"""The delegation tools a :class:`~edgevox.orchestration.strategies.supervisor.Supervisor`
gives its supervisor agent for one run (through ``ctx.tools``), named as in RoomKit:

* ``delegate_workers(task)`` - the whole team at once, in the configured strategy
  (``strategy="sequential"|"parallel"``). Synchronous, or started in the background
  when ``async_delivery`` (the answer is delivered later; a second call while the team
  is still at work in the session answers ``already_running``).
* ``delegate_to_<worker>(task)`` - one tool per worker (``strategy=None``): inline when
  ``wait_for_result``, else in the background (``delegated`` at once, the result
  delivered later; ``already_running`` while that worker is still at it in the session).

Every tool answers the model with a JSON object (``status`` first). What the tools did in
one run is recorded on a :class:`TurnRecord`, which the strategy reads to speak the
``delegation_message`` and to list missing workers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from edgevox.agents.base import AgentResult
from edgevox.agents.tools import Tool, build_tool
from edgevox.runtime.context import AgentContext

if TYPE_CHECKING:
    from edgevox.orchestration.strategies.supervisor import Supervisor

DELEGATE_WORKERS = "delegate_workers"
"""RoomKit's name of the one team tool."""


def per_worker_tool_name(worker: str) -> str:
    """RoomKit's name of the tool delegating to ``worker``: ``delegate_to_<worker>``."""
    return f"delegate_to_{worker}"


@dataclass
class TurnRecord:
    """What the delegation tools did during one supervisor run (list appends only, so a tool
    running on its own thread may record while the strategy reads)."""

    dispatched: list[str] = field(default_factory=list)
    """Background dispatches started in this run (team or worker names)."""
    results: list[AgentResult] = field(default_factory=list)
    """Synchronous worker results, in the order they came back."""
    handles: list[Any] = field(default_factory=list)

    @property
    def missing(self) -> list[str]:
        return [r.agent for r in self.results if not r.ok]


def worker_reply(result: AgentResult) -> dict[str, Any]:
    if result.ok:
        return {"worker": result.agent, "status": "completed", "result": result.text}
    return {"worker": result.agent, "status": "failed", "error": result.error}


NO_WORKER_LIMIT_S = 3600.0
"""A delegation tool's deadline when the supervisor has no per-worker ``timeout_s``."""


def tool_deadline_s(sup: Supervisor) -> float:
    """How long one delegation tool call may take: every worker in turn at its limit, plus a
    margin (the agent's own tool deadline, 10 s by default, would cut a team off mid-work)."""
    if sup.timeout_s is None:
        return NO_WORKER_LIMIT_S
    return min(sup.timeout_s * len(sup.workers) + 10.0, 86399.0)


def _task_tool(sup: Supervisor, func: Callable[..., str], name: str, description: str) -> Tool:
    return build_tool(func, name=name, description=description, timeout_s=tool_deadline_s(sup))


def team_tool(sup: Supervisor, turn: TurnRecord, turn_ctx: AgentContext) -> Tool:
    """``delegate_workers(task)``: the whole team in ``sup.strategy``; in the background
    (the answer delivered later) when ``sup.async_delivery``."""
    roles = ", ".join(sup.workers)

    def delegate_workers(task: str, ctx: AgentContext) -> str:
        """Run the team on the task.

        Args:
            task: The topic or task, sent to every worker as is.
        """
        if sup.async_delivery:
            handle = sup.start_team(task, turn_ctx)
            if handle is None:
                return json.dumps(
                    {
                        "status": "already_running",
                        "message": "The team is already working on this. Do not call this tool again; "
                        "tell the user the results will come when ready.",
                    }
                )
            turn.dispatched.append(DELEGATE_WORKERS)
            turn.handles.append(handle)
            return json.dumps(
                {
                    "status": "dispatched",
                    "workers": list(sup.workers),
                    "message": "The workers are running in the background; their results will be delivered "
                    "when ready. Answer the user briefly now.",
                }
            )
        results = sup.run_workers(task, ctx)
        turn.results.extend(results)
        return json.dumps({"status": "completed", "results": [worker_reply(r) for r in results]})

    mode = "in the background" if sup.async_delivery else f"in {sup.strategy} mode"
    return _task_tool(
        sup,
        delegate_workers,
        DELEGATE_WORKERS,
        f"Give a task to ALL workers ({roles}) at once; they run {mode}. Call it once, with the topic, "
        "only when the user asks for work the team does; answer small talk yourself.",
    )


def worker_tools(sup: Supervisor, turn: TurnRecord, turn_ctx: AgentContext) -> tuple[Tool, ...]:
    """One ``delegate_to_<worker>(task)`` tool per worker: inline when ``sup.wait_for_result``,
    else started in the background with the result delivered later."""
    tools = []
    for worker, agent in sup.workers.items():
        desc = getattr(agent, "description", "") or f"Worker agent {worker}."
        tools.append(
            _task_tool(
                sup,
                _delegate_to(sup, turn, turn_ctx, worker),
                per_worker_tool_name(worker),
                f"Delegate a task to {worker}. {desc}",
            )
        )
    return tuple(tools)


def _delegate_to(sup: Supervisor, turn: TurnRecord, turn_ctx: AgentContext, worker: str) -> Callable[..., str]:
    def delegate_to(task: str, ctx: AgentContext) -> str:
        """Delegate a task to this worker.

        Args:
            task: Description of the task to delegate.
        """
        if sup.wait_for_result:
            result = sup.delegator.delegate(worker, task, ctx)
            turn.results.append(result)
            return json.dumps(worker_reply(result))
        handle = sup.start_worker(worker, task, turn_ctx)
        if handle is None:
            return json.dumps(
                {
                    "status": "already_running",
                    "worker": worker,
                    "message": f"{worker} is already working on this. Do not call this tool again; "
                    "tell the user the result will come when ready.",
                }
            )
        turn.dispatched.append(worker)
        turn.handles.append(handle)
        return json.dumps(
            {
                "status": "delegated",
                "worker": worker,
                "message": f"Task dispatched to {worker}; it runs in the background and its result will be "
                "delivered when ready. Do not call this tool again.",
            }
        )

    return delegate_to
