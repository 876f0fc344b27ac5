"""edgevox: an offline, on-device voice agent framework for robots.

``import edgevox`` stays light: the public names below are imported lazily, on
first access, from the module that defines them (the runtime core imports only
the standard library).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> defining module
_EXPORTS = {
    "AgentContext": "edgevox.runtime.context",
    "CancelToken": "edgevox.runtime.context",
    "Event": "edgevox.runtime.events",
    "AgentEvent": "edgevox.runtime.events",
    "InterruptEvent": "edgevox.runtime.events",
    "StopEvent": "edgevox.runtime.events",
    "ShutdownEvent": "edgevox.runtime.events",
    "ErrorEvent": "edgevox.runtime.events",
    "AgentStateEvent": "edgevox.runtime.events",
    "EventBus": "edgevox.runtime.bus",
    "Subscription": "edgevox.runtime.bus",
    "Blackboard": "edgevox.runtime.blackboard",
    "AgentMessage": "edgevox.runtime.messages",
    "send_message": "edgevox.runtime.messages",
    "subscribe_inbox": "edgevox.runtime.messages",
    "request": "edgevox.runtime.messages",
    "reply": "edgevox.runtime.messages",
    "BackgroundAgent": "edgevox.runtime.background",
    "EXIT": "edgevox.runtime.background",
    "debounce_trigger": "edgevox.runtime.debounce",
    "RestartSupervisor": "edgevox.runtime.supervisor",
    "AgentPool": "edgevox.runtime.pool",
    "Runtime": "edgevox.runtime.runtime",
    "StopReport": "edgevox.runtime.lifecycle",
    "EdgeVoxError": "edgevox.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'edgevox' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # cache: later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
