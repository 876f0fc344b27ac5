"""The tools a model calls to delegate, and to follow its background delegations (supyagent's).

* ``delegate(agent, task, background=False)`` - ask another agent to do a sub-task. It waits
  for the answer, or with ``background=True`` returns a ``process_id`` at once. Several
  ``delegate`` calls in one model message run concurrently (at most the delegator's
  ``max_concurrency``; see :mod:`edgevox.agents.tool_calls`), results in call order.
* ``list_processes(include_completed=False)`` - the background delegations of this
  conversation: ``process_id``, ``agent``, ``status``, ``task``.
* ``get_process_output(process_id, tail=100)`` - a background delegation's status and output
  (its last ``tail`` lines).
* ``kill_process(process_id)`` - cancel a background delegation.

:data:`delegate` (also importable as ``edgevox.orchestration.tools:delegate``) delegates through
``ctx.delegator`` (a Supervisor's workers, a delegated worker's own delegator).
:func:`delegation_tools` makes the same tools bound to one :class:`Delegator` for one agent,
the ``agent`` argument an enum of exactly the agents it may delegate to (its ``delegates``
list): what ``agents.<name>.delegates`` in a config gives an agent.

Each tool returns a JSON object as text (``{"ok": true, ...}`` / ``{"ok": false, "error": ...}``),
which is exactly what the calling model reads as the tool result.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from edgevox.agents.base import AgentResult
from edgevox.agents.tools import Tool, build_tool
from edgevox.errors import DelegationError
from edgevox.orchestration.delegation import DelegationHandle, Delegator
from edgevox.runtime.context import AgentContext

PROCESS_TOOLS = ("list_processes", "get_process_output", "kill_process")


def tool_reply(result: AgentResult) -> dict[str, Any]:
    """What a delegating model reads: ``{"ok": true, "agent", "output"}`` or ``{"ok": false, "error"}``."""
    if result.ok:
        return {"ok": True, "agent": result.agent, "output": result.text}
    return {"ok": False, "error": result.error}


def delegate_with(
    delegator: Delegator | None, ctx: AgentContext, agent: str, task: str, background: bool = False
) -> dict[str, Any]:
    """Delegate through ``delegator`` and answer in the tool's JSON shape (refusals included)."""
    if delegator is None:
        return {"ok": False, "error": "delegation is not available here (no delegator in the agent context)"}
    try:
        if background:
            return _started(delegator.delegate_background(agent, task, ctx))
        return tool_reply(delegator.delegate(agent, task, ctx))
    except DelegationError as exc:
        return {"ok": False, "error": str(exc)}


def delegate_via_context(ctx: AgentContext, agent: str, task: str, background: bool = False) -> dict[str, Any]:
    """What the :data:`delegate` tool does: delegate through ``ctx.delegator``."""
    return delegate_with(ctx.delegator if ctx is not None else None, ctx, agent, task, background)


def _started(handle: DelegationHandle) -> dict[str, Any]:
    if handle.done and handle.status != "completed":  # refused before it started
        return {"ok": False, "error": handle.error}
    return {
        "ok": True,
        "process_id": handle.id,
        "agent": handle.agent,
        "status": "running",
        "message": f"{handle.agent} works on it in the background; ask get_process_output('{handle.id}') later.",
    }


def _process(handle: DelegationHandle, tail: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"process_id": handle.id, "agent": handle.agent, "status": handle.status}
    if tail is None:
        out["task"] = handle.task
        return out
    lines = handle.output.splitlines()
    out["output"] = "\n".join(lines[-tail:]) if tail > 0 else ""
    if handle.error:
        out["error"] = handle.error
    return out


def _find(delegator: Delegator | None, ctx: AgentContext, process_id: str) -> DelegationHandle | None:
    handle = delegator.process(process_id) if delegator is not None else None
    return handle if handle is not None and handle.session_id == ctx.session_id else None


def list_processes_with(
    delegator: Delegator | None, ctx: AgentContext, include_completed: bool = False
) -> dict[str, Any]:
    if delegator is None:
        return {"ok": True, "data": []}
    found = delegator.processes(session_id=ctx.session_id, include_completed=include_completed)
    return {"ok": True, "data": [_process(h) for h in found]}


def get_process_output_with(
    delegator: Delegator | None, ctx: AgentContext, process_id: str, tail: int = 100
) -> dict[str, Any]:
    handle = _find(delegator, ctx, process_id)
    if handle is None:
        return {"ok": False, "error": f"Process {process_id} not found"}
    return {"ok": True, "data": _process(handle, max(0, tail))}


def kill_process_with(delegator: Delegator | None, ctx: AgentContext, process_id: str) -> dict[str, Any]:
    handle = _find(delegator, ctx, process_id)
    if handle is None:
        return {"ok": False, "error": f"Process {process_id} not found"}
    handle.cancel("killed by kill_process")
    return {
        "ok": True,
        "data": {"process_id": process_id, "status": "cancelling" if not handle.done else handle.status},
    }


