"""The tools agents call to take part in orchestration.

* ``handoff_conversation`` - hand the conversation to another agent (or a human).
  Intercepted by the :class:`~edgevox.orchestration.handoff.HandoffHandler` found in
  ``ctx.handoff`` (the coordinator and the Swarm strategy put it there).
* ``delegate`` - ask another agent to do a sub-task and get its answer back, through
  the :class:`~edgevox.orchestration.delegation.Delegator` in ``ctx.delegator`` (defined,
  with the background-process tools, in :mod:`edgevox.orchestration.delegation_tools`).

Both return a JSON object as text (``{"ok": true, ...}`` / ``{"ok": false, "error": ...}``),
which is exactly what the calling model reads as the tool result. Add them to an
agent's tools (``edgevox.orchestration.tools:handoff_conversation`` in a config).

A ``Pipeline``, a ``Swarm`` and the ``conversation`` strategy give each agent its own
variant per run (:class:`HandoffTools`, through ``ctx.tools``): ``handoff_conversation``
whose ``target`` is an enum of exactly the agents that agent may reach (as RoomKit's
``build_handoff_tool``), so a model cannot name an agent it may not reach.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from edgevox.agents.tools import Tool, tool
from edgevox.errors import HandoffError

# ``delegate`` lives with the other delegation tools; importable from here as before
# (``edgevox.orchestration.tools:delegate`` in configs): an explicit re-export.
from edgevox.orchestration.delegation_tools import delegate as delegate
from edgevox.runtime.context import AgentContext

log = logging.getLogger(__name__)


@tool(
    examples=(
        (
            "I need to talk to a person",
            {"target": "human", "reason": "user asked for a person", "summary": "wants a human"},
        ),
    )
)
def handoff_conversation(
    target: str,
    reason: str,
    summary: str,
    next_phase: str | None = None,
    with_return: bool = False,
    return_expected: bool = False,
    preserve_state: bool = False,
    ctx: AgentContext = None,  # type: ignore[assignment]  # injected by the tool runner, never None in a call
) -> str:
    """Hand this conversation to another agent (who answers from the next turn, or at once in a swarm).

    Args:
        target: Name of the agent to hand over to, "human" for a person, or "return" to hand back.
        reason: Why the conversation is handed over.
        summary: What the next agent needs to know, in one or two sentences.
        next_phase: The conversation phase to move to, if it changes.
        with_return: True if the conversation should come back to you afterwards.
        return_expected: Same as with_return.
        preserve_state: With return: keep your task state for when the conversation comes back.
    """
    handler = ctx.handoff if ctx is not None else None
    if handler is None:
        return json.dumps({"ok": False, "error": "handoff is not available here (no handoff handler in the context)"})
    try:
        handoff = handler.request(
            session_id=ctx.session_id,
            from_agent=ctx.agent_name,
            target=target,
            reason=reason,
            summary=summary,
            next_phase=next_phase,
            with_return=with_return,
            turn_id=ctx.turn_id,
            return_expected=return_expected,
            preserve_state=preserve_state,
        )
    except HandoffError as exc:
        return json.dumps({"ok": False, "error": str(exc)})
    return json.dumps({"ok": True, "message": handler.accepted_message(handoff)})


def handoff_tool(
    targets: Sequence[str], *, descriptions: Mapping[str, str] | None = None, phases: Sequence[str] = ()
) -> Tool:
    """``handoff_conversation`` whose ``target`` may only be one of ``targets`` (a JSON-schema
    enum, checked before the call runs), each listed in the description with its
    ``descriptions`` entry; with ``phases``, ``next_phase`` may only be one of them (or null)."""
    if not targets:
        raise ValueError("handoff_tool needs at least one target")
    descriptions = descriptions or {}
    base = handoff_conversation.parameters
    props: dict[str, Any] = dict(base["properties"])
    props["target"] = {"type": "string", "enum": list(targets), "description": "The agent to hand the conversation to."}
    if phases:
        props["next_phase"] = {
            "anyOf": [{"type": "string", "enum": list(phases)}, {"type": "null"}],
            "description": "The conversation phase to move to (null: the target's own phase).",
            "default": None,
        }
    # One line: a compact tool menu shows a description's first sentence only.
    listed = "; ".join(f"{t} ({descriptions[t]})" if descriptions.get(t) else t for t in targets)
    first = targets[0]
    return dataclasses.replace(
        handoff_conversation,
        description=f"Hand this conversation to another agent: {listed}.",
        parameters={**base, "properties": props},
        examples=(
            (f"please pass me to {first}", {"target": first, "reason": "user asked", "summary": "wants " + first}),
        ),
    )


class HandoffTools:
    """The ``handoff_conversation`` tool each agent of an orchestration is given per run.

    ``reachable``: ``{agent: agents it may hand off to}`` (ordered sequences keep their order,
    sets are sorted); an agent with none gets no tool. ``owner`` names the orchestration in
    the warning logged once per agent that cannot take tools (an agent without
    ``tools_for(ctx)``, i.e. not an ``LLMAgent``: it still gets the tool in ``ctx.tools``,
    but its model is never offered it, so it never hands off by itself). Thread-safe.
    """

    def __init__(
        self,
        reachable: Mapping[str, Collection[str]],
        *,
        descriptions: Mapping[str, str] | None = None,
        phases: Mapping[str, Sequence[str]] | None = None,
        owner: str = "orchestration",
    ) -> None:
        self.reachable = {
            a: tuple(t) if isinstance(t, (list, tuple)) else tuple(sorted(t)) for a, t in reachable.items()
        }
        self.descriptions = dict(descriptions or {})
        self.phases = dict(phases or {})
        self.owner = owner
        self._tools: dict[str, Tool | None] = {}
        self._warned: set[str] = set()
        self._lock = threading.Lock()

    def targets(self, agent: str) -> tuple[str, ...]:
        """The agents ``agent`` may hand off to (the tool's ``target`` enum)."""
        return self.reachable.get(agent, ())

    def tool(self, agent: str, exclude: Collection[str] = ()) -> Tool | None:
        """``agent``'s handoff tool (None when it may reach nobody), without the targets in
        ``exclude`` (a Swarm leaves out the agents that already had the turn)."""
        targets = tuple(t for t in self.targets(agent) if t not in exclude)
        key = f"{agent}\x00{','.join(targets)}"
        with self._lock:
            if key not in self._tools:
                self._tools[key] = (
                    handoff_tool(targets, descriptions=self.descriptions, phases=self.phases.get(agent, ()))
                    if targets
                    else None
                )
            return self._tools[key]

    def for_agent(self, name: str, agent: object, exclude: Collection[str] = ()) -> tuple[Tool, ...]:
        """What to pass as ``tools=`` to ``run_child``/``stream_child`` for ``agent`` called ``name``
        (``exclude``: targets left out of this run's enum)."""
        handoff = self.tool(name, exclude)
        if handoff is None:
            return ()
        if not callable(getattr(agent, "tools_for", None)):
            with self._lock:
                first = name not in self._warned
                self._warned.add(name)
            if first:
                log.warning(
                    "%s: agent %r cannot take tools (no tools_for(ctx); not an LLMAgent), so its model is never "
                    "offered handoff_conversation (targets: %s) and it will not hand off by itself; make it an "
                    "LLMAgent or have it call the tool from ctx.tools",
                    self.owner,
                    name,
                    ", ".join(self.targets(name)),
                )
        return (handoff,)
