"""Delegation to an agent in another process, over the Zenoh bridge, keeping its depth.

A :class:`RemoteAgent` stands for an agent served by a peer: put it in a
:class:`~edgevox.orchestration.delegation.Delegator` like any agent. Running it sends the task
and the depth it runs at as a bridge request on ``delegate/<agent>``; the peer's bridge answers
with :func:`serve_delegations`, which runs the named agent through the peer's own delegator
*at that depth*. A chain that crosses processes (and crosses back) therefore still stops at
``max_depth`` with supyagent's "Maximum delegation depth (N) reached" (supyagent passes
``--depth`` to a delegate it starts as a subprocess for the same reason).

Wire format (JSON; a peer is untrusted, so every field is checked)::

    request payload   {"task": "check the door", "depth": 2, "session_id": "s1"}
    reply value       {"ok": true, "agent": "scout", "output": "..."}  /  {"ok": false, "error": "..."}

Serving side::

    bridge = ZenohBridge(bus, ZenohBridgeConfig(enabled=True, serve_blackboard=True,
                         serve_keys=["delegate/*"], ...), answer=serve_delegations(delegator))

Only the agents of that delegator can be reached; the caller's ``delegates`` list was checked
in the caller's process.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, Protocol

from edgevox.agents.base import AgentBase, AgentResult, AgentStream
from edgevox.agents.events import ReplyDelta
from edgevox.errors import EdgeVoxError
from edgevox.orchestration.delegation import Delegator
from edgevox.orchestration.delegation_tools import tool_reply
from edgevox.runtime.context import AgentContext
from edgevox.runtime.events import Event

DELEGATE_PREFIX = "delegate/"
"""Bridge request keys of delegations: ``delegate/<agent>`` (list ``delegate/*`` in ``serve_keys``)."""

MAX_REMOTE_DEPTH = 1000


class Requester(Protocol):
    """What a :class:`RemoteAgent` sends through: :class:`~edgevox.integrations.zenoh_bridge.ZenohBridge`."""

    def request(
        self, key: str, payload: Any = None, *, timeout_s: float | None = None, namespace: str | None = None
    ) -> Any: ...


class RemoteAgent(AgentBase):
    """An agent served by a peer over the bridge (``remote_name``, default ``name``).

    Its run asks the peer and waits up to ``timeout_s`` (the bridge's ``request_timeout_s``
    when None); no answer, a refusal or an error reply is an ``ok=False`` result naming why."""

    def __init__(
        self,
        name: str,
        bridge: Requester,
        *,
        remote_name: str | None = None,
        namespace: str | None = None,
        timeout_s: float | None = None,
        description: str = "",
    ) -> None:
        self.name = name
        self.bridge = bridge
        self.remote_name = remote_name or name
        self.namespace = namespace
        self.timeout_s = timeout_s
        self.description = description or f"{self.remote_name} on another robot or process"

    def stream(self, task: str, ctx: AgentContext | None = None) -> AgentStream:
        ctx = ctx or AgentContext()
        return AgentStream(self._ask(task, ctx))

    def _ask(self, task: str, ctx: AgentContext) -> Generator[Event, None, AgentResult]:
        payload = {"task": task, "depth": ctx.depth, "session_id": ctx.session_id}
        key = DELEGATE_PREFIX + self.remote_name
        try:
            reply = self.bridge.request(key, payload, timeout_s=self.timeout_s, namespace=self.namespace)
        except EdgeVoxError as exc:
            return AgentResult(agent=self.name, ok=False, error=f"{self.name} (remote): {exc}")
        if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
            return AgentResult(agent=self.name, ok=False, error=f"{self.name} (remote): malformed reply {reply!r:.120}")
        if not reply["ok"]:
            return AgentResult(agent=self.name, ok=False, error=str(reply.get("error", "failed"))[:2000])
        text = str(reply.get("output", ""))
        if text:
            yield ReplyDelta(source=self.name, text=text)
        return AgentResult(text, agent=self.name)


def serve_delegations(delegator: Delegator) -> Callable[[str, Any, float], Any]:
    """A bridge ``answer`` that runs ``delegate/<agent>`` requests through ``delegator`` at the
    depth the request carries (its refusals and failures become ``{"ok": false, "error"}``)."""

    def answer(key: str, payload: Any, timeout_s: float) -> Any:
        if not key.startswith(DELEGATE_PREFIX):
            raise ValueError(f"{key!r} is not a delegation; delegations are asked on {DELEGATE_PREFIX}<agent>")
        target = key[len(DELEGATE_PREFIX) :]
        task, depth, session_id = _checked(payload)
        # The agent runs at ``depth``, as in the caller's process: its delegator is asked from one level up.
        parent = AgentContext(depth=depth - 1, session_id=session_id)
        try:
            return tool_reply(delegator.delegate(target, task, parent))
        except EdgeVoxError as exc:  # an unknown agent: say which ones this peer serves
            return {"ok": False, "error": str(exc)}

    return answer


def _checked(payload: Any) -> tuple[str, int, str]:
    if not isinstance(payload, dict):
        raise ValueError('a delegation request is {"task": str, "depth": int, "session_id": str}')
    task, depth, session_id = payload.get("task"), payload.get("depth"), payload.get("session_id", "default")
    if not isinstance(task, str) or not task.strip():
        raise ValueError("delegation request: 'task' must be a non-empty string")
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_REMOTE_DEPTH:
        raise ValueError(f"delegation request: 'depth' must be a whole number 1..{MAX_REMOTE_DEPTH}, got {depth!r}")
    if not isinstance(session_id, str) or len(session_id) > 200:
        raise ValueError("delegation request: 'session_id' must be a string of at most 200 characters")
    return task, depth, session_id