def _context_cap(ctx: AgentContext) -> int:
    delegator = ctx.delegator if ctx is not None else None
    return delegator.max_concurrency if delegator is not None else 1


def _delegate(agent: str, task: str, background: bool = False, ctx: AgentContext = None) -> str:  # type: ignore[assignment]  # injected by the tool runner
    """Ask another agent to do a sub-task and return its answer.

    Args:
        agent: Name of the agent to ask.
        task: The sub-task, in one clear sentence.
        background: True to start it and get a process_id at once instead of waiting.
    """
    return json.dumps(delegate_via_context(ctx, agent, task, background))


_delegate.concurrent_calls = _context_cap  # type: ignore[attr-defined]  # read by agents.tool_calls
delegate: Tool = build_tool(_delegate, name="delegate")
"""The ``delegate`` tool, through ``ctx.delegator``."""


def delegation_tools(delegator: Delegator, agent: str, *, processes: bool = True) -> list[Tool]:
    """``agent``'s tools for delegating through ``delegator``: ``delegate`` with an ``agent`` enum
    of exactly :meth:`Delegator.allowed` (none if it may delegate to nobody) and, with
    ``processes``, ``list_processes`` / ``get_process_output`` / ``kill_process``."""
    allowed = delegator.allowed(agent)
    if not allowed:
        return []

    def bound(impl: Callable[..., dict[str, Any]]) -> Callable[..., str]:
        return lambda ctx, **arguments: json.dumps(impl(delegator, ctx, **arguments))

    tools = [
        _with_enum(
            _tool(bound(delegate_with), "delegate", _delegate, cap=lambda _ctx: delegator.max_concurrency),
            "agent",
            allowed,
        )
    ]
    if processes:
        tools += [_tool(bound(impl), name, like) for name, impl, like in _PROCESS_IMPLS]
    return tools


def _tool(
    impl: Callable[..., str], name: str, like: Callable[..., Any], *, cap: Callable[[AgentContext], int] | None = None
) -> Tool:
    """A tool with ``like``'s schema and description that runs ``impl(ctx, **arguments)``;
    ``cap``: how many of its calls may run at once (see :mod:`edgevox.agents.tool_calls`)."""
    template = build_tool(like, name=name)

    def run(ctx: AgentContext = None, **arguments: Any) -> str:  # type: ignore[assignment]  # injected by the tool runner
        return impl(ctx, **arguments)

    if cap is not None:
        run.concurrent_calls = cap  # type: ignore[attr-defined]  # read by agents.tool_calls
    return Tool(
        name=template.name,
        description=template.description,
        parameters=template.parameters,
        func=run,
        context_param="ctx",
        examples=template.examples,
        converters=template.converters,
    )


def _with_enum(t: Tool, param: str, values: list[str]) -> Tool:
    props = dict(t.parameters.get("properties", {}))
    props[param] = {**props[param], "enum": list(values)}
    params = {**t.parameters, "properties": props}
    return Tool(
        name=t.name,
        description=f"{t.description} You can delegate to: {', '.join(values)}.",
        parameters=params,
        func=t.func,
        context_param=t.context_param,
        examples=t.examples,
        converters=t.converters,
    )


def _list_processes(include_completed: bool = False, ctx: AgentContext = None) -> str:  # type: ignore[assignment]
    """List the background delegations of this conversation (running ones unless asked).

    Args:
        include_completed: Also list finished ones.
    """
    return json.dumps(list_processes_with(ctx.delegator if ctx is not None else None, ctx, include_completed))


def _get_process_output(process_id: str, tail: int = 100, ctx: AgentContext = None) -> str:  # type: ignore[assignment]
    """Get the status and output of a background delegation.

    Args:
        process_id: The process_id the delegate tool returned.
        tail: Number of lines to return from the end of the output.
    """
    return json.dumps(get_process_output_with(ctx.delegator if ctx is not None else None, ctx, process_id, tail))


def _kill_process(process_id: str, ctx: AgentContext = None) -> str:  # type: ignore[assignment]
    """Cancel a background delegation you no longer need.

    Args:
        process_id: The process_id the delegate tool returned.
    """
    return json.dumps(kill_process_with(ctx.delegator if ctx is not None else None, ctx, process_id))


_PROCESS_IMPLS: list[tuple[str, Callable[..., dict[str, Any]], Callable[..., Any]]] = [
    ("list_processes", list_processes_with, _list_processes),
    ("get_process_output", get_process_output_with, _get_process_output),
    ("kill_process", kill_process_with, _kill_process),
]
list_processes: Tool = build_tool(_list_processes, name="list_processes")
get_process_output: Tool = build_tool(_get_process_output, name="get_process_output")
kill_process: Tool = build_tool(_kill_process, name="kill_process")
