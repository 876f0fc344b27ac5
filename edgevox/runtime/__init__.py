"""The runtime core: EventBus, Blackboard, agent messages, BackgroundAgent, RestartSupervisor,
AgentPool and the Runtime that owns them. See ``docs/runtime.md``.

Importing this package is light (standard library only).
"""

from edgevox.runtime.background import EXIT, AgentState, BackgroundAgent
from edgevox.runtime.blackboard import Blackboard, Request, Watch
from edgevox.runtime.bus import EventBus, Subscription
from edgevox.runtime.context import AgentContext, CancelToken
from edgevox.runtime.debounce import DebouncedTrigger, debounce_trigger
from edgevox.runtime.events import (
    AgentEvent,
    AgentStateEvent,
    ErrorEvent,
    Event,
    InterruptEvent,
    ShutdownEvent,
    StopEvent,
    event_from_dict,
)
from edgevox.runtime.lifecycle import StopReport
from edgevox.runtime.mailbox import Mailbox
from edgevox.runtime.messages import (
    AgentMessage,
    Requester,
    late_replies,
    reply,
    request,
    send_message,
    subscribe_inbox,
)
from edgevox.runtime.pool import AgentPool
from edgevox.runtime.runtime import Runtime, RuntimeState
from edgevox.runtime.supervisor import ChildInfo, ChildSpec, RestartSupervisor
from edgevox.runtime.timers import TimerWheel

__all__ = [
    "EXIT",
    "AgentContext",
    "AgentEvent",
    "AgentMessage",
    "AgentPool",
    "AgentState",
    "AgentStateEvent",
    "BackgroundAgent",
    "Blackboard",
    "CancelToken",
    "ChildInfo",
    "ChildSpec",
    "DebouncedTrigger",
    "ErrorEvent",
    "Event",
    "EventBus",
    "InterruptEvent",
    "Mailbox",
    "Request",
    "Requester",
    "Runtime",
    "RuntimeState",
    "ShutdownEvent",
    "StopEvent",
    "StopReport",
    "Subscription",
    "RestartSupervisor",
    "TimerWheel",
    "Watch",
    "debounce_trigger",
    "event_from_dict",
    "late_replies",
    "reply",
    "request",
    "send_message",
    "subscribe_inbox",
]
