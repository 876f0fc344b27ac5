"""Events the bridges publish on the local bus (topics ``bridge.*``).

They say what happened to a bridge's link, so agents and the voice loop can react
(e.g. say "I lost contact with the base station") without knowing about Zenoh or ROS.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from edgevox.runtime.events import Event


@dataclass(kw_only=True)
class BridgeStateEvent(Event):
    """A bridge started, stopped or failed. ``state``: started, stopped, failed."""

    kind: ClassVar[str] = "bridge.state"
    bridge: str = ""
    """``zenoh``, ``ros2`` or ``ros1``."""
    state: str = ""
    detail: str = ""
    """Where it listens/connects, or the error."""


@dataclass(kw_only=True)
class BridgePeerEvent(Event):
    """Another process's bridge in a namespace this bridge hears appeared or went away.

    ``state``: ``joined`` or ``left``. A clean stop or a crashed process (its sockets close)
    is reported at once; a peer that goes silent without closing its link (frozen, powered
    off, cable cut) when the Zenoh lease (``lease_s``, 10 s by default) expires.
    """

    kind: ClassVar[str] = "bridge.peer"
    bridge: str = ""
    peer: str = ""
    """The peer bridge's id."""
    namespace: str = ""
    """The namespace its liveliness token is in (its robot's, on an operator with ``robots``)."""
    state: str = ""


@dataclass(kw_only=True)
class StopDeliveryEvent(Event):
    """What became of one stop this process sent to the robots of its Zenoh namespace.

    Published at the stop's deadline (``stop_deadline_s``) and again for every robot that
    acknowledges it later. Each robot (a bridge id) is in exactly one list: ``stopped``
    (acknowledged in time), ``late`` (acknowledged after the deadline) or ``unreachable``
    (no acknowledgement, or it left). ``cancelled`` says what each robot cancelled.
    """

    kind: ClassVar[str] = "bridge.stop_delivery"
    stop_id: str = ""
    reason: str = ""
    stopped: list[str] = field(default_factory=list)
    late: list[str] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)
    cancelled: dict[str, list[str]] = field(default_factory=dict)
