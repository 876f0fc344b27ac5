"""Hooks around LLM and tool calls.

A hook is a function ``fn(payload, ctx) -> outcome`` registered for one
:class:`HookPoint` with a priority (higher runs first; equal priorities keep
registration order, agent hooks before context hooks). Outcomes:

- ``None`` or :data:`CONTINUE`: carry on with the payload unchanged;
- :class:`Replace` ``(value)``: carry on with ``value`` as the payload (later hooks see it);
- :class:`End` ``(value)``: stop here; later hooks do not run.

Payloads and what ``End`` means at each point:

=============  ===========================  ==============================================
point          payload                      ``End(value)``
=============  ===========================  ==============================================
before_llm     messages (list of dicts)     skip the LLM; ``value`` (str) is its output
after_llm      the LLM's output text        end the run with ``value`` as the reply
before_tool    :class:`ToolCall`            skip the tool; ``value`` is its result
after_tool     :class:`ToolResult`          end the run with ``value`` as the reply
=============  ===========================  ==============================================

When one decision carries several calls, ``End`` at ``after_tool`` also means the calls after
this one are not run: each gets a ``"not run because a hook ended the turn"`` result.

Hooks run on the agent's thread. A hook that raises fails the run with an
:class:`~edgevox.errors.AgentError` naming the hook (never silently skipped).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from edgevox.errors import AgentError


class HookPoint(str, enum.Enum):
    BEFORE_LLM = "before_llm"
    AFTER_LLM = "after_llm"
    BEFORE_TOOL = "before_tool"
    AFTER_TOOL = "after_tool"


@dataclass(frozen=True)
class Continue:
    pass


CONTINUE = Continue()


@dataclass(frozen=True)
class Replace:
    value: Any


@dataclass(frozen=True)
class End:
    value: Any


@dataclass(frozen=True)
class Hook:
    point: HookPoint
    fn: Callable[[Any, Any], Any]
    priority: int = 0
    name: str = ""


def hook(point: HookPoint | str, priority: int = 0, name: str = "") -> Callable[[Callable[[Any, Any], Any]], Hook]:
    """Decorator: ``@hook("before_tool", priority=10)`` turns ``fn(payload, ctx)`` into a :class:`Hook`."""
    point = HookPoint(point)

    def build(fn: Callable[[Any, Any], Any]) -> Hook:
        return Hook(point, fn, priority, name or getattr(fn, "__name__", "hook"))

    return build


def run_hooks(hooks: Iterable[Any], point: HookPoint, payload: Any, ctx: Any) -> tuple[bool, Any]:
    """Run the hooks for ``point``; returns ``(ended, value)``."""
    selected = [h for h in hooks if isinstance(h, Hook) and h.point is point]
    # sorted() is stable: equal priorities keep registration order.
    for h in sorted(selected, key=lambda h: -h.priority):
        try:
            outcome = h.fn(payload, ctx)
        except Exception as exc:  # noqa: BLE001 - reported as a failed run, never swallowed
            raise AgentError(f"hook {h.name!r} at {point.value} raised {type(exc).__name__}: {exc}") from exc
        if outcome is None or isinstance(outcome, Continue):
            continue
        if isinstance(outcome, Replace):
            payload = outcome.value
        elif isinstance(outcome, End):
            return True, outcome.value
        else:
            raise AgentError(f"hook {h.name!r} at {point.value} returned {outcome!r}; expected None, Replace or End")
    return False, payload
